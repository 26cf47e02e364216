// Generated AArch64 memory kernels: bandwidth loops (load, store, copy, triad, update and their
// non-temporal store variants) at 64 bits (SIMD&FP scalars) and 128 bits (NEON q registers), moved
// by register pairs (ldp/stp/stnp) as tuned Arm code does, and at "512 bits": 64 bytes per ld1/st1
// of four q registers (non-temporal stores: two stnp pairs); and pointer chases with several
// independent chains.
#pragma once
#include <cstdint>
#include <string>

#include "asm/jit.hpp"
#include "asm/mem_kernel.hpp"
#include "peakprobe/expected.hpp"

namespace peakprobe::a64 {

// Vectors per array per loop iteration (four register pairs).
inline constexpr int kMemUnroll = 8;
// The width that names the four-register ld1/st1 kernels, and their elements per array per iteration.
inline constexpr int kWidthX4 = 512;
inline constexpr int kMemUnrollX4 = 2;
inline constexpr int kChaseUnroll = 16;
inline constexpr int kMaxChaseChains = 16;

struct MemKernelCode {
  isa::JitFunction fn;
  isa::MemKernelInfo info{};
  int width_bits = 0;
  uint64_t bytes_per_iteration = 0;
  uint64_t array_step = 0;
};

Expected<MemKernelCode> compile_mem_kernel(isa::MemKernel kernel, int width_bits, std::string* listing = nullptr);
Expected<isa::JitFunction> compile_chase(int chains, std::string* listing = nullptr);

}  // namespace peakprobe::a64
