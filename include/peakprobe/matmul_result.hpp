// A finished matmul measurement, handed to reporters (JSON, Markdown, console) and to `compare`.
// Units are in the field names; times are milliseconds of one whole call (all batch items).
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "peakprobe/core_availability.hpp"
#include "peakprobe/result.hpp"

namespace peakprobe {

// f32: A, B, C in f32. bf16: A, B in bf16, C in f32 (a bf16 pair dot product into f32 lanes). int8:
// A u8, B s8, C s32 (the u8 x s8 convention of oneDNN and of the 4-byte integer dot products).
enum class MatmulDtype { f32, bf16, i8 };
const char* to_string(MatmulDtype d);

// The tiling a run used: the register block (mr rows x nr columns, nr = nv vectors), the cache
// blocks (mc x kc of A, kc x nc of B) and the thread grid: batch_threads groups, each running its
// own batch items on thread_rows x thread_cols x k_threads threads (k_threads share K: each sums
// its part of K, and the parts are added), so batch_threads x k_threads x thread_rows x thread_cols
// = threads.
struct MatmulConfig {
  int mr = 0, nv = 0, nr = 0;
  int mc = 0, kc = 0, nc = 0;
  int threads = 1, thread_rows = 1, thread_cols = 1;
  int batch_threads = 1;
  int k_threads = 1;
  bool pack_a = true;  // false: read A in place (blocks the kernels keep row pointers for, K whole k groups)
  bool pack_b = true;  // false: read B's panels in place (only where b_in_place_possible says so)
  bool operator==(const MatmulConfig&) const = default;
};

// The kernels read B in place for f32: a packed f32 micro-panel is B's rows cut to nr columns, so the kernel can
// step ldb through B itself; bf16/int8 words hold k groups that only packing puts together. On
// several rows of threads each thread reads B in place into panels of its own (no thread waits for
// another's packing).
inline bool b_in_place_possible(MatmulDtype dtype) { return dtype == MatmulDtype::f32; }

struct TimingSummary {
  double mean_ms = 0, min_ms = 0, max_ms = 0, std_ms = 0;
  int repetitions = 0, warmup = 0;
};

// The same problem run by an installed BLAS (cblas_sgemm of OpenBLAS or BLIS, found at run time).
struct BaselineResult {
  std::string library;  // "openblas", "blis"
  std::string path;     // the shared object that was loaded
  // What the library says of itself and the kernels it picked: "OpenBLAS 0.3.21 ... Zen",
  // "BLIS 0.9.0 zen3 pthreads", "oneDNN 2.6.3 OpenMP, max ISA <level>" under --isa; "" when it cannot tell.
  std::string version;
  TimingSummary timing;
  double gflops = 0;            // from min_ms
  double max_rel_error = 0;     // against the same reference as ours
  double speedup = 0;           // baseline min_ms / our min_ms: > 1 means peakprobe is faster
  // ok, or error when the library crashed, exited or hung in its worker process (reason names the
  // signal or the time limit); an error baseline has no timing and never changes the exit code.
  Status status = Status::ok;
  std::string reason;
};

struct MatmulResult {
  std::string name;             // identity for `compare`: "matmul f32 1024x1024x1024 batch 1, 1 thread"
  int64_t m = 0, n = 0, k = 0, batch = 1;
  MatmulDtype dtype = MatmulDtype::f32;
  int threads = 1;
  std::string cold_cache = "none";
  std::string kernel;           // "<width name> f32 6x64" (Target::width_name)
  std::string isa_level;        // --isa: the vector ISA level kernels and baselines were held to; "" none
  MatmulConfig config;
  std::string config_source;    // "cost model", "autotune", "--config"
  double max_rel_error = 0;
  int64_t rows_checked = 0;
  TimingSummary timing;
  // Rounds of the side by side with the baselines (ours and each library timed once a round, in
  // turns that balance early and late; each kept its best round): 1 without baselines.
  int rounds = 1;
  double gflops = 0;            // 2*M*N*K*batch / min time (GOP/s for int8)
  double arithmetic_intensity = 0;  // FLOP per byte of A, B and C moved once
  // The roof that binds. A compute roof is at the clock the product ran at (`clock`): the roof probe's
  // figure (ceiling_measured_gflops, at ceiling_clock_ghz) times clock.ghz / ceiling_clock_ghz, and
  // times ceiling_sustained_share where the core slows under a sustained load of the roof.
  std::optional<double> ceiling_gflops;
  std::optional<double> ceiling_measured_gflops;  // the compute roof as its probe measured it
  double ceiling_clock_ghz = 0;  // the roof probe's clock (several threads: their run's, docs/output.md); 0 when not known
  // How much of its probed rate the roof instruction kept when run without pause on the first
  // thread's core, against the clock read right after as the product's is (0: not measured). A compute
  // roof is scaled by it where it lies more than 2% below 1: the core slows under such a load and is
  // back at speed by the time the clock between the product's calls is read (a vector frequency
  // licence; matmul/sustained_roof.hpp).
  double ceiling_sustained_share = 0;
  std::string ceiling_source;   // the probe behind the ceiling: the instruction text (Target::matmul_roof)
  std::string ceiling_missing;  // why ceiling_gflops is empty ("" when it is measured)
  // Where the kernels chose between the dtype's dot product and widening to the wider multiply-add
  // (bf16: its dot product or the f32 FMA; --widen), the roof not taken: its instruction and the rate
  // its probe measured (empty when it could not be measured). Empty source: no choice on this CPU.
  std::string ceiling_alternative_source;
  std::optional<double> ceiling_alternative_gflops;
  std::string bound_by;         // "compute f32 512" or "memory DRAM"
  std::optional<double> efficiency;  // gflops / ceiling
  // Under a compute roof: the efficiency without the interruptions of the scanned core (several
  // threads: the team's least available core) that the fastest call could not slip between
  // (harness/core_availability.hpp, unavoidable_interruptions): the roof's probe samples are short
  // enough to run between them, a call of milliseconds is not. Empty otherwise.
  std::optional<double> efficiency_while_running;
  // The plan's register block alone: its packed kernel's k loop with A, B and C in L1, on the core
  // the product's first thread ran on, in GFLOP/s (GOP/s for int8) of wall time, times the threads
  // the product started (one core's loop, not all of them at once). What the kernel's own
  // instructions allow on this core before memory, packing and threads take their share: gflops
  // over it is the share of that ceiling the product reached. Empty where not measured (an
  // emulator, a wrong product, threads that share cores, a timing that failed). Where the clock was
  // read around both, the rate is at the clock of the product's fastest call (`clock.ghz`): the
  // loop's wall-time rate times that clock over kernel_l1_ghz, the loop's own: a host may move the
  // clock between them (3.6 and 4.2 GHz on the Sapphire Rapids-class VM, seconds apart). Except where
  // the ceiling carries the core's sustained share (it lowers the roof) and the loop's clock read
  // slower than the product's: the loop ran under the slower clock the share describes, and its
  // wall-time rate as it ran is the figure (score_matmul; the console says "as it ran at").
  std::optional<double> kernel_l1_gflops;
  // The caller's core clock around the kernel alone's timing (0: not read; kernel_l1_gflops is then
  // the loop's wall-time rate as it ran).
  double kernel_l1_ghz = 0;
  // The plan's k step as a stream of its own instructions (`mix` of the block's loads, spreads of A
  // and multiply-adds in the kernel's counts, independent of each other), measured on the core the
  // roof was, between two runs of the roof instruction: kernel_mix_share is the stream's rate in the
  // product's operations over the roof instruction's, each at the clock of its own samples, and
  // kernel_mix_gflops that share of the compute ceiling. What the kernel's instructions allow on
  // this core whatever the code around them does: where the loop alone (kernel_l1_gflops) reaches
  // it, the rest of the gap to the ceiling is the core's (a slower clock under loads, a port the
  // loads share with the multiply-adds), not the kernel's scheduling. Empty where not measured (no
  // kernel alone, tiles, a memory roof, a stream that could not be measured truthfully).
  std::optional<double> kernel_mix_gflops;
  double kernel_mix_share = 0;
  struct StepPart {
    std::string instruction;
    int per_step = 0;  // instances in one k step of the loop
    bool operator==(const StepPart& o) const { return instruction == o.instruction && per_step == o.per_step; }
  };
  std::vector<StepPart> kernel_mix_step;  // the step measured (empty when none was)
  // With --autotune (matmul) or --model-gap (bench matmul): how much slower the cost model's first
  // choice ran than the fastest tiling the search measured (0.05 = 5% slower).
  std::optional<double> model_gap;
  // The caller's core clock right before the first and right after the last timed call (0 when it
  // could not be calibrated, as under an emulator).
  ClockReading clock;
  // The share of wall time the caller's core ran the caller (a plan of several threads: the team's
  // core whose stops the fastest call could least avoid), scanned before the warm-up and after the
  // timed calls (scanned_ms 0 when it was not, as under an emulator).
  CoreAvailability availability;
  std::vector<BaselineResult> baselines;
  Status status = Status::ok;
  std::string reason;
};

}  // namespace peakprobe
