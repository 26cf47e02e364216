// What the first unrolled iteration of a micro-kernel's k loop must hold, from Target::kernel_step
// (the ISA tests read the loop out of the kernel's listing and compare): each instruction its count
// times the steps of an iteration, each spelled as the target resolves it, and one multiply-add
// part of one instance per accumulator.
#pragma once
#include <catch2/catch.hpp>

#include <set>
#include <string>

#include "peakprobe/expected.hpp"

#include "asm/target.hpp"

namespace peakprobe::test {

inline std::multiset<std::string> expected_loop_forms(const isa::MicroKernelShape& s, int steps) {
  std::multiset<std::string> expected;
  int multiply_adds = 0;
  for (const auto& i : isa::host_target().kernel_step(s)) {
    CHECK(i.count > 0);
    // Spelled as the catalog and `mix` take it: the target resolves it to the same text.
    auto form = isa::host_target().resolve(i.text);
    REQUIRE(form.ok());
    CHECK(form->display == i.text);
    for (int n = 0; n < i.count * steps; ++n) expected.insert(i.text);
    if (i.multiply_add) {
      ++multiply_adds;
      CHECK(i.count == s.mr * s.nv);  // one per accumulator a step
    }
  }
  CHECK(multiply_adds == 1);
  return expected;
}

// The kernel's listing, read by the ISA's `read_loop` (listing -> the first unrolled iteration's
// forms), holds what kernel_step names: `unroll` steps an iteration where B is packed, one where it
// is read in place.
template <class ReadLoop>
void check_loop_is_step(const isa::MicroKernelShape& s, const Expected<std::string>& listing, int unroll,
                        ReadLoop read_loop) {
  REQUIRE(listing.ok());
  INFO(*listing);
  const std::multiset<std::string> expected = expected_loop_forms(s, s.b_direct ? 1 : unroll);
  CHECK(read_loop(*listing) == expected);
}

}  // namespace peakprobe::test
