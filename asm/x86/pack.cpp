// asm/pack.hpp on x86-64 with SSE2, which every x86-64 CPU has: no dispatch, and the packing is bound
// by the loads and stores, not by the vector width.
#include "asm/pack.hpp"

#include <emmintrin.h>

#include <cstring>

namespace peakprobe::isa {

void transpose_words(const uint8_t* const* rows, int nrows, int64_t words, int stride, uint32_t* out) {
  int64_t s = 0;
  // A whole panel of six rows (the usual 6 x 64 block): four steps are 24 words in a row, six
  // 16-byte stores, the fifth and sixth rows' pairs spliced between the 4 x 4 transposes.
  if (nrows == 6 && stride == 6) {
    for (; s + 4 <= words; s += 4) {
      __m128i v[6];
      for (int r = 0; r < 6; ++r) v[r] = _mm_loadu_si128(reinterpret_cast<const __m128i*>(rows[r] + s * 4));
      const __m128i ab01 = _mm_unpacklo_epi32(v[0], v[1]), cd01 = _mm_unpacklo_epi32(v[2], v[3]);
      const __m128i ab23 = _mm_unpackhi_epi32(v[0], v[1]), cd23 = _mm_unpackhi_epi32(v[2], v[3]);
      const __m128i ef01 = _mm_unpacklo_epi32(v[4], v[5]), ef23 = _mm_unpackhi_epi32(v[4], v[5]);
      const __m128i t1 = _mm_unpackhi_epi64(ab01, cd01), t3 = _mm_unpackhi_epi64(ab23, cd23);
      auto* o = reinterpret_cast<__m128i*>(out + s * 6);
      _mm_storeu_si128(o, _mm_unpacklo_epi64(ab01, cd01));     // a0 b0 c0 d0
      _mm_storeu_si128(o + 1, _mm_unpacklo_epi64(ef01, t1));   // e0 f0 a1 b1
      _mm_storeu_si128(o + 2, _mm_unpackhi_epi64(t1, ef01));   // c1 d1 e1 f1
      _mm_storeu_si128(o + 3, _mm_unpacklo_epi64(ab23, cd23)); // a2 b2 c2 d2
      _mm_storeu_si128(o + 4, _mm_unpacklo_epi64(ef23, t3));   // e2 f2 a3 b3
      _mm_storeu_si128(o + 5, _mm_unpackhi_epi64(t3, ef23));   // c3 d3 e3 f3
    }
  }
  // Four steps of four rows at a time: a 4 x 4 transpose of 32-bit words in registers.
  for (; s + 4 <= words; s += 4) {
    uint32_t* o = out + s * stride;
    int r = 0;
    for (; r + 4 <= nrows; r += 4) {
      const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(rows[r] + s * 4));
      const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(rows[r + 1] + s * 4));
      const __m128i c = _mm_loadu_si128(reinterpret_cast<const __m128i*>(rows[r + 2] + s * 4));
      const __m128i d = _mm_loadu_si128(reinterpret_cast<const __m128i*>(rows[r + 3] + s * 4));
      const __m128i ab01 = _mm_unpacklo_epi32(a, b), cd01 = _mm_unpacklo_epi32(c, d);
      const __m128i ab23 = _mm_unpackhi_epi32(a, b), cd23 = _mm_unpackhi_epi32(c, d);
      _mm_storeu_si128(reinterpret_cast<__m128i*>(o + r), _mm_unpacklo_epi64(ab01, cd01));
      _mm_storeu_si128(reinterpret_cast<__m128i*>(o + stride + r), _mm_unpackhi_epi64(ab01, cd01));
      _mm_storeu_si128(reinterpret_cast<__m128i*>(o + 2 * stride + r), _mm_unpacklo_epi64(ab23, cd23));
      _mm_storeu_si128(reinterpret_cast<__m128i*>(o + 3 * stride + r), _mm_unpackhi_epi64(ab23, cd23));
    }
    // Two or three rows left (an edge panel, mr 7 or 10, six rows under another stride): a 2 x 4
    // transpose of two of them, each step's pair one 8-byte store instead of two.
    if (r + 2 <= nrows) {
      const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(rows[r] + s * 4));
      const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(rows[r + 1] + s * 4));
      const __m128i ab01 = _mm_unpacklo_epi32(a, b), ab23 = _mm_unpackhi_epi32(a, b);
      _mm_storel_epi64(reinterpret_cast<__m128i*>(o + r), ab01);
      _mm_storel_epi64(reinterpret_cast<__m128i*>(o + stride + r), _mm_unpackhi_epi64(ab01, ab01));
      _mm_storel_epi64(reinterpret_cast<__m128i*>(o + 2 * stride + r), ab23);
      _mm_storel_epi64(reinterpret_cast<__m128i*>(o + 3 * stride + r), _mm_unpackhi_epi64(ab23, ab23));
      r += 2;
    }
    for (; r < nrows; ++r)
      for (int q = 0; q < 4; ++q) std::memcpy(o + q * stride + r, rows[r] + (s + q) * 4, 4);
    for (r = nrows; r < stride; ++r)
      for (int q = 0; q < 4; ++q) o[q * stride + r] = 0;
  }
  for (; s < words; ++s) {
    uint32_t* o = out + s * stride;
    for (int r = 0; r < nrows; ++r) std::memcpy(o + r, rows[r] + s * 4, 4);
    for (int r = nrows; r < stride; ++r) o[r] = 0;
  }
}

namespace {

// Rows of 2-byte elements, read as bytes: the header asks for no alignment, so the tail copies each
// element rather than reading it through a 2-byte pointer.
void interleave_pairs(const uint8_t* const rows[2], int64_t j, int64_t cols, uint32_t* out) {
  const __m128i zero = _mm_setzero_si128();
  int64_t c = 0;
  for (; c + 8 <= cols; c += 8) {
    const __m128i r0 = rows[0] ? _mm_loadu_si128(reinterpret_cast<const __m128i*>(rows[0] + 2 * (j + c))) : zero;
    const __m128i r1 = rows[1] ? _mm_loadu_si128(reinterpret_cast<const __m128i*>(rows[1] + 2 * (j + c))) : zero;
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + c), _mm_unpacklo_epi16(r0, r1));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + c + 4), _mm_unpackhi_epi16(r0, r1));
  }
  for (; c < cols; ++c) {
    uint16_t lo = 0, hi = 0;
    if (rows[0]) std::memcpy(&lo, rows[0] + 2 * (j + c), 2);
    if (rows[1]) std::memcpy(&hi, rows[1] + 2 * (j + c), 2);
    out[c] = uint32_t(lo) | (uint32_t(hi) << 16);
  }
}

void interleave_quads(const uint8_t* const rows[4], int64_t j, int64_t cols, uint32_t* out) {
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

void interleave_rows(const uint8_t* const* rows, int group, int64_t j, int64_t cols, uint32_t* out) {
  if (group == 2) {
    const uint8_t* pairs[2] = {rows[0], rows[1]};
    interleave_pairs(pairs, j, cols, out);
  } else {
    interleave_quads(rows, j, cols, out);
  }
}

}  // namespace peakprobe::isa
