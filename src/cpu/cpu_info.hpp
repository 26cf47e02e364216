// Detection of the host CPU: identity and ISA features (the ISA's part, asm/host_cpu.hpp), topology
// and caches (hwloc) and the timestamp counter's rate (measured).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "peakprobe/cpu_info.hpp"

namespace peakprobe {

// Whole description of this machine. Never throws: a part that cannot be detected is logged and
// left at a safe fallback value.
CpuInfo detect_cpu_info();

// TSC ticks per second, measured against CLOCK_MONOTONIC_RAW over a few short windows (median).
// Takes about 40 ms.
double measure_tsc_hz();

// Canonical spelling of a feature name (the ISA's rules: asm/host_cpu.hpp).
std::string normalize_feature_name(const std::string& name);

// Whether the (normalised) name is one of the host ISA's feature names.
bool cpu_feature_known(const std::string& name);

// Every feature name of the host ISA, canonical, in a stable order.
std::vector<std::string> all_feature_names();

// The core kinds of CpuInfo::cpu_kind as `info` prints them: "2: kind 0 on CPUs 8-15, kind 1 on CPUs
// 0-7" (runs of CPU ids joined; hwloc puts the least performant kind first where it can rank them,
// in no given order where it cannot), CPUs of no named kind last; "" when every core is of one kind.
std::string core_kinds_text(const std::vector<int>& cpu_kind);

}  // namespace peakprobe
