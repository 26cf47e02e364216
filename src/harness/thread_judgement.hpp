// Whether a threaded run (one compiled stream on several pinned threads at once) describes the
// machine: judged per physical core against the same code's one-core figure.
#pragma once
#include <string>
#include <vector>

#include "peakprobe/result.hpp"

namespace peakprobe::detail {

// Cores holding the same number of threads, running identical streams, whose rates differ by more
// than this were disturbed.
inline constexpr double kThreadImbalanceLimit = 0.10;
// Two hardware threads of one core share its queues (partitioned on many cores): together they may
// run a throughput-bound stream this much slower than one thread alone, beyond the timing tolerance.
// Only cores that hold several threads get it, and only when no core holds one.
inline constexpr double kSharedCoreAllowance = 0.10;

struct ThreadRun {
  std::vector<double> cycles;   // each thread's cycles per unit (0: it gave no timing)
  std::vector<int> core;        // each thread's physical core (CpuInfo::cpu_core); -1 or absent: unknown
  std::vector<int> cpu;         // each thread's logical CPU, for the reasons
  double one_core_cycles = 0;   // the same code alone on one core
  double one_core_noise = 0;    // how far two timings of it disagreed (a fraction)
};

struct ThreadJudgement {
  Status status = Status::ok;
  std::string reason;
  // 1 - (mean rate of the cores judged) / (one-core rate): how far the run fell short of one core
  // alone, per core; negative when it ran faster. NaN when a thread gave no timing or there is no
  // one-core figure.
  double shortfall = 0;
  double tolerance = 0;         // how much shortfall or excess the run was allowed
};

// A core's rate is the sum of its threads' 1/cycles (SMT siblings share one core's pipes); a thread
// whose core is unknown counts as a core of its own. The run is doubted when
//  - a thread gave no timing;
//  - cores holding equally many threads disagree by more than kThreadImbalanceLimit;
//  - the cores holding the fewest threads run, on average, slower than the one-core figure by more
//    than the tolerance (plus kSharedCoreAllowance when each of them holds several threads): every
//    core slowed alike, which no thread's own ruler sees when the host slows the whole guest;
//  - a core holding one thread runs faster than the one-core figure by more than the tolerance: the
//    same code on a like core cannot, so one of the two timings is wrong.
// The tolerance is the larger of kRepeatLimit and the one-core figure's own repeat disagreement
// (capped at kThreadImbalanceLimit).
ThreadJudgement judge_threads(const ThreadRun& run);

}  // namespace peakprobe::detail
