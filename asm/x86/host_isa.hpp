// What the target CPU can run besides the probed form, as the x86 planners and emitters need it:
// set-up code, bridges, memory kernels. The one place a CpuInfo becomes x86 feature flags.
#pragma once
#include "peakprobe/cpu_info.hpp"

namespace peakprobe::x86 {

struct HostIsa {
  bool avx = false, avx2 = false, fma = false, avx512f = false, avx512bw = false, avx512dq = false, amx = false;
};

// The features as the OS enables them (CpuInfo::has already folds in XCR0 and AMX permission).
HostIsa host_isa(const CpuInfo& cpu);

}  // namespace peakprobe::x86
