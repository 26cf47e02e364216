// Thread placement: probes run pinned so the clock, caches and timer belong to one core.
#pragma once
#include <string>

namespace peakprobe {

// Pins the calling thread to logical CPU `cpu`. Returns false (and fills `error`) when not allowed.
bool pin_current_thread(int cpu, std::string* error = nullptr);
int current_cpu();
// Is `cpu` in this process's allowed set?
bool cpu_allowed(int cpu);

// Keeps the calling thread's CPU set and puts it back when it goes out of scope. Threads a pinned
// thread creates inherit its one-CPU set, so code that pins the main thread for a while (the GEMM,
// a probe) must give it back before a library (OpenBLAS, BLIS) starts its own threads.
class AffinityGuard {
 public:
  AffinityGuard();
  ~AffinityGuard();
  AffinityGuard(const AffinityGuard&) = delete;
  AffinityGuard& operator=(const AffinityGuard&) = delete;

 private:
  unsigned char saved_[128];  // a cpu_set_t (1024 CPUs), kept opaque to keep <sched.h> out
  bool ok_ = false;
};

}  // namespace peakprobe
