// The time base of every measurement. With perf_event_open's hardware cycle counter (bare metal,
// some VMs) readings are core cycles; otherwise they are TSC ticks, converted to core cycles by the
// add-chain calibration (see harness/clock.hpp).
#pragma once
#include <cstdint>

#include "peakprobe_isa/timer.hpp"

namespace peakprobe {

// The ISA's constant-rate timestamp (Target docs say which counter), inline: timed regions read it.
inline uint64_t tsc_now() { return isa::timestamp(); }

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
