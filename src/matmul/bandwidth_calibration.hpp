// The cost model's cache bandwidths, measured on this machine (MachineModel::l2_gbps, l3_gbps): the
// memory probes' load kernel (memory/mem_runner.hpp) on working sets the size of the blocks the model
// places in each level, on as many threads as the call will run, each pinned where the GEMM's threads
// run. Without it the model prices L2 at 32 and L3 at 12 bytes a cycle, guesses from older cores: on
// a Zen 5 VM (3.7 GHz) the load probe read 225 GB/s from a 512 KiB set and 99 GB/s from a 4 MiB one,
// where the guesses said 118 and 44. About 0.25 s (the runner's clock warm-up, then up to 25 timed
// repetitions of 4 ms a level), and as much again for each set of the L3 reach (find_l3_reach);
// nothing under an emulator.
#pragma once
#include <cstdint>
#include <functional>
#include <string>

#include "matmul/cost_model.hpp"
#include "peakprobe/cpu_info.hpp"

namespace peakprobe {

// Working set per thread of each measurement; 0 where the level cannot be told apart on this machine.
// Threads beyond machine.cores share a core (SMT siblings) and split its sets.
struct BandwidthSets {
  // Half of L2: the room the model gives an A block there (so its rate is what A micro-panels and
  // B blocks that fit get).
  uint64_t l2 = 0;
  // Four L2s, or the thread's L3 budget if that is smaller: a B block or a C panel beyond L2. 0 when
  // that budget is not more than twice L2 (a set there would partly hit L2) or the L3 is unknown.
  uint64_t l3 = 0;
};
BandwidthSets bandwidth_sets(const MachineModel& machine, int threads);

// How far a thread's L3 really reaches. The OS's L3 size can be far more than a thread gets: a VM
// may hold a fraction of a shared L3 (the Zen 5 VM reports 508 MiB, its loads keep the L3 rate to
// about 11 MiB and read 51 GB/s at 32 MiB against 91 at 4 MiB), and the model sizes B blocks from
// it. Sets doubling from `from` (the set l3_gbps was measured on) up to `limit` are read with
// `measure` (GB/s per thread; not above 0: no trustworthy figure) until one reads below
// kL3RateHeld x l3_gbps. held: the largest set that kept the rate (`from` if the first doubling fell
// already); fell: the first that did not, and its rate (0: every set up to `limit` held, or a
// measurement failed, and nothing is known beyond `held`).
constexpr double kL3RateHeld = 0.9;
struct L3Reach {
  uint64_t held = 0;
  uint64_t fell = 0;
  double fell_gbps = 0;
};
L3Reach find_l3_reach(uint64_t from, uint64_t limit, double l3_gbps, const std::function<double(uint64_t)>& measure);

// Where the reach probe of a `threads`-thread calibration stops: the threads that share one L3
// instance (cores per instance, times the SMT siblings per core the threads take, at most all of
// them), and the largest set per thread it reads: half a thread's share of the reported L3 (the
// model budgets no more than kL3Fill of it, and a healthy L3 read whole may fall short), at most 16
// L2s a core.
struct L3ReachPlan {
  int threads_per_l3 = 1;
  uint64_t limit = 0;
};
L3ReachPlan l3_reach_plan(const MachineModel& machine, int threads);
// The L3 size the model takes from a reach: the set that held times the threads of an instance, when
// a set fell and that is less than the reported L3; 0 otherwise (the reported size stays).
uint64_t l3_bytes_from_reach(const MachineModel& machine, const L3ReachPlan& plan, const L3Reach& reach);

// Measures both levels with `threads` threads on the first cores of cpu.core_order and stores the
// per-thread rates (total / threads) in machine.l2_gbps and l3_gbps, and the sets in
// machine.l2_measured_set and l3_measured_set. A level whose probe gave no trustworthy figure keeps
// its default; the reasons are returned ("" when both were measured). With L3 measured, its reach is
// probed (find_l3_reach within l3_reach_plan): when a set left L3, machine.l3_bytes becomes
// l3_bytes_from_reach, l3_reported_bytes keeps the OS's figure, and l3_reach_held, l3_reach_fell and
// l3_reach_fell_gbps say what held and what fell. DRAM keeps its
// default: a set beyond L3 takes seconds to map. The calling thread's CPU set is put back afterwards.
std::string calibrate_bandwidth(MachineModel& machine, const CpuInfo& cpu, int threads);

}  // namespace peakprobe
