// What `matmul` and `bench matmul` share: the roof each dtype is scored against (its dot/FMA
// instruction measured on the same pinned cores), the cost model fed with those figures, the
// plan for a shape (model, autotune or --config), and the scoring of a finished run.
#pragma once
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "asm/matmul_kernel.hpp"
#include "cli/commands.hpp"
#include "harness/probe_runner.hpp"
#include "matmul/cost_model.hpp"
#include "matmul/gemm.hpp"
#include "matmul/sustained_roof.hpp"
#include "memory/cold_cache.hpp"
#include "peakprobe/expected.hpp"
#include "peakprobe/matmul_result.hpp"

namespace peakprobe::cli {

struct MatmulRoof {
  std::optional<double> gflops;  // all `threads` cores together
  // The probe's rate on one core where that reading was ok, also where the run of several threads
  // was not (a busy host on one of the team's cores): what widened_roof_faster compares when a team
  // figure is missing.
  std::optional<double> per_core_gflops;
  std::string source;            // the instruction text (Target::matmul_roof)
  int vector_bits = 0;           // its vector width (0: not known, the machine model's width is used)
  bool tiles = false;             // the roof is the matrix unit's tile multiply (bound_by names the unit)
  double per_cycle = 1;          // instructions per cycle per core (1 / reciprocal throughput)
  double latency = 4;            // cycles
  ClockReading clock;             // the first thread's core, around the probe
  // A roof of several threads: the clock of the run of all of them at which their summed rate is
  // the mean per-cycle rate times the threads (threaded_rate; the threads' own clocks averaged with
  // each thread's ops per cycle as weights); 0 for one thread or when a thread's cycles are unknown.
  double team_clock_ghz = 0;
  // Why gflops is empty: the probe's status and reason after its last attempt, or why it could not run.
  std::string missing;
  int threads = 1;
  // The logical CPU a one-thread roof was measured on (the runner's quietest core, or --cpu); -1 when
  // unknown. A roof of several threads ran on the first `threads` CPUs of the core order.
  int cpu = -1;
  MatmulDtype dtype = MatmulDtype::f32;  // the problem's dtype
  // What the roof instruction computes when the kernels widen the dtype (Target::gemm_widened):
  // "f32" for bf16, "int16" for int8; empty when it is the dtype itself.
  std::string widened_to;
  // How much of its probed rate the roof instruction keeps when run without pause on the first
  // thread's core (matmul/sustained_roof.hpp): share 0 when not measured.
  SustainedShare sustained;
  // Where the kernels had a choice between the dtype's dot product and the widened multiply-add
  // (Target::gemm_widened_alternative), the roof not taken: its instruction and rate as measured
  // (empty when it could not be measured). Empty source: there was no choice.
  std::string alternative_source;
  std::optional<double> alternative_gflops;
};

// The dtype's instruction as the kernels use it (Target::matmul_roof): the widest multiply-add or dot product.
std::string roof_instruction(const CpuInfo& cpu, MatmulDtype dtype);
// Measures it with a ProbeRunner on `threads` cores from --cpu; gflops empty when it cannot run.
// `quiet`: a roof measured only to be compared (measure_roof_choosing_kernels) logs its failures at
// debug level: the row keeps the other roof and does have a ceiling.
MatmulRoof measure_roof(const GlobalOptions& g, const CpuInfo& cpu, MatmulDtype dtype, int threads, bool quiet = false);
// --widen: whether bf16 kernels widen to the f32 multiply-add: by measurement (automatic), always, never.
enum class WidenChoice { automatic, yes, no };
Expected<WidenChoice> parse_widen(const std::string& text);
const char* to_string(WidenChoice c);
// Why the kernels of `dtype` cannot follow `choice` on `cpu` ("" when they can): yes where they have
// no widened alternative and do not widen already (f32, int8 with its dot product), no where this
// width has no dot product for the dtype and the kernels must widen.
std::string widen_problem(const CpuInfo& cpu, MatmulDtype dtype, WidenChoice choice);
// Whether the kernels widen the dtype to run on the wider multiply-add (`widened`, measured for the
// CPU of Target::gemm_widened_alternative) rather than on its dot product (`native`): both measured,
// and the widened one faster by more than kWidenGain (the noise of two roof readings), per core on one
// thread, all threads together on several; where a team figure is missing (its run of several threads
// mistrusted), on their one-core readings, so that a host busy on one core for a moment does not
// keep the slower kernels.
inline constexpr double kWidenGain = 0.10;
bool widened_roof_faster(const MatmulRoof& native, const MatmulRoof& widened);
// measure_roof, and where the kernels of `dtype` could also widen (Target::gemm_widened_alternative),
// the widened roof too: where widened_roof_faster, `cpu` becomes the CPU as those kernels see it (an
// info line says so) and that roof is returned. --isa levels are applied before: this chooses within one.
// `choice` (--widen) other than automatic takes that side without comparing; both roofs are still
// measured where there is a choice, the other kept in alternative_* for the record. Check it with
// widen_problem first.
MatmulRoof measure_roof_choosing_kernels(const GlobalOptions& g, CpuInfo& cpu, MatmulDtype dtype, int threads,
                                         WidenChoice choice = WidenChoice::automatic);
// The CPU with its core order led by the one-thread roof's CPU, so that the product, its call
// calibration and its baselines run on the core the roof was measured on (the runner picks the
// quietest; the core order's first may be the busy one: on the Zen 5 VM CPU 0 ran 10-40% slowed in
// stretches while the roof read CPU 1, and a one-thread product there scored against CPU 1's roof).
// Unchanged for a roof of several threads, which ran on the core order's first CPUs like the team.
CpuInfo led_by_roof_core(const CpuInfo& cpu, const MatmulRoof& roof);
// The cost model's machine: caches and topology detected, clock and issue rate from the roof probe.
MachineModel machine_for(const CpuInfo& cpu, const MatmulRoof& roof);
// The same, plus what a call of the reference block costs on this core with C in each cache level
// and how fast A and B pack (call_calibration.hpp, about 0.15 s). What cannot be timed is left to the
// model's formula, with a warning.
MachineModel machine_for(const CpuInfo& cpu, const MatmulRoof& roof, Gemm& gemm);

// The tiling a run uses by default: the cost model ranks every candidate; when one run is short
// (predicted under 0.2 s), the best configuration of each of its top three register blocks (and of
// the other ways to share threads), its first choice with a small A block and with a narrow C panel
// over a deep K (and with its operands read in place or packed the other way: plan_candidates), and
// the analytical BLIS-style tiling are timed briefly on this very problem and the
// fastest is used, since
// the model's top candidates often lie within a few percent of each other. `checked` lists what was
// timed (ms), for --explain.
struct MatmulPlan {
  MatmulConfig config;
  std::string source;  // "cost model" or "cost model, best of N checked"
  std::vector<std::pair<MatmulConfig, double>> checked;
};
MatmulPlan plan_matmul(const CpuInfo& cpu, Gemm& gemm, const MatmulProblem& problem,
                       const std::vector<CandidateCost>& ranked);
// The configurations plan_matmul times, the model's first choice first: its best blocks, other
// thread splits, the first choice with other A and C blocks, operands packed or read in place the
// other way, the analytic tiling. Empty when `ranked` is.
std::vector<MatmulConfig> plan_candidates(const CpuInfo& cpu, Gemm& gemm, const MatmulProblem& problem,
                                          const std::vector<CandidateCost>& ranked);

// Ceiling, bound_by and efficiency: the compute roof, unless the arithmetic intensity times the
// model's DRAM bandwidth is lower (then the memory roof binds).
void score_matmul(MatmulResult& r, const MatmulRoof& roof, const MachineModel& machine);

// The plan's k step as a stream of its own instructions (Target::kernel_step of `shape`: the
// product's kernel, the one that reads A's rows where the plan leaves A unpacked), run as a `mix` in
// the smallest whole ratio of their counts on the roof's core, between two runs of the roof
// instruction (MatmulResult::kernel_mix_gflops). Only where the kernel alone was measured under a
// compute roof; about half a second. What cannot be measured truthfully is left empty and logged.
// `shares` keeps what was measured for each block and core, for the other shapes of a command.
void measure_kernel_mix(const GlobalOptions& g, const CpuInfo& cpu, const MatmulRoof& roof,
                        const isa::MicroKernelShape& shape, MatmulResult& r,
                        std::map<std::string, double>* shares = nullptr);
// The parts of that stream: the step's counts over their greatest common divisor (`divisor`).
struct KernelMixParts {
  std::vector<std::pair<std::string, int>> weights;
  std::vector<bool> multiply_add;  // of each weight: the block's multiply-accumulate
  int divisor = 0;                 // 0: no step
};
KernelMixParts kernel_mix_parts(const std::vector<isa::StepInstruction>& step);
// The stream's rate over the roof instruction's, both in the product's operations a second: one
// group of the stream is 1/divisor of a k step of `ops_per_step` operations and ran
// `cycles_per_group` cycles at `mix_ghz`; the roof ran `roof_before` and `roof_after` (GFLOP/s or
// GOP/s at their own clocks) right before and after it. Empty when an input is missing or the two
// roof runs disagree by more than kMixRoofAgreement: the clock moved under the stream, and a
// share of a moving clock describes no one moment.
inline constexpr double kMixRoofAgreement = 0.03;
// Whether a kernel's instruction stream (GFLOP/s) is a ceiling for its loop alone (the same units):
// the loop may beat it by kLoopAboveStream, the two being timed moments apart, each within a percent
// or two (the loop read 97.0-101.8% of its stream on the Sapphire Rapids-class VM with 512-bit
// blocks). Beyond that the stream does not stand for the loop on this core, and no ceiling is
// reported.
inline constexpr double kLoopAboveStream = 0.05;
bool stream_bounds_loop(double stream, double loop);
// The chains and rounds of a kernel's stream (`parts`, in the order of `multiply_add`): its
// multiply-adds run at their rate only on `needed` independent chains (their latency times their
// rate), and two more for slack; the stream runs as many rounds as that takes. `rounds_for` says the
// most rounds a plan of the parts allows (ProbeRunner::mix_rounds). Where the registers run short,
// the other parts, whose results the stream never reads again, go down to kFewStreamChains, then
// the multiply-adds down to fewer chains, each count only where the chains keep up
// (chains_keep_up: with slack first, then at their bound), over up to kMoreStreamRounds round
// counts, the fewest first. Returns the rounds to run (0: as many as the registers allow, the parts
// untouched), or empty when no such count fits. A stream that plans with no chains at all (a form
// that cannot be planned) is left to run_mix to refuse.
inline constexpr int kFewStreamChains = 2;
inline constexpr int kMoreStreamRounds = 4;
std::optional<int> stream_rounds(std::vector<MixSpec>& parts, const std::vector<bool>& multiply_add, int needed,
                                 const std::function<int(const std::vector<MixSpec>&)>& rounds_for);
// Whether `instances` multiply-adds a copy of the stream (its rounds of groups), instance j on chain
// j mod `chains`, keep up with their rate, which takes `needed` chains: the busiest chain's links
// must fit in the copy's time at that rate. Fewer chains than instances that do not divide them
// leave some chains a link more: 12 a copy on 10 chains put 2 links of a 4-cycle latency (8 cycles)
// in a copy of 6 at two a cycle, and the 256-bit 4x24 block's stream ran at 75% of its FMAs' rate
// on the Sapphire Rapids-class VM for it.
bool chains_keep_up(int instances, int chains, int needed);
std::optional<double> kernel_mix_share(double ops_per_step, int divisor, double cycles_per_group, double mix_ghz,
                                       double roof_before, double roof_after);

// "--config mr=8,nv=3,mc=96,kc=256,nc=1536,grid=2x1": keys not given keep `base`'s values. A base
// that reads A in place packs it when the block given is taller than `a_in_place_rows` (the
// kernels' limit, a_in_place_rows() of gemm.hpp) unless pack_a is given too.
Expected<MatmulConfig> parse_config(const std::string& text, const MatmulConfig& base, int vector_bits,
                                    int a_in_place_rows);
std::string config_text(const MatmulConfig& c);

Expected<MatmulDtype> parse_dtype(const std::string& text);
// The levels --isa takes on this build's ISA, narrowest first.
std::vector<std::string> isa_level_names();
// --isa: "" (the widest this CPU runs) or one of the target's levels; an error names them.
Expected<std::string> parse_isa_level(const std::string& text);
// The CPU as the kernels, the roof probe and the cost model see it under --isa `level`: features above
// the level taken away (`cpu` itself for ""). An error when this CPU does not reach the level.
Expected<CpuInfo> kernel_cpu(const CpuInfo& cpu, const std::string& level);
// What `matmul` and `bench matmul` do before measuring: --isa checked (exit 2), the CPU detected and
// placed (prepare_measuring), then held to the level (exit 4 when this CPU does not reach it). `host`
// is the CPU as detected (the document's host), `cpu` as the kernels, roof and model see it, `level`
// the parsed level. 0 or the exit code, the reason logged.
int prepare_matmul_cpu(const GlobalOptions& g, const std::string& isa_text, CpuInfo& host, CpuInfo& cpu,
                       std::string& level);
// The --isa option's help text, with the levels of this build.
std::string isa_option_help();
// The --widen option's help text (matmul and bench matmul).
std::string widen_option_help();
// The --rounds option's help text (matmul and bench matmul).
std::string rounds_option_help();
// --baseline: "openblas,blis" -> its items; "none" dropped. An item must be openblas, blis, none, or a
// library path or file name (holding '/' or ".so"); anything else, an empty item included, is refused.
Expected<std::vector<std::string>> parse_baselines(const std::string& text);

// One call (2 x M x N x K x batch) may do at most this much work: at least 7 calls are timed, plus
// the check and the baselines. 2 x 16384^3 = 8.8e12 fits.
inline constexpr double kMaxMatmulFlop = 1e13;
// Why a problem is refused before anything is allocated, "" when it can run: the work of one call
// over kMaxMatmulFlop, or the memory it needs over 80% of `available_bytes` (0: unknown, not checked).
// The memory is the operands of the whole batch, the cold-cache copies (at least two of what rotates)
// and, when an f32 problem is also run by a BLAS baseline, the baseline's own copy of all that.
std::string matmul_size_problem(int64_t m, int64_t n, int64_t k, int64_t batch, MatmulDtype dtype, ColdCacheMode cold,
                                bool with_baseline, uint64_t available_bytes);
// What matmul_size_problem is given: MemAvailable, else the free pages; 0 when neither is known.
uint64_t matmul_available_memory();
// "openblas,blis" -> its items; "none" and empty items are dropped (--baseline none).
std::vector<std::string> split_list(const std::string& text);
// "M,N,K" with whole numbers 1..65536.
bool parse_shape(const std::string& text, int64_t& m, int64_t& n, int64_t& k);

}  // namespace peakprobe::cli
