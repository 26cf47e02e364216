// The x86 side of the GEMM's checks: the features each dtype's kernels need, named when missing,
// and the 32 zmm registers a register block must fit. The ISA-neutral GEMM tests are in
// tests/test_gemm.cpp.
#include <catch2/catch.hpp>

#include <algorithm>
#include <tuple>

#include <fmt/format.h>

#include "cpu/cpu_info.hpp"
#include "gemm_fixture.hpp"
#include "matmul/gemm.hpp"
#include "skip.hpp"

using namespace peakprobe;

TEST_CASE("gemm: x86 features are named when missing, and a block must fit the zmm registers", "[gemm]") {
  CpuInfo c;
  c.features = {"avx512_f", "avx2", "fma"};
  MatmulConfig good = default_config(c, MatmulDtype::f32, 100, 100, 100, 1);
  CHECK(check_config(c, MatmulDtype::f32, good).empty());
  MatmulConfig bad = good;
  bad.mr = 14, bad.nv = 4, bad.nr = 64;
  CHECK_THAT(check_config(c, MatmulDtype::f32, bad), Catch::Contains("vector registers"));
  // Without the dot products bf16 runs widened to f32 on the FMA; int8 widened needs vpmaddwd on zmm.
  CHECK(gemm_unsupported(c, MatmulDtype::bf16).empty());
  CHECK_THAT(gemm_unsupported(c, MatmulDtype::i8), Catch::Contains("avx512_vnni"));
  CHECK_THAT(gemm_unsupported(c, MatmulDtype::i8), Catch::Contains("avx512_bw"));
  CHECK_THAT(gemm_unsupported(CpuInfo{}, MatmulDtype::f32), Catch::Contains("avx2"));
  Gemm gemm(CpuInfo{}, MatmulDtype::f32);
  float x = 0;
  auto refused = gemm.run(GemmArgs{1, 1, 1, &x, 1, &x, 1, &x, 1}, good);
  REQUIRE_FALSE(refused.ok());
  CHECK_THAT(refused.error(), Catch::Contains("avx2"));
}

TEST_CASE("gemm: the default tiling of the 512-bit kernels", "[gemm]") {
  CpuInfo c;
  c.features = {"avx512_f", "avx512_bf16"};
  c.smt_per_core = 1;
  c.caches = {{1, "data", 32 << 10, 64, 8, 1, 2}, {2, "unified", 1 << 20, 64, 8, 1, 2},
              {3, "unified", 32 << 20, 64, 16, 2, 1}};
  MatmulConfig g = default_config(c, MatmulDtype::f32, 4096, 4096, 4096, 2);
  CHECK(g.nr == 64);
  CHECK(g.kc == 512);  // half of a 1 MiB L2 over 64 floats x 4 bytes is 2048, clamped to 512
  MatmulConfig b16 = default_config(c, MatmulDtype::bf16, 4096, 4096, 4096, 1);
  CHECK(b16.kc == 1024);  // the same 512 k steps, two bf16 values a step
  // Without vdpbf16ps, bf16 is packed as f32: one k value a step, as f32.
  c.features = {"avx512_f"};
  CHECK(default_config(c, MatmulDtype::bf16, 4096, 4096, 4096, 1).kc == 512);
  MatmulConfig tiny = default_config(c, MatmulDtype::f32, 5, 7, 3, 1);
  CHECK(tiny.mc == 6);
  CHECK(tiny.nc == 64);
}

TEST_CASE("gemm: on AVX-512 without the dot products, bf16 and int8 run widened on zmm and stay exact", "[gemm]") {
  // A Skylake-X or Ice Lake as far as the kernels can tell: this CPU with vdpbf16ps, vpdpbusd and
  // AMX taken away. The widened kernels need only AVX-512 F and BW, which the host must have.
  CpuInfo c = detect_cpu_info();
  if (!c.has("avx512_f") || !c.has("avx512_bw")) PP_SKIP("this CPU has no avx512_f with avx512_bw");
  c.features.erase(std::remove_if(c.features.begin(), c.features.end(),
                                  [](const std::string& f) {
                                    return f == "avx512_bf16" || f == "avx512_vnni" || f.rfind("amx", 0) == 0;
                                  }),
                   c.features.end());
  for (MatmulDtype dt : {MatmulDtype::bf16, MatmulDtype::i8}) {
    REQUIRE(gemm_unsupported(c, dt).empty());
    Gemm gemm(c, dt);
    const isa::MicroKernelShape s = gemm.micro_kernel_shape(6, 4, false);
    CHECK(s.widened);
    CHECK(s.vec_bits == 512);
    CHECK(s.k_group() == (dt == MatmulDtype::bf16 ? 1 : 2));
    CHECK_THAT(gemm.kernel_name(default_config(c, dt, 64, 64, 64, 1)), Catch::Contains(" as "));
    for (auto [m, n, k] : {std::tuple{37, 70, 67}, std::tuple{6, 64, 4}, std::tuple{1, 3, 131}, std::tuple{100, 100, 300}}) {
      INFO(to_string(dt) << " " << m << "x" << n << "x" << k);
      CHECK(test::gemm_error(gemm, m, n, k, default_config(c, dt, m, n, k, 1 + k % 2)) <= test::limit(dt));
    }
  }
}

TEST_CASE("gemm: the default tiling of the AMX kernels", "[gemm]") {
  CpuInfo c;
  c.features = {"avx512_f", "avx512_bf16", "amx_tile", "amx_bf16", "amx_int8"};
  c.smt_per_core = 1;
  c.caches = {{1, "data", 48 << 10, 64, 12, 1, 2}, {2, "unified", 2 << 20, 64, 16, 1, 2},
              {3, "unified", 64 << 20, 64, 16, 2, 1}};
  for (MatmulDtype dt : {MatmulDtype::bf16, MatmulDtype::i8}) {
    INFO(to_string(dt));
    const MatmulConfig g = default_config(c, dt, 4096, 4096, 4096, 1);
    CHECK(g.mr == 32);  // 2 x 2 tiles of C, 2 of A, 2 of B: all eight
    CHECK(g.nr == 32);
    CHECK(g.mc == 64);
    CHECK(g.kc == 256 * (dt == MatmulDtype::bf16 ? 2 : 4));  // 256 k steps, whole tile depths
    CHECK(check_config(c, dt, g).empty());
    Gemm gemm(c, dt);
    CHECK(gemm.micro_kernel_shape(32, 2, false).tiles);
    CHECK(gemm.kernel_name(g) == fmt::format("amx {} 32x32", to_string(dt)));
  }
  // f32 has no tile product: the vector kernels, as before.
  CHECK_FALSE(Gemm(c, MatmulDtype::f32).micro_kernel_shape(6, 4, false).tiles);
  // A block the tiles cannot hold is refused with the count.
  MatmulConfig big = default_config(c, MatmulDtype::bf16, 256, 256, 256, 1);
  big.mr = 64, big.mc = 64;
  CHECK_THAT(check_config(c, MatmulDtype::bf16, big), Catch::Contains("tiles"));
}

TEST_CASE("gemm: on AMX, bf16 and int8 run on tiles and stay exact at every edge", "[gemm]") {
  CpuInfo c = detect_cpu_info();
  for (MatmulDtype dt : {MatmulDtype::bf16, MatmulDtype::i8}) {
    Gemm gemm(c, dt);
    if (!gemm.micro_kernel_shape(32, 2, false).tiles) PP_SKIP("this CPU (or its OS) gives no AMX tiles for " << to_string(dt));
    // Edges in rows (past 16 and 32), columns (past 16), k (not a tile depth, one value) and blocks
    // of several k parts; 16-row blocks, 1-tile-wide blocks and the 3 x 1 tile block (rows past 32
    // and 48) too.
    for (auto [m, n, k] : {std::tuple{37, 70, 67}, std::tuple{32, 32, 32}, std::tuple{1, 3, 131}, std::tuple{17, 16, 1},
                           std::tuple{100, 100, 300}, std::tuple{64, 33, 1030}}) {
      for (auto [mr, nv] : {std::pair{32, 2}, std::pair{16, 1}, std::pair{16, 3}, std::pair{48, 1}}) {
        INFO(to_string(dt) << " " << m << "x" << n << "x" << k << " block " << mr << "x" << nv);
        MatmulConfig g = default_config(c, dt, m, n, k, 1 + k % 2);
        g.mr = mr, g.nv = nv, g.nr = 16 * nv, g.mc = 2 * mr, g.nc = 4 * g.nr;
        g.kc = std::min(g.kc, 64 * (dt == MatmulDtype::bf16 ? 2 : 4));  // several k blocks for k >= 131
        REQUIRE(check_config(c, dt, g).empty());
        CHECK(test::gemm_error(gemm, m, n, k, g) <= test::limit(dt));
      }
    }
  }
}
