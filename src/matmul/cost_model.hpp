// The matmul cost model: enumerates tilings (register block, cache blocks, thread grid) for one
// problem on one machine and predicts each one's time from the machine's measured ceilings, so the
// choice is one number in seconds rather than a cascade of unitless filters. No JIT, no timing: the
// machine is a plain description, so tests can plan for a 2-core laptop or a 64-core server.
#pragma once
#include <cstdint>
#include <map>
#include <tuple>
#include <utility>
#include <ostream>
#include <string>
#include <vector>

#include "peakprobe/cpu_info.hpp"
#include "peakprobe/matmul_result.hpp"

namespace peakprobe {

// One register block's micro-kernel calls timed on this core (matmul/call_calibration.hpp): what a
// call costs beyond its k loop, with its C tile coming from L1, L2 and L3. The update of C waits for
// C's lines, and how long depends on where they come from; the port formula alone misses that. Seen on
// a Sapphire Rapids-class VM: a 6 x 64 f32 call cost 44 cycles beyond its k loop with C in L1, 70-150
// with C in L2 and 290-340 with C in L3 (the formula: 40), so kc 128 ran 7% slower than kc 512 while
// the model, without these figures, ranked it first. A thread's C panel never lives in L1 (the model
// places it in L2 or further): call_l1 is the base the other two are measured from.
struct MeasuredCalls {
  int mr = 0, nv = 0;          // the block timed; 0: nothing measured (the port formula alone)
  double step_cycles = 0;      // its k loop, cycles per k step
  double call_l1 = 0, call_l2 = 0, call_l3 = 0;  // cycles per call beyond the k loop; 0: not measured
  // Its k step when the B micro-panel is too deep for L1 and every call streams it from L2 (C in L1):
  // what re-reading B from L2 costs the calls of an ic block, prefetching and overlap included. The
  // bandwidth formula overcharged it on a Zen 5 VM: 513^3 on 2 threads at kc 512 predicted 1.03 ms,
  // ran 0.69 (the load probe read L2 at 60 bytes a cycle, the model's default 32 bytes a cycle).
  // 0: not measured.
  double step_cycles_b_l2 = 0;
  // Tile kernels (measure_tile_rows), which run a row of B panels a call: the cycles each panel of a
  // row streaming B from L2 costs beyond its k loop (its C tiles, the first tiles' wait). The row's
  // k step is step_cycles_b_l2. 0: not measured.
  double row_panel_cycles = 0;
};

// What the model knows of the machine. Bandwidths in GB/s, per core unless named total.
struct MachineModel {
  int cores = 1;                    // physical cores that may run threads
  int vector_bits = 512;            // widest usable vector, in bits
  int vector_registers = 32;        // architectural vector registers at that width
  double ghz = 3.0;                 // core clock
  // Per core, per cycle, for the dtype's dot/FMA instruction at vector_bits: instructions issued and
  // cycles of latency (from peakprobe's own probes, or a table for synthetic machines).
  double fma_per_cycle = 1.0;
  double fma_latency = 4.0;
  // The dtype runs on widened elements (isa::MicroKernelShape::widened, where the CPU has no dot
  // product of it at vector_bits): fewer k values a lane, twice the bytes in packed panels, and for
  // int8 an add after each multiply-add of int16 pairs.
  bool widened = false;
  // The dtype runs on the matrix unit (isa::MicroKernelShape::tiles): fma_per_cycle and fma_latency are
  // then the tile multiply's (one instruction = a 16 x 16 block of C over 16 k steps), register blocks
  // are whole tiles, and k steps are padded to whole tile depths.
  bool tiles = false;
  // The tallest register block whose kernels read the dtype's A in place (isa::Target::a_in_place_rows);
  // 0 where A is always packed (widened, shifted by 128, tile blocks).
  int a_in_place_rows = 6;
  // Whether those kernels read A in place where K ends inside a k group (the last group's values
  // alone, isa::Target::a_in_place_partial_groups); else such a K packs A.
  bool a_in_place_partial_groups = true;
  double loads_per_cycle = 2.0;     // vector loads per cycle (load ports)
  double stores_per_cycle = 1.0;    // vector stores per cycle (one store port at full width)
  double issue_width = 4.0;         // instructions renamed per cycle (Skylake 4; Zen 4, Golden Cove 6)
  uint64_t l1_bytes = 32 << 10;     // per core
  uint64_t l2_bytes = 1 << 20;      // per core
  uint64_t l3_bytes = 32 << 20;     // one instance
  int l3_shared_by = 8;             // cores per L3 instance
  // Per thread: L2 and L3 with all of the call's threads streaming when measured (then also used for
  // candidates on fewer threads), else defaults; DRAM a default for one thread streaming.
  double l2_gbps = 100, l3_gbps = 60, dram_gbps = 20;
  double dram_total_gbps = 40;      // all cores together
  // Working set per thread that l2_gbps and l3_gbps were measured on (matmul/bandwidth_calibration.hpp,
  // with every thread of the call streaming at once); 0: the figure is a default.
  uint64_t l2_measured_set = 0, l3_measured_set = 0;
  // l3_bytes as the OS reported it, and the per-thread sets whose loads kept and fell below the L3
  // rate, when calibrate_bandwidth cut l3_bytes to the reach it measured (0: l3_bytes is the OS's).
  uint64_t l3_reported_bytes = 0, l3_reach_held = 0, l3_reach_fell = 0;
  double l3_reach_fell_gbps = 0;
  MeasuredCalls calls;              // measured call costs, when the caller has them
  // Bytes of A and of B (as the caller holds them) the packing code packs per second on one core,
  // measured from a source in L3 (matmul/call_calibration.hpp); 0: not measured, the bandwidths alone.
  // A transposed into panels runs well below the bandwidth that reads it: on a Sapphire Rapids-class
  // VM a 1024^3 f32 plan that packs A 8 times (nc 128) ran 40% slower than the model said.
  double pack_a_gbps = 0, pack_b_gbps = 0;
  // Wall seconds the GEMM's thread team adds to one call on N threads (waking the parked helpers and
  // joining them), at index N, measured by calibrate_team (matmul/call_calibration.hpp); 0 or absent:
  // not measured. A count not measured is priced from the nearest measured one below it, in
  // proportion to the threads. Empty: the team is free, as in the model before it was measured.
  std::vector<double> fork_join_seconds;
  // GB/s at which a core reads lines another core of the team has just written (calibrate_team): the
  // part of a shared B block the other threads of its column group packed reaches a thread this
  // way, after the barrier, when nothing could prefetch it. 0: not measured (the model then prices
  // only B packed in another L3 instance, overlapped, at DRAM speed).
  double handoff_gbps = 0;
  // Seconds a pair of the team's threads loses at a barrier met after each block of work
  // (calibrate_team): the price of the barrier around each shared B block and of a K split's, in
  // place of a cache-line round trip per level of the barrier's tree. 0: not measured.
  double barrier_seconds = 0;
};

// Bytes a resident block may fill in L2 (the A block's budget), and in L3 for one thread of a call on
// `threads` threads (its share of its L3 instance): the budgets the model places blocks by.
double l2_block_budget(const MachineModel& machine);
double l3_thread_budget(const MachineModel& machine, int threads);

// Whether the model prices B micro-panels re-read from L2 by the measured deep k step
// (MeasuredCalls::step_cycles_b_l2, with the L1 step it is compared to) rather than by the L2
// bandwidth inside the memory term.
bool b_panel_l2_measured(const MachineModel& machine);

// What the team adds to a call on `threads` threads (MachineModel::fork_join_seconds), 0 for one.
double fork_join_cost(const MachineModel& machine, int threads);

// From the detected caches and topology; the clock and issue rates from measured figures given by
// the caller (fma_per_cycle = 1 / recip throughput of the kernel's instruction). Bandwidths are
// rough defaults derived from the clock and core count (see the .cpp); `matmul` and `bench matmul`
// overwrite L2's and L3's with measured ones (matmul/bandwidth_calibration.hpp).
// `dtype` sets how its kernels run on this CPU (widened).
MachineModel machine_model_from(const CpuInfo& cpu, double ghz, double fma_per_cycle, double fma_latency,
                                MatmulDtype dtype = MatmulDtype::f32);

struct MatmulProblem {
  int64_t m = 0, n = 0, k = 0, batch = 1;
  MatmulDtype dtype = MatmulDtype::f32;
  int threads = 1;
};

// The predicted time of one configuration and the factors it is built from.
struct CandidateCost {
  MatmulConfig config;
  double seconds = 0;             // predicted wall time of the whole call
  double compute_seconds = 0;     // padded FLOPs of the busiest thread / its kernel rate
  double memory_seconds = 0;      // traffic of the busiest thread beyond L1 / the bandwidth of where it comes from
  double pack_seconds = 0;        // packing A and B panels, and the barriers around shared B blocks
  double team_seconds = 0;        // waking and joining the thread team (MachineModel::fork_join_seconds)
  double kernel_efficiency = 0;   // 0..1: register-block rate limit (loads per FMA, accumulators vs latency x rate, C update)
  double padding = 0;             // fraction of computed elements that are padding (0 = none)
  double imbalance = 0;           // busiest thread's work / mean - 1 (0 = balanced)
  uint64_t bytes_per_thread = 0;  // packing buffers one thread holds
  std::string note;               // why it lost, when a rule ruled it out ("B block exceeds L3 share")
};

// Register blocks worth trying at this vector width and register count: mr rows x nv vectors whose
// registers (mr*nv accumulators, nv B vectors, what spreads A, the kernel's temporaries: the
// target's registers_needed for `dtype`) fit the register file, nv in 1..4.
std::vector<std::pair<int, int>> register_blocks(const MachineModel& machine, MatmulDtype dtype = MatmulDtype::f32);

// (batch_threads, k_threads, thread_rows, thread_cols) with their product = threads: every grid of
// the threads; with a batch, every split into groups that each run their own items (at most one per
// item); and every split of a group's threads into parts of K (at most k_groups of them).
std::vector<std::tuple<int, int, int, int>> thread_splits(int threads, int64_t batch, int64_t k_groups);

// The thread counts the model plans with when `threads` are allowed: all of them and every power of
// two below, largest first. A small product can finish sooner on fewer threads than waking and
// joining all of them costs (16 threads of a 16-vCPU Emerald Rapids VM ran 128^3 f32 in 14 us, one
// thread in 29 us); the model weighs that with the measured team cost.
std::vector<int> thread_counts(int threads);
// thread_splits of every count thread_counts(threads) gives, largest count first.
std::vector<std::tuple<int, int, int, int>> thread_splits_up_to(int threads, int64_t batch, int64_t k_groups);

// Every candidate on a grid (register blocks x kc x mc x nc x thread grids), cheapest first. A coarse
// pass keeps the best register block x thread grid pairs, and the fine pass tries every kc, mc and nc
// on those only, so at most this many candidates come out whatever the problem (a few ms of work).
inline constexpr size_t kMaxRankedConfigs = 4320;
std::vector<CandidateCost> rank_configs(const MachineModel& machine, const MatmulProblem& problem);

// The cheapest candidate (rank_configs().front()).
CandidateCost choose_config(const MachineModel& machine, const MatmulProblem& problem);

// Whether the kernels can read A in place for this problem with an mr-row block: a block no taller
// than machine.a_in_place_rows, and K whole k groups of the dtype unless the kernels read a partial
// last group (machine.a_in_place_partial_groups; otherwise the last group of a row would read past
// it, where packing pads it with zeros).
bool a_in_place_possible(const MachineModel& machine, const MatmulProblem& problem, int mr);
// Whether the model reads an operand in place for this problem (an mr-row block; a grid of
// thread_rows rows of threads): the kernels can, and the whole operand fits half of L2. A larger
// one's rows lie far apart (4 KiB at 1024 columns: a page each), and on a Sapphire Rapids-class VM
// both ran slower in place than packed (A: 1024^3 with nc 64 at half speed; B: 1024^3 8-12%,
// 2048 x 512 x 2048 1-2%), a cost the model's bandwidths do not see; so the model packs them.
// Except B when each of its panels serves few calls (M of at most kFewRowBlocks blocks of mr rows):
// packing ahead is then a pass of its own for little reuse, and packing on the way won by 15% at
// 24 x 1024 x 4096, 2-7% at 96 x 1024 x 4096, 10-20% at 16 x 64 x 16384 on 2 threads (K in 2 parts);
// that on one row of threads only (several rows would each read such a B in place on their own).
inline constexpr int kFewRowBlocks = 16;
// Except A where each of its blocks serves at least kAReusePanels B panels (nc of that many nr-wide
// panels): the first call of a block brings its rows into L2 and the others find them there, and
// the packing pass is saved. The slow case above ran nc 64 (one panel). Emerald Rapids VM, f32 on
// one thread: 513^3 (A 1 MiB, just over half of L2) with 9x48, mc 171-261, nc 528 (11 panels) ran
// 4.9% faster in place; 2048^3 with nc 2064 (43 panels) 2.7%; Zen 4 VM 1024^3 with nc 528, 2%.
inline constexpr int kAReusePanels = 8;
bool a_in_place_pays(const MachineModel& machine, const MatmulProblem& problem, int mr, int b_panels);
bool b_in_place_pays(const MachineModel& machine, const MatmulProblem& problem, int mr, int thread_rows);

// What tells two configurations apart (the derived nr and thread count left out): the enumeration
// and the autotune grid list each key once.
using ConfigKey = std::tuple<int, int, int, int, int, int, int, int, int, bool, bool>;
ConfigKey config_key(const MatmulConfig& config);

// The port formula's k step of an mr x nv block at the default port softness, in cycles: a
// measured step (MeasuredCalls::step_cycles) equal to it leaves every block's price as it was.
double formula_k_step(const MachineModel& machine, MatmulDtype dtype, int mr, int nv);

// Predicted cost of one given configuration (for --config and for scoring autotune points).
CandidateCost predict(const MachineModel& machine, const MatmulProblem& problem, const MatmulConfig& config);

// `--explain`: the machine figures used, the top `rows` candidates with their factors, and the choice.
void write_explanation(std::ostream& out, const MachineModel& machine, const MatmulProblem& problem,
                       const std::vector<CandidateCost>& ranked, int rows = 12);
// `--explain --config`: the same placement, split and prediction for the configuration asked.
void write_config_explanation(std::ostream& out, const MachineModel& machine, const MatmulProblem& problem,
                              const MatmulConfig& config);

}  // namespace peakprobe
