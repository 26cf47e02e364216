// The generated GEMM against a plain reference, over many odd shapes and both thread counts.
#include <catch2/catch.hpp>

#include <cmath>
#include <random>

#include "cpu/cpu_info.hpp"
#include "matmul/gemm.hpp"

using namespace peakprobe;

namespace {

x86::HostIsa isa_of(const CpuInfo& cpu) {
  x86::HostIsa isa;
  isa.avx = cpu.has("avx");
  isa.avx2 = cpu.has("avx2") && cpu.has("fma");
  isa.avx512f = cpu.has("avx512_f");
  return isa;
}

const CpuInfo& cpu() {
  static CpuInfo c = detect_cpu_info();
  return c;
}

// Largest |C - reference| relative to the largest |reference| (sums of K products of [-1, 1] values).
double gemm_error(int64_t m, int64_t n, int64_t k, const GemmBlocking& blocking) {
  std::mt19937 rng(unsigned(m * 131 + n * 17 + k));
  std::uniform_real_distribution<float> d(-1, 1);
  std::vector<float> a(size_t(m * k)), b(size_t(k * n)), c(size_t(m * n), 7.0f), ref(size_t(m * n));
  for (auto& x : a) x = d(rng);
  for (auto& x : b) x = d(rng);
  Gemm gemm(cpu(), isa_of(cpu()));
  auto ok = gemm.run(m, n, k, a.data(), k, b.data(), n, c.data(), n, blocking);
  if (!ok) FAIL(ok.error());
  reference_gemm(m, n, k, a.data(), b.data(), ref.data(), 0, m);
  double worst = 0, scale = 1e-30;
  for (size_t i = 0; i < c.size(); ++i) {
    worst = std::max(worst, double(std::fabs(c[i] - ref[i])));
    scale = std::max(scale, double(std::fabs(ref[i])));
  }
  return worst / scale;
}

}  // namespace

TEST_CASE("gemm: every edge path matches the reference, sizes 1..70", "[gemm]") {
  Gemm probe(cpu(), isa_of(cpu()));
  if (probe.shape().mr == 0) return;  // no AVX2/AVX-512: the kernels refuse, tested below
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> dim(1, 70);
  for (int trial = 0; trial < 60; ++trial) {
    const int m = dim(rng), n = dim(rng), k = dim(rng);
    INFO(m << "x" << n << "x" << k);
    GemmBlocking g = choose_blocking(cpu(), probe.shape(), m, n, k, 1 + trial % 2);
    CHECK(gemm_error(m, n, k, g) < 1e-5);
  }
}

TEST_CASE("gemm: primes, tall and skinny shapes, small blocks that force every loop", "[gemm]") {
  Gemm probe(cpu(), isa_of(cpu()));
  if (probe.shape().mr == 0) return;
  struct Shape { int m, n, k; };
  for (Shape s : {Shape{127, 131, 137}, Shape{1, 513, 3}, Shape{513, 1, 7}, Shape{7, 5, 1000}, Shape{200, 3, 1},
                  Shape{97, 200, 61}}) {
    INFO(s.m << "x" << s.n << "x" << s.k);
    GemmBlocking small;
    small.mc = probe.shape().mr * 2;
    small.kc = 16;
    small.nc = probe.shape().nr * 2;
    small.threads = 2;
    CHECK(gemm_error(s.m, s.n, s.k, small) < 1e-5);
    CHECK(gemm_error(s.m, s.n, s.k, choose_blocking(cpu(), probe.shape(), s.m, s.n, s.k, 1)) < 1e-5);
  }
}

TEST_CASE("gemm: blocking follows the caches and the problem", "[gemm]") {
  x86::MicroKernelShape s{6, 64, 512};
  CpuInfo c;
  c.caches = {{1, "data", 32 << 10, 64, 8, 1, 2}, {2, "unified", 1 << 20, 64, 8, 1, 2}, {3, "unified", 32 << 20, 64, 16, 2, 1}};
  GemmBlocking g = choose_blocking(c, s, 4096, 4096, 4096, 1);
  CHECK(g.kc == 512);  // half of a 1 MiB L2 over 64 floats x 4 bytes is 2048, clamped to 512
  CHECK(g.mc % 6 == 0);
  CHECK(g.nc % 64 == 0);
  CHECK(uint64_t(g.mc) * uint64_t(g.kc) * 4 <= (1u << 20) / 2);
  GemmBlocking tiny = choose_blocking(c, s, 5, 7, 3, 1);
  CHECK(tiny.kc == 3);
  CHECK(tiny.mc == 6);
  CHECK(tiny.nc == 64);
}

TEST_CASE("gemm: kernels compute rows x columns FMAs per step and mask the column tail", "[gemm]") {
  x86::HostIsa isa;
  isa.avx = isa.avx2 = isa.avx512f = true;
  auto full = x86::micro_kernel_listing(isa, 6, 64);
  REQUIRE(full.ok());
  size_t fmas = 0, pos = 0;
  while ((pos = full->find("vfmadd231ps", pos)) != std::string::npos) ++fmas, ++pos;
  CHECK(fmas == 24);
  CHECK(full->find("{k1}") == std::string::npos);
  auto edge = x86::micro_kernel_listing(isa, 3, 37);
  REQUIRE(edge.ok());
  fmas = pos = 0;
  while ((pos = edge->find("vfmadd231ps", pos)) != std::string::npos) ++fmas, ++pos;
  CHECK(fmas == 9);  // 3 rows x 3 vectors (37 columns)
  CHECK(edge->find("{k1}") != std::string::npos);
  x86::HostIsa none;
  CHECK_FALSE(x86::micro_kernel_listing(none, 6, 16).ok());
  CHECK_FALSE(x86::micro_kernel_listing(isa, 7, 64).ok());
}
