// Data-movement primitives the GEMM's packing (src/matmul/packing.cpp) runs on the host, each ISA with
// its own vector code behind the same two calls (asm/<isa>/pack.cpp). Each call moves a whole k-major
// micro-panel or a whole row of a B panel, so the call itself costs nothing next to the work.
#pragma once
#include <cstdint>

namespace peakprobe::isa {

// The k-major transpose that packs an A micro-panel: for s in [0, words), word s (bytes 4s..4s+3) of
// rows[r] goes to out[s * stride + r] for r < nrows, and out[s * stride + r] = 0 for nrows <= r <
// stride (rows past M). Every row must hold at least 4 x words bytes.
void transpose_words(const uint8_t* const* rows, int nrows, int64_t words, int stride, uint32_t* out);

// One k step of a B panel with `group` k values per 32-bit word (bf16 pairs: group 2 of 2-byte
// elements; int8 quads: group 4 of 1-byte elements): out[c] holds element j + c of rows[0..group),
// rows[0]'s in the low bits, for c in [0, cols). A null row (past K) reads as zeros.
void interleave_rows(const uint8_t* const* rows, int group, int64_t j, int64_t cols, uint32_t* out);

}  // namespace peakprobe::isa
