// Tests for src/matmul/matmul_dtype.cpp: the dtype names `matmul --dtype` takes and documents write.
#include <catch2/catch.hpp>

#include <string>

#include "peakprobe/matmul_result.hpp"

using namespace peakprobe;

TEST_CASE("matmul dtype names are the ones --dtype takes", "[matmul_dtype]") {
  CHECK(std::string(to_string(MatmulDtype::f32)) == "f32");
  CHECK(std::string(to_string(MatmulDtype::bf16)) == "bf16");
  CHECK(std::string(to_string(MatmulDtype::i8)) == "int8");
  CHECK(std::string(to_string(static_cast<MatmulDtype>(42))) == "?");
}
