// A BLAS baseline run in a child process (harness/child_process.hpp): OpenBLAS's or BLIS's threads,
// OpenMP runtime and exit handlers live and die there, so a library that crashes (BLIS's OpenMP
// build inside libgomp), calls exit() or hangs costs its own row and nothing else. The parent sends
// the job as JSON on the command line; the worker recreates the same seeded operands, checks and
// times cblas_sgemm, and answers with JSON on the answer pipe.
#pragma once
#include <cstdint>
#include <string>

#include "memory/cold_cache.hpp"
#include "peakprobe/cpu_info.hpp"
#include "peakprobe/expected.hpp"
#include "peakprobe/matmul_result.hpp"

namespace peakprobe {

struct BaselineJob {
  std::string library;  // as --baseline names it: "onednn", "openblas", "blis", a path or a soname
  int64_t m = 0, n = 0, k = 0, batch = 1;
  MatmulDtype dtype = MatmulDtype::f32;
  int threads = 1;
  ColdCacheMode cold_cache = ColdCacheMode::none;
  bool flush_tlb = false;
  int warmup = 2, min_repetitions = 5, max_repetitions = 10000;
  double min_seconds = 0.5;
  int pin_cpu = -1;         // the core the worker's calling thread sits on; -1: not pinned
  uint64_t pile_bytes = 0;  // cold-cache pile (cold_cache_pile_bytes of the parent's CPU)
  std::string isa_level;    // matmul --isa: the library is held to this vector ISA level; "" none
  // OPENBLAS_CORETYPE for an OpenBLAS that fell back to a generic core on this CPU (Target::openblas_cores);
  // "" leaves its own choice. Not with isa_level, whose limit sets its own.
  std::string openblas_coretype;
};

std::string encode_job(const BaselineJob& job);
// Typed errors for anything that is not a job this version writes.
Expected<BaselineJob> decode_job(const std::string& text);

struct BaselineOutcome {
  bool available = true;    // false: the library is not installed or has no GEMM of the dtype
  std::string unavailable;  // why, with the package to install
  BaselineResult result;    // when available: status ok with timing, or error with the reason
};

// Whether an OpenBLAS run (its configuration string in `outcome`'s version) used the generic core its
// DYNAMIC_ARCH builds fall back to on a CPU model they do not know, while `cpu`'s features run a
// better one (Target::openblas_cores): then it is timed again with that core type.
bool openblas_fell_back(const BaselineOutcome& outcome, const CpuInfo& cpu);

// Runs the job in a worker process with a time limit. Never throws, never crashes the caller.
BaselineOutcome run_baseline_isolated(const BaselineJob& job, double time_limit_s);

// The worker's side, for `<exe> __worker baseline JOB`: measures and writes the answer to the
// answer descriptor, then leaves with _exit (no exit handlers: BLIS's have crashed at exit before).
int baseline_worker_main(const std::string& job_text, int parent_pid);

}  // namespace peakprobe
