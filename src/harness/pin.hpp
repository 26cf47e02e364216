// Thread placement: probes run pinned so the clock, caches and timer belong to one core.
#pragma once
#include <string>

namespace peakprobe {

// Pins the calling thread to logical CPU `cpu`. Returns false (and fills `error`) when not allowed.
bool pin_current_thread(int cpu, std::string* error = nullptr);
int current_cpu();
// Is `cpu` in this process's allowed set?
bool cpu_allowed(int cpu);

}  // namespace peakprobe
