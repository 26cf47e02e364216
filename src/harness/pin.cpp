#include "harness/pin.hpp"

#include <pthread.h>
#include <sched.h>

#include <cstring>

namespace peakprobe {

bool pin_current_thread(int cpu, std::string* error) {
  if (cpu < 0 || cpu >= CPU_SETSIZE) {
    if (error) *error = "CPU " + std::to_string(cpu) + " is out of range";
    return false;
  }
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  int rc = pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
  if (rc != 0) {
    if (error) *error = "cannot pin to CPU " + std::to_string(cpu) + ": " + std::strerror(rc);
    return false;
  }
  return true;
}

int current_cpu() { return sched_getcpu(); }

bool cpu_allowed(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) != 0) return false;
  return cpu >= 0 && cpu < CPU_SETSIZE && CPU_ISSET(cpu, &set);
}

static_assert(sizeof(cpu_set_t) <= 128, "AffinityGuard::saved_ must hold a cpu_set_t");

AffinityGuard::AffinityGuard() {
  ok_ = pthread_getaffinity_np(pthread_self(), sizeof(cpu_set_t), reinterpret_cast<cpu_set_t*>(saved_)) == 0;
}

AffinityGuard::~AffinityGuard() {
  if (ok_) pthread_setaffinity_np(pthread_self(), sizeof(cpu_set_t), reinterpret_cast<const cpu_set_t*>(saved_));
}

}  // namespace peakprobe
