// The ceiling table's width classes as x86 names them (zmm 512, ymm 256): the shared checks of tests/ceilings_fixture.hpp
// on this ISA's forms. The ISA-neutral cases are in tests/test_ceilings.cpp.
#include <catch2/catch.hpp>

#include "ceilings_fixture.hpp"

namespace {
const peakprobe::test::WidthForms kForms = {"vfmadd231ps zmm, zmm, zmm", "vaddps zmm, zmm, zmm", "vfmadd231pd zmm, zmm, zmm", "vmulps zmm, zmm, zmm",
                                 "vfmadd231ps ymm, ymm, ymm", "vpdpbusd zmm, zmm, zmm", "512", "256"};
}  // namespace

TEST_CASE("ceilings: the best rate per dtype, width and thread count", "[roofline]") {
  peakprobe::test::check_best_rate_per_width(kForms);
}

TEST_CASE("score: attainable, binding roof, efficiency and ridge distance", "[roofline]") {
  peakprobe::test::check_score(kForms);
}
