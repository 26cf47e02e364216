// What peakprobe knows about the machine it runs on: identity, ISA features the OS has enabled,
// topology and caches. Filled by detect_cpu_info(); the measured clock is kept apart (ClockReading).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace peakprobe {

struct CacheLevel {
  int level = 0;                 // 1, 2, 3, ...
  std::string type;              // "data", "instruction", "unified"
  std::uint64_t size_bytes = 0;  // one instance
  int line_bytes = 0;
  int associativity = 0;         // ways; 0 = unknown, -1 = fully associative
  int shared_by_cpus = 0;        // logical CPUs sharing one instance
  int instances = 0;
};

struct CpuInfo {
  std::string vendor;            // "AMD", "Intel", ...
  std::string brand;             // CPUID brand string
  unsigned family = 0, model = 0, stepping = 0;
  bool hypervisor = false;       // CPUID says we run under a hypervisor
  std::uint64_t xcr0 = 0;        // OS-enabled XSAVE state (0 when XGETBV is unavailable)
  bool os_avx = false;           // XCR0 has SSE+AVX state
  bool os_avx512 = false;        // XCR0 has opmask + ZMM state
  bool os_amx = false;           // XCR0 has TILECFG + TILEDATA state (and the kernel granted it)
  // Usable ISA features, lower case asmjit names (e.g. "avx2", "avx512_f", "fma"); a feature the CPU
  // reports but whose register state the OS does not enable is left out and listed in os_disabled.
  std::vector<std::string> features;
  std::vector<std::string> os_disabled;
  int logical_cpus = 0;          // online logical CPUs
  int physical_cores = 0;
  int packages = 0;
  int smt_per_core = 1;
  std::vector<int> core_order;   // logical CPU ids: one per core first, SMT siblings last
  std::vector<CacheLevel> caches;
  double tsc_hz = 0.0;           // measured against CLOCK_MONOTONIC_RAW
  bool tsc_invariant = false;

  bool has(const std::string& feature) const;
};

}  // namespace peakprobe
