// The share of its probed rate the roof instruction keeps when run without pause
// (matmul/sustained_roof.hpp).
#include <catch2/catch.hpp>

#include "asm/target.hpp"
#include "hw_fixture.hpp"
#include "matmul/sustained_roof.hpp"
#include "skip.hpp"

using namespace peakprobe;
using namespace peakprobe::test;

TEST_CASE("sustained roof: only a share beyond the noise scales a roof", "[sustained_roof]") {
  CHECK_FALSE(sustained_share_applies(0));  // not measured
  CHECK_FALSE(sustained_share_applies(1.0));
  CHECK_FALSE(sustained_share_applies(1.0 - kSustainedDrop / 2));
  CHECK(sustained_share_applies(1.0 - 2 * kSustainedDrop));
  CHECK(sustained_share_applies(0.5));
  SustainedShare s;
  s.share = 0.94;
  CHECK(s.lowers_roof());
  s.share = 0;
  CHECK_FALSE(s.lowers_roof());
}

TEST_CASE("sustained roof: the k loop stands as it ran only under a lowered ceiling and its own slower clock",
          "[sustained_roof]") {
  CHECK(loop_clock_slower(2.90, 3.00));
  CHECK_FALSE(loop_clock_slower(3.00, 3.00));
  CHECK_FALSE(loop_clock_slower(3.10, 3.00));
  CHECK_FALSE(loop_clock_slower(0, 3.00));  // the loop's clock unknown
  CHECK(loop_rate_as_ran(0.94, 2.90, 3.00));
  CHECK_FALSE(loop_rate_as_ran(0, 2.90, 3.00));     // no share carried (left out, or several threads)
  CHECK_FALSE(loop_rate_as_ran(0.99, 2.90, 3.00));  // a share within the noise lowers nothing
  CHECK_FALSE(loop_rate_as_ran(0.94, 3.10, 3.00));  // the loop's clock the faster: scaled as before
}

TEST_CASE("sustained roof: nothing is measured without a rate to compare or under an emulator", "[sustained_roof]") {
  CpuInfo cpu = this_cpu();
  const std::string form = isa::host_target().matmul_roof(cpu, MatmulDtype::f32).instruction;
  const SustainedShare none = measure_sustained_share(cpu, form, "f32", 0, -1);
  CHECK(none.share == 0);
  CHECK_FALSE(none.missing.empty());
  cpu.emulator = "qemu-user";
  const SustainedShare emulated = measure_sustained_share(cpu, form, "f32", 2.0, -1);
  CHECK(emulated.share == 0);
  CHECK(emulated.missing.find("emulator") != std::string::npos);
  // A form the ISA cannot read: its own error, not one of the checks before it.
  CpuInfo native = this_cpu();
  native.emulator.clear();
  if (native.tsc_hz <= 0) native.tsc_hz = 1e9;
  const SustainedShare unknown = measure_sustained_share(native, "no such instruction", "f32", 2.0, -1);
  CHECK(unknown.share == 0);
  CHECK_FALSE(unknown.missing.empty());
  CHECK(unknown.missing.find("emulator") == std::string::npos);
  CHECK(unknown.missing.find("timestamp") == std::string::npos);
}

// The stream counts what it runs: against the probe's own rate of the same instruction, a run of
// 0.2 ms keeps between half and all of it (a core may slow under the load; it cannot run faster than
// its probe beyond the clock's move between a run and its reading).
TEST_CASE("hw: the roof instruction sustained keeps at most its probed rate and not less than half",
          "[sustained_roof][hw]") {
  const CpuInfo& cpu = this_cpu();
  if (!cpu.emulator.empty()) PP_SKIP("emulated: " + cpu.emulator);
  const isa::MatmulRoof roof = isa::host_target().matmul_roof(cpu, MatmulDtype::f32);
  ProbeResult p = shared_runner().run(spec(roof.instruction, roof.ops, roof.dtype));
  if (p.status != Status::ok || !p.recip_throughput_cycles)
    PP_SKIP(roof.instruction + " not measured ok here: " + p.reason);
  const SustainedShare s = measure_sustained_share(cpu, roof.instruction, roof.dtype, 1.0 / *p.recip_throughput_cycles,
                                                   p.cpu);
  INFO(roof.instruction << ": " << s.missing << " measured " << s.measured << " over " << s.run_ms << " ms");
  REQUIRE(s.missing.empty());
  CHECK(s.measured > 0.5);
  CHECK(s.measured < 1.1);
  CHECK(s.share <= 1.0);
  CHECK(s.run_ms > 0.5 * kSustainedRunMs);
  CHECK(s.ghz_after > 0);
}
