// How long threads of this process waited for their CPU while runnable: the "run_delay" of Linux's
// schedstat (/proc/self/task/TID/schedstat, second field, nanoseconds), counted by the scheduler of
// this system. A pinned thread waits there only when another task wants the same CPU: another
// program, or another of our threads put there. Time the host takes a virtual CPU away is not in it.
#pragma once
#include <cstdint>
#include <optional>
#include <vector>

namespace peakprobe {

// A pinned thread that waited for its CPU more than this share of a timing was slowed by another
// task there. Quiet, they wait 0.003-0.3% of it (wake-ups from a futex); beside a busy loop on the
// same CPU about half (Zen 4 VM).
inline constexpr double kRunDelayLimit = 0.05;

// The calling thread's id (gettid).
int current_tid();

// What the scheduler counted for thread `tid` of this process so far: nanoseconds on its CPU and
// nanoseconds waiting on a run queue; nothing where the kernel does not say (no schedstat, or no
// such thread). A kernel that keeps no such account reads 0 on the CPU however long it ran.
struct SchedStat {
  uint64_t on_cpu_ns = 0, waited_ns = 0;
};
std::optional<SchedStat> sched_stat(int tid);
// Its waiting part alone.
std::optional<uint64_t> run_delay_ns(int tid);

// Run delays of several threads, read at construction; longest_wait() reads them again and returns
// the most any one of them waited since, and which (its index in `tids`). Threads whose delay
// cannot be read count as not waiting.
class RunDelayWatch {
 public:
  explicit RunDelayWatch(std::vector<int> tids);
  struct Longest {
    uint64_t ns = 0;
    int index = -1;  // -1: none could be read
  };
  Longest longest_wait() const;

 private:
  std::vector<int> tids_;
  std::vector<std::optional<uint64_t>> start_;
};

}  // namespace peakprobe
