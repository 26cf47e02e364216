#include "matmul/baseline_worker.hpp"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <sstream>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "asm/target.hpp"
#include "harness/child_process.hpp"
#include "matmul/matmul_run.hpp"
#include "report/json_report.hpp"

namespace peakprobe {
namespace {

using nlohmann::json;

json timing_json(const TimingSummary& t) {
  return {{"mean_ms", t.mean_ms}, {"min_ms", t.min_ms}, {"max_ms", t.max_ms},
          {"std_ms", t.std_ms}, {"repetitions", t.repetitions}, {"warmup", t.warmup}};
}

// Throws nlohmann's typed errors on a wrong document; the caller turns them into a row's reason.
BaselineResult result_from(const json& j) {
  BaselineResult b;
  b.library = j.at("library").get<std::string>();
  b.path = j.at("path").get<std::string>();
  b.status = j.at("status").get<std::string>() == "ok" ? Status::ok : Status::error;
  b.reason = j.at("reason").get<std::string>();
  b.version = j.value("version", std::string());
  const json& t = j.at("timing");
  b.timing.mean_ms = t.at("mean_ms").get<double>();
  b.timing.min_ms = t.at("min_ms").get<double>();
  b.timing.max_ms = t.at("max_ms").get<double>();
  b.timing.std_ms = t.at("std_ms").get<double>();
  b.timing.repetitions = t.at("repetitions").get<int>();
  b.timing.warmup = t.at("warmup").get<int>();
  b.max_rel_error = j.at("max_rel_error").get<double>();
  if (b.status == Status::ok && !(b.timing.repetitions > 0 && b.timing.min_ms > 0)) {
    b.status = Status::error;
    b.reason = "the worker answered without a timing";
  }
  return b;
}

}  // namespace

bool openblas_fell_back(const BaselineOutcome& outcome, const CpuInfo& cpu) {
  if (!outcome.available || outcome.result.status != Status::ok) return false;
  const auto cores = isa::host_target().openblas_cores(cpu);
  if (cores.fallback.empty() || cores.for_features.empty()) return false;
  const std::string& v = outcome.result.version;
  if (v.rfind("OpenBLAS", 0) != 0) return false;
  // The core's name as a word of the configuration string ("... DYNAMIC_ARCH NO_AFFINITY Prescott MAX_THREADS=64").
  std::istringstream words(v);
  for (std::string w; words >> w;)
    if (w == cores.fallback) return true;
  return false;
}

std::string encode_job(const BaselineJob& job) {
  return json{{"library", job.library},
              {"m", job.m}, {"n", job.n}, {"k", job.k}, {"batch", job.batch},
              {"dtype", to_string(job.dtype)},
              {"threads", job.threads},
              {"cold_cache", to_string(job.cold_cache)},
              {"flush_tlb", job.flush_tlb},
              {"warmup", job.warmup}, {"min_repetitions", job.min_repetitions},
              {"max_repetitions", job.max_repetitions}, {"min_seconds", job.min_seconds},
              {"pin_cpu", job.pin_cpu}, {"pile_bytes", job.pile_bytes},
              {"isa_level", job.isa_level},
              {"openblas_coretype", job.openblas_coretype}}
      .dump();
}

Expected<BaselineJob> decode_job(const std::string& text) {
  try {
    const json j = json::parse(text);
    BaselineJob job;
    job.library = j.at("library").get<std::string>();
    job.m = j.at("m").get<int64_t>(), job.n = j.at("n").get<int64_t>(), job.k = j.at("k").get<int64_t>();
    job.batch = j.at("batch").get<int64_t>();
    const std::string dtype = j.value("dtype", std::string("f32"));
    bool known_dtype = false;
    for (MatmulDtype d : {MatmulDtype::f32, MatmulDtype::bf16, MatmulDtype::i8})
      if (dtype == to_string(d)) job.dtype = d, known_dtype = true;
    if (!known_dtype) return make_error(fmt::format("dtype '{}' is not f32, bf16 or int8", dtype));
    job.threads = j.at("threads").get<int>();
    auto cold = parse_cold_cache_mode(j.at("cold_cache").get<std::string>());
    if (!cold) return make_error(cold.error());
    job.cold_cache = *cold;
    job.flush_tlb = j.at("flush_tlb").get<bool>();
    job.warmup = j.at("warmup").get<int>();
    job.min_repetitions = j.at("min_repetitions").get<int>();
    job.max_repetitions = j.at("max_repetitions").get<int>();
    job.min_seconds = j.at("min_seconds").get<double>();
    job.pin_cpu = j.at("pin_cpu").get<int>();
    job.pile_bytes = j.at("pile_bytes").get<uint64_t>();
    job.isa_level = j.value("isa_level", std::string());
    if (!job.isa_level.empty()) {
      const auto levels = isa::host_target().isa_levels();
      if (std::find(levels.begin(), levels.end(), job.isa_level) == levels.end())
        return make_error(fmt::format("isa_level '{}' is not a level of this build", job.isa_level));
    }
    job.openblas_coretype = j.value("openblas_coretype", std::string());
    if (job.openblas_coretype.size() > 32 ||
        !std::all_of(job.openblas_coretype.begin(), job.openblas_coretype.end(),
                     [](char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; }))
      return make_error(fmt::format("openblas_coretype '{}': expected up to 32 letters and digits", job.openblas_coretype));
    if (!job.openblas_coretype.empty() && !job.isa_level.empty())
      return make_error("openblas_coretype with isa_level: the level sets its own");
    // The same limits the CLI enforces: a job is written by our own parent, but a worker started by
    // hand must not allocate without bound either.
    for (int64_t d : {job.m, job.n, job.k})
      if (d < 1 || d > 65536) return make_error(fmt::format("dimension {} outside 1..65536", d));
    if (job.batch < 1 || job.batch > (1 << 20)) return make_error(fmt::format("batch {} outside 1..1048576", job.batch));
    if (job.threads < 1 || job.threads > 4096) return make_error(fmt::format("threads {} outside 1..4096", job.threads));
    if (job.warmup < 0 || job.min_repetitions < 1 || job.max_repetitions < job.min_repetitions ||
        !(job.min_seconds >= 0 && job.min_seconds < 3600))
      return make_error("repetition counts or min_seconds out of range");
    return job;
  } catch (const json::exception& e) {
    return make_error(fmt::format("not a baseline job: {}", e.what()));
  }
}

BaselineOutcome run_baseline_isolated(const BaselineJob& job, double time_limit_s) {
  BaselineOutcome out;
  out.result.library = job.library;
  auto fail = [&](std::string why) {
    out.result.status = Status::error;
    out.result.reason = std::move(why);
    return out;
  };
  const std::string exe = worker_executable();
  if (exe.empty())
    return fail("not run: this program does not dispatch worker processes (enable_worker_dispatch), and "
                "a BLAS library never runs inside peakprobe's own process");
  auto child = run_child(exe, {"peakprobe-worker", kWorkerArg, "baseline", std::to_string(::getpid()), encode_job(job)},
                         time_limit_s);
  if (!child) return fail(fmt::format("worker process: {}", child.error()));
  if (!child->clean()) {
    std::string why = "the library's worker process was " + describe(*child);
    if (child->answer.empty()) return fail(why);
    // An answer was written before the end: keep the figures, say how it ended.
    try {
      const json answer = json::parse(child->answer);
      if (answer.contains("error")) return fail(answer.at("error").get<std::string>() + "; " + why);
      out.result = result_from(answer);
      if (out.result.status == Status::ok) out.result.status = Status::error;
      out.result.reason = out.result.reason.empty() ? why : out.result.reason + "; " + why;
      return out;
    } catch (const json::exception&) {
      return fail(why);
    }
  }
  try {
    const json answer = json::parse(child->answer);
    if (answer.contains("unavailable")) {
      out.available = false;
      out.unavailable = answer.at("unavailable").get<std::string>();
      return out;
    }
    out.result = result_from(answer);
    return out;
  } catch (const json::exception& e) {
    return fail(fmt::format("the worker's answer is not a result: {}", e.what()));
  }
}

int baseline_worker_main(const std::string& job_text, int parent_pid) {
  die_with_parent(parent_pid);
  auto job = decode_job(job_text);
  if (!job) {
    // Also on stderr: a worker started by hand has no answer descriptor to read.
    std::fprintf(stderr, "peakprobe: %s baseline: %s\n", kWorkerArg, job.error().c_str());
    write_worker_answer(json_text(json{{"error", job.error()}}));
    ::_exit(2);
  }
  auto measured = measure_baseline_here(*job);
  if (!measured) {
    write_worker_answer(json_text(json{{"unavailable", measured.error()}}));
    ::_exit(0);
  }
  const BaselineResult& b = *measured;
  write_worker_answer(json_text(json{{"library", b.library},
                              {"path", b.path},
                              {"version", b.version},
                              {"status", to_string(b.status)},
                              {"reason", b.reason},
                              {"timing", timing_json(b.timing)},
                              {"max_rel_error", b.max_rel_error}}));
  ::_exit(0);
}

}  // namespace peakprobe
