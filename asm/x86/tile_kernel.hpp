// GEMM micro-kernels on AMX tiles (MicroKernelShape::tiles): C[rows x cols] (+)= A panel x B panel
// with tdpbf16ps (bf16 pairs into f32) or tdpbusd (u8 x s8 quads into s32).
//
//   C      mr/16 x nv accumulator tiles, each 16 rows x 16 columns of 32-bit sums (tmm0..)
//   A      one tile per 16 rows: 16 rows x 16 k steps (64 bytes a row), read from a panel packed
//          in blocks of 16 k steps, a block's rows one after another (pack_a_tile_blocks): each
//          tile load is 1 KiB in one piece
//   B      one tile per 16 columns: 16 k steps x 16 columns of one 32-bit word each, which is the
//          vector kernels' B panel as it is (row stride nr x 4 bytes): the same packing serves both
//
// k_steps is a whole number of 16-step blocks (the packing pads with zeros). Edge tiles are kernels
// of their own whose tile configuration has fewer rows or columns, so C is read and written only
// where the tile lies.
//
// A call runs a row of `panels` B panels (MicroKernelFn) against its A panel: one panel after
// another, C's tile nr columns on for each. It loads its configuration once and releases the tiles
// before it returns: the kernel owns the tile state for exactly as long as it runs, and nothing else
// in the process has to know about it. A row pays for the configuration once instead of once a
// panel, and keeps the A panel in L1 while the B panels stream past it (measured: docs/matmul.md).
#pragma once
#include <asmjit/x86.h>

#include "asm/matmul_kernel.hpp"

namespace peakprobe::x86 {

// "" when the tile kernel of this shape can be generated, else why not.
std::string check_tile_shape(const isa::MicroKernelShape& s);

// The kernel of one (rows, cols) tile of the block, into `e`.
asmjit::Error emit_tile_kernel(asmjit::x86::Assembler& e, const isa::MicroKernelShape& s, int rows, int cols);

}  // namespace peakprobe::x86
