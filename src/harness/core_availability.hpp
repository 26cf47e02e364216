// The share of wall time a core really runs the calling thread. A guest cannot always see the time
// its host takes a virtual CPU away: on a KVM guest (Zen 5, 2 vCPUs) /proc/stat's steal column read 0
// while the vCPU lost about 5% of every millisecond, one 30-60 us stop each. Any timing of
// milliseconds pays that; a probe's microsecond samples mostly slip between the stops, so a product
// timed over milliseconds cannot reach a roof measured from them. The scan reads the timestamp in a
// tight loop on the pinned core: a step much longer than the loop's own is time the thread did not
// run (an interrupt, another task, the host). It does not say who took it.
#pragma once
#include <cstdint>
#include <vector>

#include "peakprobe/core_availability.hpp"

namespace peakprobe {

// The shortest step counted as an interruption: kStepsPerThreshold times the loop's median step,
// and never under kShortestInterruptionNs (a timer interrupt on bare metal costs about a microsecond;
// a step below this is the loop itself or the timestamp's own jitter).
inline constexpr double kStepsPerThreshold = 50;
inline constexpr double kShortestInterruptionNs = 200;
uint64_t interruption_threshold_ticks(uint64_t median_step_ticks, double timestamp_hz);

// The summary of a scan: `gaps` are the steps at or over `threshold_ticks`, `scanned_ticks` the wall
// time the scan covered, all in ticks of a `timestamp_hz` timestamp.
CoreAvailability availability_from_gaps(std::vector<uint64_t> gaps, uint64_t scanned_ticks, uint64_t threshold_ticks,
                                        double timestamp_hz);

// The interruptions a call of `call_ms` cannot slip between: the whole periods of the scanned rate it
// spans, each of the median length, and never more time than the scan's lost share of the call. The
// fastest of many calls shorter than one period ran between them (0); one of ten periods pays about
// ten. Periodic stops are what the KVM guest showed (a host tick about every millisecond); stops at
// random would leave the fastest call fewer, so this is an upper bound there.
struct UnavoidableStops {
  int count = 0;
  double ms = 0;
};
UnavoidableStops unavoidable_interruptions(const CoreAvailability& a, double call_ms);

// Of two scans (before and after a timing), the one whose core ran the thread the larger share of
// the time; a scan that did not happen gives way. The fastest of many calls ran in the quieter
// stretches: a busy stretch met by one scan says nothing of it.
const CoreAvailability& quieter(const CoreAvailability& a, const CoreAvailability& b);

// Of the cores of a team scanned side by side, the one whose interruptions a call of `call_ms` can
// least avoid (the most unavoidable_interruptions time); where none has any, the one that ran its
// thread the smallest share of the time. An empty scan when none was scanned. Threads that meet at a
// join wait for the slowest, so a call on several cores pays that core's stops at least once.
CoreAvailability least_available(const std::vector<CoreAvailability>& scans, double call_ms);

// Scans for `ms` of wall time on the calling thread's core (pin it first). `timestamp_hz`: the rate
// of the ISA timestamp (CpuInfo::tsc_hz). A share of 0 when it cannot scan (no rate, no time).
CoreAvailability scan_core_availability(double ms, double timestamp_hz);

// Each of `cpus` in turn, the calling thread pinned there for its scan (its own CPU set restored
// after); a CPU it cannot be pinned to is left out.
std::vector<CoreAvailability> scan_cores(const std::vector<int>& cpus, double ms, double timestamp_hz);

}  // namespace peakprobe
