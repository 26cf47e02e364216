#include "harness/core_availability.hpp"

#include <sched.h>

#include <algorithm>
#include <cmath>

#include "harness/cycle_counter.hpp"
#include "harness/pin.hpp"

namespace peakprobe {

uint64_t interruption_threshold_ticks(uint64_t median_step_ticks, double timestamp_hz) {
  const double floor_ticks = std::ceil(kShortestInterruptionNs * timestamp_hz / 1e9);
  return std::max<uint64_t>({uint64_t(kStepsPerThreshold * double(median_step_ticks)), uint64_t(floor_ticks), 2});
}

CoreAvailability availability_from_gaps(std::vector<uint64_t> gaps, uint64_t scanned_ticks, uint64_t threshold_ticks,
                                        double timestamp_hz) {
  CoreAvailability a;
  if (scanned_ticks == 0 || !(timestamp_hz > 0)) return a;
  const double us_per_tick = 1e6 / timestamp_hz;
  uint64_t lost = 0;
  for (uint64_t g : gaps) lost += g;
  lost = std::min(lost, scanned_ticks);
  a.share = 1.0 - double(lost) / double(scanned_ticks);
  a.scanned_ms = double(scanned_ticks) * us_per_tick * 1e-3;
  a.interruptions = int(gaps.size());
  a.threshold_us = double(threshold_ticks) * us_per_tick;
  if (!gaps.empty()) {
    std::sort(gaps.begin(), gaps.end());
    const size_t n = gaps.size();
    const double median = n % 2 ? double(gaps[n / 2]) : 0.5 * double(gaps[n / 2 - 1] + gaps[n / 2]);
    a.median_interruption_us = median * us_per_tick;
    a.longest_interruption_us = double(gaps.back()) * us_per_tick;
  }
  return a;
}

UnavoidableStops unavoidable_interruptions(const CoreAvailability& a, double call_ms) {
  UnavoidableStops s;
  if (!(a.scanned_ms > 0) || !(call_ms > 0) || a.interruptions <= 0) return s;
  const double per_ms = double(a.interruptions) / a.scanned_ms;
  s.count = int(std::floor(call_ms * per_ms));
  s.ms = std::min(double(s.count) * a.median_interruption_us * 1e-3, std::max(0.0, 1.0 - a.share) * call_ms);
  return s;
}

const CoreAvailability& quieter(const CoreAvailability& a, const CoreAvailability& b) {
  if (!(a.scanned_ms > 0)) return b;
  if (!(b.scanned_ms > 0)) return a;
  return b.share > a.share ? b : a;
}

CoreAvailability least_available(const std::vector<CoreAvailability>& scans, double call_ms) {
  CoreAvailability least;
  double least_ms = 0;
  for (const CoreAvailability& a : scans) {
    if (!(a.scanned_ms > 0)) continue;
    const double lost = unavoidable_interruptions(a, call_ms).ms;
    if (!(least.scanned_ms > 0) || lost > least_ms || (lost == least_ms && a.share < least.share)) {
      least = a;
      least_ms = lost;
    }
  }
  return least;
}

CoreAvailability scan_core_availability(double ms, double timestamp_hz) {
  if (!(ms > 0) || !(timestamp_hz > 0)) return {};
  // The loop's own step, from a short run of it.
  constexpr int kSteps = 2047;
  std::vector<uint64_t> steps(kSteps);
  uint64_t prev = tsc_now();
  for (uint64_t& s : steps) {
    const uint64_t t = tsc_now();
    s = t >= prev ? t - prev : 0;  // a timestamp that stepped back (another core's) took no time here
    prev = t;
  }
  std::nth_element(steps.begin(), steps.begin() + kSteps / 2, steps.end());
  const uint64_t threshold = interruption_threshold_ticks(steps[kSteps / 2], timestamp_hz);
  // Written before the scan: a first touch of its pages inside the loop would count as a stop.
  std::vector<uint64_t> gaps(4096, 0);
  size_t found = 0;
  const uint64_t start = tsc_now();
  const uint64_t end = start + uint64_t(std::ceil(ms * 1e-3 * timestamp_hz));
  uint64_t ran = 0;  // ticks between reads that went forwards: the scanned time, steps back left out
  prev = start;
  while (prev < end) {
    const uint64_t t = tsc_now();
    if (t < prev) {  // stepped back: moved to a core whose timestamp is behind; start again from it
      prev = t;
      continue;
    }
    const uint64_t step = t - prev;
    ran += step;
    if (step >= threshold) {
      if (found < gaps.size()) gaps[found] = step;
      else gaps.push_back(step);
      ++found;
    }
    prev = t;
  }
  gaps.resize(found);
  CoreAvailability a = availability_from_gaps(std::move(gaps), ran, threshold, timestamp_hz);
  a.cpu = sched_getcpu();  // where it ran (pinned: the CPU asked for)
  return a;
}

std::vector<CoreAvailability> scan_cores(const std::vector<int>& cpus, double ms, double timestamp_hz) {
  std::vector<CoreAvailability> out;
  AffinityGuard caller_affinity;
  for (int cpu : cpus) {
    if (!pin_current_thread(cpu)) continue;
    out.push_back(scan_core_availability(ms, timestamp_hz));
  }
  return out;
}

}  // namespace peakprobe
