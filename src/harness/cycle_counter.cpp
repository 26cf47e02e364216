#include "harness/cycle_counter.hpp"

#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>

namespace peakprobe {

CycleCounter::CycleCounter() {
  const char* off = std::getenv("PEAKPROBE_NO_PERF");
  if (off && std::strcmp(off, "0") != 0) return;
  perf_event_attr attr;
  std::memset(&attr, 0, sizeof(attr));
  attr.size = sizeof(attr);
  attr.type = PERF_TYPE_HARDWARE;
  attr.config = PERF_COUNT_HW_CPU_CYCLES;
  attr.exclude_kernel = 1;  // allowed at perf_event_paranoid <= 2 without privileges
  attr.exclude_hv = 1;
  fd_ = int(syscall(SYS_perf_event_open, &attr, 0, -1, -1, 0));
  if (fd_ < 0) return;
  // A counter that opens but never advances (some hypervisors) is no counter.
  uint64_t a = now();
  volatile uint64_t sink = 0;
  for (int i = 0; i < 100000; ++i) sink = sink + uint64_t(i);
  if (now() <= a) {
    close(fd_);
    fd_ = -1;
  }
}

CycleCounter::~CycleCounter() {
  if (fd_ >= 0) close(fd_);
}

uint64_t CycleCounter::now() const {
  if (fd_ < 0) return tsc_now();
  uint64_t v = 0;
  if (read(fd_, &v, sizeof(v)) != ssize_t(sizeof(v))) return 0;
  return v;
}

}  // namespace peakprobe
