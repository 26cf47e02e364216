// Generated f32 GEMM micro-kernels: C[mr x n] += A_panel[mr x kc] * B_panel[kc x NR] for packed
// panels, one register block of MR x NR accumulators. AVX-512: 6 x 64 (24 zmm accumulators, 4 B
// vectors, 1 broadcast); AVX2+FMA: 6 x 16 (12 ymm accumulators). Edge tiles are separate kernels:
// fewer rows (mr < MR) and masked columns (n < NR), so there is no scalar tail.
#pragma once
#include <cstdint>
#include <map>
#include <mutex>
#include <utility>

#include "asm/x86/stream_emitter.hpp"
#include "asm/x86/stream_plan.hpp"
#include "peakprobe/expected.hpp"

namespace peakprobe::x86 {

struct MicroKernelShape {
  int mr = 6;        // rows of the register block
  int nr = 64;       // columns (a multiple of the vector width)
  int vec_bits = 512;
};
// The register block for this CPU: 6x64 with AVX-512F, 6x16 with AVX2+FMA; mr 0 when neither.
MicroKernelShape micro_kernel_shape(const HostIsa& isa);

// void kernel(uint64_t kc, const float* a_panel, const float* b_panel, float* c, uint64_t ldc_bytes)
// a_panel: kc groups of MR floats (row r of step k at [k*MR + r]); b_panel: kc groups of NR floats.
using MicroKernelFn = void (*)(uint64_t kc, const float* a, const float* b, float* c, uint64_t ldc_bytes);

// Kernels compiled on first use for each (rows, columns) edge case; thread-safe.
class MicroKernels {
 public:
  explicit MicroKernels(const HostIsa& isa);
  const MicroKernelShape& shape() const { return shape_; }
  // rows in 1..MR, cols in 1..NR.
  Expected<MicroKernelFn> get(int rows, int cols);

 private:
  HostIsa isa_;
  MicroKernelShape shape_;
  std::mutex mutex_;
  std::map<std::pair<int, int>, JitFunction> kernels_;
};

// The kernel's code as text (for tests and --explain).
Expected<std::string> micro_kernel_listing(const HostIsa& isa, int rows, int cols);

}  // namespace peakprobe::x86
