// Results of memory probes: bandwidth kernels by working-set size, load-to-use latency by size, and
// the cache levels found from a sweep's curve.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "peakprobe/result.hpp"

namespace peakprobe {

struct BandwidthResult {
  std::string kernel;              // load, store, copy, triad, update, store_nt, copy_nt, triad_nt
  std::string isa;                 // the kernel's vector width by name (Target::width_name; "scalar" for general registers)
  uint64_t size_bytes = 0;         // total working set (all arrays of the kernel together)
  int threads = 1;
  double bytes_per_iteration = 0;  // instruction bytes per loop iteration (loads + stores)
  std::optional<double> gbps;      // 10^9 bytes per second, all threads: bytes / (latest end - earliest start)
  std::optional<double> bytes_per_cycle;  // per core, at the measured clock
  Stats gbps_stats;                // over repetitions (min/median/max of GB/s; spread = (max - median)/median)
  std::vector<double> per_thread_gbps;    // each thread's own rate (imbalance check)
  std::vector<double> per_thread_ghz;     // each thread's core clock around its run (threads > 1 and all known)
  double imbalance = 0;            // (fastest - slowest) / fastest thread
  ClockReading clock;
  Status status = Status::ok;
  std::string reason;
  std::string repro;
  // A thread waited for its CPU (another program ran there) in every repetition: the rate is the
  // share of CPU time the threads got, not what memory gives (status mistrusted, the reason says so).
  bool waited_every_repetition = false;
};

// Whether a row bounds what memory gives, so that it may set a ceiling, a point of a curve or a
// level: it has a rate, was neither refused nor failed, and measured memory, not an emulator
// (reason "emulated: ...") nor the CPU time another program left it. An unsteady row still
// bounds memory: its best repetition ran at that rate.
inline bool bounds_memory(const BandwidthResult& r) {
  if (r.status == Status::error || r.status == Status::skipped || !r.gbps || !(*r.gbps > 0)) return false;
  if (r.status == Status::mistrusted && r.reason.rfind("emulated", 0) == 0) return false;
  return !r.waited_every_repetition;
}

struct LatencyResult {
  std::string mode;                // random, page-local
  std::string pages;               // requested: 4k or 2m
  std::string pages_granted;       // what the kernel gave (from /proc/self/smaps): 4k, 2m, mixed
  uint64_t size_bytes = 0;
  int chains = 1;                  // independent pointer chases in flight (memory-level parallelism)
  std::optional<double> latency_ns;      // per load of one chain
  std::optional<double> latency_cycles;  // at the measured clock
  Stats ns_stats;
  ClockReading clock;
  Status status = Status::ok;
  std::string reason;
  std::string repro;
};

struct CacheLevelEdge {
  std::string name;                // L1, L2, L3, DRAM (from the match with the reported caches)
  std::optional<uint64_t> edge_bytes;   // where this level's plateau ends (null for the last, DRAM)
  double gbps = 0;                 // plateau bandwidth (median of its points)
  std::optional<uint64_t> reported_bytes;  // the size the OS reports for this level (per the threads used)
  std::string note;                // disagreement between curve and report, said plainly
};

}  // namespace peakprobe
