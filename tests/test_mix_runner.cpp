// Tests for src/harness/mix_runner.cpp on this machine: a mix is the interleaved stream of its parts,
// so a form mixed with itself runs at the form's own rate, and its row says how to repeat it. Forms
// from the target's ruler (Target::ruler_forms), so the test holds for every ISA.
#include <catch2/catch.hpp>

#include <algorithm>

#include "asm/target.hpp"
#include "hw_fixture.hpp"
#include "skip.hpp"

using namespace peakprobe;

TEST_CASE("hw: a form mixed with itself runs at the form's own rate, and its row repeats the mix",
          "[hw][mix_runner]") {
  const std::string form = isa::host_target().ruler_forms().multi_cycle;
  const ProbeSpec spec = test::spec(form);
  // Noise only slows a run: the best of three of each.
  double alone = 1e300, mixed = 1e300;
  MixResult m;
  for (int attempt = 0; attempt < 3; ++attempt) {
    const ProbeResult r = test::measure_form(form);
    if (r.status == Status::ok && r.recip_throughput_cycles) alone = std::min(alone, *r.recip_throughput_cycles);
    MixResult again = test::shared_runner().run_mix({{spec, 2}, {spec, 1}});
    if (again.status == Status::ok && again.cycles_per_group) {
      mixed = std::min(mixed, *again.cycles_per_group);
      m = again;
    }
  }
  if (alone >= 1e300 || mixed >= 1e300) PP_SKIP("the form or its mix stayed mistrusted on this machine");
  INFO(form << ": " << alone << " cycles alone, " << mixed << " cycles a group of three in the mix");
  CHECK(mixed == Approx(3 * alone).epsilon(0.10));
  REQUIRE(m.ipc);
  CHECK(*m.ipc == Approx(3 / *m.cycles_per_group));
  CHECK(m.repro.rfind("peakprobe mix \"" + form + ":2\" \"" + form + ":1\" --cpu ", 0) == 0);
}
