#include "matmul/gemm.hpp"

#include "asm/target.hpp"

#include <sys/mman.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <system_error>
#include <thread>

#include <fmt/format.h>

#include "matmul/column_split.hpp"
#include "matmul/packing.hpp"
#include "matmul/reference.hpp"
#include "matmul/spin_barrier.hpp"
#include "matmul/thread_team.hpp"

namespace peakprobe {
namespace {

constexpr size_t kHugePage = 2u << 20;

// A growable, 64-byte aligned word buffer; blocks of 2 MiB and more are huge-page aligned and
// advised, so packed panels do not pay a TLB miss every 4 KiB.
class WordBuffer {
 public:
  uint32_t* get() const { return data_.get(); }
  bool ensure(size_t words) {
    if (words <= words_) return true;
    size_t bytes = std::max<size_t>(words * 4, 64);
    const size_t align = bytes >= kHugePage ? kHugePage : 64;
    bytes = (bytes + align - 1) / align * align;
    data_.reset(static_cast<uint32_t*>(std::aligned_alloc(align, bytes)));
    if (!data_) return words_ = 0, false;
    if (align == kHugePage) madvise(data_.get(), bytes, MADV_HUGEPAGE);
    words_ = bytes / 4;
    return true;
  }

 private:
  struct FreeDeleter {
    void operator()(uint32_t* p) const { std::free(p); }
  };
  std::unique_ptr<uint32_t, FreeDeleter> data_;
  size_t words_ = 0;
};

uint64_t level_bytes(const CpuInfo& cpu, int level, uint64_t fallback) {
  for (const auto& c : cpu.caches)
    if (c.level == level && c.type != "instruction") {
      const int cores_sharing = std::max(1, c.shared_by_cpus / std::max(1, cpu.smt_per_core));
      return c.size_bytes / uint64_t(cores_sharing);
    }
  return fallback;
}

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// C[rows x cols] (leading dimension ldc words) += a K part's sums (cols words a row), as int32 or f32.
void add_part(uint32_t* c, int64_t ldc, const uint32_t* part, int64_t rows, int64_t cols, bool int32) {
  for (int64_t i = 0; i < rows; ++i) {
    uint32_t* row = c + i * ldc;
    const uint32_t* from = part + i * cols;
    if (int32) {  // int32 sums added as their bits: the same add, without signed overflow's undefinedness
      for (int64_t j = 0; j < cols; ++j) row[j] += from[j];
      continue;
    }
    for (int64_t j = 0; j < cols; ++j) {
      float s, p;
      std::memcpy(&s, &row[j], 4);
      std::memcpy(&p, &from[j], 4);
      s += p;
      std::memcpy(&row[j], &s, 4);
    }
  }
}

// The micro-kernel shape of a register block on this CPU: one place decides how int8 A is packed
// and whether the elements are widened.
isa::MicroKernelShape kernel_shape(const CpuInfo& cpu, MatmulDtype dtype, int mr, int nv, bool a_direct,
                                   bool b_direct = false, int a_tail = 0) {
  const isa::Target& t = isa::host_target();
  isa::MicroKernelShape s{mr, nv, gemm_vector_bits(cpu), dtype, a_direct, t.gemm_signed_a(cpu, dtype),
                          t.gemm_widened(cpu, dtype), t.gemm_tiles(cpu, dtype)};
  s.b_direct = b_direct;
  s.a_tail = a_tail;
  return s;
}

// The thread grid run_batch starts: a thread with no rows or columns of its own is not started; nor
// is a group without an item, nor a K part without a k group.
struct StartedGrid {
  int rows = 0, cols = 0, k_parts = 0, groups = 0;
  int threads() const { return rows * cols * k_parts * groups; }
};
StartedGrid started_grid(int64_t m, int64_t n, int64_t k, int64_t batch, const MatmulConfig& g, int element_bytes,
                         bool widened) {
  StartedGrid s;
  if (m <= 0 || n <= 0 || k <= 0 || batch <= 0 || g.mr <= 0 || g.nr <= 0) return s;
  s.rows = int(std::min<int64_t>(std::max(1, g.thread_rows), ceil_div(m, g.mr)));
  s.cols = ColumnSplit(n, g.nr, g.nv, g.thread_cols).threads;
  s.k_parts = int(std::min<int64_t>(std::max(1, g.k_threads), ceil_div(k, packed_k_group(element_bytes, widened))));
  s.groups = int(std::min<int64_t>(std::max(1, g.batch_threads), batch));
  return s;
}

}  // namespace

int Gemm::threads_started(int64_t m, int64_t n, int64_t k, int64_t batch, const MatmulConfig& config) const {
  return started_grid(m, n, k, batch, config, element_bytes(dtype_), widened_).threads();
}

struct Gemm::Workspace {
  std::vector<WordBuffer> a;                   // one per thread
  // One pair per column group, packed ahead: pack the next while others finish; where B is read in
  // place, the first of a pair per thread (no other thread reads it).
  std::vector<std::array<WordBuffer, 2>> b;
  std::vector<std::unique_ptr<SpinBarrier>> barriers;  // one per column group (B packed ahead)
  std::vector<WordBuffer> partial;                    // K parts after the first: one per thread
  std::vector<std::unique_ptr<SpinBarrier>> k_barriers;  // one per tile region, for its K parts
};

std::string gemm_unsupported(const CpuInfo& cpu, MatmulDtype dtype) {
  return isa::host_target().gemm_unsupported(cpu, dtype);
}

int gemm_vector_bits(const CpuInfo& cpu) { return isa::host_target().gemm_vector_bits(cpu); }
int gemm_vector_registers(int vector_bits) { return isa::host_target().vector_registers(vector_bits); }

MatmulConfig default_config(const CpuInfo& cpu, MatmulDtype dtype, int64_t m, int64_t n, int64_t k, int threads) {
  MatmulConfig g;
  const isa::MicroKernelShape shape = kernel_shape(cpu, dtype, 1, 1, false);
  const int bits = gemm_vector_bits(cpu), lanes = bits / 32, kg = shape.k_group();
  // Tiles: 2 x 2 of C (32 x 32), with two tiles of A and two of B: all eight.
  g.mr = shape.tiles ? 2 * isa::MicroKernelShape::kTileRows : 6;
  g.nv = shape.tiles ? 2 : bits == 512 ? 4 : 2;
  g.nr = g.nv * lanes;
  const uint64_t l2 = level_bytes(cpu, 2, 1 << 20), l3 = level_bytes(cpu, 3, 8 << 20);
  // In k steps (32-bit words) first, then in k values.
  const uint64_t block = uint64_t(shape.step_block());
  // Tiles read A by tile loads every k block, as often as B: the A block is kept about as small as
  // the B micro-panel (two panels of rows, 256 k steps). On a Sapphire Rapids-class VM 1024^3 bf16
  // ran 1060 GFLOP/s at mc 64, kc 256 steps and 838 at mc 256; 1024 rows, 941.
  const uint64_t steps = shape.tiles ? 256 : std::clamp<uint64_t>(l2 / 2 / (uint64_t(g.nr) * 4), 64, 512) / block * block;
  g.mc = shape.tiles ? 2 * g.mr
                     : int(std::clamp<uint64_t>(l2 / 2 / (steps * 4) / uint64_t(g.mr) * uint64_t(g.mr), uint64_t(g.mr), 960));
  g.nc = int(std::clamp<uint64_t>(l3 / (steps * 4) / uint64_t(g.nr) * uint64_t(g.nr), uint64_t(g.nr), 8192));
  g.kc = int(std::min<int64_t>(int64_t(steps) * kg, ceil_div(std::max<int64_t>(k, 1), kg) * kg));
  g.mc = int(std::min<int64_t>(g.mc, ceil_div(m, g.mr) * g.mr));
  g.nc = int(std::min<int64_t>(g.nc, ceil_div(n, g.nr) * g.nr));
  g.threads = std::max(1, threads);
  g.thread_rows = g.threads;
  g.thread_cols = 1;
  return g;
}

int a_in_place_rows(const CpuInfo& cpu, MatmulDtype dtype) {
  const int rows = isa::host_target().a_in_place_rows();
  return isa::a_direct_refusal(kernel_shape(cpu, dtype, 1, 1, true), rows).empty() ? rows : 0;
}

std::string a_in_place_depth_refusal(const CpuInfo& cpu, MatmulDtype dtype, const MatmulConfig& g, int64_t k) {
  if (g.pack_a || isa::host_target().a_in_place_partial_groups()) return "";
  const int kg = kernel_shape(cpu, dtype, std::max(1, g.mr), std::max(1, g.nv), true).k_group();
  if (k % kg == 0) return "";
  return fmt::format("pack_a=0 needs K a multiple of {} ({} reads A in k groups of {}; K is {}): the last group of "
                     "each row would read past it",
                     kg, to_string(dtype), kg, k);
}

std::string check_config(const CpuInfo& cpu, MatmulDtype dtype, const MatmulConfig& g) {
  const int bits = gemm_vector_bits(cpu), lanes = bits / 32;
  const isa::MicroKernelShape s = kernel_shape(cpu, dtype, g.mr, g.nv, !g.pack_a, !g.pack_b);
  const int kg = s.k_group();
  if (std::string why = isa::host_target().check_kernel_shape(s, gemm_vector_registers(bits)); !why.empty())
    return why;
  if (g.nr != g.nv * lanes) return fmt::format("nr {} must be nv x {} lanes = {}", g.nr, lanes, g.nv * lanes);
  if (g.mc < g.mr || g.mc % g.mr) return fmt::format("mc {} must be a positive multiple of mr {}", g.mc, g.mr);
  if (g.nc < g.nr || g.nc % g.nr) return fmt::format("nc {} must be a positive multiple of nr {}", g.nc, g.nr);
  if (g.kc < kg || g.kc % kg)
    return fmt::format("kc {} must be a positive multiple of {} ({}{} packs {} k values a lane)", g.kc, kg,
                       to_string(dtype), s.widened ? " widened" : "", kg);
  if (!g.pack_b && !b_in_place_possible(dtype))  // (a dtype without it failed the shape check already)
    return fmt::format("pack_b=0: {} B is packed (its k groups need it)", to_string(dtype));
  if (g.threads < 1 || g.thread_rows < 1 || g.thread_cols < 1 || g.batch_threads < 1 || g.k_threads < 1 ||
      int64_t(g.batch_threads) * g.k_threads * g.thread_rows * g.thread_cols != g.threads)
    return g.batch_threads == 1 && g.k_threads == 1
               ? fmt::format("thread grid {}x{} does not make {} threads", g.thread_rows, g.thread_cols, g.threads)
               : fmt::format("{} batch groups x {} K parts x a {}x{} thread grid do not make {} threads",
                             g.batch_threads, g.k_threads, g.thread_rows, g.thread_cols, g.threads);
  return "";
}

Gemm::Gemm(const CpuInfo& cpu, MatmulDtype dtype)
    : cpu_(cpu),
      dtype_(dtype),
      vec_bits_(gemm_vector_bits(cpu)),
      signed_a_(isa::host_target().gemm_signed_a(cpu, dtype)),
      widened_(isa::host_target().gemm_widened(cpu, dtype)),
      tiles_(isa::host_target().gemm_tiles(cpu, dtype)),
      unsupported_(gemm_unsupported(cpu, dtype)),
      workspace_(std::make_unique<Workspace>()),
      team_(std::make_unique<ThreadTeam>(cpu.core_order)) {}
Gemm::~Gemm() = default;

std::string Gemm::kernel_name(const MatmulConfig& g) const {
  const char* widened = !widened_ ? "" : dtype_ == MatmulDtype::bf16 ? " as f32" : " as int16";
  const isa::Target& t = isa::host_target();
  return fmt::format("{} {}{}{} {}x{}", tiles_ ? t.tiles_name() : t.width_name(vec_bits_), to_string(dtype_),
                     signed_a_ ? " signed-A" : "", widened, g.mr, g.nr);
}

isa::MicroKernelShape Gemm::micro_kernel_shape(int mr, int nv, bool a_direct, bool b_direct) const {
  return kernel_shape(cpu_, dtype_, mr, nv, a_direct, b_direct);
}

isa::MicroKernels& Gemm::kernels_for(int mr, int nv, bool a_direct, bool b_direct, int a_tail) {
  auto& slot = kernels_[{mr, nv, a_direct, b_direct, a_tail}];
  if (!slot) slot = isa::host_target().micro_kernels(kernel_shape(cpu_, dtype_, mr, nv, a_direct, b_direct, a_tail));
  return *slot;
}

double Gemm::fork_join_seconds(int threads) { return team_->fork_join_seconds(threads); }

void Gemm::run_on_team(int parties, const std::function<void(int)>& job) { team_->run(parties, job); }

Expected<isa::MicroKernelFn> Gemm::tile_kernel(int mr, int nv, bool a_in_place) {
  if (!unsupported_.empty()) return make_error(unsupported_);
  const isa::MicroKernelShape s = kernel_shape(cpu_, dtype_, mr, nv, a_in_place);
  if (std::string why = isa::host_target().check_kernel_shape(s, gemm_vector_registers(vec_bits_)); !why.empty())
    return make_error(why);
  return kernels_for(mr, nv, a_in_place, false).get(mr, s.nr());
}

Expected<bool> Gemm::run(const GemmArgs& x, const MatmulConfig& g) { return run_batch(x, 1, {}, g); }

Expected<bool> Gemm::run_batch(const GemmArgs& x, int64_t batch, const BatchStrides& stride, const MatmulConfig& g) {
  if (!unsupported_.empty()) return make_error(unsupported_);
  if (!last_checked_ || !(last_checked_->config == g)) {
    last_checked_.reset();
    if (std::string why = check_config(cpu_, dtype_, g); !why.empty()) return make_error(why);
    const isa::MicroKernelShape shape = micro_kernel_shape(g.mr, g.nv, !g.pack_a, !g.pack_b);
    last_checked_ = CheckedConfig{g, shape.step_block(), !g.pack_b && isa::host_target().b_in_place_edges(shape)};
  }
  if (x.m < 0 || x.n < 0 || x.k < 0 || batch < 0) return make_error("negative matrix dimension or batch");
  if (x.m == 0 || x.n == 0 || batch == 0) return true;
  const int es = element_bytes(dtype_), mr = g.mr, nr = g.nr;
  // Every call of a small product comes here: the k group this Gemm packs with, not the target's
  // shape queries, decides whether there is a refusal to word.
  // Read in place, A's rows may end inside their last k group: the kernels of the last k block then
  // read only the values there (a_tail), where the target's kernels can.
  const int a_tail = g.pack_a ? 0 : int(x.k % packed_k_group(es, widened_));
  if (a_tail != 0 && !isa::host_target().a_in_place_partial_groups())
    return make_error(a_in_place_depth_refusal(cpu_, dtype_, g, x.k));
  if (x.k == 0) {
    for (int64_t item = 0; item < batch; ++item)
      for (int64_t i = 0; i < x.m; ++i)
        std::memset(static_cast<char*>(x.c) + (item * stride.c + i * x.ldc) * 4, 0, size_t(x.n) * 4);
    return true;
  }
  const StartedGrid started = started_grid(x.m, x.n, x.k, batch, g, es, widened_);
  const int64_t row_panels = ceil_div(x.m, mr);
  const int tr_count = started.rows, tc_count = started.cols, tk_count = started.k_parts, groups = started.groups;
  const int kg = packed_k_group(es, widened_);
  const int64_t k_units = ceil_div(x.k, kg);
  const int grid = tr_count * tc_count;
  const int per_item = tk_count * grid;
  const int threads = groups * per_item;
  const ColumnSplit split(x.n, nr, g.nv, tc_count);
  auto col_range = [&](int tc) { return std::make_pair(split.cut(tc), split.cut(tc + 1)); };

  // Every kernel a thread may need, compiled before the threads start and then looked up without a
  // lock: [rows][cols]. The table is kept between calls, so a small product (a batch of 32^3 items)
  // does not pay a locked lookup per edge kernel every call.
  // B not packed ahead (pack_b false): the first call over each panel of a block reads it in place
  // and packs it as it goes (table_in_place); the block's other calls run the packed kernels. An
  // edge panel narrower than nr is read in place too where the target's kernels mask their last
  // vector (Target::b_in_place_edges), else packed ahead. Each thread packs B blocks of its own
  // (several rows of threads read B in place each on their own).
  const bool direct = !g.pack_a, b_direct = !g.pack_b;
  const bool edges_in_place = last_checked_->edges_in_place;
  const auto table_of = [&](bool b_in_place, int tail) -> std::vector<isa::MicroKernelFn>& {
    std::vector<isa::MicroKernelFn>& t = kernel_tables_[{mr, g.nv, direct, b_in_place, tail}];
    if (t.empty()) t.assign(size_t((mr + 1) * (nr + 1)), nullptr);
    return t;
  };
  std::vector<isa::MicroKernelFn>& table = table_of(false, 0);
  std::vector<isa::MicroKernelFn>& table_in_place = b_direct ? table_of(true, 0) : table;
  // The last k block's kernels where A's rows end inside a k group (B is packed then: f32 alone
  // reads B in place, and its groups are whole).
  std::vector<isa::MicroKernelFn>& table_tail = a_tail ? table_of(false, a_tail) : table;
  const auto fill_width = [&](int w, bool b_in_place, int tail) -> Expected<bool> {
    std::vector<isa::MicroKernelFn>& t = tail ? table_tail : b_in_place ? table_in_place : table;
    if (t[size_t(nr + 1 + w)]) return true;  // a width's kernels are fetched together
    isa::MicroKernels& kernels = kernels_for(mr, g.nv, direct, b_in_place, tail);
    for (int r = mr; r >= 1; --r) {
      auto fn = kernels.get(r, w);
      if (!fn) return make_error(fn.error());
      t[size_t(r * (nr + 1) + w)] = *fn;
    }
    return true;
  };
  const auto need_width = [&](int w, bool b_in_place) -> Expected<bool> {
    if (auto ok = fill_width(w, b_in_place, 0); !ok) return ok;
    if (a_tail && !b_in_place) return fill_width(w, false, a_tail);
    return true;
  };
  if (auto ok = need_width(nr, false); !ok) return ok;
  if (b_direct)
    if (auto ok = need_width(nr, true); !ok) return ok;
  for (int tc = 0; tc < tc_count; ++tc) {
    auto [c0, c1] = col_range(tc);
    for (int64_t jc = c0; jc < c1; jc += g.nc)
      if (const int64_t w = std::min<int64_t>(g.nc, c1 - jc) % nr) {
        if (auto ok = need_width(int(w), false); !ok) return ok;
        if (edges_in_place)
          if (auto ok = need_width(int(w), true); !ok) return ok;
      }
  }

  // Buffers: an A block per thread; two B blocks per column group of each batch group, or per
  // thread where B is read in place (each thread packs its own panels as it reads them, and no
  // thread waits at a barrier for another's).
  const int step_block = last_checked_->step_block;
  const int64_t steps_max = k_steps(std::min<int64_t>(g.kc, x.k), es, widened_, step_block);
  Workspace& ws = *workspace_;
  const int column_groups = groups * tk_count * tc_count;
  ws.a.resize(size_t(threads));
  ws.b.resize(size_t(b_direct ? threads : column_groups));
  // K parts after the first write C into a buffer of their own: the thread's rows x columns.
  const int64_t rows_max = ceil_div(row_panels, tr_count) * mr, cols_max = split.most_vectors() * split.lanes;
  if (tk_count > 1) {
    ws.partial.resize(size_t(threads));
    for (auto& buf : ws.partial)
      if (!buf.ensure(size_t(rows_max * cols_max))) return make_error("cannot allocate the K-split buffers");
  }
  for (auto& buf : ws.a)
    if (!buf.ensure(size_t(steps_max * ceil_div(std::min<int64_t>(g.mc, x.m), mr) * mr)))
      return make_error("cannot allocate the A packing buffers");
  for (auto& pair : ws.b)
    for (size_t i = 0; i < (b_direct ? 1u : pair.size()); ++i)
      if (!pair[i].ensure(size_t(b_panel_words(steps_max, nr, signed_a_) * ceil_div(std::min<int64_t>(g.nc, x.n), nr))))
        return make_error("cannot allocate the B packing buffers");
  // One barrier per column group, kept while the grid stays the same (a finished run leaves each one
  // ready for the next). Where B is read in place no thread waits for another's panels: none.
  std::vector<std::unique_ptr<SpinBarrier>>& barriers = ws.barriers;
  if (b_direct) barriers.clear();
  else if (barriers.size() != size_t(column_groups) || barriers.front()->parties() != tr_count) {
    barriers.clear();
    for (int q = 0; q < column_groups; ++q) barriers.push_back(std::make_unique<SpinBarrier>(tr_count));
  }
  // The K parts of one tile region meet before their sums are added, and after.
  std::vector<std::unique_ptr<SpinBarrier>>& k_barriers = ws.k_barriers;
  const size_t regions = size_t(groups * grid);
  if (tk_count > 1 && (k_barriers.size() != regions || k_barriers.front()->parties() != tk_count)) {
    k_barriers.clear();
    for (size_t q = 0; q < regions; ++q) k_barriers.push_back(std::make_unique<SpinBarrier>(tk_count));
  }
  const bool is_int = dtype_ == MatmulDtype::i8;

  // The caller runs worker 0 where it already is; the team's helpers sit on the next cores in order.
  // Batch group `group` runs items group, group + groups, ...: its threads meet only each other at its
  // barriers, and the whole batch is one run of the team (one wake-up and join, not one per item).
  const std::function<void(int)> worker = [&](int t) {
    const int group = t / per_item, member = t % per_item;
    const int tk = member / grid, cell = member % grid;
    const int tr = cell % tr_count, tc = cell / tr_count;
    const int64_t r0 = std::min(x.m, row_panels * tr / tr_count * mr);
    const int64_t r1 = std::min(x.m, row_panels * (tr + 1) / tr_count * mr);
    const auto [c0, c1] = col_range(tc);
    // This K part's k values: whole k groups, split evenly.
    const int64_t k_begin = std::min(x.k, k_units * tk / tk_count * kg);
    const int64_t k_end = std::min(x.k, k_units * (tk + 1) / tk_count * kg);
    uint32_t* ap = ws.a[size_t(t)].get();
    auto& b_buffers = ws.b[size_t(b_direct ? t : (group * tk_count + tk) * tc_count + tc)];
    SpinBarrier* barrier = b_direct ? nullptr : barriers[size_t((group * tk_count + tk) * tc_count + tc)].get();
    int block = 0;  // alternates the B buffers across k blocks and items alike
    for (int64_t item = group; item < batch; item += groups) {
      const auto* a = static_cast<const uint8_t*>(x.a) + item * stride.a * es;
      const auto* b = static_cast<const uint8_t*>(x.b) + item * stride.b * es;
      auto* c_item = static_cast<uint8_t*>(x.c) + item * stride.c * 4;
      // The first K part writes C; the others their own buffer, whose (0, 0) is C's (r0, c0).
      const int64_t ldc = tk == 0 ? x.ldc : c1 - c0, row0 = tk == 0 ? 0 : r0, col0 = tk == 0 ? 0 : c0;
      auto* c = tk == 0 ? c_item : reinterpret_cast<uint8_t*>(ws.partial[size_t(t)].get());
      for (int64_t jc = c0; jc < c1; jc += g.nc) {
        const int64_t nc = std::min<int64_t>(g.nc, c1 - jc), panels = ceil_div(nc, nr);
        // Diagonal assignment: each thread of the group starts on a different B micro-panel, so
        // they do not all read the same lines at the same moment.
        const int64_t start = panels * tr / tr_count;
        for (int64_t pc = k_begin; pc < k_end; pc += g.kc) {
          const int64_t kc = std::min<int64_t>(g.kc, k_end - pc), steps = k_steps(kc, es, widened_, step_block);
          uint32_t* bp = b_buffers[b_direct ? 0 : size_t(block++ & 1)].get();
          // This thread's share of the block's panels. Read in place, each thread's own panels are
          // packed as they are read, only a narrow edge panel ahead (where the kernels cannot mask
          // it): no other thread reads them, so none is waited for.
          int64_t pack_begin = panels * tr / tr_count, pack_end = panels * (tr + 1) / tr_count;
          if (b_direct) {
            pack_begin = nc % nr && !edges_in_place ? panels - 1 : panels;
            pack_end = panels;
          }
          if (pack_begin < pack_end)
            pack_b(b + (pc * x.ldb + jc) * es, x.ldb, kc, nc, es, nr, pack_begin, pack_end, bp, signed_a_, widened_,
                   step_block);
          if (barrier) barrier->wait();
          const uint64_t accumulate = pc > k_begin;
          // The block that holds the end of K, where A's rows end inside their last k group.
          const bool last_group_partial = a_tail && pc + kc == x.k;
          for (int64_t ic = r0; ic < r1; ic += g.mc) {
            const int64_t mc = std::min<int64_t>(g.mc, r1 - ic);
            if (tiles_) pack_a_tile_blocks(a + (ic * x.lda + pc) * es, x.lda, mc, kc, es, mr, steps, step_block, ap);
            else if (!direct) pack_a(a + (ic * x.lda + pc) * es, x.lda, mc, kc, es, mr, ap, signed_a_, widened_);
            if (tiles_) {
              // Tile kernels run a row of panels a call (tile_kernel.hpp): each row block of A against
              // the block's whole-width panels from this thread's diagonal start, wrapping round, then
              // the narrower edge panel alone. The A panel stays in L1 while the B panels stream past:
              // 1024^3 bf16 on a Sapphire Rapids-class VM ran 25-40% faster this way than with a call
              // per panel, B's panel kept in L1 across the row blocks (docs/matmul.md).
              const int64_t whole = nc / nr, first = std::min(start, whole);
              const int64_t panel_words = b_panel_words(steps, nr, signed_a_);
              for (int64_t ir = 0; ir < mc; ir += mr) {
                const int rows = int(std::min<int64_t>(mr, mc - ir));
                const uint32_t* apanel = ap + ir * steps;
                uint8_t* c_row = c + ((ic + ir - row0) * ldc + jc - col0) * 4;
                const auto row_of = [&](int64_t p0, int64_t p1, int cols) {
                  if (p1 > p0)
                    table[size_t(rows * (nr + 1) + cols)](uint64_t(steps), apanel, bp + p0 * panel_words,
                                                          c_row + p0 * nr * 4, uint64_t(ldc) * 4, accumulate, 0, 0,
                                                          nullptr, uint64_t(p1 - p0));
                };
                row_of(first, whole, nr);
                row_of(0, first, nr);
                row_of(whole, panels, int(nc - whole * nr));
              }
              continue;
            }
            for (int64_t q = 0; q < panels; ++q) {
              const int64_t jp = (q + start) % panels, jr = jp * nr;
              const int cols = int(std::min<int64_t>(nr, nc - jr));
              uint32_t* bpanel = bp + jp * b_panel_words(steps, nr, signed_a_);
              for (int64_t ir = 0; ir < mc; ir += mr) {
                const int rows = int(std::min<int64_t>(mr, mc - ir));
                const void* apanel = direct ? static_cast<const void*>(a + ((ic + ir) * x.lda + pc) * es)
                                            : static_cast<const void*>(ap + ir * steps);
                void* cp = c + ((ic + ir - row0) * ldc + jc + jr - col0) * 4;
                if (b_direct && (cols == nr || edges_in_place) && ic == r0 && ir == 0)  // reads B in place, leaves bpanel packed
                  table_in_place[size_t(rows * (nr + 1) + cols)](uint64_t(steps), apanel, b + (pc * x.ldb + jc + jr) * es, cp,
                                                                 uint64_t(ldc) * 4, accumulate, uint64_t(x.lda) * es,
                                                                 uint64_t(x.ldb) * uint64_t(es), bpanel, 1);
                else
                  (last_group_partial ? table_tail : table)[size_t(rows * (nr + 1) + cols)](
                      uint64_t(steps), apanel, bpanel, cp, uint64_t(ldc) * 4, accumulate, uint64_t(x.lda) * es, 0,
                      nullptr, 1);
              }
            }
          }
        }
      }
      if (tk_count > 1) {
        // Once all K parts are done, each adds the others' sums into C for its own share of the
        // region's rows, in the order one part used to add them all: bit for bit the same C, without
        // one core reading and writing it all while the others wait (48 MiB on a 2048^3 f32
        // product split in two). They wait again, so that none writes the next item into its
        // buffer before it was read.
        SpinBarrier& kb = *k_barriers[size_t(group * grid + cell)];
        kb.wait();
        const int64_t height = r1 - r0, width = c1 - c0;
        const int64_t s0 = r0 + height * tk / tk_count, s1 = r0 + height * (tk + 1) / tk_count;
        for (int other = 1; other < tk_count && s1 > s0; ++other)
          add_part(reinterpret_cast<uint32_t*>(c_item) + s0 * x.ldc + c0, x.ldc,
                   ws.partial[size_t(group * per_item + other * grid + cell)].get() + (s0 - r0) * width, s1 - s0,
                   width, is_int);
        kb.wait();
      }
    }
  };
  // A helper thread the system will not start (a process or thread limit) is an error of this call,
  // not an exception through a library that answers with Expected.
  try {
    team_->run(threads, worker);
  } catch (const std::system_error& e) {
    return make_error(fmt::format("cannot start the GEMM's {} threads: {}", threads, e.what()));
  }
  return true;
}

}  // namespace peakprobe
