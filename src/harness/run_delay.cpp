#include "harness/run_delay.hpp"

#include <sys/syscall.h>
#include <unistd.h>

#include <fstream>
#include <string>

namespace peakprobe {

int current_tid() { return int(::syscall(SYS_gettid)); }

std::optional<uint64_t> run_delay_ns(int tid) {
  std::ifstream in("/proc/self/task/" + std::to_string(tid) + "/schedstat");
  uint64_t on_cpu = 0, waited = 0;
  if (!(in >> on_cpu >> waited)) return std::nullopt;
  return waited;
}

RunDelayWatch::RunDelayWatch(std::vector<int> tids) : tids_(std::move(tids)) {
  start_.reserve(tids_.size());
  for (int tid : tids_) start_.push_back(run_delay_ns(tid));
}

RunDelayWatch::Longest RunDelayWatch::longest_wait() const {
  Longest l;
  for (size_t i = 0; i < tids_.size(); ++i) {
    if (!start_[i]) continue;
    const std::optional<uint64_t> now = run_delay_ns(tids_[i]);
    if (!now) continue;
    const uint64_t waited = *now >= *start_[i] ? *now - *start_[i] : 0;
    if (l.index < 0 || waited > l.ns) l = {waited, int(i)};
  }
  return l;
}

}  // namespace peakprobe
