// Generated memory kernels: bandwidth loops (load, store, copy, triad, update and non-temporal store
// variants) at each vector width, and pointer chases with several independent chains. Generated
// code, so no compiler can fuse, vectorise differently or delete them.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "asm/mem_kernel.hpp"
#include "asm/x86/stream_emitter.hpp"
#include "asm/x86/stream_plan.hpp"
#include "peakprobe/expected.hpp"

namespace peakprobe::x86 {

using MemKernel = isa::MemKernel;
using MemKernelInfo = isa::MemKernelInfo;
using isa::find_mem_kernel;
using isa::mem_kernels;

// Vector width of a kernel: 64 (scalar, general registers or scalar SSE2 for FP), 128, 256, 512.
// `isa_name` gives "scalar", "sse", "avx2", "avx512".
const char* isa_name(int width_bits);
// The widths this CPU can run, narrowest first.
std::vector<int> mem_widths(const HostIsa& isa);

// Unrolled vectors per array per loop iteration.
inline constexpr int kMemUnroll = 8;

struct MemKernelCode {
  JitFunction fn;
  MemKernelInfo info;
  int width_bits = 0;
  uint64_t bytes_per_iteration = 0;  // load + store instruction bytes of one loop iteration
  uint64_t array_step = 0;           // bytes each array advances per iteration
};

// void fn(uint64_t passes, uint64_t iterations, void* a, void* b, void* c): `passes` times over
// `iterations` x array_step bytes of each array. a is the destination (or the source for load).
using MemFn = isa::MemFn;

// The loop body as generated (for tests); `listing` gets asmjit's text when non-null.
Expected<MemKernelCode> compile_mem_kernel(MemKernel kernel, int width_bits, const HostIsa& isa,
                                           std::string* listing = nullptr);

// void fn(uint64_t iterations, void** starts): `chains` independent pointer chases, each loop
// iteration follows kChaseUnroll links of every chain; the final pointers are written back to starts
// so the work cannot be dead.
using ChaseFn = isa::ChaseFn;
inline constexpr int kChaseUnroll = 16;
inline constexpr int kMaxChains = 10;
Expected<JitFunction> compile_chase(int chains, std::string* listing = nullptr);

}  // namespace peakprobe::x86
