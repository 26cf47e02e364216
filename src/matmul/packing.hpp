// Packing of GEMM operands into the micro-kernels' panel layout. Everything is in 32-bit words,
// whatever the dtype: one word holds the k_group = 4 / element_bytes consecutive k values of one
// row of A (f32: 1, bf16: 2, int8: 4), or of one column of B. Widened (MicroKernelShape::widened),
// the elements go in at twice their width: bf16 as f32 (k_group 1), int8 as int16 (k_group 2; A
// zero-extended, B sign-extended). Padding (rows past M, columns past N, k past K) is zero, so edge
// tiles add nothing wrong.
#pragma once
#include <cstdint>

namespace peakprobe {

// k values one packed word holds.
inline int packed_k_group(int element_bytes, bool widened = false) {
  return widened && element_bytes < 4 ? 2 / element_bytes : 4 / element_bytes;
}

// k steps (words along k) for kc values of k, rounded up to whole blocks of step_block (a tile
// kernel's depth, MicroKernelShape::step_block(); the packing zero-pads them).
inline int64_t k_steps(int64_t kc, int element_bytes, bool widened = false, int step_block = 1) {
  const int64_t g = packed_k_group(element_bytes, widened);
  const int64_t steps = (kc + g - 1) / g;
  return (steps + step_block - 1) / step_block * step_block;
}

// Words one packed B micro-panel takes: its k steps, and with column sums one more step of them.
inline int64_t b_panel_words(int64_t steps, int nr, bool col_sums) { return (steps + (col_sums ? 1 : 0)) * nr; }

// A block (mc rows x kc, row-major, leading dimension lda elements) -> ceil(mc/mr) panels, each
// k_steps x mr words; word (step s, row r) of a panel = row r's k values [s*g, s*g + g).
// minus_128 (int8 only, MicroKernelShape::signed_a): each byte of A's rows goes in as A - 128, a
// signed byte (the top bit flipped); padding stays zero.
// widened: bf16 (element_bytes 2) goes in as f32, u8 (1) as zero-extended int16; never with minus_128.
void pack_a(const void* a, int64_t lda, int64_t mc, int64_t kc, int element_bytes, int mr, uint32_t* out,
            bool minus_128 = false, bool widened = false);

// The same A block for a tile kernel (MicroKernelShape::tiles): ceil(mc/mr) panels of mr x `steps`
// words; within a panel, block by block of `depth` k steps, each row's `depth` words in turn (word w
// of row r in block b at (b * mr + r) * depth + w = row r's k values [(b*depth + w)*g, ... + g)). So
// 16 rows of one block are one contiguous tile load (64-byte rows, 1 KiB), one page, and a block's
// tiles of A lie next to each other. Rows past M and words past kc are zero; steps is a multiple of
// depth and at least k_steps(kc, element_bytes).
void pack_a_tile_blocks(const void* a, int64_t lda, int64_t mc, int64_t kc, int element_bytes, int mr,
                        int64_t steps, int depth, uint32_t* out);

// B block (kc x nc, row-major, leading dimension ldb elements) -> micro-panels of nr columns, each
// k_steps x nr words; word (step s, column j) = column j's k values [s*g, s*g + g), low k first.
// Only panels [panel_begin, panel_end) are written, at their place in `out` (the whole block, panels
// b_panel_words apart), so threads can share the packing of one block.
// col_sums (int8 only, MicroKernelShape::signed_a): each panel ends with nr more words, word j = 128 x
// the sum of column j's signed bytes over the kc values (0 past N): what A - 128 took away.
// widened: bf16 goes in as f32, s8 as sign-extended int16 (pairs of k); never with col_sums.
// step_block: each panel's k steps rounded up to whole blocks of it, the added steps zero (tiles).
void pack_b(const void* b, int64_t ldb, int64_t kc, int64_t nc, int element_bytes, int nr, int64_t panel_begin,
            int64_t panel_end, uint32_t* out, bool col_sums = false, bool widened = false, int step_block = 1);

}  // namespace peakprobe
