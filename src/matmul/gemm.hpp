// f32 GEMM, C = A x B (row-major), on the generated micro-kernels: B packed in KC x NR micro-panels,
// A in MR x KC micro-panels, blocks KC / MC / NC sized from the caches (the BLIS analytical model's
// shape), rows split over pinned threads.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "asm/x86/matmul_kernel.hpp"
#include "peakprobe/cpu_info.hpp"
#include "peakprobe/expected.hpp"

namespace peakprobe {

struct GemmBlocking {
  int mc = 0, kc = 0, nc = 0;
  int threads = 1;
};

// KC: a B micro-panel (KC x NR floats) in half of L2; MC: an A block (MC x KC) in half of L2 rounded
// to MR; NC: a B block (KC x NC) in the L3 share, rounded to NR. Clamped to the problem.
GemmBlocking choose_blocking(const CpuInfo& cpu, const x86::MicroKernelShape& s, int64_t m, int64_t n, int64_t k,
                             int threads);

class Gemm {
 public:
  Gemm(const CpuInfo& cpu, const x86::HostIsa& isa);
  const x86::MicroKernelShape& shape() { return kernels_.shape(); }
  // C = A * B; lda/ldb/ldc in elements. Threads are pinned in the CPU's core order.
  Expected<bool> run(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* b, int64_t ldb,
                     float* c, int64_t ldc, const GemmBlocking& blocking);

 private:
  CpuInfo cpu_;
  x86::MicroKernels kernels_;
};

// Plain triple loop with double accumulation, over rows [row_begin, row_end).
void reference_gemm(int64_t m, int64_t n, int64_t k, const float* a, const float* b, float* c, int64_t row_begin,
                    int64_t row_end);

}  // namespace peakprobe
