// A persistent team of worker threads for the GEMM: each helper is started the first time a call
// needs it, pinned once to its core, and parked between calls (a short spin, then a futex wait), so
// a parallel call costs a wake-up and a join of a few microseconds instead of starting and pinning a
// thread per call (tens of microseconds each: as much as a whole 128^3 product on one core).
#pragma once
#include <atomic>
#include <cstdint>
#include <deque>
#include <functional>
#include <thread>
#include <vector>

namespace peakprobe {

class ThreadTeam {
 public:
  // Helper t (1-based) runs on cpus[t] when the list has that entry, else wherever the OS puts it;
  // member 0 is always the calling thread, which the team never pins.
  explicit ThreadTeam(std::vector<int> cpus = {});
  // Wakes and joins every helper.
  ~ThreadTeam();
  ThreadTeam(const ThreadTeam&) = delete;
  ThreadTeam& operator=(const ThreadTeam&) = delete;

  // Runs job(t) for t = 0..parties-1: member 0 on the calling thread, the others on helpers
  // 1..parties-1. Returns when all have finished; their writes are then visible to the caller.
  // `job` must not throw. One run at a time: a team is not shared between calling threads.
  void run(int parties, const std::function<void(int)>& job);

  // Helpers started so far (they stay until the team is destroyed).
  int helpers() const { return int(helpers_.size()); }
  // Runs helper t (1-based) has taken part in. A helper outside a run (t >= parties) neither runs
  // the job nor answers it: a run of few members never waits for the others to notice it.
  uint64_t answers(int t) const { return t >= 1 && t <= helpers() ? helpers_[size_t(t - 1)].answers : 0; }
  // Runs the team so far this process's lifetime (for tests: helpers are reused, not restarted).
  uint64_t runs() const { return runs_; }

  // Wall time of one empty run of `parties` members in seconds (the best of many): what the team
  // adds to a parallel call, for the cost model.
  double fork_join_seconds(int parties);

 private:
  // A helper's thread and its answer count (written by the helper only, read by the caller once the
  // helper has answered), on a line of its own. A deque: a helper's place never moves.
  struct alignas(64) Helper {
    std::thread thread;
    uint64_t answers = 0;
  };
  void helper_main(int t, uint64_t seen, Helper& self);

  std::vector<int> cpus_;
  std::deque<Helper> helpers_;
  // The run's number (high 32 bits) and its member count (low 32 bits) in one word, bumped once per
  // run (and once to stop): a helper learns from the one value it reads whether the run is its own,
  // and one outside it reads nothing else the next run rewrites.
  std::atomic<uint64_t> run_word_{0};
  // Members of the current run, the caller aside, that have not yet answered; the last one wakes it.
  std::atomic<int> pending_{0};
  std::atomic<bool> stop_{false};
  const std::function<void(int)>* job_ = nullptr;  // written before the run word, read by members only
  uint64_t runs_ = 0;
};

}  // namespace peakprobe
