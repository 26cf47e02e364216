// Tests for src/matmul/bandwidth_calibration.cpp: the cache bandwidths the cost model is built from,
// measured with the memory probes' load kernel. The sets follow the model's budgets on synthetic
// machines; on this machine only physical invariants are checked, no figure of any CPU.
#include <catch2/catch.hpp>
#include <cmath>

#include "hw_fixture.hpp"
#include "matmul/bandwidth_calibration.hpp"
#include "memory/mem_runner.hpp"
#include "skip.hpp"

using namespace peakprobe;

namespace {

constexpr uint64_t kMiB = 1 << 20;

MachineModel caches(uint64_t l2, uint64_t l3, int l3_shared_by) {
  MachineModel m;
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
}

TEST_CASE("hw: bandwidth calibration: L2 and L3 are measured, no faster than the level before them",
          "[bandwidth_calibration][hw]") {
  const CpuInfo& cpu = test::this_cpu();
  MachineModel machine = machine_model_from(cpu, 3.0, 1.0, 4.0);
  const BandwidthSets sets = bandwidth_sets(machine, 1);
  const double l2_default = machine.l2_gbps, l3_default = machine.l3_gbps;
  const std::string missing = calibrate_bandwidth(machine, cpu, 1);
  INFO(missing);
  REQUIRE(machine.l2_measured_set == sets.l2);
  CHECK(std::isfinite(machine.l2_gbps));
  CHECK(machine.l2_gbps != l2_default);
  // The same kernel on a set in half of L1: L2 cannot feed the loads faster than L1 does (10% for
  // the spread of two readings of a moving clock).
  auto runner = MemRunner::create(cpu, -1);
  REQUIRE(runner.ok());
  const BandwidthResult l1 = (*runner)->bandwidth({"load", 0, machine.l1_bytes / 2, 1});
  REQUIRE(l1.gbps);
  CHECK(machine.l2_gbps <= *l1.gbps * 1.1);
  if (sets.l3 == 0) {
    CHECK(machine.l3_measured_set == 0);
    CHECK(machine.l3_gbps == l3_default);
    PP_SKIP("no working set tells this machine's L3 apart from its L2: " + missing);
  }
  REQUIRE(machine.l3_measured_set == sets.l3);
  CHECK(machine.l3_gbps > 0);
  CHECK(machine.l3_gbps <= machine.l2_gbps * 1.1);
}

TEST_CASE("hw: bandwidth calibration: on two threads each thread's share is stored", "[bandwidth_calibration][hw]") {
  const CpuInfo& cpu = test::this_cpu();
  if (cpu.core_order.size() < 2) PP_SKIP("one CPU: no second thread");
  MachineModel machine = machine_model_from(cpu, 3.0, 1.0, 4.0);
  calibrate_bandwidth(machine, cpu, 2);
  REQUIRE(machine.l2_measured_set == bandwidth_sets(machine, 2).l2);
  // Per thread, not both together: no more than one core's L1 rate (measured alone).
  auto runner = MemRunner::create(cpu, -1);
  REQUIRE(runner.ok());
  const BandwidthResult l1 = (*runner)->bandwidth({"load", 0, machine.l1_bytes / 2, 1});
  REQUIRE(l1.gbps);
  CHECK(machine.l2_gbps <= *l1.gbps * 1.1);
  CHECK(machine.l2_gbps > 0);
}
