// Tests for src/harness/run_delay.cpp: how long this process's threads waited for their CPU, from
// Linux's schedstat. Physical invariant: two threads kept runnable on one CPU take turns on it.
#include <catch2/catch.hpp>

#include <sched.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "harness/pin.hpp"
#include "harness/run_delay.hpp"
#include "skip.hpp"

using namespace peakprobe;

namespace {

// Spins until `until`, so the thread stays runnable the whole time.
void spin_until(std::chrono::steady_clock::time_point until) {
  std::atomic<uint64_t> n{0};
  while (std::chrono::steady_clock::now() < until) n.fetch_add(1, std::memory_order_relaxed);
}

}  // namespace

TEST_CASE("run delay: a thread that cannot be read counts as not waiting", "[run_delay]") {
  CHECK_FALSE(run_delay_ns(-1));
  const RunDelayWatch nobody({-1, -2});
  const RunDelayWatch::Longest l = nobody.longest_wait();
  CHECK(l.index == -1);
  CHECK(l.ns == 0);
}

TEST_CASE("run delay: two threads kept runnable on one CPU each wait for it", "[run_delay][hw]") {
  if (!run_delay_ns(current_tid())) PP_SKIP("this kernel keeps no schedstat (/proc/self/task/TID/schedstat)");
  AffinityGuard caller_affinity;
  const int cpu = sched_getcpu();
  REQUIRE(pin_current_thread(cpu));
  std::atomic<int> other_tid{0};
  const auto start = std::chrono::steady_clock::now() + std::chrono::milliseconds(5);
  const auto until = start + std::chrono::milliseconds(200);
  std::thread other([&] {
    pin_current_thread(cpu);
    other_tid = current_tid();
    spin_until(until);
  });
  while (other_tid.load() == 0) std::this_thread::yield();
  const RunDelayWatch watch({current_tid(), other_tid.load()});
  spin_until(until);
  const RunDelayWatch::Longest l = watch.longest_wait();
  const std::optional<SchedStat> mine = sched_stat(current_tid());
  other.join();
  REQUIRE(mine);
  if (mine->on_cpu_ns == 0) PP_SKIP("this kernel keeps no scheduler accounts (schedstat reads 0 on the CPU)");
  INFO("the longest wait " << double(l.ns) * 1e-6 << " ms of about 200 ms, thread " << l.index);
  REQUIRE(l.index >= 0);
  // Sharing one CPU for 200 ms, one of the two waited at least a fifth of it (each about half).
  CHECK(double(l.ns) * 1e-6 > 40.0);
}
