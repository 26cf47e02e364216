#include "matmul/packing.hpp"

#include "asm/pack.hpp"

#include <algorithm>
#include <cstring>
#include <vector>

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

// Row r of an A panel widened into words (steps of them, zero past kc), contiguous so the loop
// vectorises; the panel is then transposed from these rows as an f32 panel would be.
void widen_a_row(const uint8_t* row, int64_t kc, int element_bytes, int64_t steps, uint32_t* out) {
  if (element_bytes == 2) {
    const auto* in = reinterpret_cast<const uint16_t*>(row);
    for (int64_t k = 0; k < kc; ++k) out[k] = uint32_t(in[k]) << 16;  // bf16 is the top half of an f32
    for (int64_t k = kc; k < steps; ++k) out[k] = 0;
    return;
  }
  auto* half = reinterpret_cast<uint16_t*>(out);
  for (int64_t k = 0; k < kc; ++k) half[k] = row[k];  // u8 -> int16, zero-extended
  for (int64_t k = kc; k < 2 * steps; ++k) half[k] = 0;
}

void pack_a_widened(const uint8_t* base, int64_t lda, int64_t mc, int64_t kc, int element_bytes, int mr,
                    uint32_t* out) {
  const int64_t steps = k_steps(kc, element_bytes, true);
  // One panel's rows, widened: mr x steps words, in L1 next to the panel being written.
  thread_local std::vector<uint32_t> scratch;
  scratch.resize(size_t(mr * steps));
  for (int64_t i0 = 0; i0 < mc; i0 += mr) {
    const int h = int(std::min<int64_t>(mr, mc - i0));
    const uint8_t* rows[32];
    for (int r = 0; r < h; ++r) {
      uint32_t* w = scratch.data() + r * steps;
      widen_a_row(base + (i0 + r) * lda * element_bytes, kc, element_bytes, steps, w);
      rows[r] = reinterpret_cast<const uint8_t*>(w);
    }
    isa::transpose_words(rows, h, steps, mr, out);
    out += steps * mr;
  }
}

// One k step of a widened B panel: out[c] for c < cols from columns j .. j + cols of the rows.
void widen_b_step(const uint8_t* const* rows, int element_bytes, int64_t j, int64_t cols, uint32_t* out) {
  if (element_bytes == 2) {
    const auto* in = reinterpret_cast<const uint16_t*>(rows[0]) + j;
    for (int64_t c = 0; c < cols; ++c) out[c] = uint32_t(in[c]) << 16;
    return;
  }
  // Two k values a word, the first in the low half, each s8 -> int16 sign-extended.
  const auto* r0 = reinterpret_cast<const int8_t*>(rows[0]) + j;
  if (!rows[1]) {
    for (int64_t c = 0; c < cols; ++c) out[c] = uint16_t(int16_t(r0[c]));
    return;
  }
  const auto* r1 = reinterpret_cast<const int8_t*>(rows[1]) + j;
  for (int64_t c = 0; c < cols; ++c) out[c] = uint32_t(uint16_t(int16_t(r0[c]))) | uint32_t(uint16_t(int16_t(r1[c]))) << 16;
}

}  // namespace

void pack_a(const void* a, int64_t lda, int64_t mc, int64_t kc, int element_bytes, int mr, uint32_t* out,
            bool minus_128, bool widened) {
  const auto* base = static_cast<const uint8_t*>(a);
  if (widened && element_bytes < 4) return pack_a_widened(base, lda, mc, kc, element_bytes, mr, out);
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

void pack_a_tile_blocks(const void* a, int64_t lda, int64_t mc, int64_t kc, int element_bytes, int mr,
                        int64_t steps, int depth, uint32_t* out) {
  const auto* base = static_cast<const uint8_t*>(a);
  const int64_t row_bytes = kc * element_bytes, block_bytes = int64_t(depth) * 4;
  for (int64_t i0 = 0; i0 < mc; i0 += mr) {
    const int h = int(std::min<int64_t>(mr, mc - i0));
    auto* panel = reinterpret_cast<uint8_t*>(out);
    for (int64_t b = 0; b < steps / depth; ++b) {
      const int64_t from = b * block_bytes, valid = std::clamp<int64_t>(row_bytes - from, 0, block_bytes);
      uint8_t* block = panel + b * mr * block_bytes;
      for (int r = 0; r < h; ++r) {
        uint8_t* dst = block + r * block_bytes;
        if (valid > 0) std::memcpy(dst, base + (i0 + r) * lda * element_bytes + from, size_t(valid));
        std::memset(dst + valid, 0, size_t(block_bytes - valid));
      }
      std::memset(block + h * block_bytes, 0, size_t((mr - h) * block_bytes));
    }
    out += steps * mr;
  }
}

void pack_b(const void* b, int64_t ldb, int64_t kc, int64_t nc, int element_bytes, int nr, int64_t panel_begin,
            int64_t panel_end, uint32_t* out, bool col_sums, bool widened, int step_block) {
  widened = widened && element_bytes < 4;
  const int g = packed_k_group(element_bytes, widened);
  const int64_t steps = k_steps(kc, element_bytes, widened, step_block), stride = b_panel_words(steps, nr, col_sums && !widened);
  const auto* base = static_cast<const uint8_t*>(b);
  if (widened) {
    // Step by step across the panels, as below: each row of B is read once, in order.
    for (int64_t s = 0; s < steps; ++s) {
      const uint8_t* rows[2] = {nullptr, nullptr};
      for (int q = 0; q < g; ++q) rows[q] = s * g + q < kc ? base + (s * g + q) * ldb * element_bytes : nullptr;
      for (int64_t p = panel_begin; p < panel_end; ++p) {
        const int64_t j0 = p * nr, w = std::min<int64_t>(nr, nc - j0);
        uint32_t* dst = out + p * stride + s * nr;
        if (!rows[0]) {  // a padding step past K (step_block)
          std::memset(dst, 0, size_t(nr) * 4);
          continue;
        }
        widen_b_step(rows, element_bytes, j0, w, dst);
        if (w < nr) std::memset(dst + w, 0, size_t(nr - w) * 4);
      }
    }
    return;
  }
  if (g == 1) {
    // f32: panel by panel, so the stores run on through each panel (23 against 16 GB/s step by step,
    // 512 x 1024 into 32-column panels on the Zen 4 VM).
    for (int64_t p = panel_begin; p < panel_end; ++p) {
      const int64_t j0 = p * nr, w = std::min<int64_t>(nr, nc - j0);
      for (int64_t s = 0; s < steps; ++s) {
        uint32_t* dst = out + p * stride + s * nr;
        if (s >= kc) {  // a padding step past K (step_block)
          std::memset(dst, 0, size_t(nr) * 4);
          continue;
        }
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
