// The ceiling table's width classes as AArch64 names them (v.4s 128, v.2s 64): the shared checks of tests/ceilings_fixture.hpp
// on this ISA's forms. The ISA-neutral cases are in tests/test_ceilings.cpp.
#include <catch2/catch.hpp>

#include "ceilings_fixture.hpp"

namespace {
const peakprobe::test::WidthForms kForms = {"fmla v.4s, v.4s, v.4s", "fadd v.4s, v.4s, v.4s", "fmla v.2d, v.2d, v.2d", "fmul v.4s, v.4s, v.4s",
                                 "fmla v.2s, v.2s, v.2s", "sdot v.4s, v.16b, v.16b", "128", "64"};
}  // namespace

TEST_CASE("a64 ceilings: the best rate per dtype, width and thread count", "[roofline]") {
  peakprobe::test::check_best_rate_per_width(kForms);
}

TEST_CASE("a64 score: attainable, binding roof, efficiency and ridge distance", "[roofline]") {
  peakprobe::test::check_score(kForms);
}
