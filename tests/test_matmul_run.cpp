// A whole measurement on the real machine: checked, timed by the spec, named for compare, cold
// runs and batches accepted; a wrong kernel result is an error, not a number.
#include <stdlib.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "cpu/cpu_info.hpp"
#include "matmul/matmul_run.hpp"
#include "sanitizer.hpp"
#include "scratch_dir.hpp"
#include "skip.hpp"

using namespace peakprobe;

TEST_CASE("matmul run: checked and timed as the spec asks", "[matmul_run][hw]") {
  const CpuInfo cpu = detect_cpu_info();
  if (const std::string why = gemm_unsupported(cpu, MatmulDtype::f32); !why.empty()) PP_SKIP(why);
  Gemm gemm(cpu, MatmulDtype::f32);
  MatmulRequest rq;
  rq.m = 50, rq.n = 70, rq.k = 90, rq.batch = 2;
  rq.config = default_config(cpu, MatmulDtype::f32, 50, 70, 90, 1);
  rq.min_seconds = 0.02;
  rq.cold_cache = ColdCacheMode::all;
  auto r = run_matmul(cpu, gemm, rq);
  REQUIRE(r.ok());
  INFO(to_string(r->status) << ": " << r->reason);
  CHECK(r->status != Status::error);
  CHECK(r->max_rel_error < 1e-5);
  CHECK(r->rows_checked == 100);  // every row of the first and the last item
  CHECK(r->timing.repetitions >= 5);
  CHECK(r->timing.warmup == 2);
  CHECK(r->timing.min_ms <= r->timing.mean_ms);
  CHECK(r->timing.mean_ms <= r->timing.max_ms);
  CHECK(r->gflops == Approx(2.0 * 50 * 70 * 90 * 2 / (r->timing.min_ms * 1e-3) / 1e9));
  CHECK(r->arithmetic_intensity == Approx(2.0 * 50 * 70 * 90 / (4.0 * (50 * 90 + 90 * 70 + 50 * 70))));
  CHECK(r->name == "matmul f32 50x70x90 batch 2, 1 thread, cold all");
  CHECK(r->cold_cache == "all");
  // Its block's k loop alone, in L1, at the product's clock: a rate the whole product (packing,
  // edges, a cold cache) cannot beat, 10% left for the two clock readings' error.
  // A host that crowded the timed calls out (status mistrusted, the reason says so) leaves the rate
  // unjudged: what follows compares rates.
  if (cpu.emulator.empty() && r->status == Status::mistrusted) PP_SKIP("the product's timing stayed crowded: " << r->reason);
  if (cpu.emulator.empty()) {
    REQUIRE(r->kernel_l1_gflops.has_value());
    CHECK(*r->kernel_l1_gflops > 0);
    CHECK(r->gflops <= *r->kernel_l1_gflops * 1.1);
  } else {
    CHECK_FALSE(r->kernel_l1_gflops.has_value());  // under an emulator no timing means anything
  }
}

// A plan of two threads scans both of its cores, each thread its own, and keeps one of them; a grid
// that starts one thread scans the caller's core alone.
TEST_CASE("matmul run: a team's scan is of one of the cores its threads ran on", "[matmul_run][hw]") {
  const CpuInfo cpu = detect_cpu_info();
  if (const std::string why = gemm_unsupported(cpu, MatmulDtype::f32); !why.empty()) PP_SKIP(why);
  if (!cpu.emulator.empty() || !(cpu.tsc_hz > 0)) PP_SKIP("no scan where the timestamp says nothing of a core");
  if (cpu.core_order.size() < 2) PP_SKIP("one CPU: no team of two");
  Gemm gemm(cpu, MatmulDtype::f32);
  MatmulRequest rq;
  rq.m = 96, rq.n = 128, rq.k = 64;
  rq.threads = 2;
  rq.config = default_config(cpu, MatmulDtype::f32, rq.m, rq.n, rq.k, 2);  // a 2 x 1 grid
  rq.min_seconds = 0.01;
  auto r = run_matmul(cpu, gemm, rq);
  REQUIRE(r.ok());
  REQUIRE(gemm.threads_started(rq.m, rq.n, rq.k, 1, rq.config) == 2);
  CHECK(r->availability.scanned_ms >= kAvailabilityScanMs * 0.99);
  CHECK((r->availability.cpu == cpu.core_order[0] || r->availability.cpu == cpu.core_order[1]));
  // Rows for one register block only: the second thread has none and is not started.
  rq.m = 2;
  REQUIRE(gemm.threads_started(rq.m, rq.n, rq.k, 1, rq.config) == 1);
  auto lone = run_matmul(cpu, gemm, rq);
  REQUIRE(lone.ok());
  CHECK(lone->availability.scanned_ms >= kAvailabilityScanMs * 0.99);
  CHECK(lone->availability.cpu == cpu.core_order[0]);
}

TEST_CASE("matmul run: timing summaries and names", "[matmul_run]") {
  TimingSummary t = summarize_times({1, 2, 3, 4}, 2);
  CHECK(t.min_ms == 1);
  CHECK(t.max_ms == 4);
  CHECK(t.mean_ms == 2.5);
  CHECK(t.std_ms == Approx(1.118034));
  CHECK(t.repetitions == 4);
  CHECK(matmul_name(1, 2, 3, 4, MatmulDtype::bf16, 2, ColdCacheMode::none) == "matmul bf16 1x2x3 batch 4, 2 threads");
  CHECK(matmul_bytes(2, 3, 4, 1, MatmulDtype::i8) == 2 * 4 + 4 * 3 + 4.0 * 2 * 3);
  CHECK(matmul_error_limit(MatmulDtype::i8) == 0.0);
}

// The kernel alone's rate goes to the product's clock in proportion; a clock not read leaves it as
// timed.
TEST_CASE("matmul run: a core-bound rate is taken to another clock in proportion", "[matmul_run]") {
  CHECK(rate_at_clock(200.0, 4.0, 3.6) == Approx(180.0));
  CHECK(rate_at_clock(180.0, 3.6, 4.0) == Approx(200.0));
  CHECK(rate_at_clock(200.0, 3.6, 3.6) == 200.0);
  CHECK(rate_at_clock(200.0, 0.0, 3.6) == 200.0);
  CHECK(rate_at_clock(200.0, 3.6, 0.0) == 200.0);
  CHECK(rate_at_clock(200.0, -1.0, 3.6) == 200.0);
}

namespace {
// A product small enough to time in a few milliseconds, for the baseline tests.
MatmulRequest small_request(const CpuInfo& cpu) {
  MatmulRequest rq;
  rq.m = 32, rq.n = 48, rq.k = 40;
  rq.config = default_config(cpu, MatmulDtype::f32, 32, 48, 40, 1);
  rq.min_seconds = 0.01;
  return rq;
}
}  // namespace

TEST_CASE("matmul run: a baseline library that crashes costs its own row only", "[matmul_run]") {
  const CpuInfo cpu = detect_cpu_info();
  if (const std::string why = gemm_unsupported(cpu, MatmulDtype::f32); !why.empty()) PP_SKIP(why);
  Gemm gemm(cpu, MatmulDtype::f32);
  MatmulRequest rq = small_request(cpu);
  rq.baselines = {PEAKPROBE_FAKE_BLAS, PEAKPROBE_FAKE_BLAS};
  ::setenv("PEAKPROBE_FAKE_BLAS_MODE", "crash", 1);
  auto r = run_matmul(cpu, gemm, rq);
  ::unsetenv("PEAKPROBE_FAKE_BLAS_MODE");
  REQUIRE(r.ok());
  // Ours was measured and checked (under an emulator its time is mistrusted, its result still right;
  // beside another test pinned to the same CPU, under ctest -j, its time is doubted for the waits).
  INFO(r->reason);
  if (!cpu.emulator.empty()) CHECK(r->status == Status::mistrusted);
  else if (r->status == Status::mistrusted) CHECK_THAT(r->reason, Catch::Contains("for its CPU"));
  else CHECK(r->status == Status::ok);
  CHECK(r->timing.repetitions >= 5);
  REQUIRE(r->baselines.size() == 2);  // the first crash did not stop the second library
  for (const auto& b : r->baselines) {
    CHECK(b.status == Status::error);
    CHECK_THAT(b.reason, Catch::Contains(test::kSegfaultWords));
    CHECK(b.timing.repetitions == 0);
  }
}

TEST_CASE("matmul run: the side by side runs in turns that give every side the same mean place", "[matmul_run]") {
  CHECK(side_by_side_order(1, 0) == std::vector<int>{-1});
  CHECK(side_by_side_order(1, 2) == std::vector<int>{-1, 0, 1});
  CHECK(side_by_side_order(2, 3) == std::vector<int>{-1, 0, 1, 2, 2, 1, 0, -1});
  CHECK(side_by_side_order(3, 1) == std::vector<int>{-1, 0, 0, -1, -1, 0});
  // Over every even number of rounds each side's mean place in the order is the same: a burst of
  // the host is as likely to fall on any side's rounds.
  for (int rounds : {2, 4, 6})
    for (int libraries : {1, 2, 3}) {
      const std::vector<int> order = side_by_side_order(rounds, libraries);
      REQUIRE(order.size() == size_t(rounds * (libraries + 1)));
      for (int who = -1; who < libraries; ++who) {
        double places = 0;
        int count = 0;
        for (size_t i = 0; i < order.size(); ++i)
          if (order[i] == who) places += double(i), ++count;
        CHECK(count == rounds);
        CHECK(places / count == Approx(double(order.size() - 1) / 2));
      }
    }
}

TEST_CASE("matmul run: a library's row keeps its wrong round, else its fastest timed one", "[matmul_run]") {
  bool always = true;
  // The fastest timed round, doubted or not: a doubt only adds time.
  CHECK(kept_library_round({{false, false, false, 10}, {false, true, false, 8}}, always) == 1);
  CHECK_FALSE(always);
  CHECK(kept_library_round({{false, true, false, 10}, {false, true, false, 9}}, always) == 1);
  CHECK(always);
  // A failed round is never kept over a timed one, whichever came first.
  CHECK(kept_library_round({{false, false, true, 0}, {false, false, false, 12}}, always) == 1);
  CHECK(kept_library_round({{false, false, false, 12}, {false, false, true, 0}}, always) == 0);
  // A wrong answer in any round is the row's finding, even beside a faster right one.
  CHECK(kept_library_round({{false, false, false, 5}, {true, false, false, 9}}, always) == 1);
  CHECK(kept_library_round({{true, false, false, 9}, {false, false, false, 5}}, always) == 0);
  // Nothing timed: the first round, with its error.
  CHECK(kept_library_round({{false, false, true, 0}, {false, false, true, 0}}, always) == 0);
}

TEST_CASE("matmul run: rounds time a library again only while it answers right", "[matmul_run]") {
  const CpuInfo cpu = detect_cpu_info();
  if (const std::string why = gemm_unsupported(cpu, MatmulDtype::f32); !why.empty()) PP_SKIP(why);
  Gemm gemm(cpu, MatmulDtype::f32);
  MatmulRequest rq = small_request(cpu);
  rq.rounds = 3;
  auto alone = run_matmul(cpu, gemm, rq);
  REQUIRE(alone.ok());
  CHECK(alone->rounds == 1);  // nothing to be fair to
  CHECK(alone->baselines.empty());

  test::ScratchDir dir;
  const std::string log = dir.file("workers.txt");
  auto workers = [&] {
    std::ifstream in(log);
    int lines = 0;
    for (std::string line; std::getline(in, line);) ++lines;
    std::filesystem::remove(log);
    return lines;
  };
  ::setenv("PEAKPROBE_FAKE_BLAS_LOG", log.c_str(), 1);
  rq.baselines = {PEAKPROBE_FAKE_BLAS};
  // A right library: timed in every round, one row, and ours timed in every round too.
  ::unsetenv("PEAKPROBE_FAKE_BLAS_MODE");
  auto right = run_matmul(cpu, gemm, rq);
  const int right_workers = workers();
  // A wrong one: its first round settles the row.
  ::setenv("PEAKPROBE_FAKE_BLAS_MODE", "wrong", 1);
  auto wrong = run_matmul(cpu, gemm, rq);
  const int wrong_workers = workers();
  // One that crashes: not run again for the same crash.
  ::setenv("PEAKPROBE_FAKE_BLAS_MODE", "crash", 1);
  auto crash = run_matmul(cpu, gemm, rq);
  const int crash_workers = workers();
  // One right in its first round that crashes in its second: the row says so.
  rq.rounds = 2;
  ::setenv("PEAKPROBE_FAKE_BLAS_MODE", "crash-later", 1);
  auto later = run_matmul(cpu, gemm, rq);
  const int later_workers = workers();
  ::unsetenv("PEAKPROBE_FAKE_BLAS_MODE");
  ::unsetenv("PEAKPROBE_FAKE_BLAS_LOG");

  REQUIRE(right.ok());
  CHECK(right->rounds == 3);
  REQUIRE(right->baselines.size() == 1);
  const BaselineResult& b = right->baselines.front();
  INFO(b.reason);
  CHECK(b.status != Status::error);
  CHECK(b.timing.repetitions >= 5);
  CHECK(b.speedup == Approx(b.timing.min_ms / right->timing.min_ms));
  CHECK(right_workers >= 3);  // one worker a round (more where the witness doubted one)
  CHECK(right->gflops == Approx(2.0 * 32 * 48 * 40 / (right->timing.min_ms * 1e-3) / 1e9));

  REQUIRE(wrong.ok());
  REQUIRE(wrong->baselines.size() == 1);
  CHECK(wrong->baselines.front().status == Status::mistrusted);
  CHECK_THAT(wrong->baselines.front().reason, Catch::Contains("differs from the reference"));
  CHECK(wrong->baselines.front().max_rel_error > 0);
  CHECK(wrong_workers == 1);
  CHECK(wrong->rounds == 1);  // nobody left to time ours against

  REQUIRE(crash.ok());
  REQUIRE(crash->baselines.size() == 1);
  CHECK(crash->baselines.front().status == Status::error);
  CHECK(crash->baselines.front().speedup == 0);
  CHECK(crash_workers == 1);
  CHECK(crash->rounds == 1);

  REQUIRE(later.ok());
  REQUIRE(later->baselines.size() == 1);
  const BaselineResult& flaky = later->baselines.front();
  CHECK(flaky.status == Status::mistrusted);
  CHECK_THAT(flaky.reason, Catch::Contains("round 2 of the side by side failed"));
  CHECK(flaky.timing.repetitions >= 5);  // round 1's timing stays for the record
  CHECK(later_workers == 2);
  CHECK(later->rounds == 1);  // the library's second round failed before ours': nobody to time it against
}
