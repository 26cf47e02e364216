#include "matmul/gemm.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <thread>

#include "harness/pin.hpp"

namespace peakprobe {
namespace {

struct FreeDeleter {
  void operator()(float* p) const { std::free(p); }
};
using Buffer = std::unique_ptr<float, FreeDeleter>;

Buffer aligned_floats(size_t count) {
  const size_t bytes = (count * sizeof(float) + 63) / 64 * 64;
  return Buffer(static_cast<float*>(std::aligned_alloc(64, std::max<size_t>(bytes, 64))));
}

uint64_t level_bytes(const CpuInfo& cpu, int level, uint64_t fallback) {
  for (const auto& c : cpu.caches)
    if (c.level == level && c.type != "instruction") return c.size_bytes / std::max(1, c.shared_by_cpus);
  return fallback;
}

// B[pc.., jc..] (kc x nc) -> micro-panels of kc x NR, columns past nc zero.
void pack_b(const float* b, int64_t ldb, int64_t kc, int64_t nc, int nr, float* out) {
  for (int64_t j0 = 0; j0 < nc; j0 += nr) {
    const int64_t w = std::min<int64_t>(nr, nc - j0);
    for (int64_t p = 0; p < kc; ++p) {
      const float* src = b + p * ldb + j0;
      std::memcpy(out, src, size_t(w) * sizeof(float));
      if (w < nr) std::memset(out + w, 0, size_t(nr - w) * sizeof(float));
      out += nr;
    }
  }
}

// A[ic.., pc..] (mc x kc) -> micro-panels of MR x kc stored k-major, rows past mc zero.
void pack_a(const float* a, int64_t lda, int64_t mc, int64_t kc, int mr, float* out) {
  for (int64_t i0 = 0; i0 < mc; i0 += mr) {
    const int64_t h = std::min<int64_t>(mr, mc - i0);
    for (int64_t p = 0; p < kc; ++p) {
      for (int64_t r = 0; r < h; ++r) out[r] = a[(i0 + r) * lda + p];
      for (int64_t r = h; r < mr; ++r) out[r] = 0.0f;
      out += mr;
    }
  }
}

}  // namespace

GemmBlocking choose_blocking(const CpuInfo& cpu, const x86::MicroKernelShape& s, int64_t m, int64_t n, int64_t k,
                             int threads) {
  GemmBlocking g;
  g.threads = std::max(1, threads);
  const uint64_t l2 = level_bytes(cpu, 2, 1 << 20), l3 = level_bytes(cpu, 3, 8 << 20);
  g.kc = int(std::clamp<uint64_t>(l2 / 2 / (uint64_t(s.nr) * 4), 64, 512));
  g.mc = int(std::clamp<uint64_t>(l2 / 2 / (uint64_t(g.kc) * 4) / uint64_t(s.mr) * uint64_t(s.mr), uint64_t(s.mr), 960));
  g.nc = int(std::clamp<uint64_t>(l3 / (uint64_t(g.kc) * 4) / uint64_t(s.nr) * uint64_t(s.nr), uint64_t(s.nr), 8192));
  g.kc = int(std::min<int64_t>(g.kc, std::max<int64_t>(k, 1)));
  g.mc = int(std::min<int64_t>(g.mc, (m + s.mr - 1) / s.mr * s.mr));
  g.nc = int(std::min<int64_t>(g.nc, (n + s.nr - 1) / s.nr * s.nr));
  return g;
}

Gemm::Gemm(const CpuInfo& cpu, const x86::HostIsa& isa) : cpu_(cpu), kernels_(isa) {}

Expected<bool> Gemm::run(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* b, int64_t ldb,
                         float* c, int64_t ldc, const GemmBlocking& g) {
  const auto s = kernels_.shape();
  if (s.mr == 0) return make_error("f32 GEMM needs AVX-512F or AVX2 with FMA");
  if (m < 0 || n < 0 || k < 0) return make_error("negative matrix dimension");
  for (int64_t i = 0; i < m; ++i) std::memset(c + i * ldc, 0, size_t(n) * sizeof(float));
  if (m == 0 || n == 0 || k == 0) return true;
  // Compile every edge kernel up front, so worker threads only look them up.
  std::vector<int> widths = {s.nr};
  for (int64_t jc = 0; jc < n; jc += g.nc)
    if (const int64_t w = std::min<int64_t>(g.nc, n - jc); w % s.nr) widths.push_back(int(w % s.nr));
  for (int r = 1; r <= s.mr; ++r)
    for (int col : widths)
      if (auto kf = kernels_.get(r, col); !kf) return make_error(kf.error());
  // Rows are split into equal runs of whole micro-panels, one per thread.
  const int64_t panels = (m + s.mr - 1) / s.mr;
  const int threads = int(std::min<int64_t>(g.threads, panels));
  std::vector<std::string> errors(static_cast<size_t>(threads));
  auto worker = [&](int t) {
    if (t < int(cpu_.core_order.size())) pin_current_thread(cpu_.core_order[size_t(t)]);
    const int64_t row_begin = panels * t / threads * s.mr, row_end = std::min<int64_t>(m, panels * (t + 1) / threads * s.mr);
    if (row_begin >= row_end) return;
    Buffer bp = aligned_floats(size_t(g.kc) * size_t((g.nc + s.nr - 1) / s.nr * s.nr));
    Buffer ap = aligned_floats(size_t(g.kc) * size_t((g.mc + s.mr - 1) / s.mr * s.mr));
    if (!bp || !ap) {
      errors[size_t(t)] = "cannot allocate packing buffers";
      return;
    }
    for (int64_t jc = 0; jc < n; jc += g.nc) {
      const int64_t nc = std::min<int64_t>(g.nc, n - jc);
      for (int64_t pc = 0; pc < k; pc += g.kc) {
        const int64_t kc = std::min<int64_t>(g.kc, k - pc);
        pack_b(b + pc * ldb + jc, ldb, kc, nc, s.nr, bp.get());
        for (int64_t ic = row_begin; ic < row_end; ic += g.mc) {
          const int64_t mc = std::min<int64_t>(g.mc, row_end - ic);
          pack_a(a + ic * lda + pc, lda, mc, kc, s.mr, ap.get());
          for (int64_t jr = 0; jr < nc; jr += s.nr) {
            const int cols = int(std::min<int64_t>(s.nr, nc - jr));
            for (int64_t ir = 0; ir < mc; ir += s.mr) {
              const int rows = int(std::min<int64_t>(s.mr, mc - ir));
              auto kf = kernels_.get(rows, cols);
              if (!kf) {
                errors[size_t(t)] = kf.error();
                return;
              }
              (*kf)(uint64_t(kc), ap.get() + ir * kc, bp.get() + jr * kc, c + (ic + ir) * ldc + jc + jr,
                    uint64_t(ldc) * sizeof(float));
            }
          }
        }
      }
    }
  };
  std::vector<std::thread> team;
  for (int t = 1; t < threads; ++t) team.emplace_back(worker, t);
  worker(0);
  for (auto& th : team) th.join();
  for (const auto& e : errors)
    if (!e.empty()) return make_error(e);
  return true;
}

void reference_gemm(int64_t m, int64_t n, int64_t k, const float* a, const float* b, float* c, int64_t row_begin,
                    int64_t row_end) {
  std::vector<double> row(static_cast<size_t>(n));
  for (int64_t i = std::max<int64_t>(0, row_begin); i < std::min(m, row_end); ++i) {
    std::fill(row.begin(), row.end(), 0.0);
    for (int64_t p = 0; p < k; ++p) {
      const double av = a[i * k + p];
      const float* br = b + p * n;
      for (int64_t j = 0; j < n; ++j) row[size_t(j)] += av * double(br[j]);
    }
    for (int64_t j = 0; j < n; ++j) c[i * n + j] = float(row[size_t(j)]);
  }
}

}  // namespace peakprobe
