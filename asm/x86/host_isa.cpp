#include "asm/x86/host_isa.hpp"

namespace peakprobe::x86 {

HostIsa host_isa(const CpuInfo& cpu) {
  HostIsa isa;
  isa.avx = cpu.has("avx");
  isa.avx2 = cpu.has("avx2");
  isa.fma = cpu.has("fma");
  isa.avx512f = cpu.has("avx512_f");
  isa.avx512bw = cpu.has("avx512_bw");
  isa.avx512dq = cpu.has("avx512_dq");
  isa.amx = cpu.has("amx_tile");
  return isa;
}

}  // namespace peakprobe::x86
