// GEMM C = A x B (row-major) on the generated micro-kernels, BLIS-shaped: for each column block
// (nc) and k block (kc), the B block is packed into kc x nr micro-panels that the threads of one
// column group pack together and share; each thread packs its own mc x kc blocks of A and runs the
// register-block kernel over them. Threads form a grid over M (thread_rows) and N (thread_cols).
// Operands can be read in place instead (MatmulConfig::pack_a, pack_b): A's rows lda apart (every
// dtype whose packing leaves A's words as they are), f32 B's panels ldb apart, each thread packing
// the panels it reads for its own later calls (an edge panel of B narrower than nr is packed ahead
// where the kernels cannot mask its last vector: Target::b_in_place_edges).
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "asm/matmul_kernel.hpp"
#include "peakprobe/cpu_info.hpp"
#include "peakprobe/expected.hpp"
#include "peakprobe/matmul_result.hpp"

namespace peakprobe {

class ThreadTeam;

// "" when this CPU can run the dtype's kernels, else the missing feature, named.
std::string gemm_unsupported(const CpuInfo& cpu, MatmulDtype dtype);
// Widest vector the kernels use on this CPU (512 or 256) and how many registers it has.
int gemm_vector_bits(const CpuInfo& cpu);
int gemm_vector_registers(int vector_bits);

// A plain analytical tiling (the BLIS model's shape), used when no cost model is at hand: 6 x 4
// vectors (512-bit) or 6 x 2 (256-bit); KC so a B micro-panel sits in half of L2, MC so an A block
// sits in the other half, NC from the L3 share; threads over M. Clamped to the problem.
MatmulConfig default_config(const CpuInfo& cpu, MatmulDtype dtype, int64_t m, int64_t n, int64_t k, int threads);

// "" when the configuration can run this problem, else what is wrong with it (for --config).
std::string check_config(const CpuInfo& cpu, MatmulDtype dtype, const MatmulConfig& config);
// The tallest register block whose kernels read the dtype's A in place on this CPU; 0 where A is
// always packed (its packing changes the words: widened, shifted by 128, tile blocks).
int a_in_place_rows(const CpuInfo& cpu, MatmulDtype dtype);
// "" when a config that reads A in place (pack_a false) can run a product of depth k, else why not:
// the last k group of each row must be whole (packing pads it with zeros; A's row ends there).
std::string a_in_place_depth_refusal(const CpuInfo& cpu, MatmulDtype dtype, const MatmulConfig& config, int64_t k);

struct GemmArgs {
  int64_t m = 0, n = 0, k = 0;
  const void* a = nullptr;  // f32 / bf16 / u8, m x k
  int64_t lda = 0;          // leading dimensions in elements
  const void* b = nullptr;  // f32 / bf16 / s8, k x n
  int64_t ldb = 0;
  void* c = nullptr;        // f32 / f32 / s32, m x n
  int64_t ldc = 0;
};

// Elements from one batch item's A, B and C to the next's (run_batch).
struct BatchStrides {
  int64_t a = 0, b = 0, c = 0;
};

class Gemm {
 public:
  Gemm(const CpuInfo& cpu, MatmulDtype dtype);
  ~Gemm();
  Gemm(const Gemm&) = delete;
  Gemm& operator=(const Gemm&) = delete;
  MatmulDtype dtype() const { return dtype_; }
  const CpuInfo& cpu() const { return cpu_; }
  // Name of the kernel a configuration runs: the width's name, the dtype and the block ("<width> f32 6x64").
  std::string kernel_name(const MatmulConfig& config) const;
  // The micro-kernel shape of an mr x nv block here (how the dtype is packed and computed).
  isa::MicroKernelShape micro_kernel_shape(int mr, int nv, bool a_direct, bool b_direct = false) const;
  // The kernel most of a configuration's product runs, as the kernel alone and its step's stream
  // time it (measure_step_seconds, measure_kernel_mix): A's rows read in place where the
  // configuration leaves A unpacked; B packed (in-place B is read so only by the first row block).
  isa::MicroKernelShape product_kernel_shape(const MatmulConfig& config) const {
    return micro_kernel_shape(config.mr, config.nv, !config.pack_a);
  }
  // The kernel of a whole mr x (nv vectors) tile reading a packed A panel, or A's own rows where
  // `a_in_place` (an error where the kernels cannot: a_in_place_rows; call_calibration.hpp times
  // both), and whether B panels end with a step of column sums (b_panel_words).
  Expected<isa::MicroKernelFn> tile_kernel(int mr, int nv, bool a_in_place = false);
  bool b_panels_have_sums() const { return signed_a_; }
  // Wall seconds the GEMM's thread team adds to a call on `threads` threads (ThreadTeam::fork_join_seconds:
  // the best of many empty runs, its helpers started first and spinning): for the cost model.
  double fork_join_seconds(int threads);
  // Runs job(t) for t = 0..parties-1 on the GEMM's team, as a call does (ThreadTeam::run): for
  // measurements of the team itself (team_witness.hpp).
  void run_on_team(int parties, const std::function<void(int)>& job);
  bool packs_widened() const { return widened_; }
  // C = A x B. The calling thread does the first share of the work where it runs (pin it to the
  // first core of cpu.core_order for steady timings); the other threads are a persistent team
  // (thread_team.hpp) pinned to the next cores in that order. Packing buffers and the team are kept
  // between calls.
  Expected<bool> run(const GemmArgs& args, const MatmulConfig& config);
  // `batch` independent products, item i at args' pointers + i x the strides, in one run of the
  // team: config.batch_threads groups of thread_rows x thread_cols threads each take every
  // batch_threads-th item (a batch of small products runs an item per core instead of splitting
  // each one).
  Expected<bool> run_batch(const GemmArgs& args, int64_t batch, const BatchStrides& strides,
                           const MatmulConfig& config);
  // How many threads run_batch starts for an m x n x k product of `batch` items: the configuration's
  // grid with every dimension cut to the row panels, column panels, k groups and items there are
  // (a thread with nothing of its own is not started). 0 for an empty product.
  int threads_started(int64_t m, int64_t n, int64_t k, int64_t batch, const MatmulConfig& config) const;

 private:
  struct Workspace;
  isa::MicroKernels& kernels_for(int mr, int nv, bool a_direct, bool b_direct, int a_tail = 0);
  CpuInfo cpu_;
  MatmulDtype dtype_;
  int vec_bits_;
  bool signed_a_;  // int8 A packed as A - 128, column sums after each B panel (isa::MicroKernelShape)
  bool widened_;   // bf16 packed as f32, int8 as int16 (isa::MicroKernelShape::widened)
  bool tiles_;     // the matrix unit's kernels (isa::MicroKernelShape::tiles)
  // What a call checks that depends only on the CPU, the dtype and the configuration, worked out once:
  // a call of a small product spent 80% of its 3 us asking the CPU's feature list by name (Zen 3 VM,
  // 1x1x1; about 4% of a 127^3 call), which oneDNN answers in 0.3 us.
  std::string unsupported_;  // gemm_unsupported(cpu_, dtype_)
  struct CheckedConfig {
    MatmulConfig config;
    int step_block = 1;  // micro_kernel_shape(config).step_block()
    // B read in place (pack_b false) and the target's kernels mask an edge panel's last vector, so
    // that panel is read in place too (Target::b_in_place_edges).
    bool edges_in_place = false;
  };
  std::optional<CheckedConfig> last_checked_;  // the last configuration check_config passed
  // mr, nv, A in place, B in place, the k values of A's last partial k group read in place (a_tail)
  using KernelKey = std::tuple<int, int, bool, bool, int>;
  std::map<KernelKey, std::unique_ptr<isa::MicroKernels>> kernels_;
  // Per kernel key: the kernel of each (rows, cols) tile, [rows * (nr + 1) + cols], filled as widths
  // are met.
  std::map<KernelKey, std::vector<isa::MicroKernelFn>> kernel_tables_;
  std::unique_ptr<Workspace> workspace_;
  std::unique_ptr<ThreadTeam> team_;
};

}  // namespace peakprobe
