// Whether the GEMM's threads could run side by side at the moment it was timed. On a VM the host
// may put two of its virtual CPUs on one physical core for a second or more: a 2-thread product
// then runs at one core's rate (2048^3 on a Zen 4 VM: 113.8 GFLOP/s, 48.7% of the 2-thread roof,
// every repetition alike, against 214-222 a moment later) and nothing in its own timing says so.
// The witness times one register block's kernel over panels in L1 on every thread of the team, each
// alone and then all at once: threads on cores of their own lose nothing side by side, threads that
// share one core's pipes lose about half.
#pragma once
#include <optional>
#include <string>

#include "harness/run_delay.hpp"
#include "matmul/gemm.hpp"
#include "peakprobe/expected.hpp"

namespace peakprobe {

struct TeamWitness {
  // The slowest thread's rate side by side over its rate alone (1: no loss), each the best of a
  // few rounds: a moment's disturbance is not the lasting one this looks for.
  double side_by_side = 0;
  int slowest = -1;  // that thread's place in the team (0: the caller)
};

// Whether the first `threads` CPUs of the core order include two of one core: threads asked to share
// cores (more threads than cores) lose side by side by design, so the witness has nothing to judge.
bool team_shares_cores(const CpuInfo& cpu, int threads);

// Times the witness on the first `threads` members of the GEMM's team (the caller, pinned where it
// is, and its helpers): each timing runs the kernel for `window_seconds`, three rounds of one timing
// per thread alone and one side by side (about 20 ms on 2 threads by default). Long enough for the
// host's sharing of a core, which is simultaneous; threads that take turns on one CPU need windows
// longer than the scheduler's slices (several milliseconds) to show it. Errors where the dtype has
// no register-block kernel.
inline constexpr double kWitnessWindowSeconds = 2e-3;
Expected<TeamWitness> witness_team(Gemm& gemm, int mr, int nv, int threads,
                                   double window_seconds = kWitnessWindowSeconds);

// Below this, threads side by side ran too slowly for their cores to be their own.
inline constexpr double kSideBySideLimit = 0.8;

// The reason a timing of `threads` threads with this witness is doubted, or nothing.
std::optional<std::string> team_witness_doubt(const TeamWitness& w, int threads);

// Another task on the team's CPUs: the most one of its threads waited for its CPU while runnable
// during a timing (RunDelayWatch), against the timing's wall time. The witness above cannot see
// this: the scheduler's turns last longer than its windows.
std::optional<std::string> run_delay_doubt(uint64_t waited_ns, int thread, double wall_seconds);

}  // namespace peakprobe
