// Generated AArch64 GEMM micro-kernels: C[mr x nr] (+)= A_panel * B_panel, one register block of
// mr x nv accumulators of 128 bits (nr = 4 nv columns). Each k step is one 32-bit lane of work, as on
// every ISA (asm/matmul_kernel.hpp), and A is spread by element, not broadcast:
//   f32  fmla  acc.4s, b.4s,  a.s[i]    a step is 1 k value
//   bf16 bfdot acc.4s, b.8h,  a.2h[i]   a step is 2 k values (bf16 feature), C in f32
//   int8 sudot acc.4s, b.16b, a.4b[i]   a step is 4 k values, B signed x A unsigned (i8mm), C in s32
//   int8 sdot  acc.4s, b.16b, a.4b[i]   cores without i8mm (signed_a): A packed as A - 128, and the
//                                       row of 128 x column sums after B's panel added at the end
// A's words for one k step sit in ceil(mr/4) registers, four rows each.
#pragma once
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "asm/jit.hpp"
#include "asm/matmul_kernel.hpp"
#include "peakprobe/expected.hpp"

namespace peakprobe::a64 {

// Accumulators, B vectors, and the registers that hold A's words (four rows each).
inline int registers_needed(int mr, int nv) { return mr * nv + nv + (mr + 3) / 4; }

// k steps an iteration of a kernel's loop (1 << kKernelUnrollShift) where B is packed: the pointer
// adds and the loop's count and branch run once for them all, packed operands are read at a
// displacement, in-place A rows by post-indexed loads. A tail loop of one step an iteration takes
// the k steps left over; in-place B (b_direct), which moves by a register, keeps one step an
// iteration.
inline constexpr int kKernelUnrollShift = 2;
inline constexpr int kKernelUnroll = 1 << kKernelUnrollShift;

// The tallest block whose kernels read A in place: one row pointer a row (x11..x16).
inline constexpr int kAInPlaceRows = 6;

// In-place B kernels are whole panels wide: the NEON kernels load whole 128-bit vectors of B and
// have no masked load, so an edge panel is packed ahead (Target::b_in_place_edges).
inline bool b_in_place_edges(const isa::MicroKernelShape&) { return false; }

std::string check_shape(const isa::MicroKernelShape& s, int vector_registers);
// The instructions one k step of the kernel of `s` runs (Target::kernel_step).
std::vector<isa::StepInstruction> kernel_step_instructions(const isa::MicroKernelShape& s);

class MicroKernels final : public isa::CachedMicroKernels {
 public:
  using CachedMicroKernels::CachedMicroKernels;

 protected:
  Expected<isa::JitFunction> compile(int rows, int cols) const override;
};

Expected<std::string> micro_kernel_listing(const isa::MicroKernelShape& shape, int rows, int cols);

}  // namespace peakprobe::a64
