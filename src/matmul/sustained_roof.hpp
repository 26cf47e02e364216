// How much of its probed rate the roof instruction keeps when it runs without pause, as a product's
// calls do, against the clock read right after, as the clock between a product's calls is read
// (matmul/call_clock.hpp). Some cores slow under a load of wide vector code (a vector frequency
// licence, or issue held back) and are back at speed within microseconds once it stops. The roof's
// probe sees the slower clock (its paired ruler runs right after its samples), the clock read
// between the product's calls does not: the roof scaled to that reading overstates what the
// product could reach. Measured on a Sapphire Rapids-class VM (family 6 model 167): the 512-bit f32
// FMA's probe read 2.00 a cycle at 3.36 GHz; a stream of it ran 1.87 a cycle of the clock read
// 0.1 ms after it (3.59 GHz), share 0.935; a dependent add chain timed beside the FMAs in one loop
// ran at 3.35 GHz; the add chain right after such code ran at 3.4 GHz for 1.3-4 us, then one call
// took 4-6 times as long (the change of clock) and the rest ran at 3.59; and the first microsecond
// of such a stream was already as slow as the rest. (Not yet measured on AMD Zen cores, which
// document no such licence: a share within kSustainedDrop of 1 leaves the roof as it is.)
#pragma once
#include <string>

#include "peakprobe/cpu_info.hpp"

namespace peakprobe {

// Runs of this length are timed, kSustainedRuns of them, each followed by a clock reading as a
// product's calls are; the best run counts, as the product's fastest call does (an interruption only
// lowers a run's rate; on the Sapphire Rapids-class VM runs read 0.88-0.95 of the probed rate in
// turn, the slowdown itself moving). Short enough that some runs fall between the host's stops (the
// Zen 5 VM stops a vCPU for 25-60 us once or twice a millisecond, which would read as a share of
// 0.95), long enough that the slowdown, which sets in within the first microsecond, rules the run.
inline constexpr double kSustainedRunMs = 0.2;
inline constexpr int kSustainedRuns = 15;
// A share this far below 1 is the core's, not the noise of one run against one reading.
inline constexpr double kSustainedDrop = 0.02;
// Whether a roof is scaled by this share: known, and beyond kSustainedDrop.
inline bool sustained_share_applies(double share) { return share > 0 && share < 1.0 - kSustainedDrop; }
// Whether a loop's own clock reading (matmul's k loop alone, read right after wide code as the roof's
// probe reads its own) was slower than the product's (read between its calls, after the core is back
// at speed): taken to the product's clock, its rate would claim more than such code reached.
inline bool loop_clock_slower(double loop_ghz, double product_ghz) { return loop_ghz > 0 && loop_ghz < product_ghz; }
// Whether matmul's k loop alone stands at the rate it ran rather than at the product's clock: the
// ceiling carries a sustained share (lowered by it) and the loop's clock read the slower. One rule for
// the figure (score_matmul) and for the words beside it (the console report).
inline bool loop_rate_as_ran(double ceiling_share, double loop_ghz, double product_ghz) {
  return sustained_share_applies(ceiling_share) && loop_clock_slower(loop_ghz, product_ghz);
}

// Whether matmul's k loop alone stands at its ceiling's clock rather than at the product's: the
// ceiling of several threads is not scaled to the product's clock (score_matmul) but stays at its
// roof's, the mean of the team's own clocks in their run, and a loop taken to the caller's clock
// would compare two clocks. On the Zen 5 VM, two threads: the loop read 103.5-104.3% of its own
// instructions' stream (one core's rate times the threads at the caller's clock, the stream's at
// the roof's), more than the pipes issue.
// Only where the plan runs as many threads as the ceiling counts: a one-thread plan under
// --threads 2 is not set against that ceiling, and its loop stays at its product's clock.
inline bool loop_rate_at_roof_clock(int plan_threads, int threads, double ceiling_clock_ghz, double loop_ghz,
                                    double product_ghz) {
  return plan_threads > 1 && plan_threads == threads && ceiling_clock_ghz > 0 && loop_ghz > 0 && product_ghz > 0;
}

struct SustainedShare {
  double share = 0;      // the best run's rate over (per_cycle x the clock read right after it), at most 1; 0 unknown
  double measured = 0;   // the same before it is capped at 1 (above 1: the clock rose between run and reading)
  double ghz_after = 0;  // that reading
  double run_ms = 0;     // the best run's length
  std::string missing;   // why share is 0
  bool lowers_roof() const { return sustained_share_applies(share); }
};

// The throughput stream of `form` (its widest set of chains, at most kSustainedChains) run on the
// calling thread's core (`pin_cpu` >= 0 pins it there first), against `per_cycle`, the probe's
// instructions per cycle.
inline constexpr int kSustainedChains = 24;
SustainedShare measure_sustained_share(const CpuInfo& cpu, const std::string& form, const std::string& dtype,
                                       double per_cycle, int pin_cpu);

}  // namespace peakprobe
