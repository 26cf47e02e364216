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

// One item of the register state the OS lets a process use, as the ISA names it (asm/<isa>/host_cpu:
// the control register's value and which register files it enables). Written into the JSON `host`
// object under `key`: an integer, or a bool for a flag.
struct IsaStateItem {
  std::string key;
  std::uint64_t value = 0;
  bool is_flag = false;
};

struct CpuInfo {
  std::string vendor;            // "AMD", "Intel", ...
  std::string brand;             // CPUID brand string
  unsigned family = 0, model = 0, stepping = 0;
  bool hypervisor = false;       // CPUID says we run under a hypervisor
  // Non-empty when the process runs under an instruction-set emulator (qemu-user): what the
  // emulator is, as far as it shows. Code still runs and computes, but its timings mean nothing.
  std::string emulator;
  std::vector<IsaStateItem> isa_state;  // in the ISA's order
  // The same in one line for `peakprobe info`: a label of up to 10 characters and the text.
  std::string isa_state_label, isa_state_text;
  // Usable ISA features, the instruction database's lower-case names; a feature the CPU reports but
  // whose register state the OS does not enable is left out and listed in os_disabled.
  std::vector<std::string> features;
  std::vector<std::string> os_disabled;
  int logical_cpus = 0;          // online logical CPUs
  int physical_cores = 0;
  int packages = 0;
  int smt_per_core = 1;
  std::vector<int> core_order;   // logical CPU ids: one per core first, SMT siblings last
  // The core of each logical CPU (indexed by CPU id; cores numbered in hwloc's order), -1 for a CPU
  // this process may not use; empty when the topology is not known.
  std::vector<int> cpu_core;
  // The kind of core of each logical CPU (indexed by CPU id; hwloc's CPU kinds, as the performance and
  // efficiency cores of a hybrid CPU), -1 where none is named; empty when every core is of one kind.
  std::vector<int> cpu_kind;
  // Measured, not identified: the rate (adds per core cycle) of the clock ruler's wide stream at each
  // core's quietest moment when the cores were ranked at the start (harness/quiet_core.hpp), indexed
  // by CPU id, 0 where not measured; empty without a ranking (one core, or --cpu given by hand). A
  // runner whose own ruler later learns a clearly lower rate on that core learned it while something
  // ran beside it. A runner started later in a long command still judges by this first ranking (its
  // own re-rankings update only its copy): a core that turned busier since is judged the more strictly.
  std::vector<double> wide_rate_seen;
  std::vector<CacheLevel> caches;
  double tsc_hz = 0.0;           // measured against CLOCK_MONOTONIC_RAW
  bool tsc_invariant = false;

  bool has(const std::string& feature) const;
  // The isa_state item of that key, 0 when there is none.
  std::uint64_t isa_state_value(const std::string& key) const;
};

}  // namespace peakprobe
