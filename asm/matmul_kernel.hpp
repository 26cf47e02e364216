// The GEMM micro-kernels as the rest of the code sees them, whatever the ISA: a register block of
// mr rows x nv vectors over packed panels, one k step per 32-bit lane (1 f32, 2 bf16 or 4 int8 k
// values; widened: 1 bf16 as f32, 2 int8 as int16), edge tiles as kernels of their own. Each ISA generates them in asm/<isa>/matmul_kernel.cpp
// and hands them out through Target::micro_kernels (asm/target.hpp).
#pragma once
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <utility>

#include "asm/jit.hpp"
#include "peakprobe/expected.hpp"
#include "peakprobe/matmul_result.hpp"

namespace peakprobe::isa {

struct MicroKernelShape {
  int mr = 6;         // rows of the register block
  int nv = 4;         // vectors per row
  int vec_bits = 512;
  MatmulDtype dtype = MatmulDtype::f32;
  bool a_direct = false;  // A read in place (row-major, lda apart) instead of from a packed panel
  // int8 on a core whose dot product multiplies signed by signed only: A (unsigned) is packed as
  // A - 128, and each B panel ends with one more k step of words holding 128 x the column's sum
  // over the panel's k, which the kernel adds: sum (a - 128) b + 128 sum b = sum a b.
  bool signed_a = false;
  // On a CPU without the dtype's dot product at this width, the packing widens the elements and the
  // kernel runs a wider arithmetic, exactly: bf16 is packed as f32 (one k value a word) for the
  // FMA; int8 as int16 pairs (A zero-extended, B sign-extended; two k values a word) for a
  // multiply-add of int16 pairs into int32 and an add.
  bool widened = false;
  // The block runs on the CPU's matrix unit (tile multiply-accumulate) instead of vector registers:
  // C is mr/16 x nv accumulator tiles of 16 rows x lanes() columns, each k block of
  // kTileDepthSteps steps is one tile of A per 16 rows and one tile of B per nv, and the A panel is
  // packed in blocks of that depth, a block's rows one after another, zero padded to whole blocks.
  bool tiles = false;
  // B read in place: a k step's nr columns straight from B's row (ldb apart) instead of from a
  // packed micro-panel, each step's vectors also stored to a packed panel (b_out) as they are read,
  // so that one call packs the panel the block's other calls then read. For f32 only (a packed f32
  // micro-panel is B's rows cut to nr columns), and whole-width tiles only where the kernels cannot
  // mask their last vector (Target::b_in_place_edges; else it would read past the row, and an edge
  // panel is packed ahead).
  bool b_direct = false;
  // In-place A whose K ends inside a k group (bf16 K odd, int8 K not a multiple of 4): the k values
  // of that last group each row holds (1 to k_group() - 1), 0 where K ends on a whole group. The
  // kernel's last k step reads only those, zero-extended, so that it never reads past a row of A
  // (the packed B panel holds zeros for the rest of the group). Only with a_direct.
  int a_tail = 0;
  static constexpr int kTileRows = 16;
  static constexpr int kTileDepthSteps = 16;
  int lanes() const { return vec_bits / 32; }
  // k steps of a packed panel come in whole blocks of this many (zero padded).
  int step_block() const { return tiles ? kTileDepthSteps : 1; }
  int nr() const { return nv * lanes(); }
  // k values one 32-bit word of a packed panel holds.
  int k_group() const {
    if (dtype == MatmulDtype::f32) return 1;
    if (dtype == MatmulDtype::bf16) return widened ? 1 : 2;
    return widened ? 2 : 4;
  }
};

// One instruction of a register block's k step (Target::kernel_step): its text as the catalog and
// `mix` spell it, and how many of it one k step of the loop runs.
struct StepInstruction {
  std::string text;
  int count = 0;
  // The block's multiply-accumulate (one per accumulator a step; a widened kernel's multiply): the
  // part whose independent chains set its rate, as the roof instruction's do.
  bool multiply_add = false;
  bool operator==(const StepInstruction& o) const {
    return text == o.text && count == o.count && multiply_add == o.multiply_add;
  }
};

// "" when a b_direct shape can have a rows x cols kernel, else why not: in-place B kernels are whole
// nr columns wide unless the ISA's kernels mask their last vector's load (`edges`, what
// Target::b_in_place_edges says of the shape). (Every ISA's compile() asks.)
std::string b_direct_tile_refusal(const MicroKernelShape& shape, int rows, int cols, bool edges);
// "" when the dtype can read B in place, else why not (every ISA's check_shape asks).
std::string b_direct_dtype_refusal(const MicroKernelShape& shape);
// "" when an a_direct shape's kernels can read A in place, else why not (every ISA's check_shape
// asks, with the tallest block its kernels keep row pointers for). A packed word of A holds one
// row's k group, the same bytes as A's own row holds them, unless the packing changes them: widened
// elements, int8 shifted by 128 (signed_a), tile blocks.
std::string a_direct_refusal(const MicroKernelShape& shape, int max_rows);

// C[rows x cols] (+)= A panel x B panel over k_steps steps; accumulate 0 stores, 1 adds to C.
// lda_bytes is read only by a_direct kernels; ldb_bytes and b_out (the packed panel written) only
// by b_direct ones. `panels` is read only by tile kernels (MicroKernelShape::tiles): they run that
// many B panels in a row against the same A panel, the panels one after another in the packed B
// block (k_steps x nr words each) and C's tile nr columns on for each; 0 runs none. Every other
// kernel runs the one panel at b, and its callers pass 1.
using MicroKernelFn = void (*)(uint64_t k_steps, const void* a, const void* b, void* c, uint64_t ldc_bytes,
                               uint64_t accumulate, uint64_t lda_bytes, uint64_t ldb_bytes, void* b_out,
                               uint64_t panels);

// The kernels of one shape, compiled on first use (every edge tile its own kernel) and kept; safe to
// call from several threads.
class MicroKernels {
 public:
  virtual ~MicroKernels() = default;
  virtual const MicroKernelShape& shape() const = 0;
  // The kernel for a tile of rows x cols (1..mr, 1..nr).
  virtual Expected<MicroKernelFn> get(int rows, int cols) = 0;
};

// The usual MicroKernels: each (rows, cols) kernel compiled on first use by the ISA's `compile` and
// kept, behind a lock.
class CachedMicroKernels : public MicroKernels {
 public:
  explicit CachedMicroKernels(const MicroKernelShape& shape) : shape_(shape) {}
  const MicroKernelShape& shape() const override { return shape_; }
  Expected<MicroKernelFn> get(int rows, int cols) override;

 protected:
  virtual Expected<JitFunction> compile(int rows, int cols) const = 0;

 private:
  MicroKernelShape shape_;
  std::mutex mutex_;
  std::map<std::pair<int, int>, JitFunction> kernels_;
};

}  // namespace peakprobe::isa
