// The reference the matmul is checked against, and the bf16 rounding both sides rely on.
#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

#include "matmul/reference.hpp"

using namespace peakprobe;

TEST_CASE("reference: bf16 rounds to nearest even and converts back exactly", "[reference]") {
  CHECK(float_to_bf16(1.0f) == 0x3f80);
  CHECK(bf16_to_float(0x3f80) == 1.0f);
  // 1 + 2^-8 lies halfway between 1 and 1 + 2^-7: ties go to the even mantissa (1.0).
  CHECK(float_to_bf16(1.00390625f) == 0x3f80);
  // 1 + 3 x 2^-8 is halfway between 1 + 2^-7 and 1 + 2^-6: rounds up to the even one.
  CHECK(float_to_bf16(1.01171875f) == 0x3f82);
  CHECK(std::isnan(bf16_to_float(float_to_bf16(std::nanf("")))));
  CHECK(bf16_to_float(float_to_bf16(-2.5f)) == -2.5f);
}

TEST_CASE("reference: rows of a known product for every dtype", "[reference]") {
  // A = [[1, 2], [3, 4]], B = [[5, 6], [7, 8]] -> row 1 of C = [43, 50].
  std::vector<double> row(2);
  const float af[] = {1, 2, 3, 4}, bf[] = {5, 6, 7, 8};
  reference_row(MatmulDtype::f32, 1, 2, 2, af, 2, bf, 2, row.data());
  CHECK(row == std::vector<double>{43, 50});
  uint16_t ah[4], bh[4];
  for (int i = 0; i < 4; ++i) ah[i] = float_to_bf16(af[i]), bh[i] = float_to_bf16(bf[i]);
  reference_row(MatmulDtype::bf16, 1, 2, 2, ah, 2, bh, 2, row.data());
  CHECK(row == std::vector<double>{43, 50});
  // int8: A unsigned (200 stays 200), B signed (-1 stays -1).
  const uint8_t a8[] = {200, 1};
  const int8_t b8[] = {-1, 2, 3, -4};
  reference_row(MatmulDtype::i8, 0, 2, 2, a8, 2, b8, 2, row.data());
  CHECK(row == std::vector<double>{-197, 396});
  const int32_t c[] = {7, -9};
  CHECK(c_value(MatmulDtype::i8, c, 1) == -9.0);
}
