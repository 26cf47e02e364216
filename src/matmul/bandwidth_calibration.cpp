#include "matmul/bandwidth_calibration.hpp"

#include <algorithm>
#include <memory>

#include <fmt/format.h>

#include "harness/pin.hpp"
#include "memory/mem_runner.hpp"
#include "memory/sizes.hpp"

namespace peakprobe {

BandwidthSets bandwidth_sets(const MachineModel& machine, int threads) {
  BandwidthSets s;
  // Threads beyond the physical cores run on SMT siblings, which share their core's L2 and its part
  // of L3: each takes its share of the core's sets.
  threads = std::max(1, threads);
  const int cores = std::max(1, std::min(threads, machine.cores));
  const uint64_t per_core = uint64_t((threads + cores - 1) / cores);
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
  for (uint64_t set = from * 2; set <= limit; set *= 2) {
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
    // Up to the thread's whole share of the reported L3, but no further than kReachL2s L2s: past
    // that a set takes long to map and read, and the OS's figure is kept.
    constexpr uint64_t kReachL2s = 16;
    const int sharing = std::max(1, std::min(machine.l3_shared_by, threads));
    const uint64_t share = machine.l3_bytes / uint64_t(sharing);
    const L3Reach reach = find_l3_reach(machine.l3_measured_set, std::min(share, kReachL2s * machine.l2_bytes),
                                        machine.l3_gbps, [&](uint64_t set) {
      const BandwidthResult r = (*runner)->bandwidth({"load", 0, set * uint64_t(threads), threads});
      return r.status == Status::ok && r.gbps ? *r.gbps / threads : 0.0;
    });
    if (reach.fell && reach.held * uint64_t(sharing) < machine.l3_bytes) {
      machine.l3_reported_bytes = machine.l3_bytes;
      machine.l3_bytes = reach.held * uint64_t(sharing);
      machine.l3_reach_fell = reach.fell;
      machine.l3_reach_fell_gbps = reach.fell_gbps;
    }
  }
  return missing;
}

}  // namespace peakprobe
