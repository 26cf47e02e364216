#include "harness/run_delay.hpp"

#include <sys/syscall.h>
#include <unistd.h>

#include <fstream>
#include <string>

namespace peakprobe {

int current_tid() { return int(::syscall(SYS_gettid)); }

std::optional<SchedStat> sched_stat(int tid) {
  std::ifstream in("/proc/self/task/" + std::to_string(tid) + "/schedstat");
  SchedStat s;
  if (!(in >> s.on_cpu_ns >> s.waited_ns)) return std::nullopt;
  return s;
}

std::optional<uint64_t> run_delay_ns(int tid) {
  const std::optional<SchedStat> s = sched_stat(tid);
  if (!s) return std::nullopt;
  return s->waited_ns;
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
