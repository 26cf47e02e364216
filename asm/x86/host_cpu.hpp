// The x86 host detection behind asm/host_cpu.hpp, and the parts tests reach directly.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "asm/host_cpu.hpp"

namespace peakprobe::x86 {

// XCR0 (OS-enabled XSAVE state components); 0 when CPUID.1:ECX.OSXSAVE is clear, because XGETBV
// would fault then.
std::uint64_t read_xcr0();

// Fills isa_state (xcr0, os_avx, os_avx512, os_amx) and its `info` line, features and os_disabled from the features the CPU reports
// (canonical names): a feature whose register state XCR0 lacks (or, for AMX, that the kernel did not
// grant) goes to os_disabled. Split out of detection so the gating can be tested with any XCR0.
void apply_os_state(CpuInfo& info, const std::vector<std::string>& reported, std::uint64_t xcr0,
                    bool amx_granted);

}  // namespace peakprobe::x86
