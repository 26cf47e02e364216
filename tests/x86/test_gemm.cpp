// The x86 side of the GEMM's checks: the features each dtype's kernels need, named when missing,
// and the 32 zmm registers a register block must fit. The ISA-neutral GEMM tests are in
// tests/test_gemm.cpp.
#include <catch2/catch.hpp>

#include "matmul/gemm.hpp"

using namespace peakprobe;

TEST_CASE("gemm: x86 features are named when missing, and a block must fit the zmm registers", "[gemm]") {
  CpuInfo c;
  c.features = {"avx512_f", "avx2", "fma"};
  MatmulConfig good = default_config(c, MatmulDtype::f32, 100, 100, 100, 1);
  CHECK(check_config(c, MatmulDtype::f32, good).empty());
  MatmulConfig bad = good;
  bad.mr = 14, bad.nv = 4, bad.nr = 64;
  CHECK_THAT(check_config(c, MatmulDtype::f32, bad), Catch::Contains("vector registers"));
  CHECK_THAT(gemm_unsupported(c, MatmulDtype::bf16), Catch::Contains("avx512_bf16"));
  CHECK_THAT(gemm_unsupported(c, MatmulDtype::i8), Catch::Contains("avx512_vnni"));
  CHECK_THAT(gemm_unsupported(CpuInfo{}, MatmulDtype::f32), Catch::Contains("avx2"));
  Gemm gemm(CpuInfo{}, MatmulDtype::f32);
  float x = 0;
  auto refused = gemm.run(GemmArgs{1, 1, 1, &x, 1, &x, 1, &x, 1}, good);
  REQUIRE_FALSE(refused.ok());
  CHECK_THAT(refused.error(), Catch::Contains("avx2"));
}

TEST_CASE("gemm: the default tiling of the 512-bit kernels", "[gemm]") {
  CpuInfo c;
  c.features = {"avx512_f"};
  c.smt_per_core = 1;
  c.caches = {{1, "data", 32 << 10, 64, 8, 1, 2}, {2, "unified", 1 << 20, 64, 8, 1, 2},
              {3, "unified", 32 << 20, 64, 16, 2, 1}};
  MatmulConfig g = default_config(c, MatmulDtype::f32, 4096, 4096, 4096, 2);
  CHECK(g.nr == 64);
  CHECK(g.kc == 512);  // half of a 1 MiB L2 over 64 floats x 4 bytes is 2048, clamped to 512
  MatmulConfig b16 = default_config(c, MatmulDtype::bf16, 4096, 4096, 4096, 1);
  CHECK(b16.kc == 1024);
  MatmulConfig tiny = default_config(c, MatmulDtype::f32, 5, 7, 3, 1);
  CHECK(tiny.mc == 6);
  CHECK(tiny.nc == 64);
}
