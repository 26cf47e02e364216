// Memory bandwidth and latency measurements: generated kernels run by a team of pinned threads, each
// on buffers it touched first, started together at a barrier.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "peakprobe/cpu_info.hpp"
#include "peakprobe/expected.hpp"
#include "peakprobe/mem_result.hpp"

namespace peakprobe {

struct BandwidthRequest {
  std::string kernel = "load";
  int width_bits = 0;        // 0 = the widest this CPU runs
  uint64_t size_bytes = 0;   // total working set of all threads and arrays
  int threads = 1;
};

struct LatencyRequest {
  uint64_t size_bytes = 0;
  std::string mode = "random";  // random | page-local
  std::string pages = "4k";     // 4k | 2m
  int chains = 1;
};

// Bytes per cycle of one core from an all-threads rate: gbps over the sum of the threads' own clocks
// (each core's cycles in the common span) when every one is known, else over `threads` times the
// first core's clock; none without a clock.
std::optional<double> bytes_per_core_cycle(double gbps, double first_ghz, int threads,
                                           const std::vector<double>& per_thread_ghz);

// Whether the best of a bandwidth point's repetitions has settled: at least 8 spans (seconds, of the
// repetitions no thread waited in), and the shortest half of them within 0.5% of the shortest (the
// median, for an even count the later of the middle two). A point stops there instead of running all
// of its repetitions.
bool best_settled(std::vector<double> spans);

class MemRunner {
 public:
  static Expected<std::unique_ptr<MemRunner>> create(const CpuInfo& cpu, int first_cpu);
  ~MemRunner();
  BandwidthResult bandwidth(const BandwidthRequest& req);
  LatencyResult latency(const LatencyRequest& req);
  const ClockReading& start_clock() const;
  // Where the machine showed its last cache level ending, when sooner than the OS reports (0: as
  // reported). The latency warm-up then evicts what that cache holds, not what the OS says it could.
  void set_last_level_end(uint64_t bytes);

  // The largest working set the coming latency requests ask for (0: none known). The first request
  // then maps that much and the others chase through the first bytes of the same mapping: every new
  // mapping of 4 KiB pages is faulted in anew (in a VM whose host takes freed pages back, 1.3 s per
  // 512 MiB), so a sweep that mapped each size afresh paid for about twice its largest size.
  void set_latency_top(uint64_t bytes);

 private:
  struct Impl;
  explicit MemRunner(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace peakprobe
