// Tests for src/matmul/bandwidth_calibration.cpp: the cache bandwidths the cost model is built from,
// measured with the memory probes' load kernel. The sets follow the model's budgets on synthetic
// machines; on this machine only physical invariants are checked, no figure of any CPU.
#include <catch2/catch.hpp>
#include <cmath>

#include "harness/pin.hpp"
#include "harness/quiet_core.hpp"
#include "hw_fixture.hpp"
#include "matmul/bandwidth_calibration.hpp"
#include "memory/mem_runner.hpp"
#include "skip.hpp"

using namespace peakprobe;

namespace {

constexpr uint64_t kMiB = 1 << 20;

MachineModel caches(uint64_t l2, uint64_t l3, int l3_shared_by, int cores = 64) {
  MachineModel m;
  m.cores = cores;
  m.l1_bytes = 48 << 10;
  m.l2_bytes = l2;
  m.l3_bytes = l3;
  m.l3_shared_by = l3_shared_by;
  return m;
}

}  // namespace

TEST_CASE("bandwidth calibration: L2 is measured on the A block's budget, L3 on four L2s within the thread's L3 share",
          "[bandwidth_calibration]") {
  // A server core: 2 MiB of L2, 105 MiB of L3 for 56 cores.
  const MachineModel server = caches(2 * kMiB, 105 * kMiB, 56);
  CHECK(bandwidth_sets(server, 1).l2 == uint64_t(l2_block_budget(server)));
  CHECK(bandwidth_sets(server, 1).l2 == 1 * kMiB);
  CHECK(bandwidth_sets(server, 1).l3 == 8 * kMiB);
  // On all 56 cores a thread's share of L3 (0.94 MiB) is less than its L2: no set tells L3 apart.
  CHECK(bandwidth_sets(server, 56).l3 == 0);
  // 12 threads: a share of 4.4 MiB, between two and four L2s, is the set.
  CHECK(bandwidth_sets(server, 12).l3 == uint64_t(l3_thread_budget(server, 12)));
  CHECK(bandwidth_sets(server, 12).l3 > 4 * kMiB);
  CHECK(bandwidth_sets(server, 12).l3 < 8 * kMiB);
  // No L3 reported, or one no larger than two L2s' worth of budget: left to its default.
  CHECK(bandwidth_sets(caches(1 * kMiB, 0, 1), 1).l3 == 0);
  CHECK(bandwidth_sets(caches(1 * kMiB, 4 * kMiB, 1), 1).l3 == 0);
  CHECK(bandwidth_sets(caches(1 * kMiB, 4 * kMiB, 1), 1).l2 == 512 * 1024);
  // Two threads on one core (SMT siblings) split its sets; on two cores each has its own.
  const MachineModel one_core = caches(1 * kMiB, 32 * kMiB, 1, 1), two_cores = caches(1 * kMiB, 32 * kMiB, 2, 2);
  CHECK(bandwidth_sets(one_core, 2).l2 == 256 * 1024);
  CHECK(bandwidth_sets(one_core, 2).l3 == 2 * kMiB);
  CHECK(bandwidth_sets(two_cores, 2).l2 == 512 * 1024);
  CHECK(bandwidth_sets(two_cores, 2).l3 == 4 * kMiB);
}

namespace {

// One core's load rate on a set, the best of a few readings (noise only slows a stream); 0 when
// none was ok.
double best_rate(MemRunner& runner, uint64_t set, int threads) {
  double best = 0;
  for (int i = 0; i < 3; ++i) {
    const BandwidthResult r = runner.bandwidth({"load", 0, set * uint64_t(threads), threads});
    if (r.status == Status::ok && r.gbps) best = std::max(best, *r.gbps / threads);
  }
  return best;
}

// calibrate_bandwidth on `threads` threads, up to three times until both levels it can measure were
// measured (a busy moment of the host makes a probe mistrusted: not a defect). "" when they were.
std::string calibrated(MachineModel& machine, const CpuInfo& cpu, int threads) {
  std::string missing;
  for (int i = 0; i < 3; ++i) {
    MachineModel m = machine;
    missing = calibrate_bandwidth(m, cpu, threads);
    const BandwidthSets sets = bandwidth_sets(machine, threads);
    if (m.l2_measured_set == sets.l2 && m.l3_measured_set == sets.l3) {
      machine = m;
      return "";
    }
  }
  return missing.empty() ? "a level was not measured" : missing;
}

}  // namespace

TEST_CASE("hw: bandwidth calibration: L2 and L3 are measured, no faster than the level before them",
          "[bandwidth_calibration][hw]") {
  const CpuInfo& cpu = test::this_cpu();
  MachineModel machine = machine_model_from(cpu, 3.0, 1.0, 4.0);
  const BandwidthSets sets = bandwidth_sets(machine, 1);
  const double l2_default = machine.l2_gbps, l3_default = machine.l3_gbps;
  if (const std::string why = calibrated(machine, cpu, 1); !why.empty()) PP_SKIP("the host kept the probe busy: " + why);
  CHECK(machine.l2_measured_set == sets.l2);
  CHECK(std::isfinite(machine.l2_gbps));
  CHECK(machine.l2_gbps != l2_default);
  // The same kernel on a set in half of L1: L2 cannot feed the loads faster than L1 does (10% for
  // the spread of readings at a moving clock).
  auto runner = MemRunner::create(cpu, -1);
  REQUIRE(runner.ok());
  const double l1 = best_rate(**runner, machine.l1_bytes / 2, 1);
  if (l1 <= 0) PP_SKIP("no ok reading of L1 on this busy host");
  CHECK(machine.l2_gbps <= l1 * 1.1);
  if (sets.l3 == 0) {
    CHECK(machine.l3_measured_set == 0);
    CHECK(machine.l3_gbps == l3_default);
    PP_SKIP("no working set tells this machine's L3 apart from its L2");
  }
  CHECK(machine.l3_measured_set == sets.l3);
  CHECK(machine.l3_gbps > 0);
  CHECK(machine.l3_gbps <= machine.l2_gbps * 1.1);
  // The L3 is cut to its reach only below what the OS reports, on a set that read below the rate
  // held; a reach never undercuts the set L3 was measured on (one thread, one L3 share).
  if (machine.l3_reported_bytes) {
    CHECK(machine.l3_bytes < machine.l3_reported_bytes);
    CHECK(machine.l3_bytes >= machine.l3_measured_set);
    CHECK(machine.l3_bytes == machine.l3_reach_held);  // one thread: the reach is its own set
    CHECK(machine.l3_reach_fell == 2 * machine.l3_reach_held);
    CHECK(machine.l3_reach_fell_gbps < kL3RateHeld * machine.l3_gbps);
  } else {
    CHECK(machine.l3_reach_fell == 0);
  }
}

TEST_CASE("bandwidth calibration: the L3 reach doubles the set until its rate falls below the L3 rate held",
          "[bandwidth_calibration]") {
  std::vector<uint64_t> asked;
  // A cache whose rate holds to 8 MiB and halves beyond it.
  const auto curve = [&](uint64_t set) {
    asked.push_back(set);
    return set <= 8 * kMiB ? 100.0 : 50.0;
  };
  SECTION("it stops at the first set that falls") {
    const L3Reach r = find_l3_reach(4 * kMiB, 256 * kMiB, 100.0, curve);
    CHECK(r.held == 8 * kMiB);
    CHECK(r.fell == 16 * kMiB);
    CHECK(r.fell_gbps == 50.0);
    CHECK(asked == std::vector<uint64_t>{8 * kMiB, 16 * kMiB});
  }
  SECTION("a rate just under the held share falls, one at it holds") {
    const auto edge = [&](uint64_t set) { return set == 8 * kMiB ? 100.0 * kL3RateHeld : 100.0 * kL3RateHeld - 0.01; };
    const L3Reach r = find_l3_reach(4 * kMiB, 64 * kMiB, 100.0, edge);
    CHECK(r.held == 8 * kMiB);
    CHECK(r.fell == 16 * kMiB);
  }
  SECTION("the first doubling falling leaves the measured set as the reach") {
    const L3Reach r = find_l3_reach(16 * kMiB, 256 * kMiB, 100.0, curve);
    CHECK(r.held == 16 * kMiB);
    CHECK(r.fell == 32 * kMiB);
  }
  SECTION("nothing beyond the limit is read: every set up to it held") {
    const L3Reach r = find_l3_reach(1 * kMiB, 8 * kMiB, 100.0, curve);
    CHECK(r.held == 8 * kMiB);
    CHECK(r.fell == 0);
    CHECK(asked == std::vector<uint64_t>{2 * kMiB, 4 * kMiB, 8 * kMiB});
  }
  SECTION("a set with no trustworthy figure ends the probe with nothing fallen") {
    const L3Reach r = find_l3_reach(4 * kMiB, 256 * kMiB, 100.0, [&](uint64_t set) { return set == 8 * kMiB ? 100.0 : 0.0; });
    CHECK(r.held == 8 * kMiB);
    CHECK(r.fell == 0);
  }
  SECTION("a limit near the top of the range ends the doubling instead of wrapping around") {
    const auto flat = [&](uint64_t set) {
      asked.push_back(set);
      return 100.0;
    };
    const L3Reach r = find_l3_reach(uint64_t(1) << 60, ~uint64_t(0), 100.0, flat);
    CHECK(r.held == uint64_t(1) << 63);
    CHECK(r.fell == 0);
    CHECK(asked == std::vector<uint64_t>{uint64_t(1) << 61, uint64_t(1) << 62, uint64_t(1) << 63});
  }
  SECTION("without an L3 rate or a set nothing is read") {
    CHECK(find_l3_reach(4 * kMiB, 256 * kMiB, 0.0, curve).fell == 0);
    CHECK(find_l3_reach(0, 256 * kMiB, 100.0, curve).held == 0);
    CHECK(asked.empty());
  }
}

TEST_CASE("hw: bandwidth calibration: on two threads each thread's share is stored, not their sum",
          "[bandwidth_calibration][hw]") {
  const CpuInfo& cpu = test::this_cpu();
  if (cpu.core_order.size() < 2) PP_SKIP("one CPU: no second thread");
  MachineModel machine = machine_model_from(cpu, 3.0, 1.0, 4.0);
  // One thread alone on the same set, on each of the two cores the calibration streams on, before and
  // after it: the cores of a shared host run at clocks of their own that move (on a 16-vCPU Emerald
  // Rapids VM a share read 12% above the first core alone, measured once before), so the bound is the
  // fastest of these readings.
  const uint64_t set = bandwidth_sets(machine, 2).l2;
  auto alone_on_either = [&] {
    AffinityGuard caller_affinity;  // a runner pins this thread to its first CPU
    double best = 0;
    for (size_t i = 0; i < 2; ++i) {
      // A runner's threads start at the first CPU of its core order, as with --cpu.
      CpuInfo on = cpu;
      on.core_order = chosen_cpu_first(cpu.core_order, cpu.cpu_core, cpu.core_order[i]);
      auto runner = MemRunner::create(on, on.core_order.front());
      REQUIRE(runner.ok());
      best = std::max(best, best_rate(**runner, set, 1));
    }
    return best;
  };
  const double alone_before = alone_on_either();
  if (const std::string why = calibrated(machine, cpu, 2); !why.empty()) PP_SKIP("the host kept the probe busy: " + why);
  const double alone = std::max(alone_before, alone_on_either());
  CHECK(machine.l2_measured_set == set);
  CHECK(machine.l2_gbps > 0);
  if (alone <= 0) PP_SKIP("no ok reading of one thread alone on this busy host");
  // A thread's share when two stream can be no faster than one thread alone (20% for the clocks and
  // the spread); the sum of both would read about twice as fast.
  CHECK(machine.l2_gbps <= alone * 1.2);
}

TEST_CASE("bandwidth calibration: the L3 reach is probed to half a thread's share and counts every thread of an L3",
          "[bandwidth_calibration]") {
  SECTION("one thread: half the reported L3, at most 16 L2s") {
    const L3ReachPlan vm = l3_reach_plan(caches(1 * kMiB, 508 * kMiB, 1, 2), 1);
    CHECK(vm.threads_per_l3 == 1);
    CHECK(vm.limit == 16 * kMiB);
    const L3ReachPlan small = l3_reach_plan(caches(1 * kMiB, 16 * kMiB, 8), 1);
    CHECK(small.limit == 8 * kMiB);
  }
  SECTION("threads on the cores of one L3 split it") {
    const L3ReachPlan p = l3_reach_plan(caches(1 * kMiB, 32 * kMiB, 8), 4);
    CHECK(p.threads_per_l3 == 4);
    CHECK(p.limit == 4 * kMiB);
  }
  SECTION("threads beyond an instance's cores are on other instances") {
    const L3ReachPlan p = l3_reach_plan(caches(1 * kMiB, 32 * kMiB, 8), 16);
    CHECK(p.threads_per_l3 == 8);
    CHECK(p.limit == 2 * kMiB);
  }
  SECTION("SMT siblings share their core's L3 and its 16 L2s") {
    const L3ReachPlan p = l3_reach_plan(caches(1 * kMiB, 64 * kMiB, 1, 1), 2);
    CHECK(p.threads_per_l3 == 2);
    CHECK(p.limit == 8 * kMiB);
  }
  SECTION("the cut is the set that held times the threads of an instance, only below the reported size") {
    const MachineModel m = caches(1 * kMiB, 32 * kMiB, 8);
    const L3ReachPlan p = l3_reach_plan(m, 4);
    CHECK(l3_bytes_from_reach(m, p, {2 * kMiB, 4 * kMiB, 50.0}) == 8 * kMiB);
    CHECK(l3_bytes_from_reach(m, p, {2 * kMiB, 0, 0.0}) == 0);      // nothing fell: the OS's size stays
    CHECK(l3_bytes_from_reach(m, p, {8 * kMiB, 16 * kMiB, 50.0}) == 0);  // not below the reported 32 MiB
  }
}
