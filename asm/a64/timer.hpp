// The AArch64 timestamp read, inline because timed regions call it: the virtual count of the
// generic timer (cntvct_el0), with an isb on each side so that earlier instructions cannot drift
// past the read and later ones cannot start before it. Its rate (cntfrq_el0, often 24-100 MHz) is
// far below the core clock: the harness measures the rate and sizes its samples to it, as it does
// for x86's TSC. src/ reaches it as "peakprobe_isa/timer.hpp".
#pragma once
#include <cstdint>

namespace peakprobe::isa {

inline uint64_t timestamp() {
  uint64_t t;
  asm volatile("isb\n\tmrs %0, cntvct_el0\n\tisb" : "=r"(t) : : "memory");
  return t;
}

}  // namespace peakprobe::isa
