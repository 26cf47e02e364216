// Detection of the host CPU: identity and ISA features (asmjit + CPUID, gated by what the OS
// enables in XCR0), topology and caches (hwloc) and the TSC rate (measured).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "peakprobe/cpu_info.hpp"

namespace peakprobe {

// Whole description of this machine. Never throws: a part that cannot be detected is logged and
// left at a safe fallback value.
CpuInfo detect_cpu_info();

// XCR0 (OS-enabled XSAVE state components); 0 when CPUID.1:ECX.OSXSAVE is clear, because XGETBV
// would fault then.
std::uint64_t read_xcr0();

// TSC ticks per second, measured against CLOCK_MONOTONIC_RAW over a few short windows (median).
// Takes about 40 ms.
double measure_tsc_hz();

// Fills xcr0, os_avx/os_avx512/os_amx, features and os_disabled from the features the CPU reports
// (canonical names): a feature whose register state XCR0 lacks (or, for AMX, that the kernel did not
// grant) goes to os_disabled. Split out of detect_cpu_info() so the gating can be tested with any XCR0.
void apply_os_state(CpuInfo& info, const std::vector<std::string>& reported, std::uint64_t xcr0,
                    bool amx_granted);

// Canonical spelling of a feature name: lower case, '.' -> '_', "avx512f" -> "avx512_f",
// "amxtile" -> "amx_tile", and a few common aliases ("avx512_cd" -> "avx512_cdi",
// "avxvnni" -> "avx_vnni", "sha_ni" -> "sha", ...).
std::string normalize_feature_name(const std::string& name);

// Whether the (normalised) name is an asmjit x86 feature name.
bool cpu_feature_known(const std::string& name);

// Every asmjit x86 feature name, lower case, in asmjit id order.
std::vector<std::string> all_feature_names();

}  // namespace peakprobe
