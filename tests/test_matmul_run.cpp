// A whole measurement on the real machine: checked, timed by the spec, named for compare, cold
// runs and batches accepted; a wrong kernel result is an error, not a number.
#include <stdlib.h>

#include <catch2/catch.hpp>

#include "cpu/cpu_info.hpp"
#include "matmul/matmul_run.hpp"
#include "sanitizer.hpp"
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
  CHECK(r->status == Status::ok);
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

TEST_CASE("matmul run: a baseline library that crashes costs its own row only", "[matmul_run]") {
  const CpuInfo cpu = detect_cpu_info();
  if (const std::string why = gemm_unsupported(cpu, MatmulDtype::f32); !why.empty()) PP_SKIP(why);
  Gemm gemm(cpu, MatmulDtype::f32);
  MatmulRequest rq;
  rq.m = 32, rq.n = 48, rq.k = 40;
  rq.config = default_config(cpu, MatmulDtype::f32, 32, 48, 40, 1);
  rq.min_seconds = 0.01;
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

TEST_CASE("matmul run: the side by side runs in turns that balance early and late", "[matmul_run]") {
  CHECK(side_by_side_order(1, 0) == std::vector<int>{-1});
  CHECK(side_by_side_order(1, 2) == std::vector<int>{-1, 0, 1});
  CHECK(side_by_side_order(2, 3) == std::vector<int>{-1, 0, 1, 2, 2, 1, 0, -1});
  // Over every even number of rounds each side's mean place in the order is the same, so a host
  // that slows (or quickens) steadily through the run favours none of them.
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
  // A later round is kept when it is faster and no more doubted; an undoubted one over a doubted one.
  CHECK(keeps_later_round(false, 10, false, 9));
  CHECK_FALSE(keeps_later_round(false, 10, false, 11));
  CHECK_FALSE(keeps_later_round(false, 10, true, 5));
  CHECK(keeps_later_round(true, 5, false, 10));
  CHECK(keeps_later_round(true, 10, true, 9));
}

TEST_CASE("matmul run: rounds with a library time both sides again, without one a single round", "[matmul_run]") {
  const CpuInfo cpu = detect_cpu_info();
  if (const std::string why = gemm_unsupported(cpu, MatmulDtype::f32); !why.empty()) PP_SKIP(why);
  Gemm gemm(cpu, MatmulDtype::f32);
  MatmulRequest rq;
  rq.m = 32, rq.n = 48, rq.k = 40;
  rq.config = default_config(cpu, MatmulDtype::f32, 32, 48, 40, 1);
  rq.min_seconds = 0.01;
  rq.rounds = 3;
  auto alone = run_matmul(cpu, gemm, rq);
  REQUIRE(alone.ok());
  CHECK(alone->rounds == 1);  // nothing to be fair to
  CHECK(alone->baselines.empty());

  rq.baselines = {PEAKPROBE_FAKE_BLAS};
  ::unsetenv("PEAKPROBE_FAKE_BLAS_MODE");  // the plain, correct sgemm
  auto r = run_matmul(cpu, gemm, rq);
  REQUIRE(r.ok());
  CHECK(r->rounds == 3);
  REQUIRE(r->baselines.size() == 1);  // one row a library, whatever the rounds
  const BaselineResult& b = r->baselines.front();
  INFO(b.reason);
  CHECK(b.status != Status::error);
  CHECK(b.timing.repetitions >= 5);
  CHECK(b.max_rel_error <= matmul_error_limit(MatmulDtype::f32));
  CHECK(b.speedup == Approx(b.timing.min_ms / r->timing.min_ms));
  CHECK(r->gflops == Approx(2.0 * 32 * 48 * 40 / (r->timing.min_ms * 1e-3) / 1e9));
}
