// Packing of GEMM operands into the micro-kernels' panel layout. Everything is in 32-bit words,
// whatever the dtype: one word holds the k_group = 4 / element_bytes consecutive k values of one
// row of A (f32: 1, bf16: 2, int8: 4), or of one column of B. Padding (rows past M, columns past
// N, k past K) is zero, so edge tiles add nothing wrong.
#pragma once
#include <cstdint>

namespace peakprobe {

// k steps (words along k) for kc values of k.
inline int64_t k_steps(int64_t kc, int element_bytes) {
  const int64_t g = 4 / element_bytes;
  return (kc + g - 1) / g;
}

// A block (mc rows x kc, row-major, leading dimension lda elements) -> ceil(mc/mr) panels, each
// k_steps x mr words; word (step s, row r) of a panel = row r's k values [s*g, s*g + g).
void pack_a(const void* a, int64_t lda, int64_t mc, int64_t kc, int element_bytes, int mr, uint32_t* out);

// B block (kc x nc, row-major, leading dimension ldb elements) -> micro-panels of nr columns, each
// k_steps x nr words; word (step s, column j) = column j's k values [s*g, s*g + g), low k first.
// Only panels [panel_begin, panel_end) are written, at their place in `out` (the whole block), so
// threads can share the packing of one block.
void pack_b(const void* b, int64_t ldb, int64_t kc, int64_t nc, int element_bytes, int nr, int64_t panel_begin,
            int64_t panel_end, uint32_t* out);

}  // namespace peakprobe
