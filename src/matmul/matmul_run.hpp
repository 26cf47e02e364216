// One matmul measurement as the benchmark spec asks: operands filled with seeded random values,
// the result checked against the plain reference (max_rel_error), warm-up runs, then repetitions
// until both a count and a time are reached; mean, min, max and std of the wall time of a call.
// Optionally every run reads cold operands (benchdnn's --cold-cache) and the same problem is run
// by installed BLAS libraries for a side-by-side baseline.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "matmul/baseline_worker.hpp"
#include "matmul/gemm.hpp"
#include "memory/cold_cache.hpp"
#include "peakprobe/expected.hpp"
#include "peakprobe/matmul_result.hpp"

namespace peakprobe {

struct MatmulRequest {
  int64_t m = 0, n = 0, k = 0, batch = 1;
  MatmulDtype dtype = MatmulDtype::f32;
  int threads = 1;                // asked for; the config may use fewer when there are few tiles
  MatmulConfig config;
  std::string config_source = "cost model";
  ColdCacheMode cold_cache = ColdCacheMode::none;
  bool flush_tlb = false;         // with a cold cache: also evict the TLB before each run
  int warmup = 2;
  int min_repetitions = 5;
  double min_seconds = 0.5;       // keep repeating until this much wall time (cold-cache set-up included) was spent
  int max_repetitions = 10000;
  // Libraries to run too: "onednn" (every dtype), "openblas" and "blis" (f32 only), paths.
  std::vector<std::string> baselines;
  // matmul --isa: the level the kernels were limited to (the Gemm's CpuInfo already is); the baselines
  // are held to it too. "" when not limited.
  std::string isa_level;
  // Each baseline runs in a child process (baseline_worker.hpp) killed after this many seconds;
  // 0: 30 s plus 20 times the wall time of our own checked and timed run.
  double baseline_time_limit_s = 0;
  // Rounds of the side by side (side_by_side_order), each side keeping its best round; 1 without baselines.
  int rounds = 1;
};

// The order in which `rounds` rounds time ours (-1) and the baselines (0 .. libraries - 1): round 1
// runs ours, then each library; round 2 the libraries in reverse, then ours; round 3 as round 1; and
// so on. Over an even number of rounds every side's mean place in the order is the same, so a burst
// of the host's (a VM's neighbours) is as likely to hit any side's rounds. Each side's time is its
// fastest round and the speedup the ratio of the two: on the Zen 3 VM one round at a time read
// OpenBLAS 23.6 ms at 1024^3 in one bench and 25.7 in the next (ours 27.4 and 25.7), and at 513^3
// BLIS took 1.19 times ours' time in one round and 1.05 in the other.
std::vector<int> side_by_side_order(int rounds, int libraries);

// One library's round, as the choice of its row sees it.
struct RoundVerdict {
  bool wrong = false;    // its result differed from the reference
  bool doubted = false;  // timed, but the witness beside it doubted the timing
  bool failed = false;   // no timing: a crash, a hang, an error
  double min_ms = 0;
};
// Which round a library's row keeps: the first wrong one (a wrong answer is the row's finding); else
// the fastest timed one (a doubt only adds time, so a doubted minimum still bounds the truth from
// above); else the first. `doubted_always`: every timed round was doubted.
size_t kept_library_round(const std::vector<RoundVerdict>& rounds, bool& doubted_always);

// The share of wall time each core of the product ran its thread is scanned this long before the
// warm-up and as long after the timed calls (MatmulResult::availability): about ten of this VM's 1 ms interruption
// periods each side, a small cost beside the half second of timed calls.
inline constexpr double kAvailabilityScanMs = 10;

// A core-bound rate (the kernel alone's k loop in L1) timed while the core ran at `timed_ghz`, as it
// would be at `at_ghz` (the product's fastest call's clock): rate x at_ghz / timed_ghz. The rate as
// timed where either clock is unknown (not positive).
double rate_at_clock(double rate, double timed_ghz, double at_ghz);

// Bytes of A, B and C of the whole batch.
double matmul_bytes(int64_t m, int64_t n, int64_t k, int64_t batch, MatmulDtype dtype);
// "matmul f32 1024x1024x1024 batch 1, 1 thread" (+ ", cold all" when cold, + ", isa LEVEL" when held
// to an ISA level): the row identity for compare.
std::string matmul_name(int64_t m, int64_t n, int64_t k, int64_t batch, MatmulDtype dtype, int threads,
                        ColdCacheMode cold, const std::string& isa_level = "");
// Largest error the check accepts: exact for int8, 1e-4 relative for f32 and bf16 (f32 accumulation).
double matmul_error_limit(MatmulDtype dtype);

// Runs and times the request on `gemm`; fills everything of MatmulResult except the ceiling,
// bound_by and efficiency (the caller measures the roof). status is error when the check fails.
// Baselines run isolated: a library that crashes, exits or hangs gives a baseline row with status
// error and the signal or time limit named; one that is not installed gives no row (logged).
Expected<MatmulResult> run_matmul(const CpuInfo& cpu, Gemm& gemm, const MatmulRequest& request);

// The worker's side of a baseline: opens the library in this process, fills the same seeded operands,
// checks and times sgemm exactly as run_matmul times ours. gflops and speedup are left to the parent.
// An error: the library could not be opened (not installed). status error: its run failed.
Expected<BaselineResult> measure_baseline_here(const BaselineJob& job);

// Best time in ms of `config` over a short run (autotune): warm-up 1, then 3 runs or `budget_ms`.
Expected<double> time_matmul_config(Gemm& gemm, int64_t m, int64_t n, int64_t k, const MatmulConfig& config,
                                    int64_t batch = 1, double budget_ms = 100);

// mean, min, max, population std of times in ms.
TimingSummary summarize_times(const std::vector<double>& ms, int warmup);

}  // namespace peakprobe
