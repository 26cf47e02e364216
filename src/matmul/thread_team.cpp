#include "matmul/thread_team.hpp"

#include <algorithm>
#include <chrono>

#include "asm/target.hpp"
#include "harness/pin.hpp"

namespace peakprobe {
namespace {

// How long a parked thread spins before it sleeps in the kernel. Back-to-back calls (repetitions,
// autotune, a batch) come within microseconds and find the helpers spinning; a futex wake-up costs
// 5-50 us, more than a whole small product. Past this the helpers stop taking CPU time from others.
constexpr auto kSpin = std::chrono::microseconds(200);

// Waits until `value` differs from `old`: spins for kSpin, then blocks on the futex behind
// std::atomic::wait. Returns the new value.
template <typename T>
T wait_while_equal(const std::atomic<T>& value, T old) {
  const auto until = std::chrono::steady_clock::now() + kSpin;
  for (int i = 0;; ++i) {
    const T now = value.load(std::memory_order_acquire);
    if (now != old) return now;
    isa::spin_pause();
    // The clock is read every 64 pauses: a pause takes 10-140 cycles depending on the core.
    if ((i & 63) == 63 && std::chrono::steady_clock::now() > until) break;
  }
  for (;;) {
    value.wait(old, std::memory_order_acquire);
    const T now = value.load(std::memory_order_acquire);
    if (now != old) return now;
  }
}

}  // namespace

ThreadTeam::ThreadTeam(std::vector<int> cpus) : cpus_(std::move(cpus)) {}

namespace {
constexpr uint64_t kPartiesMask = 0xffffffffu;
uint64_t next_run_word(uint64_t word, int parties) {
  return ((word >> 32) + 1) << 32 | (uint64_t(parties) & kPartiesMask);
}
}  // namespace

ThreadTeam::~ThreadTeam() {
  stop_.store(true, std::memory_order_relaxed);
  run_word_.store(next_run_word(run_word_.load(std::memory_order_relaxed), 0), std::memory_order_release);
  run_word_.notify_all();
  for (auto& h : helpers_) h.thread.join();
}

void ThreadTeam::helper_main(int t, uint64_t seen, Helper& self) {
  if (t < int(cpus_.size()) && cpus_[size_t(t)] >= 0) pin_current_thread(cpus_[size_t(t)]);
  for (;;) {
    seen = wait_while_equal(run_word_, seen);
    if (stop_.load(std::memory_order_relaxed)) return;
    if (uint64_t(t) >= (seen & kPartiesMask)) continue;  // not a member of this run: not waited for
    (*job_)(t);
    ++self.answers;
    if (pending_.fetch_sub(1, std::memory_order_acq_rel) == 1) pending_.notify_one();
  }
}

void ThreadTeam::run(int parties, const std::function<void(int)>& job) {
  parties = std::max(1, parties);
  ++runs_;
  if (parties == 1) {
    job(0);
    return;
  }
  // New helpers start from the word before this run's bump, so they take part in it. Every member
  // of the previous run has answered, and helpers outside it read only the run word: job_ is free.
  const uint64_t word = run_word_.load(std::memory_order_relaxed);
  while (int(helpers_.size()) < parties - 1) {
    const int t = int(helpers_.size()) + 1;
    Helper& h = helpers_.emplace_back();
    try {
      h.thread = std::thread([this, t, word, &h] { helper_main(t, word, h); });
    } catch (...) {
      helpers_.pop_back();  // no thread: no helper
      throw;
    }
  }
  job_ = &job;
  pending_.store(parties - 1, std::memory_order_relaxed);
  run_word_.store(next_run_word(word, parties), std::memory_order_release);
  run_word_.notify_all();
  job(0);
  for (int left = pending_.load(std::memory_order_acquire); left != 0;) left = wait_while_equal(pending_, left);
}

double ThreadTeam::fork_join_seconds(int parties) {
  const std::function<void(int)> nothing = [](int) {};
  run(parties, nothing);  // start the helpers
  double best = 1e9;
  for (int i = 0; i < 200; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    run(parties, nothing);
    best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  return best;
}

}  // namespace peakprobe
