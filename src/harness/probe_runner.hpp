// Measures one instruction form: latency chain, throughput with K swept upward, the core clock just
// before and after, and the trust checks that decide between ok and mistrusted.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "peakprobe/cpu_info.hpp"
#include "peakprobe/expected.hpp"
#include "peakprobe/probe_spec.hpp"
#include "peakprobe/result.hpp"

namespace peakprobe {

struct ProbeOptions {
  int cpu = -1;                 // logical CPU to pin to; -1 = first CPU of the core order
  int threads = 1;              // >1: the throughput stream also runs on this many pinned cores at once
  double drift_limit = 0.02;    // clock change across a probe that marks it mistrusted
  double spread_limit = 0.10;   // (median - min) / min of the timings that marks it mistrusted
  std::string repro_extra;      // options appended to each repro line
};

class ProbeRunner {
 public:
  static Expected<std::unique_ptr<ProbeRunner>> create(const CpuInfo& cpu, const ProbeOptions& options);
  ~ProbeRunner();
  ProbeResult run(const ProbeSpec& spec);
  // The calibration taken when the runner started (after warm-up).
  const ClockReading& start_clock() const;
  int cpu() const;

 private:
  struct Impl;
  explicit ProbeRunner(std::unique_ptr<Impl> impl);
  ProbeResult run_once(const ProbeSpec& spec);
  std::unique_ptr<Impl> impl_;
};

// The features `spec` needs that `cpu` does not offer, with a reason for each ("avx512_fp16").
std::vector<std::string> missing_features(const CpuInfo& cpu, const std::vector<std::string>& needed);

}  // namespace peakprobe
