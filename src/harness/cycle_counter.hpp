// The time base of every measurement. With perf_event_open's hardware cycle counter (bare metal,
// some VMs) readings are core cycles; otherwise they are TSC ticks, converted to core cycles by the
// add-chain calibration (see harness/clock.hpp).
#pragma once
#include <cstdint>
#include <x86intrin.h>

namespace peakprobe {

inline uint64_t tsc_now() {
  _mm_lfence();  // keep earlier instructions from drifting past the read
  uint64_t t = __rdtsc();
  _mm_lfence();
  return t;
}

class CycleCounter {
 public:
  // Opens the per-thread hardware cycle counter when the kernel allows it; falls back to the TSC.
  // PEAKPROBE_NO_PERF=1 forces the TSC path.
  CycleCounter();
  ~CycleCounter();
  CycleCounter(const CycleCounter&) = delete;
  CycleCounter& operator=(const CycleCounter&) = delete;
  bool counts_cycles() const { return fd_ >= 0; }
  const char* source() const { return fd_ >= 0 ? "perf_event cycles" : "tsc + add-chain calibration"; }
  uint64_t now() const;

 private:
  int fd_ = -1;
};

}  // namespace peakprobe
