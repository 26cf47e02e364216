// The matmul cost model. Every candidate tiling gets one predicted time in seconds for the busiest
// thread of the BLIS-style GEMM (loops jc / pc / ic around packed blocks, then jr / ir around the
// micro-kernel), built from three parts:
//   compute  the busiest thread's micro-kernel cycles: its tiles (padding included) x k steps x the
//            register block's cycles per step, plus the C update and call overhead of every call;
//   memory   the bytes its kernel loops stream from beyond L1 (A micro-panels, B micro-panels,
//            C tiles, B packed in another L3 instance), each divided by the bandwidth of the level it
//            lives in, which follows from whether its block fits that level's budget: an overflowing
//            block simply costs the next level's bandwidth, no arbitrary penalty;
//   packing  copying A and B into panels, done by the thread between kernel runs, so not overlapped,
//            plus the barriers around B blocks shared by a column of threads.
// seconds = (compute^2 + memory^2)^(1/2) + packing: a partial overlap (see kOverlapSoftness).
#include "matmul/cost_model.hpp"

#include "asm/target.hpp"
#include "matmul/column_split.hpp"
#include "matmul/gemm.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <set>
#include <tuple>

namespace peakprobe {
namespace {

// ---- Judgement calls of the model, in one place ----

// Share of a cache that a resident block may fill. L1 keeps the B micro-panel with room for the
// A micro-panel and the C tile streaming past (about 6 of 8 ways); L2 and L3 keep half for the
// resident block and half for what streams through them (B micro-panels, C panels) and for conflict
// misses of limited associativity, the usual rule of the BLIS analytical model.
constexpr double kL1Fill = 0.75;
constexpr double kL2Fill = 0.5;
constexpr double kL3Fill = 0.5;
// An A block and a B block that both stay in L2 (the B block serving every ic pass) may fill three
// quarters of it: what streams past them is one pass's C rows, each touched once. Emerald Rapids
// VM (2 MiB L2), int8 1024x2048x1024, 6x64 blocks, mc 48, kc 1024: B blocks of 0.5, 1, 1.5 and 2 MiB
// ran 6.42, 6.27, 6.43 and 6.77 ms, where half of L2 priced the 1 MiB one from L3 at 7.8 ms.
constexpr double kL2PairFill = 0.75;

// FMA ports, load ports and the front end work in parallel, yet a block near one limit loses
// throughput before it reaches it (L1 bank conflicts, dispatch interference). A p-norm of the
// three times is that soft maximum: equal to the largest when the others are small, 19% above it
// when two are equal. This p is the default: where the calls were measured, the p that reproduces
// the measured block's k step prices every block (port_softness).
constexpr double kPortSoftness = 4.0;
// Instructions per k step besides the FMAs and loads: the k loop's pointer increments and branch in
// a loop of one step. (Kernels that run several steps an iteration pay less, about 0.75 a step at
// four; where the calls were measured, the fitted softness absorbs the difference.)
constexpr double kLoopInstructions = 2.0;

// Prefetchers and out-of-order execution hide most streaming behind the FMAs, not all of it: panel
// starts, TLB misses and bursts stall. An Euclidean combination (p = 2) charges a memory term of a
// third of compute about 5%, and 41% when the two are equal, where measured kernels fall well short
// of either limit. Full overlap (max) would make every in-budget and out-of-budget block look alike.
// Check: for the first GEMM's blocking (6x64, kc 512, B micro-panels streaming from L2) at 1024^3 on
// the 3.7 GHz Zen 4 development machine this predicts 107 GFLOP/s on one thread; it measured 106.
constexpr double kOverlapSoftness = 2.0;

// Cycles per micro-kernel call besides the k loop and the C update: the k loop's mispredicted exit
// (about 15 cycles on recent cores) plus pointer and mask set-up.
constexpr double kCallOverheadCycles = 16.0;
// A tile kernel's call beyond its panels' loops and C tiles: loading the tile configuration,
// releasing the tiles and the pipeline drain between them. On a Sapphire Rapids-class VM (4.1 GHz) a
// 32 x 32 bf16 block ran 545 GFLOP/s at kc 128 (256 cycles of tile multiplies a call) and 1060 at
// kc 256: a call costs a few hundred cycles beyond its multiplies. Timed directly there (3.6 GHz):
// 16-step calls of one panel took 156 ns, the same panels run 8 to a call 83 ns each.
constexpr double kTileCallCycles = 250.0;

// A barrier among the threads that share a packed B block is a tree of cache-line hand-offs between
// cores: one cross-core round trip (100-200 ns) per level, each way. Two barriers per B block
// (packed, then released for the next one).
constexpr double kBarrierLevelSeconds = 0.25e-6;
constexpr int kBarriersPerBBlock = 2;

// kc in k values: BLIS kernels use 128..512; 64 and 96 keep a wide B micro-panel (64 f32 columns)
// in a 32 KiB L1, 1024 suits narrow blocks. Each is clamped to K (rounded up to kgroup).
constexpr std::array<int, 8> kKcTargets = {64, 96, 128, 192, 256, 384, 512, 1024};
// mc as fractions of the L2 budget of the A block: all of it, or half to leave room for the rest; for
// tile kernels also none, that is one block of mr rows: the packing then leaves the A panel in L1
// for the row of panels right after it (1024^3 bf16 on the Sapphire Rapids-class VM at kc 256: mc
// 32 ran 2.13 ms, mc 1024 2.37).
constexpr std::array<double, 3> kMcFills = {0.0, 0.5, 1.0};
// What bounds nc: the B block in all or half of its L3 budget, or the thread's C panel (its rows x nc,
// swept between two visits of a C tile) in its L3 share or in the L2 room the A block leaves, or the
// B block in what the A block leaves of three quarters of L2 (kL2PairFill). A smaller nc keeps C
// close at the price of packing A once more per extra jc.
enum class NcRule { b_block_full, b_block_half, c_panel_l3, c_panel_l2, b_block_l2_pair };
constexpr std::array<NcRule, 5> kNcRules = {NcRule::b_block_full, NcRule::b_block_half, NcRule::c_panel_l3,
                                            NcRule::c_panel_l2, NcRule::b_block_l2_pair};
// Register block x thread grid pairs kept after the first, coarse pass; the second pass tries every
// kc / mc / nc on each, so the total stays within 32 x 9 x 3 x 5 = 4320 candidates (kc_targets: the
// targets and the L1-fitting kc).
constexpr size_t kPairsKept = 32;
static_assert(kPairsKept * (kKcTargets.size() + 1) * kMcFills.size() * kNcRules.size() <= kMaxRankedConfigs,
              "rank_configs' fine pass must stay within kMaxRankedConfigs");
// The coarse pass's kc: the deepest whose B micro-panel fits L1, but no deeper than this common,
// well-amortised depth.
constexpr int kCoarseKcMax = 256;

constexpr double kGiga = 1e9;
constexpr double kKiB = 1024.0, kMiB = 1024.0 * 1024.0;

// ---- Small helpers ----

int64_t ceil_div(int64_t a, int64_t b) { return b <= 0 ? 0 : (a + b - 1) / b; }
int64_t round_up(int64_t a, int64_t b) { return ceil_div(a, b) * b; }

// (a^p + b^p)^(1/p), computed from the larger term so that it cannot overflow.
double soft_max(double a, double b, double p) {
  const double hi = std::max(a, b), lo = std::min(a, b);
  if (hi <= 0) return 0;
  return hi * std::pow(1.0 + std::pow(lo / hi, p), 1.0 / p);
}

struct DtypeTraits {
  int ab_bytes;      // one element of A or B as the caller holds it
  int c_bytes;       // one element of C (f32 or s32 accumulators)
  int kgroup;        // k values one instruction folds into a 32-bit lane
  int packed_bytes;  // one element of A or B in a packed panel (4 / kgroup: twice ab_bytes widened)
  int instructions;  // vector instructions per accumulator and k step
};

// The dtype's kernel as the machine runs it (MachineModel::widened).
DtypeTraits dtype_traits(MatmulDtype d, bool widened) {
  switch (d) {
    case MatmulDtype::bf16:
      if (widened) return {2, 4, 1, 4, 1};  // packed as f32, on the FMA
      return {2, 4, 2, 2, 1};               // a bf16 dot product: pairs into an f32 lane
    case MatmulDtype::i8:
      if (widened) return {1, 4, 2, 2, 2};  // packed as int16 pairs: a multiply-add of pairs, then an add
      return {1, 4, 4, 1, 1};               // an int8 dot product: u8 x s8 quads into an s32 lane
    case MatmulDtype::f32: break;
  }
  return {4, 4, 1, 4, 1};
}
DtypeTraits dtype_traits(const MachineModel& machine, const MatmulProblem& problem) {
  return dtype_traits(problem.dtype, machine.widened);
}

// 32-bit lanes per vector, whatever the dtype (bf16 pairs and int8 quads each fill one lane).
int lanes_of(const MachineModel& machine) { return std::max(1, machine.vector_bits / 32); }

double flops_of(const MatmulProblem& p) {
  return 2.0 * double(p.m) * double(p.n) * double(p.k) * double(std::max<int64_t>(p.batch, 1));
}

bool valid(const MatmulProblem& p) { return p.m > 0 && p.n > 0 && p.k > 0; }

// ---- Where data lives ----

enum class Level { l1, l2, l3, dram };

const char* level_name(Level l) {
  switch (l) {
    case Level::l1: return "L1";
    case Level::l2: return "L2";
    case Level::l3: return "L3";
    case Level::dram: return "DRAM";
  }
  return "?";
}

// Cache budgets seen by one thread of a given grid, and the bandwidths it gets.
struct Budgets {
  double l1 = 0, l2 = 0;
  double l2_pair = 0;     // an A block and a B block together (kL2PairFill)
  double l2_whole = 0;    // the whole L2: never more than the blocks placed in it together
  double l3_thread = 0;   // this thread's part of its L3 instance
  double l3_b_block = 0;  // room for one shared B block in an L3 instance
  // Part of the B blocks this thread reads that threads in other L3 instances packed, per thread of
  // its instance (the instance fetches it once, for all of them).
  double b_remote = 0;
  double dram_gbps = 0;   // this thread's part of DRAM bandwidth
  Level source = Level::dram;  // where A, B and C are before the call
};

}  // namespace

double l2_block_budget(const MachineModel& machine) { return kL2Fill * double(machine.l2_bytes); }
double l3_thread_budget(const MachineModel& machine, int threads) {
  return kL3Fill * double(machine.l3_bytes) / std::max(1, std::min(machine.l3_shared_by, threads));
}

namespace {

// The rows of threads that share each B block: all of a column where B is packed ahead, none where
// each thread reads B in place into panels of its own.
int b_sharing_rows(const MatmulConfig& c) { return c.pack_b ? c.thread_rows : 1; }

// Threads are assumed laid out column-major over the grid (thread t: row t % thread_rows, column
// t / thread_rows), so that the threads sharing a B block are neighbours in core order and share an
// L3 instance; one instance then holds a B block per column group it hosts.
Budgets budgets_for(const MachineModel& machine, const MatmulProblem& problem, int thread_rows, int threads) {
  Budgets b;
  b.l1 = kL1Fill * double(machine.l1_bytes);
  b.l2 = l2_block_budget(machine);
  b.l2_pair = kL2PairFill * double(machine.l2_bytes);
  b.l2_whole = double(machine.l2_bytes);
  const int per_l3 = std::max(1, std::min(machine.l3_shared_by, threads));
  b.l3_thread = l3_thread_budget(machine, threads);
  b.l3_b_block = kL3Fill * double(machine.l3_bytes) / double(ceil_div(per_l3, thread_rows));
  const int group_here = std::min(thread_rows, per_l3);
  b.b_remote = (1.0 - double(group_here) / thread_rows) / group_here;
  b.dram_gbps = std::min(machine.dram_gbps, machine.dram_total_gbps / std::max(1, threads));
  // Repeated calls on the same matrices find them in the cache when the whole problem fits there.
  const DtypeTraits dt = dtype_traits(machine, problem);
  const double total = (double(problem.m) * double(problem.k) + double(problem.k) * double(problem.n)) * dt.ab_bytes +
                       double(problem.m) * double(problem.n) * dt.c_bytes;
  b.source = total <= b.l2 && threads == 1 ? Level::l2 : total <= kL3Fill * double(machine.l3_bytes) ? Level::l3
                                                                                                      : Level::dram;
  return b;
}

// Seconds to move `bytes` from `level` for one thread. L1 traffic is the load ports' business,
// already in the kernel's cycles per step.
double transfer_seconds(const MachineModel& machine, const Budgets& b, double bytes, Level level) {
  // A bandwidth of zero (unknown) must not divide by zero: treat it as 1 MB/s, absurdly slow.
  constexpr double kFloorGbps = 1e-3;
  double gbps = 0;
  switch (level) {
    case Level::l1: return 0;
    case Level::l2: gbps = machine.l2_gbps; break;
    case Level::l3: gbps = machine.l3_gbps; break;
    case Level::dram: gbps = b.dram_gbps; break;
  }
  return bytes / (std::max(gbps, kFloorGbps) * kGiga);
}

// ---- One configuration's shape on the problem ----

// Fills in what a config leaves open or gets wrong: nr from nv, blocks rounded to their units.
MatmulConfig normalized(const MachineModel& machine, const MatmulProblem& problem, MatmulConfig c) {
  const DtypeTraits dt = dtype_traits(machine, problem);
  c.mr = std::max(1, c.mr);
  c.nv = std::max(1, c.nv);
  c.nr = c.nv * lanes_of(machine);
  // Tiles: whole tile depths, or a kc block pads zeros the tiles then multiply.
  const int kc_unit = dt.kgroup * (machine.tiles ? isa::MicroKernelShape::kTileDepthSteps : 1);
  c.kc = int(round_up(std::max(c.kc, kc_unit), kc_unit));
  c.mc = int(round_up(std::max(c.mc, c.mr), c.mr));
  c.nc = int(round_up(std::max(c.nc, c.nr), c.nr));
  c.thread_rows = std::max(1, c.thread_rows);
  c.thread_cols = std::max(1, c.thread_cols);
  // Batch groups beyond the items would have nothing to run; K parts beyond the k groups neither.
  c.batch_threads = int(std::clamp<int64_t>(c.batch_threads, 1, std::max<int64_t>(problem.batch, 1)));
  c.k_threads = int(std::clamp<int64_t>(c.k_threads, 1, std::max<int64_t>(1, ceil_div(problem.k, dt.kgroup))));
  c.threads = c.batch_threads * c.k_threads * c.thread_rows * c.thread_cols;
  if (!a_in_place_possible(machine, problem, c.mr)) c.pack_a = true;  // the kernels cannot
  if (!b_in_place_possible(problem.dtype)) c.pack_b = true;
  return c;
}

// The counts the cost is built from, for the busiest thread (the one with the most tiles).
struct Geometry {
  DtypeTraits dt{};
  double k = 0;            // K as given
  int64_t kpad = 0;        // K rounded up to kgroup
  int64_t ksteps = 0;      // micro-kernel k steps over all of K
  int64_t kblocks = 0;     // pc iterations = micro-kernel calls per tile
  int64_t kc = 0;          // kc clamped to K
  int64_t tiles_m = 0, tiles_n = 0;      // mr x nr tiles of the whole C
  int64_t tiles_m_t = 0, tiles_n_t = 0;  // ... of the busiest thread (a narrower last one counted)
  // The busiest thread's columns in vectors (threads split columns in whole vectors, gemm.cpp), and
  // those of its last tile when that one is narrower than nr (0: none is).
  int64_t vectors_t = 0, edge_vectors = 0;
  // The threads the GEMM starts: a thread with no rows or columns of its own is not started, nor a
  // group without an item, nor a K part without a k group (started_grid in gemm.cpp).
  int started_threads = 1;
  int64_t rows_pad = 0, cols_pad = 0;    // busiest thread's rows padded to tiles, columns to vectors
  double rows = 0, cols = 0;             // ... without padding
  int64_t mc = 0, nc = 0;                // blocks clamped to the thread's share
  int64_t n_ic = 0, n_jc = 0;            // ic and jc iterations
  double a_block = 0, b_block = 0, b_panel = 0, c_panel = 0, a_panel = 0;  // bytes
  // Tile kernels run a row of B panels a call against one A panel (gemm.cpp): each row block of A
  // streams every B panel of the block from the B block, and keeps its A panel in L1 along the row.
  bool tiles = false;

  double tiles_t() const { return double(tiles_m_t) * double(tiles_n_t); }
  // Passes over the thread's B panels that read them from the B block: the first call of each ic
  // block on a panel (the others find it in L1 or re-read it: b_panel_rereads), or, for tiles, every
  // row block's.
  double b_block_passes() const { return double(tiles ? tiles_m_t : n_ic); }
  double b_block_calls() const { return b_block_passes() * double(tiles_n_t); }
  // Calls that use a B micro-panel already used in the same ic block.
  double b_panel_rereads() const { return tiles ? 0.0 : double(tiles_m_t - n_ic) * double(tiles_n_t); }
  // Calls that read their A micro-panel from the A block: every call, or, for tiles whose A panel
  // stays in L1 along the row, the first of each row in each jc block.
  double a_block_calls(bool a_panel_in_l1) const {
    return tiles && a_panel_in_l1 ? double(tiles_m_t) * double(n_jc) : tiles_t();
  }
  // Tile kernel calls, each loading the tile configuration once: a row per row block, jc and kc
  // block, and one more where the thread's columns end in a narrower panel (its own kernel).
  double tile_rows() const {
    return tiles ? double(tiles_m_t) * double(kblocks) * double(n_jc + (edge_vectors > 0 ? 1 : 0)) : 0.0;
  }
};

Geometry geometry_of(const MachineModel& machine, const MatmulProblem& p, const MatmulConfig& c) {
  Geometry g;
  g.dt = dtype_traits(machine, p);
  g.k = double(p.k);
  g.kpad = round_up(p.k, g.dt.kgroup);
  g.ksteps = g.kpad / g.dt.kgroup;
  g.kc = std::min<int64_t>(c.kc, g.kpad);
  g.kblocks = ceil_div(g.ksteps, g.kc / g.dt.kgroup);
  g.tiles = machine.tiles;
  if (machine.tiles) {
    // Every kc block is padded to whole tile depths: the last, shorter one too.
    const int64_t block = g.kc / g.dt.kgroup, depth = isa::MicroKernelShape::kTileDepthSteps;
    g.ksteps = (g.kblocks - 1) * round_up(block, depth) + round_up(g.ksteps - (g.kblocks - 1) * block, depth);
  }
  g.tiles_m = ceil_div(p.m, c.mr);
  g.tiles_n = ceil_div(p.n, c.nr);
  g.tiles_m_t = ceil_div(g.tiles_m, c.thread_rows);
  // A row of threads splits the columns in whole vectors, among at most one thread per tile.
  const ColumnSplit split(p.n, c.nr, c.nv, c.thread_cols);
  const int64_t lanes = split.lanes, col_threads = split.threads;
  g.vectors_t = split.most_vectors();
  g.tiles_n_t = ceil_div(g.vectors_t, c.nv);
  g.edge_vectors = g.vectors_t % c.nv;
  g.started_threads = int(std::min<int64_t>(std::max(1, c.thread_rows), g.tiles_m) * col_threads *
                          std::min<int64_t>(std::max(1, c.k_threads), ceil_div(int64_t(p.k), g.dt.kgroup)) *
                          std::min<int64_t>(std::max(1, c.batch_threads), std::max<int64_t>(1, p.batch)));
  g.rows_pad = g.tiles_m_t * c.mr;
  g.cols_pad = g.vectors_t * lanes;
  g.rows = double(std::min(g.rows_pad, p.m));
  g.cols = double(std::min(g.cols_pad, p.n));
  g.mc = std::min<int64_t>(c.mc, g.rows_pad);
  g.nc = std::min<int64_t>(c.nc, g.cols_pad);
  g.n_ic = ceil_div(g.rows_pad, g.mc);
  g.n_jc = ceil_div(g.cols_pad, g.nc);
  g.a_block = double(g.mc) * double(g.kc) * g.dt.packed_bytes;
  g.b_block = double(g.kc) * double(g.nc) * g.dt.packed_bytes;
  g.b_panel = double(g.kc) * double(c.nr) * g.dt.packed_bytes;
  g.a_panel = double(g.kc) * double(c.mr) * g.dt.packed_bytes;
  g.c_panel = double(g.rows_pad) * double(g.nc) * g.dt.c_bytes;
  return g;
}

// ---- Compute: the register block's rate ----

struct KernelTiming {
  double ideal_step = 0;  // cycles per k step if only the FMA ports limited
  double step = 0;        // cycles per k step with load ports and latency
  double call = 0;        // cycles per call beyond the k loop (C update, overhead)
};

// A tile block: mr/16 x nv C tiles, one tile multiply each per tile depth of k steps; per depth the
// A and B tiles are loaded (16 lines of 64 bytes each), and each C tile is a chain of one multiply
// per depth. Per call C's tiles are loaded (or zeroed) and stored; the configuration is loaded and
// released once per row of panels (Geometry::tile_rows, evaluate).
KernelTiming tile_kernel_timing(const MachineModel& machine, int mr, int nv) {
  constexpr double kMinRate = 1e-6;
  constexpr double depth = isa::MicroKernelShape::kTileDepthSteps, rows = isa::MicroKernelShape::kTileRows;
  const double rate = std::max(machine.fma_per_cycle, kMinRate);
  const double load_rate = std::max(machine.loads_per_cycle, kMinRate);
  const double store_rate = std::max(machine.stores_per_cycle, kMinRate);
  const double c_tiles = double(mr) / rows * nv, in_tiles = double(mr) / rows + nv;
  KernelTiming t;
  t.ideal_step = c_tiles / rate / depth;
  const double load_cycles = in_tiles * rows / load_rate / depth;
  t.step = std::max(soft_max(t.ideal_step, load_cycles, kPortSoftness), machine.fma_latency / depth);
  t.call = c_tiles * rows * (1 / load_rate + 1 / store_rate);
  return t;
}

// What limits a k step of an mr x nv block, in cycles each: the FMA ports, the load ports, the front
// end.
struct PortCycles {
  double fma_cycles = 0, loads = 0, issue = 0;
  double with_softness(double p) const { return soft_max(fma_cycles, soft_max(loads, issue, p), p); }
  double largest() const { return std::max({fma_cycles, loads, issue}); }
};

PortCycles port_cycles(const MachineModel& machine, int mr, int nv, const DtypeTraits& dt) {
  constexpr double kMinRate = 1e-3;  // a zero issue rate from a failed probe must not divide by zero
  const double accumulators = double(mr) * nv;
  PortCycles c;
  c.fma_cycles = accumulators / std::max(machine.fma_per_cycle, kMinRate);
  // Per k step: nv B vector loads and mr broadcasts feed mr*nv FMAs; all of them pass the front end.
  c.loads = double(mr + nv) / std::max(machine.loads_per_cycle, kMinRate);
  c.issue = (accumulators * dt.instructions + mr + nv + kLoopInstructions) / std::max(machine.issue_width, kMinRate);
  return c;
}

// The port softness this core shows: the p at which the port formula gives the k step measured for
// the calibrated block (MeasuredCalls::step_cycles), so that every block's step is priced as this
// core overlaps its ports, not as kPortSoftness guesses. On the Emerald Rapids VM the 6x64 block's
// step measured 12.10 cycles for int8 and 12.21 for f32 where kPortSoftness gave 12.96 and 13.05:
// every candidate's compute was 7% high against its packing and its streams. A step no slower
// than the largest port time: a hard maximum. The default where nothing (or nothing finite) was
// measured, and where the calibrated block's chains, not its ports, set its step: its largest port
// time at or under the FMA latency says nothing of how ports overlap.
struct Softness {
  double p = kPortSoftness;
  bool fitted = false;  // p fits a measured step; otherwise the default
};

Softness port_softness(const MachineModel& machine, const DtypeTraits& dt) {
  constexpr double kHardest = 64, kSoftest = 1;
  constexpr int kHalvings = 30;  // p to within 1e-7
  const MeasuredCalls& m = machine.calls;
  if (machine.tiles || m.mr <= 0 || m.nv <= 0 || !std::isfinite(m.step_cycles) || m.step_cycles <= 0) return {};
  const PortCycles c = port_cycles(machine, m.mr, m.nv, dt);
  if (c.largest() <= machine.fma_latency || m.step_cycles <= machine.fma_latency) return {};
  if (m.step_cycles <= c.with_softness(kHardest)) return {kHardest, true};
  if (m.step_cycles >= c.with_softness(kSoftest)) return {kSoftest, true};
  double lo = kSoftest, hi = kHardest;  // with_softness falls as p grows
  for (int i = 0; i < kHalvings; ++i) {
    const double mid = 0.5 * (lo + hi);
    (c.with_softness(mid) > m.step_cycles ? lo : hi) = mid;
  }
  return {0.5 * (lo + hi), true};
}

// The softness every candidate of one problem is priced at: it depends on the machine and the
// dtype only, so a ranking fits it once rather than once per candidate.
double softness_for(const MachineModel& machine, const MatmulProblem& problem) {
  return port_softness(machine, dtype_traits(machine, problem)).p;
}

KernelTiming kernel_timing(const MachineModel& machine, int mr, int nv, const DtypeTraits& dt,
                           double softness = kPortSoftness) {
  if (machine.tiles) return tile_kernel_timing(machine, mr, nv);
  constexpr double kMinRate = 1e-3;  // a zero issue rate from a failed probe must not divide by zero
  const double fma_rate = std::max(machine.fma_per_cycle, kMinRate);
  const double load_rate = std::max(machine.loads_per_cycle, kMinRate);
  const double store_rate = std::max(machine.stores_per_cycle, kMinRate);
  const double accumulators = double(mr) * nv;
  const PortCycles ports = port_cycles(machine, mr, nv, dt);
  KernelTiming t;
  t.ideal_step = ports.fma_cycles;
  // Each accumulator is a dependency chain of one FMA per k step: a step takes at least the latency.
  t.step = std::max(ports.with_softness(softness), machine.fma_latency);
  // Per call the C tile is loaded, added to and stored: mr*nv loads, adds and stores. They go to
  // different ports and overlap one another, so the update lasts as long as its busiest port.
  const double c_update = std::max({accumulators / load_rate, accumulators / store_rate, accumulators / fma_rate});
  t.call = c_update + kCallOverheadCycles;
  return t;
}

// Cache lines of C one call of an mr x nv block updates (a row of nv vectors, C words of 4 bytes).
double c_lines(const MachineModel& machine, int mr, int nv) {
  constexpr double kLineBits = 512;
  return mr * std::ceil(nv * machine.vector_bits / kLineBits);
}

// Cycles per C line that a call waits beyond the port formula when its C tile comes from `level`: the
// measured block's call (MachineModel::calls) less the formula's, spread over its lines, so that a
// block with more lines waits longer. 0 when nothing was measured. C beyond L3 takes L3's figure.
double c_line_wait(const MachineModel& machine, const DtypeTraits& dt, Level level) {
  const MeasuredCalls& m = machine.calls;
  if (m.mr <= 0 || m.nv <= 0 || machine.tiles) return 0;
  double measured = m.call_l1;
  if (level >= Level::l2 && m.call_l2 > 0) measured = m.call_l2;
  if (level >= Level::l3 && m.call_l3 > 0) measured = m.call_l3;
  if (measured <= 0) return 0;
  return std::max(0.0, measured - kernel_timing(machine, m.mr, m.nv, dt).call) / c_lines(machine, m.mr, m.nv);
}

}  // namespace

double formula_k_step(const MachineModel& machine, MatmulDtype dtype, int mr, int nv) {
  return kernel_timing(machine, mr, nv, dtype_traits(dtype, machine.widened)).step;
}

bool b_panel_l2_measured(const MachineModel& machine) {
  const MeasuredCalls& m = machine.calls;
  return m.mr > 0 && m.nv > 0 && m.step_cycles > 0 && m.step_cycles_b_l2 > 0;
}

namespace {

// Cycles per byte of B micro-panel that a call waits when the panel streams from L2 rather than L1:
// the measured block's deep k step (MeasuredCalls::step_cycles_b_l2) beyond its L1 step, per byte
// one step reads from L2 there: its B and its A (the deep A panel left L1 too; the memory term
// already prices A's stream from the A block, so only B's share is charged). A tile row keeps its A
// panel in L1: all of its wait is B's. Negative when not measured: the bandwidth formula prices
// those bytes instead.
double b_panel_l2_wait(const MachineModel& machine, const DtypeTraits& dt) {
  if (!b_panel_l2_measured(machine)) return -1;
  const MeasuredCalls& m = machine.calls;
  const double a_rows = machine.tiles ? 0.0 : double(m.mr);
  const double bytes_per_step = (a_rows + double(m.nv) * lanes_of(machine)) * dt.kgroup * dt.packed_bytes;
  return std::max(0.0, m.step_cycles_b_l2 - m.step_cycles) / bytes_per_step;
}

// ---- Memory: where each operand lives and what it costs ----

struct Placement {
  Level a_block, b_block, b_panel, c_panel, a_slice;
  bool a_panel_in_l1;  // an A micro-panel fits L1's budget (a tile row keeps it there)
};

Placement place(const Geometry& g, const Budgets& b) {
  Placement pl;
  pl.a_block = g.a_block <= b.l2 ? Level::l2 : g.a_block <= b.l3_thread ? Level::l3 : Level::dram;
  pl.b_block = g.a_block + g.b_block <= b.l2_pair ? Level::l2 : g.b_block <= b.l3_b_block ? Level::l3 : Level::dram;
  // A B micro-panel that L1 cannot hold is re-read by every further call of its ic block, from the
  // half of L2 the A block leaves free if it fits there.
  pl.b_panel = g.b_panel <= b.l1 ? Level::l1 : g.b_panel <= b.l2 ? Level::l2 : pl.b_block;
  pl.a_panel_in_l1 = g.a_panel <= b.l1;
  // Between two visits of a C tile (consecutive pc), the thread sweeps its whole C panel; a B block
  // kept in L2 leaves C only what the A and B blocks do not fill (a B block beyond L2 streams
  // through it panel by panel).
  const bool c_fits_l2 = g.c_panel + g.a_block <= b.l2 &&
                         (pl.b_block != Level::l2 || g.c_panel + g.a_block + g.b_block <= b.l2_whole);
  pl.c_panel = c_fits_l2 ? Level::l2 : g.c_panel <= b.l3_thread ? Level::l3 : Level::dram;
  // A is re-packed (or, in place, re-read) for every jc: the thread's rows of A come back from
  // wherever they fit beside what one jc pass sweeps between two reads of them, its C panel and its
  // B block. Emerald Rapids VM, int8 1024^3, A (1 MiB, half of L2) read in place with nc 128: 3.2
  // ms against 3.0 for a 1 MiB B block and A packed, where A priced from L2 made the first the
  // model's. The B block counts whole even where it streams from L3, and in three quarters of L2,
  // not all of it as for C: counting only its micro-panel, the first choice at int8 513^3 ran 7.0%
  // and 7.2% slower than --autotune's best in two runs, against 1.2% and 1.9% so.
  const double a_slice = g.rows * double(g.kpad) * g.dt.ab_bytes;
  const bool a_slice_l2 = a_slice <= b.l2 && a_slice + g.c_panel + g.b_block <= b.l2_pair;
  pl.a_slice = a_slice_l2 ? Level::l2 : a_slice <= b.l3_thread ? Level::l3 : Level::dram;
  return pl;
}

// Whether the first call of each ic block on a B micro-panel reads it from beyond L2 (the B block
// lives in L3 or DRAM). That call cannot run faster than the level delivers the panel, and nothing
// fetches the panel ahead of it: a stall in the kernel (evaluate). The same bytes stay in the
// traffic the kernels overlap (kernel_memory_seconds): they share the level's bandwidth with it.
bool first_calls_stream_b(const Placement& pl) { return pl.b_block == Level::l3 || pl.b_block == Level::dram; }

// Whether the tile rows' B stream from the B block is priced in the kernel's time (evaluate): the
// tile rows were measured (measure_tile_rows). From a B block in L2 at the measured rows' wait; from
// beyond L2 at least that, and no faster than the level delivers it (first_calls_stream_b).
bool tile_b_stream_in_kernel(const MachineModel& machine, const Geometry& g) {
  return g.tiles && b_panel_l2_wait(machine, g.dt) >= 0;
}

// Whether a tile row's A panels come from the A block beyond L1 and wait for it (evaluate): on every
// panel when the A panel is too deep for L1, else on each row's first unless the A block is the
// row's own block, packed right before it (mc = mr leaves the packed panel in L1).
bool tile_a_waits(const Geometry& g, const MatmulConfig& c, const Placement& pl) {
  return g.tiles && (!pl.a_panel_in_l1 || g.mc > c.mr);
}

// The slower of two levels (they are declared fastest first). Packed buffers are written at no more
// than L2 speed, even when they would fit L1.
Level slower(Level a, Level b) { return std::max(a, b); }

// Seconds of the kernel loops' traffic (overlapped with compute).
double kernel_memory_seconds(const MachineModel& machine, const MatmulConfig& c, const Geometry& g,
                             const Budgets& b, const Placement& pl) {
  const double k = double(g.kpad), ab = g.dt.ab_bytes, pb = g.dt.packed_bytes, cb = g.dt.c_bytes;
  // A call streams its A micro-panel (mr x kc) from the A block (a tile row, its first call), unless
  // the tile rows' measured wait prices that read in the kernel's time (evaluate).
  const double a_bytes = g.a_block_calls(pl.a_panel_in_l1) * k * c.mr * (c.pack_a ? pb : ab);
  const bool a_in_kernel = tile_b_stream_in_kernel(machine, g) && tile_a_waits(g, c, pl) &&
                           b_panel_l2_wait(machine, g.dt) > 0;
  double s = a_in_kernel ? 0.0 : transfer_seconds(machine, b, a_bytes, pl.a_block);
  // A read in place is not packed, but each jc pass still brings the thread's rows of A in from
  // where they live (the traffic packing would have had), now overlapped with the kernels.
  if (!c.pack_a) {
    const double a_read = g.rows * g.k * ab;
    s += transfer_seconds(machine, b, a_read, b.source);
    s += transfer_seconds(machine, b, a_read * double(g.n_jc - 1), pl.a_slice);
  }
  // B read in place is not packed: the first ic block's calls bring each B block in from where B
  // lives (the read packing would have done), overlapped with the kernels.
  if (!c.pack_b) s += transfer_seconds(machine, b, g.cols * g.k * ab, b.source);
  // A B micro-panel comes from the B block once per ic block (its first call); the other calls of
  // that ic block find it in L1, or re-read it from where it fits when L1 cannot hold it. Tile rows
  // read it from the B block every row block. (From beyond L2 those calls also wait for it: evaluate.)
  // A tile row's stream from a B block in L2 is in the kernel's own time where it was measured.
  if (!tile_b_stream_in_kernel(machine, g))
    s += transfer_seconds(machine, b, g.b_block_passes() * double(g.cols_pad) * k * pb, pl.b_block);
  // Re-reads from L2 are in the kernel's own time where they were measured (evaluate).
  if (pl.b_panel != Level::l2 || b_panel_l2_wait(machine, g.dt) < 0)
    s += transfer_seconds(machine, b, g.b_panel_rereads() * k * c.nr * pb, pl.b_panel);
  // A B block packed by a column group that spans several L3 instances reaches each instance once
  // from the others: across the chip's fabric, which on chiplet designs runs at DRAM-like speed.
  if (pl.b_block != Level::dram)
    s += transfer_seconds(machine, b, double(g.cols_pad) * k * pb * b.b_remote, Level::dram);
  // C: every pc pass loads and stores the thread's C; the first pass from where C starts.
  const double c_pass = double(g.rows_pad) * double(g.cols_pad) * cb * 2;
  s += transfer_seconds(machine, b, g.rows * g.cols * cb * 2, b.source);
  s += transfer_seconds(machine, b, double(g.kblocks - 1) * c_pass, pl.c_panel);
  return s;
}

// Threads side by side in a row of C (thread_cols > 1) meet inside a line of C in every row where
// the cut between their columns does not fall on a line boundary: C's rows not whole lines apart (n
// elements, as `matmul` lays C out), or a cut inside a line (gemm.cpp cuts whole vectors, which are
// narrower than a line where they are 32 bytes). Each K block's stores then send that line from one
// core to the other and back. Emerald Rapids VM, 127^3 f32 on 2 threads, 4x64 blocks split over N: 263-275 GFLOP/s with
// C's rows 127 floats apart, 299-301 with them 144 apart, about 12.6 ns a shared line; priced at two
// measured hand-offs of a line (22.3 GB/s there: 5.7 ns each). A thread between two others meets
// both: the busiest thread pays for up to two lines a row.
double c_line_sharing_seconds(const MachineModel& machine, const MatmulProblem& problem, const MatmulConfig& c,
                              const Geometry& g) {
  constexpr double kLineBytes = 64;
  const double gbps = machine.handoff_gbps > 0 ? machine.handoff_gbps : machine.l3_gbps;
  const ColumnSplit split(problem.n, c.nr, c.nv, c.thread_cols);
  if (split.threads <= 1 || gbps <= 0) return 0;
  const bool rows_on_lines = std::fmod(double(problem.n) * g.dt.c_bytes, kLineBytes) == 0;
  int shared_cuts = 0;
  for (int tc = 1; tc < split.threads; ++tc) {
    const int64_t cut = split.cut(tc);
    if (cut < problem.n && (!rows_on_lines || std::fmod(double(cut) * g.dt.c_bytes, kLineBytes) != 0)) ++shared_cuts;
  }
  return g.rows * double(g.kblocks) * double(std::min(shared_cuts, 2)) * 2 * kLineBytes / (gbps * kGiga);
}

// One barrier among `parties` threads: the measured wait of a pair (MachineModel::barrier_seconds)
// or, unmeasured, a cache-line round trip; either times log2(parties), a guess at how the wait
// grows with the threads that must all arrive (SpinBarrier is one counter; only a pair is measured).
double barrier_seconds(const MachineModel& machine, int parties) {
  const double levels = std::ceil(std::log2(double(std::max(parties, 1))));
  return (machine.barrier_seconds > 0 ? machine.barrier_seconds : kBarrierLevelSeconds) * levels;
}

// The barriers a shared B block costs: the GEMM meets once per block (B is double-buffered); the
// unmeasured price counts two round trips (packed, then released).
double b_block_barrier_seconds(const MachineModel& machine, int parties) {
  return machine.barrier_seconds > 0 ? barrier_seconds(machine, parties)
                                     : kBarriersPerBBlock * barrier_seconds(machine, parties);
}

// Seconds of packing, which the thread does between kernel runs (not overlapped), plus the barriers
// around B blocks shared by several threads.
double pack_seconds(const MachineModel& machine, const MatmulConfig& c, const Geometry& g, const Budgets& b,
                    const Placement& pl) {
  const double ab = g.dt.ab_bytes, pb = g.dt.packed_bytes;
  // A: the thread's rows, once per jc; the first time from where A starts, later from where its slice
  // fits. The packed block is written into L2 (or wherever it lives if larger).
  // Kernels that read A in place (pack_a false) skip this; the kernel's A traffic stays the same.
  // Neither operand packs faster than the packing code runs on this core, where that was measured.
  auto at_least_packing = [](double seconds, double bytes, double gbps) {
    return gbps > 0 ? std::max(seconds, bytes / (gbps * kGiga)) : seconds;
  };
  double s = 0;
  if (c.pack_a) {
    const double a_read = g.rows * g.k * ab;
    double a = transfer_seconds(machine, b, a_read, b.source);
    a += transfer_seconds(machine, b, a_read * double(g.n_jc - 1), pl.a_slice);
    a += transfer_seconds(machine, b, double(g.n_jc) * double(g.rows_pad) * double(g.kpad) * pb,
                          slower(pl.a_block, Level::l2));
    s += at_least_packing(a, a_read * double(g.n_jc), machine.pack_a_gbps);
  }
  // B: each block is packed once, cooperatively by the thread_rows threads that share it (read in
  // place, at most an edge panel narrower than nr is packed, where the kernels cannot mask its last
  // vector (Target::b_in_place_edges): left out).
  if (c.pack_b) {
    const double share = 1.0 / c.thread_rows;
    const double b_read = g.cols * g.k * ab * share;
    double bt = transfer_seconds(machine, b, b_read, b.source);
    bt += transfer_seconds(machine, b, double(g.cols_pad) * double(g.kpad) * pb * share, slower(pl.b_block, Level::l2));
    s += at_least_packing(bt, b_read, machine.pack_b_gbps);
  }
  // B read in place: each thread packs its own panels and meets no other (gemm.cpp).
  if (c.thread_rows > 1 && c.pack_b) {
    s += double(g.n_jc) * double(g.kblocks) * b_block_barrier_seconds(machine, c.thread_rows);
    // The slices of each B block the other threads packed come from their caches once the barrier
    // lets the kernels start, at the measured hand-off rate: a wait, not a stream the kernels hide
    // (a grid of one row shares nothing and pays none). The kernels' memory term still counts the
    // same bytes as part of the B block's stream, overlapped: the wait comes on top of it. On the
    // Zen 5 VM (2 vCPUs) the rate read 31-34 GB/s: about 16 us of a 0.75 ms 513^3 call on a 2x1 grid.
    if (machine.handoff_gbps > 0) {
      const double others = double(g.cols_pad) * double(g.kpad) * g.dt.packed_bytes * (1.0 - 1.0 / c.thread_rows);
      s += others / (machine.handoff_gbps * kGiga);
    }
  }
  return s;
}

// Why a candidate is worse than it could be, in a few words for the explanation table.
std::string notes_of(const MatmulConfig& c, const Geometry& g, const Placement& pl) {
  std::string out;
  auto add = [&out](const std::string& s) { out += (out.empty() ? "" : "; ") + s; };
  if (!c.pack_a) add("A read in place");
  if (!c.pack_b) add("B read in place");
  if (pl.a_block != Level::l2) add(std::string("A block over L2 budget, from ") + level_name(pl.a_block));
  if (pl.b_panel != Level::l1 && g.b_panel_rereads() > 0)
    add(std::string("B panel over L1 budget, from ") + level_name(pl.b_panel));
  if (pl.b_block == Level::dram) add("B block over L3 share, from DRAM");
  const int64_t busy = std::min<int64_t>(c.thread_rows, g.tiles_m) * std::min<int64_t>(c.thread_cols, g.tiles_n);
  const int64_t idle = c.threads - busy * c.batch_threads * c.k_threads;  // every group has the same grid
  if (idle > 0) add(std::to_string(idle) + (idle == 1 ? " idle thread" : " idle threads"));
  return out;
}

// The K parts' reduction, between two barriers of the parts: each part adds the others' sums into
// its share of the region's rows (gemm.cpp). Of the slices it reads, k_threads - 1 were written by
// other cores (the other parts' buffers, and C for all but the first part): at the measured hand-off
// rate, and no faster than the level where the region fits (the hand-off is measured on lines still
// in the writer's L2; a region beyond L2 has left it). Its own slice is read and C's written at the
// level where the region fits.
// Priced from L2 for any region, the sums of a 2048^3 f32 product split in two (16 MiB a part) cost
// 0.35 ms, where the split (the first part adding alone, then) ran 4.3 ms behind a 1x2 grid on the
// Sapphire Rapids-class VM.
double k_sum_seconds(const MachineModel& machine, const Budgets& b, const Geometry& g, int k_threads) {
  const double region = g.rows * g.cols * g.dt.c_bytes, slice = region / k_threads;
  const Level level = region <= b.l2 ? Level::l2 : region <= b.l3_thread ? Level::l3 : Level::dram;
  const double others = slice * (k_threads - 1);
  double from_others = transfer_seconds(machine, b, others, level);
  if (machine.handoff_gbps > 0) from_others = std::max(from_others, others / (machine.handoff_gbps * kGiga));
  return from_others + transfer_seconds(machine, b, 2 * slice, level) + 2 * barrier_seconds(machine, k_threads);
}

CandidateCost evaluate(const MachineModel& machine, const MatmulProblem& problem, const MatmulConfig& config,
                       double softness) {
  CandidateCost r;
  r.config = normalized(machine, problem, config);
  if (!valid(problem)) {
    r.note = "empty problem: nothing to compute";
    return r;
  }
  const MatmulConfig& c = r.config;
  // A thread of a K split computes its part of K: the problem it sees is that part.
  MatmulProblem part = problem;
  const int kgroup = dtype_traits(machine, problem).kgroup;
  part.k = ceil_div(ceil_div(problem.k, kgroup), c.k_threads) * kgroup;
  Geometry g = geometry_of(machine, part, c);
  // The K parts the GEMM starts are those of the whole K, not of one part's k groups.
  if (c.k_threads > 1) g.started_threads = geometry_of(machine, problem, c).started_threads;
  const Budgets b = budgets_for(machine, problem, b_sharing_rows(c), c.threads);
  const Placement pl = place(g, b);
  const KernelTiming kt = kernel_timing(machine, c.mr, c.nv, g.dt, softness);

  constexpr double kMinGhz = 1e-3;  // a missing clock must not divide by zero
  const double hz = std::max(machine.ghz, kMinGhz) * kGiga;
  // Each batch group runs its items one after another, every item on the group's grid.
  const double batch = double(ceil_div(std::max<int64_t>(problem.batch, 1), c.batch_threads));
  // Between two visits a C tile goes back to where the thread's C panel fits.
  // A narrower last tile runs the kernel of its own vectors (gemm.cpp's edge kernels), at that
  // block's rate: fewer FMAs a step, but no fewer cycles of latency.
  const double wait = c_line_wait(machine, g.dt, pl.c_panel);
  auto tile_cycles = [&](const KernelTiming& t, int nv) {
    return double(g.ksteps) * t.step + double(g.kblocks) * (t.call + c_lines(machine, c.mr, nv) * wait);
  };
  const double full_tiles = double(g.tiles_m_t) * double(g.tiles_n_t - (g.edge_vectors > 0));
  double cycles = full_tiles * tile_cycles(kt, c.nv);
  double ideal = full_tiles * double(g.ksteps) * kt.ideal_step;
  if (g.edge_vectors > 0) {
    const int edge_nv = int(g.edge_vectors);
    const KernelTiming edge = kernel_timing(machine, c.mr, edge_nv, g.dt, softness);
    cycles += double(g.tiles_m_t) * tile_cycles(edge, edge_nv);
    ideal += double(g.tiles_m_t) * double(g.ksteps) * edge.ideal_step;
  }
  // Calls that re-read their B micro-panel from L2 wait as the measured deep loop did: a stall in the
  // kernel, not a stream that overlaps it. They cannot run faster than L2 delivers those bytes: a
  // block that reads more B a cycle than the measured one may meet that limit first.
  const double b_wait = b_panel_l2_wait(machine, g.dt);
  const double b_rereads = g.b_panel_rereads() * double(g.kpad) * c.nr * g.dt.packed_bytes;
  if (pl.b_panel == Level::l2 && b_wait > 0) cycles += b_rereads * b_wait;
  if (pl.b_panel == Level::l2 && b_wait >= 0) cycles = std::max(cycles, transfer_seconds(machine, b, b_rereads, Level::l2) * hz);
  // Tile rows stream every B panel from the B block and wait as the measured rows did, per byte of B
  // and per panel (its C tiles and first tiles). On the Sapphire Rapids-class VM a row of 128-step
  // panels took about twice its multiplies' time; the bandwidth formula, at the L2 rate vector loads
  // reach, hid all of it under compute.
  double tile_waits = 0;
  if (tile_b_stream_in_kernel(machine, g)) {
    tile_waits += g.b_block_passes() * double(g.cols_pad) * double(g.kpad) * g.dt.packed_bytes * b_wait;
    // A panels read from the A block wait as B's bytes do (tile_a_waits): 1024^3 bf16 at kc 1024,
    // whose 64 KiB A panels leave L1, ran 3.5-3.7 ms against 2.3 at kc 512; at kc 256, mc 32 ran
    // 2.13 ms where mc 1024 ran 2.37.
    if (tile_a_waits(g, c, pl))
      tile_waits += g.a_block_calls(pl.a_panel_in_l1) * double(g.kpad) * c.mr * g.dt.packed_bytes * b_wait;
    // Each panel costs what the measured block's panel cost beyond its own C update, in proportion
    // to this block's C tiles (the C tiles' loads and stores, and the drain before them).
    const MeasuredCalls& m = machine.calls;
    const double excess = std::max(0.0, m.row_panel_cycles - kernel_timing(machine, m.mr, m.nv, g.dt).call);
    tile_waits += g.b_block_calls() * double(g.kblocks) * excess * double(c.mr * c.nv) / double(m.mr * m.nv);
  }
  cycles += tile_waits;
  // The first call of each ic block on a B micro-panel (a tile kernel's every call: b_block_calls)
  // streams it from a B block beyond L2 and runs no faster than that level delivers it. Priced as
  // overlapped traffic instead, a 2x1 grid whose 2 MiB B block (kc 256) sat in L3 looked as fast as
  // one whose B block fit L2, and ran 7% slower
  // (2048^3 f32 on 2 threads of the Sapphire Rapids-class VM, 7x48 blocks, mc 49: 63.3 against
  // 58.9 ms; this prices about 4.7 ms).
  if (first_calls_stream_b(pl)) {
    const double calls = g.b_block_calls();
    const double bytes = calls * double(g.kpad) * c.nr * g.dt.packed_bytes;
    const double busy = calls * double(g.ksteps) * kt.step + tile_waits;
    cycles += std::max(0.0, transfer_seconds(machine, b, bytes, pl.b_block) * hz - busy);
  }
  // Tile kernels load the tile configuration and release the tiles once a call, a row of panels; a
  // thread after the first of its column of threads starts its rows on its own diagonal panel
  // (gemm.cpp), so that each row is two calls.
  cycles += g.tile_rows() * (c.thread_rows > 1 ? 2.0 : 1.0) * kTileCallCycles;
  r.kernel_efficiency = ideal / cycles;
  r.compute_seconds = cycles / hz * batch;
  r.memory_seconds = kernel_memory_seconds(machine, c, g, b, pl) * batch;
  r.pack_seconds = pack_seconds(machine, c, g, b, pl) * batch;
  if (c.k_threads > 1) r.pack_seconds += k_sum_seconds(machine, b, g, c.k_threads) * batch;
  // One wake-up and join of the team per call: a batch is one run of it (gemm.cpp).
  r.team_seconds = fork_join_cost(machine, g.started_threads) + c_line_sharing_seconds(machine, problem, c, g) * batch;
  r.seconds = soft_max(r.compute_seconds, r.memory_seconds, kOverlapSoftness) + r.pack_seconds + r.team_seconds;

  // Columns are computed to whole vectors, rows to whole tiles.
  const double lanes = double(c.nr) / c.nv, vectors = std::ceil(double(problem.n) / lanes);
  const double computed = double(g.tiles_m) * c.mr * vectors * lanes * double(g.kpad) * c.k_threads;
  r.padding = 1.0 - double(problem.m) * double(problem.n) * double(problem.k) / computed;
  const double mean_work = double(g.tiles_m) * vectors / (c.thread_rows * c.thread_cols);
  const double mean_items = double(std::max<int64_t>(problem.batch, 1)) / c.batch_threads;
  r.imbalance = double(g.tiles_m_t) * double(g.vectors_t) / mean_work * (batch / mean_items) - 1.0;
  // The thread's own A buffer and its share of the B buffer it packs with its column group.
  r.bytes_per_thread = uint64_t(g.a_block + g.b_block / b_sharing_rows(c));
  r.note = notes_of(c, g, pl);
  return r;
}

// ---- Enumeration ----


// Vector registers an mr x nv block of the dtype's kernel takes on this machine (the target's count).
int block_registers(const MachineModel& machine, MatmulDtype dtype, int mr, int nv) {
  isa::MicroKernelShape shape;
  shape.mr = mr;
  shape.nv = nv;
  shape.vec_bits = machine.vector_bits;
  shape.dtype = dtype;
  shape.widened = machine.widened && dtype != MatmulDtype::f32;
  return isa::host_target().registers_needed(shape);
}

// Register blocks for this problem: the machine's, plus a block of exactly m rows when m is smaller
// than every block of that width (latency-bound, but better than computing padding rows).
std::vector<std::pair<int, int>> candidate_blocks(const MachineModel& machine, const MatmulProblem& problem) {
  auto blocks = register_blocks(machine, problem.dtype);
  if (machine.tiles) return blocks;  // tiles have 16 rows: no block of exactly m rows
  for (int nv = 1; nv <= 4; ++nv) {
    int smallest = 0;
    for (auto [mr, v] : blocks)
      if (v == nv && (smallest == 0 || mr < smallest)) smallest = mr;
    const bool fits =
        problem.m <= 64 && block_registers(machine, problem.dtype, int(problem.m), nv) <= machine.vector_registers;
    if (fits && (smallest == 0 || problem.m < smallest)) blocks.emplace_back(int(problem.m), nv);
  }
  return blocks;
}

// (thread_rows, thread_cols) with thread_rows * thread_cols = threads.
std::vector<std::pair<int, int>> thread_grids(int threads) {
  std::vector<std::pair<int, int>> grids;
  for (int r = 1; int64_t(r) * r <= threads; ++r) {
    if (threads % r != 0) continue;
    grids.emplace_back(r, threads / r);
    if (r != threads / r) grids.emplace_back(threads / r, r);
  }
  return grids;
}

// Splits `total` into the fewest blocks of at most `max_block`, of even size rounded up to `unit`
// (so 1026 rows in blocks of at most 510 become 3 blocks of 342, not 510 + 510 + 6).
int64_t balanced_block(int64_t total, int64_t max_block, int64_t unit) {
  max_block = std::max(unit, max_block / unit * unit);
  const int64_t blocks = ceil_div(total, max_block);
  return round_up(ceil_div(total, blocks), unit);
}

// Completes a register block and grid: kc = kc_target clamped to K, mc filling `mc_fill` of the
// L2 budget, nc as large as `nc_rule` allows; mc and nc split the thread's rows / columns evenly.
MatmulConfig with_blocks(const MachineModel& machine, const MatmulProblem& problem, MatmulConfig c, int kc_target,
                         double mc_fill, NcRule nc_rule) {
  const DtypeTraits dt = dtype_traits(machine, problem);
  const int64_t kpad = round_up(problem.k, dt.kgroup);
  c.kc = int(round_up(std::min<int64_t>(kc_target, kpad), dt.kgroup));
  c.pack_b = !b_in_place_pays(machine, problem, c.mr, c.thread_rows);
  c.mc = c.mr;
  c.nc = c.nr;
  const Geometry g = geometry_of(machine, problem, c);
  const Budgets b = budgets_for(machine, problem, b_sharing_rows(c), c.threads);
  const double kc_bytes = double(g.kc) * dt.packed_bytes;
  const auto fitting = [](double budget, double per_unit, int64_t total) {
    return int64_t(std::min(double(total), std::floor(budget / per_unit)));
  };
  c.mc = int(balanced_block(g.rows_pad, fitting(mc_fill * b.l2, kc_bytes, g.rows_pad), c.mr));
  const Geometry with_mc = geometry_of(machine, problem, c);
  const double c_row = double(with_mc.rows_pad) * dt.c_bytes;  // C panel bytes per column
  // nc is whole panels: the thread's columns padded to tiles, so that a narrower last panel does not
  // push a thread whose columns fit one block into two.
  const int64_t cols_tiles = g.tiles_n_t * c.nr;
  double nc_max = 0;
  switch (nc_rule) {
    case NcRule::b_block_full: nc_max = fitting(b.l3_b_block, kc_bytes, cols_tiles); break;
    case NcRule::b_block_half: nc_max = fitting(0.5 * b.l3_b_block, kc_bytes, cols_tiles); break;
    case NcRule::c_panel_l3: nc_max = fitting(b.l3_thread, c_row, cols_tiles); break;
    case NcRule::c_panel_l2: nc_max = fitting(std::max(0.0, b.l2 - with_mc.a_block), c_row, cols_tiles); break;
    // The B block that stays in L2 beside the A block (kL2PairFill): with a small mc, a B block
    // serving every ic pass from L2.
    case NcRule::b_block_l2_pair:
      nc_max = fitting(std::max(0.0, b.l2_pair - with_mc.a_block), kc_bytes, cols_tiles);
      break;
  }
  c.nc = int(balanced_block(cols_tiles, int64_t(nc_max), c.nr));
  c.pack_a = !a_in_place_pays(machine, problem, c.mr, c.nc / std::max(1, c.nr));
  return c;
}


bool cheaper(const CandidateCost& a, const CandidateCost& b) {
  if (a.seconds != b.seconds) return a.seconds < b.seconds;
  if (a.bytes_per_thread != b.bytes_per_thread) return a.bytes_per_thread < b.bytes_per_thread;
  return config_key(a.config) < config_key(b.config);
}

// The kc grid, plus the deepest kc whose B micro-panel still fits the L1 budget (the BLIS
// analytical model's choice), which the grid may straddle.
int kc_fitting_l1(const MachineModel& machine, const MatmulProblem& problem, const MatmulConfig& c) {
  const DtypeTraits dt = dtype_traits(machine, problem);
  const double panel_row = double(c.nr) * dt.packed_bytes;  // bytes of B micro-panel per k
  const double fits = std::min(kL1Fill * double(machine.l1_bytes) / panel_row, double(kKcTargets.back()));
  return std::max(dt.kgroup, int(fits) / dt.kgroup * dt.kgroup);
}

std::vector<int> kc_targets(const MachineModel& machine, const MatmulProblem& problem, const MatmulConfig& c) {
  std::vector<int> out(kKcTargets.begin(), kKcTargets.end());
  out.push_back(kc_fitting_l1(machine, problem, c));
  return out;
}

// First pass: every register block on every thread grid of every count (thread_counts), with the
// deepest kc whose B micro-panel fits L1 (at most kCoarseKcMax) and full budgets; the cheapest pairs
// go on to the second pass.
std::vector<CandidateCost> coarse_pairs(const MachineModel& machine, const MatmulProblem& problem,
                                        double softness) {
  std::vector<CandidateCost> out;
  std::set<std::tuple<int, int, int, int, int, int>> seen;
  const int lanes = lanes_of(machine);
  for (auto [mr, nv] : candidate_blocks(machine, problem)) {
    const int64_t k_groups = ceil_div(problem.k, dtype_traits(machine, problem).kgroup);
    for (auto [groups, parts, rows, cols] : thread_splits_up_to(problem.threads, problem.batch, k_groups)) {
      MatmulConfig c;
      c.mr = mr;
      c.nv = nv;
      c.nr = nv * lanes;
      // A thread without a tile is wasted: a grid wider than the tiles uses fewer threads.
      c.thread_rows = int(std::min<int64_t>(rows, ceil_div(problem.m, mr)));
      c.thread_cols = int(std::min<int64_t>(cols, ceil_div(problem.n, c.nr)));
      c.batch_threads = groups;
      c.k_threads = parts;
      c.threads = groups * parts * c.thread_rows * c.thread_cols;
      if (!seen.insert({mr, nv, c.thread_rows, c.thread_cols, groups, parts}).second) continue;
      const int kc = std::min(kCoarseKcMax, kc_fitting_l1(machine, problem, c));
      out.push_back(
          evaluate(machine, problem, with_blocks(machine, problem, c, kc, 1.0, NcRule::b_block_full), softness));
    }
  }
  std::sort(out.begin(), out.end(), cheaper);
  if (out.size() > kPairsKept) out.resize(kPairsKept);
  return out;
}

std::string bytes_text(double bytes) {
  char buf[32];
  if (bytes >= kMiB)
    std::snprintf(buf, sizeof buf, "%.4g MiB", bytes / kMiB);
  else
    std::snprintf(buf, sizeof buf, "%.4g KiB", bytes / kKiB);
  return buf;
}

std::string printf_text(const char* format, auto... args) {
  const int length = std::snprintf(nullptr, 0, format, args...);
  std::string out(size_t(std::max(length, 0)) + 1, '\0');
  std::snprintf(out.data(), out.size(), format, args...);
  out.pop_back();  // the terminating NUL snprintf wrote
  return out;
}

std::string grid_text(const MatmulConfig& c) {
  std::string s = c.batch_threads > 1 ? printf_text("%dx%dx%d", c.batch_threads, c.thread_rows, c.thread_cols)
                                      : printf_text("%dx%d", c.thread_rows, c.thread_cols);
  if (c.k_threads > 1) s += printf_text("/k%d", c.k_threads);
  return s;
}

// Where the chosen configuration's blocks live, for the explanation.
std::string placement_text(const MachineModel& machine, const MatmulProblem& problem, const MatmulConfig& c) {
  const Geometry g = geometry_of(machine, problem, c);
  const Budgets b = budgets_for(machine, problem, b_sharing_rows(c), c.threads);
  const Placement pl = place(g, b);
  return "A block " + bytes_text(g.a_block) + " in " + level_name(pl.a_block) + ", B micro-panel " +
         bytes_text(g.b_panel) + " in " + level_name(pl.b_panel) + ", B block " + bytes_text(g.b_block) + " in " +
         level_name(pl.b_block) + ", C panel " + bytes_text(g.c_panel) + " in " + level_name(pl.c_panel);
}

}  // namespace

ConfigKey config_key(const MatmulConfig& c) {
  return {c.mr, c.nv, c.mc, c.kc, c.nc, c.thread_rows, c.thread_cols, c.batch_threads, c.k_threads, c.pack_a, c.pack_b};
}

bool a_in_place_possible(const MachineModel& machine, const MatmulProblem& problem, int mr) {
  return mr >= 1 && mr <= machine.a_in_place_rows &&
         (machine.a_in_place_partial_groups || problem.k % dtype_traits(machine, problem).kgroup == 0);
}

bool a_in_place_pays(const MachineModel& machine, const MatmulProblem& problem, int mr, int b_panels) {
  return a_in_place_possible(machine, problem, mr) &&
         (double(problem.m) * double(problem.k) * dtype_traits(machine, problem).ab_bytes <=
              kL2Fill * double(machine.l2_bytes) ||
          b_panels >= kAReusePanels);
}

bool b_in_place_pays(const MachineModel& machine, const MatmulProblem& problem, int mr, int thread_rows) {
  // Each row of threads reads B in place on its own: a B beyond L2 read so by several would be read
  // from memory as many times, where packed ahead it is read once among them.
  return b_in_place_possible(problem.dtype) &&
         (double(problem.k) * double(problem.n) * 4.0 <= kL2Fill * double(machine.l2_bytes) ||
          (thread_rows == 1 && problem.m <= int64_t(kFewRowBlocks) * std::max(1, mr)));
}

std::vector<std::pair<int, int>> register_blocks(const MachineModel& machine, MatmulDtype dtype) {
  if (machine.tiles && dtype != MatmulDtype::f32) {
    // Whole tiles: every block of one or two rows of tiles the target can generate (C, A and B tiles
    // within the CPU's). Three rows (48 x 16) stream less B a tile product, but their panels are half
    // as wide: 1024^3 bf16 ran slower with them on the Sapphire Rapids-class VM, and the formula,
    // which sees only the streamed bytes, ranked them first (and calibrated on them). --config runs them.
    std::vector<std::pair<int, int>> blocks;
    for (int mr = isa::MicroKernelShape::kTileRows; mr <= 2 * isa::MicroKernelShape::kTileRows;
         mr += isa::MicroKernelShape::kTileRows)
      for (int nv = 1; nv <= 4; ++nv) {
        isa::MicroKernelShape s{mr, nv, machine.vector_bits, dtype};
        s.tiles = true;
        if (isa::host_target().check_kernel_shape(s, machine.vector_registers).empty()) blocks.emplace_back(mr, nv);
      }
    if (!blocks.empty()) return blocks;
  }
  const int regs = machine.vector_registers;
  // The tallest block of nv vectors whose accumulators, B vectors and A registers fit (the target's
  // kernels decide what a row costs beyond its accumulators).
  const auto max_rows = [&](int nv) {
    int mr = 0;
    while (block_registers(machine, dtype, mr + 1, nv) <= regs) ++mr;
    return mr;
  };
  // Enough independent accumulators to keep every FMA port busy across the latency; when even the
  // largest block cannot (few registers, long latency), the largest blocks are the best there is.
  int most = 1;
  for (int nv = 1; nv <= 4; ++nv) most = std::max(most, max_rows(nv) * nv);
  const double wanted = std::ceil(machine.fma_latency * machine.fma_per_cycle - 1e-9);  // 1e-9: 4.0000001 is 4
  const int needed = int(std::clamp(wanted, 1.0, double(most)));
  // No block is dominated outright: for one nv, a taller block loads less per FMA but pads more rows
  // of a short matrix, so every height from the accumulator minimum to the register limit stays.
  std::vector<std::pair<int, int>> blocks;
  for (int nv = 1; nv <= 4; ++nv)
    for (int mr = 1; mr <= max_rows(nv); ++mr)
      if (mr * nv >= needed) blocks.emplace_back(mr, nv);
  if (blocks.empty()) blocks.emplace_back(1, 1);  // a register file too small for any block still runs 1x1
  return blocks;
}

// (batch_threads, k_threads, thread_rows, thread_cols) with their product = threads: every grid of
// the threads; with a batch of several items, every split of the threads into groups that each run
// their own items (at most one group per item); and every split of a group's threads into parts of
// K (at most one per k group).
std::vector<std::tuple<int, int, int, int>> thread_splits(int threads, int64_t batch, int64_t k_groups) {
  std::vector<std::tuple<int, int, int, int>> out;
  for (int groups = 1; groups <= threads; ++groups) {
    if (threads % groups != 0 || groups > std::max<int64_t>(batch, 1)) continue;
    const int per_group = threads / groups;
    for (int parts = 1; parts <= per_group; ++parts) {
      if (per_group % parts != 0 || parts > std::max<int64_t>(k_groups, 1)) continue;
      for (auto [rows, cols] : thread_grids(per_group / parts)) out.emplace_back(groups, parts, rows, cols);
    }
  }
  return out;
}

std::vector<int> thread_counts(int threads) {
  threads = std::max(1, threads);
  std::vector<int> out = {threads};
  int below = 1;
  while (below * 2 < threads) below *= 2;
  for (; below >= 1; below /= 2)
    if (below < threads) out.push_back(below);
  return out;
}

std::vector<std::tuple<int, int, int, int>> thread_splits_up_to(int threads, int64_t batch, int64_t k_groups) {
  std::vector<std::tuple<int, int, int, int>> out;
  for (int count : thread_counts(threads))
    for (const auto& split : thread_splits(count, batch, k_groups)) out.push_back(split);
  return out;
}

double fork_join_cost(const MachineModel& machine, int threads) {
  const auto& measured = machine.fork_join_seconds;
  for (int t = std::min(threads, int(measured.size()) - 1); t >= 2; --t)
    if (measured[size_t(t)] > 0) return measured[size_t(t)] * threads / t;
  return 0;
}

CandidateCost predict(const MachineModel& machine, const MatmulProblem& problem, const MatmulConfig& config) {
  return evaluate(machine, problem, config, softness_for(machine, problem));
}

std::vector<CandidateCost> rank_configs(const MachineModel& machine, const MatmulProblem& problem) {
  if (!valid(problem)) {
    MatmulConfig c;
    c.mr = 1;
    c.nv = 1;
    return {evaluate(machine, problem, c, kPortSoftness)};
  }
  // Second pass: every kc / mc / nc on the pairs the first pass kept.
  std::vector<CandidateCost> out;
  std::set<ConfigKey> seen;
  const double softness = softness_for(machine, problem);
  for (const CandidateCost& pair : coarse_pairs(machine, problem, softness))
    for (int kc : kc_targets(machine, problem, pair.config))
      for (double mc_fill : kMcFills)
        for (NcRule nc_rule : kNcRules) {
          if (mc_fill == 0.0 && !machine.tiles) continue;
          const MatmulConfig c = with_blocks(machine, problem, pair.config, kc, mc_fill, nc_rule);
          if (seen.insert(config_key(c)).second) out.push_back(evaluate(machine, problem, c, softness));
        }
  std::sort(out.begin(), out.end(), cheaper);
  return out;
}

CandidateCost choose_config(const MachineModel& machine, const MatmulProblem& problem) {
  return rank_configs(machine, problem).front();
}

MachineModel machine_model_from(const CpuInfo& cpu, double ghz, double fma_per_cycle, double fma_latency,
                                MatmulDtype dtype) {
  MachineModel m;
  m.cores = std::max(1, cpu.physical_cores);
  const isa::Target& target = isa::host_target();
  m.widened = target.gemm_widened(cpu, dtype);
  m.tiles = target.gemm_tiles(cpu, dtype);
  m.a_in_place_rows = a_in_place_rows(cpu, dtype);
  m.a_in_place_partial_groups = target.a_in_place_partial_groups();
  m.vector_bits = target.model_vector_bits(cpu);
  m.vector_registers = target.vector_registers(m.vector_bits);
  constexpr double kFallbackGhz = 3.0;
  m.ghz = ghz > 0 ? ghz : cpu.tsc_hz > 0 ? cpu.tsc_hz / kGiga : kFallbackGhz;
  // Without measured figures: one FMA per cycle and 4 cycles of latency, as on most cores with vector FMA.
  m.fma_per_cycle = fma_per_cycle > 0 ? fma_per_cycle : 1.0;
  m.fma_latency = fma_latency > 0 ? fma_latency : 4.0;

  // Caches: size of one instance; cores sharing it = logical CPUs sharing it / SMT threads per core.
  m.l3_bytes = 0;
  m.l3_shared_by = 1;
  for (const CacheLevel& c : cpu.caches) {
    if (c.type == "instruction" || c.size_bytes == 0) continue;
    const int sharing = std::max(1, c.shared_by_cpus / std::max(1, cpu.smt_per_core));
    if (c.level == 1) m.l1_bytes = c.size_bytes / uint64_t(sharing);
    if (c.level == 2) m.l2_bytes = c.size_bytes / uint64_t(sharing);
    if (c.level == 3) m.l3_bytes = c.size_bytes, m.l3_shared_by = sharing;
  }

  // Bandwidth defaults, for callers without measured figures (they overwrite these with the memory
  // probes' results). L2 -> L1 sustains about half of its 64 B/cycle peak on Skylake- to Zen 4-class
  // cores; one core reads its L3 at about 12 B/cycle; one core's DRAM stream is limited by its
  // outstanding misses (10-20 line fill buffers x 64 B over ~80 ns: about 15 GB/s); a package has
  // 2 DDR channels per 8 cores, roughly (desktops 2, servers 8-12), at about 20 GB/s each.
  constexpr double kL2BytesPerCycle = 32, kL3BytesPerCycle = 12;
  constexpr double kCoreDramGbps = 15, kChannelGbps = 20;
  constexpr int kCoresPerChannelPair = 8;
  m.l2_gbps = kL2BytesPerCycle * m.ghz;
  m.l3_gbps = kL3BytesPerCycle * m.ghz;
  m.dram_gbps = kCoreDramGbps;
  const int packages = std::max(1, cpu.packages);
  const int per_package = std::max(1, m.cores / packages);
  const double channels = 2.0 * packages * std::max(1, per_package / kCoresPerChannelPair);
  m.dram_total_gbps = std::max(m.dram_gbps, channels * kChannelGbps);
  return m;
}

namespace {

const char* rate_unit(MatmulDtype d) { return d == MatmulDtype::i8 ? "GOP/s" : "GFLOP/s"; }

// The figures the model used: the machine, the problem and the rules the blocks were sized by.
void write_inputs(std::ostream& out, const MachineModel& machine, const MatmulProblem& problem) {
  const DtypeTraits dt = dtype_traits(machine, problem);
  const double flop_per_instruction = 2.0 * lanes_of(machine) * dt.kgroup *
                                      (machine.tiles ? isa::MicroKernelShape::kTileRows * isa::MicroKernelShape::kTileDepthSteps : 1);
  const double peak = machine.ghz * machine.fma_per_cycle * flop_per_instruction;
  out << "machine: " << machine.cores << " cores, " << machine.vector_bits << "-bit vectors x "
      << machine.vector_registers << " registers, "
      << printf_text("%.2f GHz; per cycle: FMA %g (latency %g), loads %g, stores %g, instructions %g\n", machine.ghz,
                     machine.fma_per_cycle, machine.fma_latency, machine.loads_per_cycle, machine.stores_per_cycle,
                     machine.issue_width);
  out << "  caches: L1d " << bytes_text(double(machine.l1_bytes)) << ", L2 " << bytes_text(double(machine.l2_bytes))
      << " per core; L3 " << bytes_text(double(machine.l3_bytes)) << " shared by " << machine.l3_shared_by
      << " cores";
  if (machine.l3_reported_bytes)
    out << " (the OS reports " << bytes_text(double(machine.l3_reported_bytes)) << "; a thread's loads kept the L3 rate "
        << "to " << bytes_text(double(machine.l3_reach_held)) << " a thread, "
        << printf_text("%s read %.1f GB/s)", bytes_text(double(machine.l3_reach_fell)).c_str(), machine.l3_reach_fell_gbps);
  out << "\n";
  auto source = [](uint64_t set) {
    return set ? "measured on " + bytes_text(double(set)) + " a thread" : std::string("default");
  };
  out << printf_text("  bandwidth GB/s per core: L2 %.0f (%s), L3 %.0f (%s), DRAM %.0f, all cores %.0f (defaults)\n",
                     machine.l2_gbps, source(machine.l2_measured_set).c_str(), machine.l3_gbps,
                     source(machine.l3_measured_set).c_str(), machine.dram_gbps, machine.dram_total_gbps);
  out << printf_text("  peak %.1f %s per core (%s: %.0f per instruction, %d k per lane)\n", peak,
                     rate_unit(problem.dtype), to_string(problem.dtype), flop_per_instruction, dt.kgroup);
  const MeasuredCalls& m = machine.calls;
  const KernelTiming measured_formula = m.mr > 0 ? kernel_timing(machine, m.mr, m.nv, dt) : KernelTiming{};
  if (m.mr > 0 && !machine.tiles) {
    const Softness s = port_softness(machine, dt);
    const std::string fitted = !s.fitted ? std::string("the default kept: the step says nothing of the ports")
                                         : printf_text("every block's step priced at the softness that fits it, %.3g", s.p);
    out << printf_text("  calls measured (%dx%d block): k step %.2f cycles (formula %.2f at port softness %.0f; %s); "
                       "beyond the k loop %.0f cycles with C in L1, %.0f in L2, %.0f in L3 (formula %.0f)\n",
                       m.mr, m.nv * lanes_of(machine), m.step_cycles, measured_formula.step, kPortSoftness,
                       fitted.c_str(), m.call_l1, m.call_l2, m.call_l3, measured_formula.call);
  }
  if (m.mr > 0 && machine.tiles)
    out << printf_text("  tile calls measured (%dx%d block): k step %.2f cycles in L1 (formula %.2f); a call of one "
                       "panel %.0f cycles beyond its k loop (formula %.0f for C, %.0f for the configuration)\n",
                       m.mr, m.nv * lanes_of(machine), m.step_cycles, measured_formula.step, m.call_l1,
                       measured_formula.call, kTileCallCycles);
  if (b_panel_l2_measured(machine))
    out << (machine.tiles
                ? printf_text("  a tile row streaming its B panels from L2: k step %.2f cycles (from L1 %.2f), "
                              "%.0f cycles a panel beyond it; tile rows are priced at that, not by the L2 "
                              "bandwidth\n",
                              m.step_cycles_b_l2, m.step_cycles, m.row_panel_cycles)
                : printf_text("  k step with the B micro-panel streaming from L2: %.2f cycles (from L1 %.2f); B panels "
                              "re-read from L2 are priced at that, not by the L2 bandwidth\n",
                              m.step_cycles_b_l2, m.step_cycles));
  if (machine.pack_a_gbps > 0 || machine.pack_b_gbps > 0)
    out << printf_text("  packing measured: A %.1f GB/s, B %.1f GB/s of source, from L3\n", machine.pack_a_gbps,
                       machine.pack_b_gbps);
  std::string team;
  for (size_t t = 2; t < machine.fork_join_seconds.size(); ++t)
    if (machine.fork_join_seconds[t] > 0)
      team += printf_text("%s%zu threads %.2f us", team.empty() ? "" : ", ", t, machine.fork_join_seconds[t] * 1e6);
  if (!team.empty()) out << "  team wake-up and join measured: " << team << "\n";
  if (machine.handoff_gbps > 0)
    out << printf_text("  hand-off measured: a core reads lines the next one wrote at %.1f GB/s\n", machine.handoff_gbps);
  if (machine.barrier_seconds > 0)
    out << printf_text("  barrier measured: two threads lose %.2f us each time they meet after a block of work\n",
                       machine.barrier_seconds * 1e6);
  out << "problem: " << to_string(problem.dtype) << " " << problem.m << " x " << problem.n << " x " << problem.k
      << ", batch " << std::max<int64_t>(problem.batch, 1) << ", " << problem.threads
      << (problem.threads == 1 ? " thread" : " threads")
      << printf_text(": %.4g G operations\n", flops_of(problem) / kGiga);
  out << printf_text("model: time = (compute^2 + memory^2)^(1/2) + packing + team; blocks: A mc x kc in %.0f%% of L2, "
                     "B kc x nr in %.0f%% of L1, B kc x nc in %.0f%% of the L3 share\n",
                     kL2Fill * 100, kL1Fill * 100, kL3Fill * 100);
}

// One aligned row per candidate, cheapest first.
void write_table(std::ostream& out, const MatmulProblem& problem, const std::vector<CandidateCost>& ranked,
                 size_t shown) {
  out << ranked.size() << " candidates, the " << shown << " cheapest:\n";
  out << printf_text("%4s  %-6s %6s %5s %6s %6s %10s %9s %7s %6s %6s %9s  %s\n", "rank", "block", "mc", "kc", "nc",
                     "grid", "pred ms", rate_unit(problem.dtype), "kernel", "pad", "imbal", "KiB/thr", "note");
  for (size_t i = 0; i < shown; ++i) {
    const CandidateCost& r = ranked[i];
    const MatmulConfig& c = r.config;
    const double achieved = r.seconds > 0 ? flops_of(problem) / r.seconds / kGiga : 0;
    std::string row = printf_text("%4zu  %-6s %6d %5d %6d %6s %#10.4g %9.1f %6.1f%% %5.1f%% %5.1f%% %9.0f  %s", i + 1,
                                  printf_text("%dx%d", c.mr, c.nr).c_str(), c.mc, c.kc, c.nc, grid_text(c).c_str(),
                                  r.seconds * 1e3, achieved, r.kernel_efficiency * 100, r.padding * 100,
                                  r.imbalance * 100, double(r.bytes_per_thread) / kKiB, r.note.c_str());
    row.erase(row.find_last_not_of(' ') + 1);  // no trailing blanks when there is no note
    out << row << "\n";
  }
}

// Where a configuration's blocks live, how its time splits, and the "LABEL:" line last.
void write_choice(std::ostream& out, const MachineModel& machine, const MatmulProblem& problem,
                  const CandidateCost& best, const char* label = "chosen") {
  const MatmulConfig& c = best.config;
  if (valid(problem)) out << "  " << label << " placement: " << placement_text(machine, problem, c) << "\n";
  out << printf_text("  %s split: compute %.4g ms (kernel %.1f%%), memory %.4g ms (overlapped), packing %.4g ms%s%s\n",
                     label, best.compute_seconds * 1e3, best.kernel_efficiency * 100, best.memory_seconds * 1e3,
                     best.pack_seconds * 1e3,
                     best.team_seconds > 0 ? printf_text(", team %.4g ms", best.team_seconds * 1e3).c_str() : "",
                     best.note.empty() ? "" : ("; " + best.note).c_str());
  out << printf_text("%s: %dx%d block (mr %d, nv %d), mc %d, kc %d, nc %d, grid %s (%d %s)%s: %.4g ms, %.1f %s "
                     "predicted\n",
                     label, c.mr, c.nr, c.mr, c.nv, c.mc, c.kc, c.nc, grid_text(c).c_str(), c.threads,
                     c.threads == 1 ? "thread" : "threads", c.pack_a ? "" : ", A in place", best.seconds * 1e3,
                     best.seconds > 0 ? flops_of(problem) / best.seconds / kGiga : 0, rate_unit(problem.dtype));
}

}  // namespace

void write_explanation(std::ostream& out, const MachineModel& machine, const MatmulProblem& problem,
                       const std::vector<CandidateCost>& ranked, int rows) {
  write_inputs(out, machine, problem);
  if (ranked.empty()) {
    out << "no candidates\n";
    return;
  }
  write_table(out, problem, ranked, std::min(ranked.size(), size_t(std::max(rows, 0))));
  write_choice(out, machine, problem, ranked.front());
}

void write_config_explanation(std::ostream& out, const MachineModel& machine, const MatmulProblem& problem,
                              const MatmulConfig& config) {
  write_choice(out, machine, problem, predict(machine, problem, config), "--config");
}

}  // namespace peakprobe
