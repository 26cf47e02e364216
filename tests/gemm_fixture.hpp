// The GEMM against the plain reference, for the ISA-neutral GEMM tests and those of one ISA's kernels.
#pragma once
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "matmul/gemm.hpp"
#include "matmul/reference.hpp"

namespace peakprobe::test {

// Largest |C - reference| over the largest |reference| of C = A (lda) x B (ldb), C's rows ldc apart.
inline double relative_error(MatmulDtype dt, int64_t m, int64_t n, int64_t k, const void* a, int64_t lda, const void* b,
                             int64_t ldb, const void* c, int64_t ldc) {
  std::vector<double> ref(static_cast<size_t>(n));
  double worst = 0, scale = 1e-30;
  for (int64_t i = 0; i < m; ++i) {
    reference_row(dt, i, n, k, a, lda, b, ldb, ref.data());
    for (int64_t j = 0; j < n; ++j) {
      worst = std::max(worst, std::fabs(c_value(dt, c, i * ldc + j) - ref[size_t(j)]));
      scale = std::max(scale, std::fabs(ref[size_t(j)]));
    }
  }
  return worst / scale;
}

// Largest |C - reference| over the largest |reference|; C starts as garbage so a missed tile shows.
inline double gemm_error(Gemm& gemm, int64_t m, int64_t n, int64_t k, const MatmulConfig& config) {
  const MatmulDtype dt = gemm.dtype();
  const int es = element_bytes(dt);
  std::mt19937 rng(unsigned(m * 131 + n * 17 + k));
  std::vector<uint8_t> a(size_t(m * k * es)), b(size_t(k * n * es)), c(size_t(m * n * 4), 0x5a);
  std::uniform_real_distribution<float> real(-1, 1);
  for (size_t i = 0; i < a.size() / size_t(es); ++i) {
    if (dt == MatmulDtype::f32) reinterpret_cast<float*>(a.data())[i] = real(rng);
    if (dt == MatmulDtype::bf16) reinterpret_cast<uint16_t*>(a.data())[i] = float_to_bf16(real(rng));
    if (dt == MatmulDtype::i8) a[i] = uint8_t(rng() & 255);  // the whole u8 range: unsigned must stay unsigned
  }
  for (size_t i = 0; i < b.size() / size_t(es); ++i) {
    if (dt == MatmulDtype::f32) reinterpret_cast<float*>(b.data())[i] = real(rng);
    if (dt == MatmulDtype::bf16) reinterpret_cast<uint16_t*>(b.data())[i] = float_to_bf16(real(rng));
    if (dt == MatmulDtype::i8) b[i] = uint8_t(rng() & 255);  // s8 from -128 to 127
  }
  auto ok = gemm.run(GemmArgs{m, n, k, a.data(), k, b.data(), n, c.data(), n}, config);
  if (!ok) FAIL(ok.error());
  return relative_error(dt, m, n, k, a.data(), k, b.data(), n, c.data(), n);
}

inline double limit(MatmulDtype d) { return d == MatmulDtype::i8 ? 0.0 : 2e-6 * 70; }

}  // namespace peakprobe::test
