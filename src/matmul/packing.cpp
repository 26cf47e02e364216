#include "matmul/packing.hpp"

#include "asm/pack.hpp"

#include <algorithm>
#include <cstring>

namespace peakprobe {
namespace {

// Word s of a row of kc elements: the whole word when it lies inside the row, else the valid bytes
// and zeros (the k tail of bf16/int8).
inline uint32_t row_word(const uint8_t* row, int64_t s, int64_t row_bytes) {
  uint32_t w = 0;
  const int64_t at = s * 4;
  std::memcpy(&w, row + at, size_t(std::min<int64_t>(4, row_bytes - at)));
  return w;
}

}  // namespace

void pack_a(const void* a, int64_t lda, int64_t mc, int64_t kc, int element_bytes, int mr, uint32_t* out,
            bool minus_128) {
  const auto* base = static_cast<const uint8_t*>(a);
  const int64_t steps = k_steps(kc, element_bytes), row_bytes = kc * element_bytes;
  const int64_t full_steps = row_bytes / 4;  // words that lie wholly inside every row
  for (int64_t i0 = 0; i0 < mc; i0 += mr) {
    const int h = int(std::min<int64_t>(mr, mc - i0));
    const uint8_t* rows[32];
    for (int r = 0; r < h; ++r) rows[r] = base + (i0 + r) * lda * element_bytes;
    uint32_t* const panel = out;
    isa::transpose_words(rows, h, full_steps, mr, out);
    out += full_steps * mr;
    for (int64_t s = full_steps; s < steps; ++s) {
      for (int r = 0; r < h; ++r) out[r] = row_word(rows[r], s, row_bytes);
      for (int r = h; r < mr; ++r) out[r] = 0;
      out += mr;
    }
    // A second pass over the panel while it is in L1: cheap next to the kernel's nc / nr uses of it.
    // Bytes of the k tail past kc flip too; B is zero there, so they add nothing.
    if (minus_128)
      for (int64_t s = 0; s < steps; ++s)
        for (int r = 0; r < h; ++r) panel[s * mr + r] ^= 0x80808080u;
  }
}

void pack_b(const void* b, int64_t ldb, int64_t kc, int64_t nc, int element_bytes, int nr, int64_t panel_begin,
            int64_t panel_end, uint32_t* out, bool col_sums) {
  const int g = 4 / element_bytes;
  const int64_t steps = k_steps(kc, element_bytes), stride = b_panel_words(steps, nr, col_sums);
  const auto* base = static_cast<const uint8_t*>(b);
  if (g == 1) {
    // f32: panel by panel, so the stores run on through each panel (23 against 16 GB/s step by step,
    // 512 x 1024 into 32-column panels on the Zen 4 VM).
    for (int64_t p = panel_begin; p < panel_end; ++p) {
      const int64_t j0 = p * nr, w = std::min<int64_t>(nr, nc - j0);
      for (int64_t s = 0; s < steps; ++s) {
        uint32_t* dst = out + p * stride + s * nr;
        std::memcpy(dst, base + (s * ldb + j0) * 4, size_t(w) * 4);
        if (w < nr) std::memset(dst + w, 0, size_t(nr - w) * 4);
      }
    }
    return;
  }
  // bf16 and int8: step by step across the panels. Each row of B is then read once, whole lines in
  // order, rather than a panel's width at a time (half a line of an int8 row for nr 32, the other half
  // read again after the line may have left L1): int8 7 -> 12 GB/s, bf16 11 -> 21 GB/s on the Zen 4 VM.
  for (int64_t s = 0; s < steps; ++s) {
    // g rows of B (k values s*g .. s*g+g-1), null past K.
    const uint8_t* rows[4] = {nullptr, nullptr, nullptr, nullptr};
    for (int q = 0; q < g; ++q) rows[q] = s * g + q < kc ? base + (s * g + q) * ldb * element_bytes : nullptr;
    for (int64_t p = panel_begin; p < panel_end; ++p) {
      const int64_t j0 = p * nr, w = std::min<int64_t>(nr, nc - j0);
      uint32_t* dst = out + p * stride + s * nr;
      isa::interleave_rows(rows, g, j0, w, dst);
      if (w < nr) std::memset(dst + w, 0, size_t(nr - w) * 4);
    }
  }
  if (!col_sums) return;
  // Summed from the packed words (in L1 or L2 now), four signed bytes a word.
  for (int64_t p = panel_begin; p < panel_end; ++p) {
    uint32_t* panel = out + p * stride;
    uint32_t* sums = panel + steps * nr;
    for (int j = 0; j < nr; ++j) sums[j] = 0;
    for (int64_t s = 0; s < steps; ++s)
      for (int j = 0; j < nr; ++j) {
        const uint32_t w = panel[s * nr + j];
        int32_t sum = 0;
        for (int q = 0; q < 4; ++q) sum += int8_t(uint8_t(w >> (8 * q)));
        sums[j] += uint32_t(sum) * 128u;
      }
  }
}

}  // namespace peakprobe
