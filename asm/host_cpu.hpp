// The ISA's part of describing the host: who made the CPU, which instruction-set features it offers
// and which of them the OS lets a process use, and how feature names are spelled. src/cpu/cpu_info
// adds topology, caches and the timestamp rate. One implementation per ISA (asm/<isa>/host_cpu.cpp).
#pragma once
#include <string>
#include <vector>

#include "peakprobe/cpu_info.hpp"

namespace peakprobe::isa {

// vendor, brand, family/model/stepping, hypervisor, tsc_invariant.
void detect_identity(CpuInfo& info);
// features and os_disabled (and the ISA's OS-state fields): a feature the CPU reports but whose
// register state the OS does not enable is listed as disabled, not usable.
void detect_features(CpuInfo& info);
// Canonical spelling of a feature name (lower case, the instruction database's names; common aliases
// of the OS, compilers and vendor manuals mapped to them).
std::string normalize_feature_name(const std::string& name);
// Whether the (normalised) name is one of the ISA's feature names.
bool feature_known(const std::string& name);
// Every feature name of the ISA, canonical, in a stable order.
std::vector<std::string> all_feature_names();

}  // namespace peakprobe::isa
