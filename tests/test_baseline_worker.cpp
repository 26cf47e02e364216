// BLAS baselines in a worker process: the job survives the command line, bad jobs are typed errors,
// and a library that crashes, aborts, exits or hangs gives an error row naming how, while the
// caller goes on. The stand-in library (tests/fake_blas) misbehaves on request.
#include <stdlib.h>

#include <catch2/catch.hpp>

#include "sanitizer.hpp"
#include "skip.hpp"

#include "asm/target.hpp"
#include "cpu/cpu_info.hpp"
#include "matmul/baseline_worker.hpp"

using namespace peakprobe;

namespace {

BaselineJob small_job() {
  BaselineJob job;
  job.library = PEAKPROBE_FAKE_BLAS;
  job.m = 24, job.n = 20, job.k = 16, job.batch = 2;
  job.min_seconds = 0.01;
  job.min_repetitions = 3;
  return job;
}

BaselineOutcome run_fake(const char* mode, double limit = 60) {
  if (mode == nullptr) ::unsetenv("PEAKPROBE_FAKE_BLAS_MODE");
  else ::setenv("PEAKPROBE_FAKE_BLAS_MODE", mode, 1);
  BaselineOutcome o = run_baseline_isolated(small_job(), limit);
  ::unsetenv("PEAKPROBE_FAKE_BLAS_MODE");
  return o;
}

}  // namespace

TEST_CASE("baseline worker: a job survives encoding, a bad one is a typed error", "[baseline_worker]") {
  BaselineJob job = small_job();
  job.cold_cache = ColdCacheMode::wei;
  job.flush_tlb = true;
  job.threads = 2;
  job.pin_cpu = 1;
  job.pile_bytes = 123456789;
  auto back = decode_job(encode_job(job));
  REQUIRE(back.ok());
  CHECK(back->library == job.library);
  CHECK(back->m == 24);
  CHECK(back->n == 20);
  CHECK(back->k == 16);
  CHECK(back->batch == 2);
  CHECK(back->threads == 2);
  CHECK(back->cold_cache == ColdCacheMode::wei);
  CHECK(back->flush_tlb);
  CHECK(back->pin_cpu == 1);
  CHECK(back->pile_bytes == 123456789u);
  CHECK(back->min_seconds == job.min_seconds);
  CHECK(back->dtype == MatmulDtype::f32);
  CHECK(back->isa_level.empty());
  job.isa_level = isa::host_target().isa_levels().front();
  REQUIRE(decode_job(encode_job(job)).ok());
  CHECK(decode_job(encode_job(job))->isa_level == job.isa_level);
  job.isa_level = "no-such-level";
  REQUIRE_FALSE(decode_job(encode_job(job)).ok());
  CHECK_THAT(decode_job(encode_job(job)).error(), Catch::Contains("no-such-level"));
  job.isa_level.clear();
  job.dtype = MatmulDtype::i8;
  REQUIRE(decode_job(encode_job(job)).ok());
  CHECK(decode_job(encode_job(job))->dtype == MatmulDtype::i8);
  std::string text = encode_job(job);
  text.replace(text.find("\"int8\""), 6, "\"f16\"");
  REQUIRE_FALSE(decode_job(text).ok());
  CHECK_THAT(decode_job(text).error(), Catch::Contains("f16"));
  job.dtype = MatmulDtype::f32;

  CHECK_FALSE(decode_job("").ok());
  CHECK_FALSE(decode_job("[1,2]").ok());
  CHECK_FALSE(decode_job("{\"library\": 3}").ok());
  job.m = 1 << 20;
  CHECK_FALSE(decode_job(encode_job(job)).ok());
  job.m = 24;
  job.batch = 0;
  CHECK_FALSE(decode_job(encode_job(job)).ok());
  job.batch = 2;
  // The core type for an OpenBLAS that fell back: letters and digits, never beside an ISA level.
  job.openblas_coretype = "Core7X";
  REQUIRE(decode_job(encode_job(job)).ok());
  CHECK(decode_job(encode_job(job))->openblas_coretype == "Core7X");
  job.openblas_coretype = "a b";
  CHECK_THAT(decode_job(encode_job(job)).error(), Catch::Contains("openblas_coretype 'a b'"));
  job.openblas_coretype = std::string(33, 'a');
  CHECK_FALSE(decode_job(encode_job(job)).ok());
  job.openblas_coretype = "Core7X";
  job.isa_level = isa::host_target().isa_levels().front();
  CHECK_THAT(decode_job(encode_job(job)).error(), Catch::Contains("the level sets its own"));
}

TEST_CASE("baseline worker: an OpenBLAS on its generic fallback core is told, where the CPU runs a better one",
          "[baseline_worker]") {
  const CpuInfo cpu = detect_cpu_info();
  const auto cores = isa::host_target().openblas_cores(cpu);
  REQUIRE_FALSE(cores.fallback.empty());
  BaselineOutcome fell;
  fell.result.status = Status::ok;
  fell.result.version = "OpenBLAS 0.3.21 NO_LAPACKE DYNAMIC_ARCH NO_AFFINITY " + cores.fallback + " MAX_THREADS=64";
  if (cores.for_features.empty()) {
    CHECK_FALSE(openblas_fell_back(fell, cpu));  // nothing better to tell it
    PP_SKIP("this CPU's features run no OpenBLAS core better than its fallback " << cores.fallback);
  }
  CHECK(openblas_fell_back(fell, cpu));
  // Its own pick, a core of a like name, another library, a failed run: nothing to redo.
  BaselineOutcome own = fell;
  own.result.version = "OpenBLAS 0.3.21 NO_LAPACKE DYNAMIC_ARCH NO_AFFINITY " + cores.for_features + " MAX_THREADS=64";
  CHECK_FALSE(openblas_fell_back(own, cpu));
  BaselineOutcome like = fell;
  like.result.version = "OpenBLAS 0.3.21 DYNAMIC_ARCH " + cores.fallback + "2 MAX_THREADS=64";
  CHECK_FALSE(openblas_fell_back(like, cpu));
  BaselineOutcome other = fell;
  other.result.version = "BLIS 0.9.0 " + cores.fallback;
  CHECK_FALSE(openblas_fell_back(other, cpu));
  BaselineOutcome failed = fell;
  failed.result.status = Status::error;
  CHECK_FALSE(openblas_fell_back(failed, cpu));
  BaselineOutcome missing = fell;
  missing.available = false;
  CHECK_FALSE(openblas_fell_back(missing, cpu));
}

TEST_CASE("baseline worker: a library that behaves is timed and checked in the worker", "[baseline_worker]") {
  BaselineOutcome o = run_fake(nullptr);
  REQUIRE(o.available);
  CHECK(o.result.status == Status::ok);
  CHECK(o.result.reason.empty());
  CHECK(o.result.path.find("fake_blas") != std::string::npos);
  CHECK(o.result.timing.repetitions >= 3);
  CHECK(o.result.timing.min_ms > 0);
  CHECK(o.result.max_rel_error < 1e-5);
}

TEST_CASE("baseline worker: a library peakprobe cannot hold to an ISA level is an error row, not timed", "[baseline_worker]") {
  ::unsetenv("PEAKPROBE_FAKE_BLAS_MODE");
  BaselineJob job = small_job();
  job.isa_level = isa::host_target().isa_levels().front();
  // Only a level narrower than the widest asks anything of a library (an ISA with one level has none).
  if (isa::host_target().library_isa_limit(job.isa_level).level.empty())
    PP_SKIP("the ISA's narrowest matmul level '" << job.isa_level << "' is its widest: no library is held to it");
  BaselineOutcome o = run_baseline_isolated(job, 60);
  REQUIRE(o.available);
  CHECK(o.result.status == Status::error);
  CHECK_THAT(o.result.reason, Catch::Contains("cannot hold") && Catch::Contains(job.isa_level));
  CHECK(o.result.timing.repetitions == 0);
}

TEST_CASE("baseline worker: a crash, an abort, an exit and a hang each give an error naming them", "[baseline_worker]") {
  const BaselineOutcome crash = run_fake("crash");
  REQUIRE(crash.available);
  CHECK(crash.result.status == Status::error);
  CHECK_THAT(crash.result.reason, Catch::Contains(test::kSegfaultWords));

  const BaselineOutcome abort = run_fake("abort");
  CHECK(abort.result.status == Status::error);
  CHECK_THAT(abort.result.reason, Catch::Contains("SIGABRT"));

  const BaselineOutcome exited = run_fake("exit");
  CHECK(exited.result.status == Status::error);
  CHECK_THAT(exited.result.reason, Catch::Contains("exited with code 7"));

  const BaselineOutcome hang = run_fake("hang", 1.0);
  CHECK(hang.result.status == Status::error);
  CHECK_THAT(hang.result.reason, Catch::Contains("time limit"));
}

TEST_CASE("baseline worker: a library without a GEMM of the dtype is unavailable, not an error", "[baseline_worker]") {
  // The stand-in has cblas_sgemm only: asked for bf16 it has nothing to run.
  BaselineJob job = small_job();
  job.dtype = MatmulDtype::bf16;
  const BaselineOutcome o = run_baseline_isolated(job, 60);
  CHECK_FALSE(o.available);
  CHECK_THAT(o.unavailable, Catch::Contains("no bf16 GEMM"));
}

TEST_CASE("baseline worker: a library that is not there is unavailable, not an error", "[baseline_worker]") {
  BaselineJob job = small_job();
  job.library = "/nonexistent/libblas-that-is-not-here.so";
  const BaselineOutcome o = run_baseline_isolated(job, 60);
  CHECK_FALSE(o.available);
  CHECK_THAT(o.unavailable, Catch::Contains("/nonexistent/libblas-that-is-not-here.so"));
}
