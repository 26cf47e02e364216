// Tests for src/matmul/team_witness.cpp: whether the GEMM's threads can run side by side. Physical
// invariants only: two threads made to share one CPU cannot both run at their own speed.
#include <catch2/catch.hpp>

#include "harness/pin.hpp"
#include "hw_fixture.hpp"
#include "matmul/gemm.hpp"
#include "matmul/team_witness.hpp"
#include "skip.hpp"

using namespace peakprobe;

TEST_CASE("team witness: threads asked to share a core are not judged", "[team_witness]") {
  CpuInfo cpu;
  cpu.core_order = {0, 2, 1, 3};  // CPUs 0 and 1 on core 0, CPUs 2 and 3 on core 1: siblings last
  cpu.cpu_core = {0, 0, 1, 1};
  CHECK_FALSE(team_shares_cores(cpu, 1));
  CHECK_FALSE(team_shares_cores(cpu, 2));
  CHECK(team_shares_cores(cpu, 3));
  cpu.cpu_core.clear();  // topology unknown: nothing to say they share
  CHECK_FALSE(team_shares_cores(cpu, 4));
}

TEST_CASE("team witness: a slow thread side by side is a doubt that names it", "[team_witness]") {
  TeamWitness w;
  CHECK_FALSE(team_witness_doubt(w, 2));  // not measured: nothing to say
  w.slowest = 1;
  w.side_by_side = 0.97;  // threads on cores of their own
  CHECK_FALSE(team_witness_doubt(w, 2));
  w.side_by_side = 0.52;  // two threads on one core's pipes
  auto d = team_witness_doubt(w, 2);
  REQUIRE(d);
  CHECK(d->find("its 2 threads could not run side by side") != std::string::npos);
  CHECK(d->find("52% of its own speed on thread 1") != std::string::npos);
}

TEST_CASE("team witness: a thread that waited long for its CPU is a doubt that names it", "[team_witness]") {
  CHECK_FALSE(run_delay_doubt(2'000'000, 1, 0.75));   // 2 ms of 750: wake-ups, nothing else runs there
  CHECK_FALSE(run_delay_doubt(500'000'000, -1, 1.0));  // no thread's wait could be read
  auto d = run_delay_doubt(520'500'000, 0, 1.0371);     // half the time: another program on its CPU
  REQUIRE(d);
  CHECK(*d == "thread 0 waited 520.5 ms of the 1037.1 ms timing for its CPU (another program ran there)");
}

TEST_CASE("team witness: one thread is refused", "[team_witness]") {
  const CpuInfo& cpu = test::this_cpu();
  if (const std::string why = gemm_unsupported(cpu, MatmulDtype::f32); !why.empty()) PP_SKIP(why);
  Gemm gemm(cpu, MatmulDtype::f32);
  CHECK_FALSE(witness_team(gemm, 4, 1, 1));
}

// Two threads pinned to one CPU take turns on it: side by side each runs about half the time. The
// windows are longer than the scheduler's slices (a few milliseconds) so that the turns show.
TEST_CASE("team witness: two threads on one CPU run at about half their speed side by side", "[team_witness][hw]") {
  CpuInfo cpu = test::this_cpu();
  if (const std::string why = gemm_unsupported(cpu, MatmulDtype::f32); !why.empty()) PP_SKIP(why);
  if (!cpu.emulator.empty()) PP_SKIP("emulated: " + cpu.emulator);
  REQUIRE_FALSE(cpu.core_order.empty());
  const int one = cpu.core_order.front();
  cpu.core_order = {one, one};  // the helper is pinned where the caller is
  Gemm gemm(cpu, MatmulDtype::f32);
  AffinityGuard caller_affinity;
  REQUIRE(pin_current_thread(one));
  auto w = witness_team(gemm, 4, 1, 2, 0.05);
  REQUIRE(w);
  INFO("side by side " << w->side_by_side << " on thread " << w->slowest);
  CHECK(w->side_by_side > 0.0);
  CHECK(w->side_by_side < kSideBySideLimit);
  CHECK(team_witness_doubt(*w, 2));
}
