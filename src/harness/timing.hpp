// Times a pair of generated functions that differ only in how many copies of the pattern they
// unroll (N and 2N). Subtracting cancels the call, the loop counter and the timer's own cost.
#pragma once
#include <cstdint>
#include <string>

#include "asm/x86/stream_emitter.hpp"
#include "harness/cycle_counter.hpp"
#include "peakprobe/result.hpp"

namespace peakprobe {

struct TimingBudget {
  double target_call_ticks = 60000;  // grow iterations until one call of the long function lasts this long
  int min_samples = 9;
  int max_samples = 80;
  double max_ticks = 2.5e7;          // stop sampling after this many ticks in total
};

struct PairTiming {
  Stats per_unit;       // counter ticks per unit (instruction) from min/median/max of each function
  double tsc_per_unit_median = 0;  // TSC ticks per unit (differs from per_unit only with perf cycles)
  double tsc_per_unit_min = 0;
  // Fixed cost per call implied by the pair, as a fraction of the long call: with a = N*r + d and
  // b = 2N*r + d, d = 2a - b. It cannot really be negative; a clearly negative value means the short
  // calls were disturbed more than the long ones and the difference underestimates r.
  double overhead_fraction = 0;
  uint64_t iterations = 0;
};

// `units_short` / `units_long`: measured instructions per loop iteration of each function.
// Returns false with `error` set when the generated code faulted.
bool time_pair(x86::ProbeFn short_fn, x86::ProbeFn long_fn, double units_short, double units_long,
               void* buffer, const x86::ProbeConstants* consts, const CycleCounter& counter,
               const TimingBudget& budget, PairTiming& out, std::string& error);

}  // namespace peakprobe
