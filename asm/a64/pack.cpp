// The GEMM packing primitives (asm/pack.hpp) in portable C++: GCC vectorises both loops for NEON,
// and each call moves a whole micro-panel, so there is nothing for hand-written code to win here.
#include "asm/pack.hpp"

#include <cstring>

namespace peakprobe::isa {

void transpose_words(const uint8_t* const* rows, int nrows, int64_t words, int stride, uint32_t* out) {
  for (int64_t s = 0; s < words; ++s) {
    uint32_t* o = out + s * stride;
    for (int r = 0; r < nrows; ++r) std::memcpy(o + r, rows[r] + 4 * s, 4);
    for (int r = nrows; r < stride; ++r) o[r] = 0;
  }
}

void interleave_rows(const uint8_t* const* rows, int group, int64_t j, int64_t cols, uint32_t* out) {
  const int elem = 4 / group;  // bytes per element: 2 for bf16 pairs, 1 for int8 quads
  for (int64_t c = 0; c < cols; ++c) {
    uint32_t word = 0;
    for (int g = 0; g < group; ++g) {
      if (!rows[g]) continue;
      uint32_t v = 0;
      std::memcpy(&v, rows[g] + (j + c) * elem, size_t(elem));
      word |= v << (8 * elem * g);
    }
    out[c] = word;
  }
}

}  // namespace peakprobe::isa
