// Tests for src/harness/thread_judgement.cpp: the per-core judgement of a threaded run, on made-up
// timings (no hardware involved). The figures are shaped like runs seen, not any CPU's values.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>

#include "harness/probe_runner_impl.hpp"
#include "harness/thread_judgement.hpp"

using namespace peakprobe;
using detail::judge_threads;
using detail::ThreadRun;

namespace {

ThreadRun run_of(std::vector<double> cycles, std::vector<int> core, double one, double noise = 0) {
  ThreadRun r;
  r.cycles = std::move(cycles);
  r.core = std::move(core);
  for (size_t i = 0; i < r.cycles.size(); ++i) r.cpu.push_back(int(i));
  r.one_core_cycles = one;
  r.one_core_noise = noise;
  return r;
}

}  // namespace

TEST_CASE("every core slowed alike is a shortfall though the cores agree", "[thread_judgement]") {
  // Two vCPUs, each 35% slower than one alone, within 1% of each other: no imbalance to see.
  auto j = judge_threads(run_of({0.680, 0.677}, {0, 1}, 0.503));
  CHECK(j.status == Status::mistrusted);
  CHECK(j.shortfall == Approx(1 - (1 / 0.680 + 1 / 0.677) / 2 / (1 / 0.503)));
  CHECK(j.reason.find("short of the same code alone on one core") != std::string::npos);
  CHECK(j.reason.find("2-thread") != std::string::npos);
}

TEST_CASE("an undisturbed run within the repeat tolerance is ok", "[thread_judgement]") {
  auto j = judge_threads(run_of({0.499, 0.509}, {0, 1}, 0.503));
  CHECK(j.status == Status::ok);
  CHECK(j.reason.empty());
  CHECK(j.tolerance == Approx(detail::kRepeatLimit));
  CHECK(std::fabs(j.shortfall) < detail::kRepeatLimit);
}

TEST_CASE("the tolerance grows with the one-core figure's own noise, up to the imbalance limit", "[thread_judgement]") {
  // 6% short: beyond kRepeatLimit, within a one-core figure that repeated only within 8%.
  const double one = 1.0, slowed = 1.0 / 0.94;
  CHECK(judge_threads(run_of({slowed, slowed}, {0, 1}, one, 0.0)).status == Status::mistrusted);
  auto noisy = judge_threads(run_of({slowed, slowed}, {0, 1}, one, 0.08));
  CHECK(noisy.status == Status::ok);
  CHECK(noisy.tolerance == Approx(0.08));
  // However noisy, the allowance stops at kThreadImbalanceLimit.
  auto wild = judge_threads(run_of({1.25, 1.25}, {0, 1}, one, 0.5));
  CHECK(wild.tolerance == Approx(detail::kThreadImbalanceLimit));
  CHECK(wild.status == Status::mistrusted);
}

TEST_CASE("hardware threads of one core are summed into that core's rate", "[thread_judgement]") {
  // Throughput-bound: two siblings at twice the cycles each make one core's rate, the one-core rate.
  auto shared = judge_threads(run_of({1.006, 1.006}, {0, 0}, 0.503));
  CHECK(shared.status == Status::ok);
  CHECK(shared.shortfall == Approx(0).margin(0.01));
  // Treated as separate cores, the same timings would be a 50% shortfall.
  CHECK(judge_threads(run_of({1.006, 1.006}, {0, 1}, 0.503)).status == Status::mistrusted);
  // Latency-bound: siblings overlap their chains and together beat one thread: not an excess.
  auto overlapped = judge_threads(run_of({4.0, 4.0}, {0, 0}, 4.0));
  CHECK(overlapped.status == Status::ok);
  CHECK(overlapped.shortfall == Approx(-1.0));
}

TEST_CASE("cores that share their queues get an allowance only when no core runs alone", "[thread_judgement]") {
  // Every core holds two threads, together 8% slower than one thread alone: the sharing's cost.
  const double pair = 2 * 0.5 / 0.92;
  CHECK(judge_threads(run_of({pair, pair, pair, pair}, {0, 0, 1, 1}, 0.5)).status == Status::ok);
  // 30% slower is not sharing.
  const double slowed = 2 * 0.5 / 0.70;
  CHECK(judge_threads(run_of({slowed, slowed, slowed, slowed}, {0, 0, 1, 1}, 0.5)).status == Status::mistrusted);
}

TEST_CASE("three threads on two cores: the lone thread's core is judged against one core", "[thread_judgement]") {
  // CPU 2 is core 0's sibling: core 0 has two threads, core 1 one.
  ThreadRun r = run_of({1.0, 0.5, 1.0}, {0, 1, 0}, 0.5);
  CHECK(judge_threads(r).status == Status::ok);
  r.cycles[1] = 0.6;  // the lone core 17% slower than one core alone
  auto j = judge_threads(r);
  CHECK(j.status == Status::mistrusted);
  CHECK(j.shortfall == Approx(1 - 0.5 / 0.6));
}

TEST_CASE("a lagging core among like cores is interference", "[thread_judgement]") {
  auto j = judge_threads(run_of({0.50, 0.50, 0.62}, {0, 1, 2}, 0.50));
  CHECK(j.status == Status::mistrusted);
  CHECK(j.reason.find("cores disagree") != std::string::npos);
  CHECK(j.reason.find("CPU 2") != std::string::npos);
  CHECK(j.shortfall == Approx(1 - (2 / 0.50 + 1 / 0.62) / 3 / (1 / 0.50)));  // recorded all the same
  // Cores with different thread counts are not compared with each other.
  CHECK(judge_threads(run_of({0.5, 1.0, 1.0}, {0, 1, 1}, 0.5)).status == Status::ok);
}

TEST_CASE("a core faster than the same code alone means a wrong timing", "[thread_judgement]") {
  auto j = judge_threads(run_of({0.40, 0.41}, {0, 1}, 0.50));
  CHECK(j.status == Status::mistrusted);
  CHECK(j.reason.find("faster than the same code alone") != std::string::npos);
}

TEST_CASE("threads of unknown core count as cores of their own", "[thread_judgement]") {
  CHECK(judge_threads(run_of({0.5, 0.5}, {}, 0.5)).status == Status::ok);
  CHECK(judge_threads(run_of({0.5, 0.5}, {-1, -1}, 0.5)).status == Status::ok);
  CHECK(judge_threads(run_of({0.7, 0.7}, {-1, -1}, 0.5)).status == Status::mistrusted);
}

TEST_CASE("missing or broken timings are doubted, never divided by", "[thread_judgement]") {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  CHECK(judge_threads(run_of({}, {}, 0.5)).status == Status::mistrusted);
  auto zero = judge_threads(run_of({0.5, 0.0}, {0, 1}, 0.5));
  CHECK(zero.status == Status::mistrusted);
  CHECK(zero.reason.find("CPU 1 gave no timing") != std::string::npos);
  CHECK(std::isnan(zero.shortfall));
  CHECK(judge_threads(run_of({0.5, nan}, {0, 1}, 0.5)).status == Status::mistrusted);
  CHECK(judge_threads(run_of({0.5, 0.5}, {0, 1}, 0.0)).status == Status::mistrusted);
  CHECK(judge_threads(run_of({0.5, 0.5}, {0, 1}, nan)).status == Status::mistrusted);
  // A NaN noise is no noise, not an open gate: 6% short is beyond kRepeatLimit.
  CHECK(judge_threads(run_of({0.53, 0.53}, {0, 1}, 0.5, nan)).status == Status::mistrusted);
}
