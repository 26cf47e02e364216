#include "matmul/bandwidth_calibration.hpp"

#include <algorithm>
#include <memory>

#include <fmt/format.h>

#include "harness/pin.hpp"
#include "memory/mem_runner.hpp"
#include "memory/sizes.hpp"

namespace peakprobe {

namespace {

// Threads a core runs: threads beyond the physical cores sit on SMT siblings, which share their core's
// L2 and its part of L3.
int threads_per_core(const MachineModel& machine, int threads) {
  threads = std::max(1, threads);
  const int cores = std::max(1, std::min(threads, machine.cores));
  return (threads + cores - 1) / cores;
}

}  // namespace

BandwidthSets bandwidth_sets(const MachineModel& machine, int threads) {
  BandwidthSets s;
  // Each thread takes its share of its core's sets.
  threads = std::max(1, threads);
  const uint64_t per_core = uint64_t(threads_per_core(machine, threads));
  s.l2 = uint64_t(l2_block_budget(machine)) / per_core;
  // Four L2s: well past what L2 holds, yet the size of the B blocks and C panels the model puts in
  // L3; smaller where the thread's L3 budget is smaller. Within twice L2 part of the set would hit
  // L2 (a non-inclusive L3 adds to it), so such an L3 is left to its default.
  constexpr uint64_t kL2sBeyond = 4, kL2sAtLeast = 2;
  const uint64_t l3_budget = machine.l3_bytes ? uint64_t(l3_thread_budget(machine, threads)) : 0;
  const uint64_t l3 = std::min(kL2sBeyond * machine.l2_bytes, l3_budget) / per_core;
  if (l3 * per_core > kL2sAtLeast * machine.l2_bytes) s.l3 = l3;
  return s;
}

L3Reach find_l3_reach(uint64_t from, uint64_t limit, double l3_gbps, const std::function<double(uint64_t)>& measure) {
  L3Reach r;
  r.held = from;
  if (from == 0 || !(l3_gbps > 0)) return r;
  // Doubled only while the double stays within the limit: no wrap-around for any limit.
  for (uint64_t set = from; set <= limit / 2;) {
    set *= 2;
    const double gbps = measure(set);
    if (!(gbps > 0)) return r;  // no figure: nothing known beyond what held
    if (gbps < kL3RateHeld * l3_gbps) {
      r.fell = set;
      r.fell_gbps = gbps;
      return r;
    }
    r.held = set;
  }
  return r;
}

L3ReachPlan l3_reach_plan(const MachineModel& machine, int threads) {
  L3ReachPlan plan;
  threads = std::max(1, threads);
  const int per_core = threads_per_core(machine, threads);
  plan.threads_per_l3 = std::max(1, std::min(std::max(1, machine.l3_shared_by) * per_core, threads));
  // Half of a thread's share of the reported L3 (what the model ever budgets of it, kL3Fill), so a
  // healthy L3 is never read full; and no more than kReachL2s L2s a core: past that a set takes long
  // to map and read, and the OS's figure is kept.
  constexpr uint64_t kReachL2s = 16;
  const uint64_t half_share = machine.l3_bytes / uint64_t(plan.threads_per_l3) / 2;
  plan.limit = std::min(half_share, kReachL2s * machine.l2_bytes / uint64_t(per_core));
  return plan;
}

uint64_t l3_bytes_from_reach(const MachineModel& machine, const L3ReachPlan& plan, const L3Reach& reach) {
  if (!reach.fell || reach.held == 0) return 0;
  const uint64_t bytes = reach.held * uint64_t(plan.threads_per_l3);
  return bytes < machine.l3_bytes ? bytes : 0;
}

std::string calibrate_bandwidth(MachineModel& machine, const CpuInfo& cpu, int threads) {
  // Under an emulator the probe's timings mean nothing (it says so, mistrusted): not worth its time.
  if (!cpu.emulator.empty()) return "bandwidth: under an emulator (" + cpu.emulator + "), timings mean nothing";
  threads = std::clamp(threads, 1, std::max(1, int(cpu.core_order.size())));
  const BandwidthSets sets = bandwidth_sets(machine, threads);
  AffinityGuard caller_affinity;  // the runner pins this thread to the first core
  auto runner = MemRunner::create(cpu, cpu.core_order.empty() ? -1 : cpu.core_order.front());
  if (!runner) return "bandwidth: " + runner.error();
  std::string missing;
  auto measure = [&](const char* level, uint64_t set, double& gbps, uint64_t& measured_set) {
    if (set == 0) {
      missing += fmt::format("{}{}: no working set tells it apart from L2 here", missing.empty() ? "" : "; ", level);
      return;
    }
    const BandwidthResult r = (*runner)->bandwidth({"load", 0, set * uint64_t(threads), threads});
    if (r.status != Status::ok || !r.gbps || *r.gbps <= 0) {
      missing += fmt::format("{}{} on {}: {} {}", missing.empty() ? "" : "; ", level, format_bytes(set),
                             to_string(r.status), r.reason);
      return;
    }
    gbps = *r.gbps / threads;
    measured_set = set;
  };
  measure("L2", sets.l2, machine.l2_gbps, machine.l2_measured_set);
  measure("L3", sets.l3, machine.l3_gbps, machine.l3_measured_set);
  if (machine.l3_measured_set) {
    const L3ReachPlan plan = l3_reach_plan(machine, threads);
    const L3Reach reach = find_l3_reach(machine.l3_measured_set, plan.limit, machine.l3_gbps, [&](uint64_t set) {
      const BandwidthResult r = (*runner)->bandwidth({"load", 0, set * uint64_t(threads), threads});
      return r.status == Status::ok && r.gbps ? *r.gbps / threads : 0.0;
    });
    if (const uint64_t cut = l3_bytes_from_reach(machine, plan, reach)) {
      machine.l3_reported_bytes = machine.l3_bytes;
      machine.l3_bytes = cut;
      machine.l3_reach_held = reach.held;
      machine.l3_reach_fell = reach.fell;
      machine.l3_reach_fell_gbps = reach.fell_gbps;
    }
  }
  return missing;
}

}  // namespace peakprobe
