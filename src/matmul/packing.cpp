#include "matmul/packing.hpp"

#include <emmintrin.h>

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

// Columns [j, j + 4 * count) of B for one k step, g rows interleaved, into `out` (SSE2: baseline
// x86-64, no dispatch needed). rows[q] is null past K.
void interleave_bf16(const uint16_t* const rows[2], int64_t j, int64_t cols, uint32_t* out) {
  const __m128i zero = _mm_setzero_si128();
  int64_t c = 0;
  for (; c + 8 <= cols; c += 8) {
    const __m128i r0 = rows[0] ? _mm_loadu_si128(reinterpret_cast<const __m128i*>(rows[0] + j + c)) : zero;
    const __m128i r1 = rows[1] ? _mm_loadu_si128(reinterpret_cast<const __m128i*>(rows[1] + j + c)) : zero;
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + c), _mm_unpacklo_epi16(r0, r1));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + c + 4), _mm_unpackhi_epi16(r0, r1));
  }
  for (; c < cols; ++c) {
    const uint32_t lo = rows[0] ? rows[0][j + c] : 0, hi = rows[1] ? rows[1][j + c] : 0;
    out[c] = lo | (hi << 16);
  }
}

void interleave_i8(const uint8_t* const rows[4], int64_t j, int64_t cols, uint32_t* out) {
  const __m128i zero = _mm_setzero_si128();
  int64_t c = 0;
  for (; c + 16 <= cols; c += 16) {
    __m128i r[4];
    for (int q = 0; q < 4; ++q)
      r[q] = rows[q] ? _mm_loadu_si128(reinterpret_cast<const __m128i*>(rows[q] + j + c)) : zero;
    const __m128i t0 = _mm_unpacklo_epi8(r[0], r[1]), t1 = _mm_unpackhi_epi8(r[0], r[1]);
    const __m128i t2 = _mm_unpacklo_epi8(r[2], r[3]), t3 = _mm_unpackhi_epi8(r[2], r[3]);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + c), _mm_unpacklo_epi16(t0, t2));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + c + 4), _mm_unpackhi_epi16(t0, t2));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + c + 8), _mm_unpacklo_epi16(t1, t3));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + c + 12), _mm_unpackhi_epi16(t1, t3));
  }
  for (; c < cols; ++c) {
    uint32_t w = 0;
    for (int q = 0; q < 4; ++q) w |= uint32_t(rows[q] ? rows[q][j + c] : 0) << (8 * q);
    out[c] = w;
  }
}

}  // namespace

void pack_a(const void* a, int64_t lda, int64_t mc, int64_t kc, int element_bytes, int mr, uint32_t* out) {
  const auto* base = static_cast<const uint8_t*>(a);
  const int64_t steps = k_steps(kc, element_bytes), row_bytes = kc * element_bytes;
  const int64_t full_steps = row_bytes / 4;  // words that lie wholly inside every row
  for (int64_t i0 = 0; i0 < mc; i0 += mr) {
    const int h = int(std::min<int64_t>(mr, mc - i0));
    const uint8_t* rows[32];
    for (int r = 0; r < h; ++r) rows[r] = base + (i0 + r) * lda * element_bytes;
    for (int64_t s = 0; s < full_steps; ++s) {
      for (int r = 0; r < h; ++r) std::memcpy(out + r, rows[r] + s * 4, 4);
      for (int r = h; r < mr; ++r) out[r] = 0;
      out += mr;
    }
    for (int64_t s = full_steps; s < steps; ++s) {
      for (int r = 0; r < h; ++r) out[r] = row_word(rows[r], s, row_bytes);
      for (int r = h; r < mr; ++r) out[r] = 0;
      out += mr;
    }
  }
}

void pack_b(const void* b, int64_t ldb, int64_t kc, int64_t nc, int element_bytes, int nr, int64_t panel_begin,
            int64_t panel_end, uint32_t* out) {
  const int g = 4 / element_bytes;
  const int64_t steps = k_steps(kc, element_bytes);
  const auto* base = static_cast<const uint8_t*>(b);
  for (int64_t p = panel_begin; p < panel_end; ++p) {
    const int64_t j0 = p * nr, w = std::min<int64_t>(nr, nc - j0);
    uint32_t* panel = out + p * steps * nr;
    for (int64_t s = 0; s < steps; ++s) {
      uint32_t* dst = panel + s * nr;
      if (g == 1) {
        std::memcpy(dst, base + (s * ldb + j0) * 4, size_t(w) * 4);
      } else if (g == 2) {
        const uint16_t* rows[2];
        for (int q = 0; q < 2; ++q)
          rows[q] = s * 2 + q < kc ? reinterpret_cast<const uint16_t*>(base) + (s * 2 + q) * ldb : nullptr;
        interleave_bf16(rows, j0, w, dst);
      } else {
        const uint8_t* rows[4];
        for (int q = 0; q < 4; ++q) rows[q] = s * 4 + q < kc ? base + (s * 4 + q) * ldb : nullptr;
        interleave_i8(rows, j0, w, dst);
      }
      if (w < nr) std::memset(dst + w, 0, size_t(nr - w) * 4);
    }
  }
}

}  // namespace peakprobe
