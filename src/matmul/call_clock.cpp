#include "matmul/call_clock.hpp"

#include <algorithm>

namespace peakprobe {

void CallClock::start(const ClockSample& s) {
  readings_.assign(1, s);
  ms_.clear();
  segment_.clear();
  open_ms_ = 0;
}

void CallClock::add_call(double ms, double wall_ms) {
  ms_.push_back(ms);
  segment_.push_back(segments());
  open_ms_ += std::max(ms, wall_ms);
}

bool CallClock::due() const { return !readings_.empty() && open_ms_ >= kClockSegmentMs; }

void CallClock::read(const ClockSample& s) {
  if (readings_.empty()) return;
  readings_.push_back(s);
  open_ms_ = 0;
}

ClockReading CallClock::fastest(const char* source) const {
  if (ms_.empty()) return {};
  const size_t i = size_t(std::min_element(ms_.begin(), ms_.end()) - ms_.begin());
  const size_t s = segment_[i];
  if (s + 1 >= readings_.size()) return {};  // its segment was never closed
  // The nearest reading on each side that did not fail.
  size_t b = s, a = s + 1;
  while (b > 0 && readings_[b].ghz <= 0) --b;
  while (a + 1 < readings_.size() && readings_[a].ghz <= 0) ++a;
  if (readings_[b].ghz <= 0 || readings_[a].ghz <= 0) return {};
  return clock_reading(source, readings_[b], readings_[a]);
}

}  // namespace peakprobe
