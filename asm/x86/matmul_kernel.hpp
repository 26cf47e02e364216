// Generated GEMM micro-kernels: C[mr x nr] (+)= A_panel * B_panel for packed panels, one register
// block of mr x nv vector accumulators (nr = nv x lanes). One kernel shape serves three dtypes,
// because each "k step" is one 32-bit lane of work:
//   f32  vfmadd231ps   a step is 1 k value  (A: 1 float per row,  B: nr floats)
//   bf16 vdpbf16ps     a step is 2 k values (A: 2 bf16 per row,   B: nr pairs), C in f32
//   int8 vpdpbusd      a step is 4 k values (A: 4 u8 per row,     B: nr quads of s8), C in s32
// and, widened (CPUs or --isa levels without that dot product; MicroKernelShape::widened):
//   bf16 vfmadd231ps   a step is 1 k value, packed as f32 (bf16 is the top half of an f32: exact)
//   int8 vpmaddwd      a step is 2 k values, packed as int16 (A zero-, B sign-extended); the int32
//        + vpaddd      pair sums go through a temporary (a row's last one through the broadcast
//                      register) into the accumulator (exact in int32)
// so a packed A panel is always k_steps x mr 32-bit words and a B panel k_steps x nr words.
// Edge tiles are separate kernels: fewer rows (rows < mr) and masked columns (cols < nr), so there
// is no scalar tail.
#pragma once
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <tuple>
#include <vector>

#include "asm/matmul_kernel.hpp"
#include "asm/x86/stream_emitter.hpp"
#include "peakprobe/expected.hpp"
#include "peakprobe/matmul_result.hpp"

namespace peakprobe::x86 {

using MicroKernelShape = isa::MicroKernelShape;

// Registers the block needs: mr*nv accumulators, nv B vectors, one broadcast, and for widened int8
// a temporary for the products of vpmaddwd before they are added (a row's last product goes into
// the broadcast register, which costs none). (Taking B from memory in vpmaddwd instead, to fit 7x2
// blocks, ran 18% slower on a Zen 4.)
inline int registers_needed(const MicroKernelShape& s) {
  if (s.tiles) return 0;  // tile kernels hold C, A and B in tiles (check_tile_shape counts them)
  return s.mr * s.nv + s.nv + 1 + (s.widened && s.dtype == MatmulDtype::i8 ? 1 : 0);
}

// k steps an iteration of a kernel's loop (1 << kKernelUnrollShift) where B is packed: the pointer
// adds and the loop branch run once for them all, each step reads its operands at a displacement.
// A tail loop of one step an iteration takes the k steps left over; in-place B (b_direct), which
// moves by a register, keeps one step an iteration.
inline constexpr int kKernelUnrollShift = 2;
inline constexpr int kKernelUnroll = 1 << kKernelUnrollShift;

// The tallest block whose kernels read A in place: three row pointers (a, a + 3 lda, a + 6 lda),
// each reaching two rows further through lda scaled by 1 and 2. Taller blocks read in place ran
// slower than packed on the Zen 4 VM (a row pointer in r13 and r14 too, 2026-12-06): 12x32 at
// 2048^3 f32 104.2-104.6 GFLOP/s against 108.7-110.2, 13x32 at 1024^3 98.9-99.0 against
// 110.9-111.0. Their rows, 4 KiB apart there, are as many streams into one set of L1; 9x48 at
// 1024^3 still gained (111.1-112.0 against 109.0-110.1).
inline constexpr int kAInPlaceRows = 9;

// In-place B kernels come narrower than a panel on zmm: the last vector's load is masked by k2 to
// the columns B has (masked lanes neither read nor fault) and stored whole, its masked lanes zero,
// to the packed panel. An edge panel packed ahead instead is a pass of its own over B's last
// columns every k block: 127^3 f32 on one thread of the Emerald Rapids VM (4x64, A and B in place)
// ran at 158.0 GFLOP/s so, 160.5 with the edge read in place. The ymm kernels' vmaskmovps would
// need a register for its mask, which a full block does not leave: their edge panel is packed.
inline bool b_in_place_edges(const MicroKernelShape& s) { return s.b_direct && !s.tiles && s.vec_bits == 512; }

// "" when the shape can be generated for a CPU with these vector registers, else why not.
std::string check_shape(const MicroKernelShape& s, int vector_registers);

// void kernel(k_steps, a, b, c, ldc_bytes, accumulate, lda_bytes, ldb_bytes, b_out)
// accumulate = 0 stores the block into C (the first K block), 1 adds it to C. lda_bytes is read
// only by a_direct kernels, ldb_bytes and b_out only by b_direct ones (all three from the stack).
using MicroKernelFn = isa::MicroKernelFn;

// Kernels compiled on first use for each (rows, columns) edge case; thread-safe.
class MicroKernels final : public isa::CachedMicroKernels {
 public:
  using CachedMicroKernels::CachedMicroKernels;

 protected:
  // rows in 1..mr, cols in 1..nr.
  Expected<JitFunction> compile(int rows, int cols) const override;
};

// The instructions one k step of the kernel of `s` runs (Target::kernel_step); empty for tiles.
std::vector<isa::StepInstruction> kernel_step_instructions(const MicroKernelShape& s);

// The kernel's code as text (for tests and --explain).
Expected<std::string> micro_kernel_listing(const MicroKernelShape& shape, int rows, int cols);

}  // namespace peakprobe::x86
