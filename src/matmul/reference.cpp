#include "matmul/reference.hpp"

#include <algorithm>

namespace peakprobe {
namespace {

template <typename A, typename B, typename ToDouble>
void row_of(int64_t i, int64_t n, int64_t k, const A* a, int64_t lda, const B* b, int64_t ldb, double* out,
            ToDouble value) {
  std::fill(out, out + n, 0.0);
  for (int64_t p = 0; p < k; ++p) {
    const double av = value(a[i * lda + p]);
    const B* br = b + p * ldb;
    for (int64_t j = 0; j < n; ++j) out[j] += av * value(br[j]);
  }
}

}  // namespace

void reference_row(MatmulDtype dtype, int64_t i, int64_t n, int64_t k, const void* a, int64_t lda, const void* b,
                   int64_t ldb, double* out) {
  switch (dtype) {
    case MatmulDtype::f32:
      row_of(i, n, k, static_cast<const float*>(a), lda, static_cast<const float*>(b), ldb, out,
             [](float x) { return double(x); });
      break;
    case MatmulDtype::bf16:
      row_of(i, n, k, static_cast<const uint16_t*>(a), lda, static_cast<const uint16_t*>(b), ldb, out,
             [](uint16_t x) { return double(bf16_to_float(x)); });
      break;
    case MatmulDtype::i8:
      std::fill(out, out + n, 0.0);
      for (int64_t p = 0; p < k; ++p) {
        const double av = static_cast<const uint8_t*>(a)[i * lda + p];
        const int8_t* br = static_cast<const int8_t*>(b) + p * ldb;
        for (int64_t j = 0; j < n; ++j) out[j] += av * double(br[j]);
      }
      break;
  }
}

}  // namespace peakprobe
