// The plain reference a matmul result is checked against, and the bf16 conversions both sides use.
#pragma once
#include <cstdint>
#include <cstring>

#include "peakprobe/matmul_result.hpp"

namespace peakprobe {

// Round to nearest even, as vcvtneps2bf16 does (NaN kept quiet).
inline uint16_t float_to_bf16(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  if ((u & 0x7fffffffu) > 0x7f800000u) return uint16_t((u >> 16) | 0x40);
  u += 0x7fffu + ((u >> 16) & 1u);
  return uint16_t(u >> 16);
}
inline float bf16_to_float(uint16_t h) {
  const uint32_t u = uint32_t(h) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

// Bytes of one element of A and B (C is always 4 bytes: f32 or s32).
inline int element_bytes(MatmulDtype d) { return d == MatmulDtype::f32 ? 4 : d == MatmulDtype::bf16 ? 2 : 1; }

// Row i of C = A x B in double (exact for int8), row-major with leading dimensions in elements:
// A f32 / bf16 / u8, B f32 / bf16 / s8.
void reference_row(MatmulDtype dtype, int64_t i, int64_t n, int64_t k, const void* a, int64_t lda, const void* b,
                   int64_t ldb, double* out);

// C element as double (f32 or s32).
inline double c_value(MatmulDtype dtype, const void* c, int64_t index) {
  if (dtype == MatmulDtype::i8) return double(static_cast<const int32_t*>(c)[index]);
  return double(static_cast<const float*>(c)[index]);
}

}  // namespace peakprobe
