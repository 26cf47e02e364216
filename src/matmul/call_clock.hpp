// The clock a product's fastest timed call ran at. The core clock moves within a run (3.37-3.75 GHz
// on the Zen 5 VM), and the fastest call is likely one at a high moment: scored against the mean of
// readings before the first and after the last call (about 0.5 s apart), the f32 1024^3 product with
// A read in place read 93.0-98.5% of the FMA roof, up to 100.8% without its interruptions, where its
// kernel alone reaches 98.2% and packing B still costs about 1%. So the clock is read between the
// calls, once a segment of them lasts kClockSegmentMs of wall time (after every call of 10 ms; every
// few of short ones, their cold-cache preparation counted), and the fastest call is scored at the
// readings that bracket its segment.
#pragma once
#include <cstddef>
#include <vector>

#include "harness/clock.hpp"

namespace peakprobe {

inline constexpr double kClockSegmentMs = 5.0;

class CallClock {
 public:
  // The reading right before the first timed call.
  void start(const ClockSample& s);
  // A timed call of `ms` milliseconds, `wall_ms` with what prepared it (at least `ms`).
  void add_call(double ms, double wall_ms = 0);
  // Whether the calls since the last reading last kClockSegmentMs: read the clock now (read()).
  bool due() const;
  // A reading between calls (or after the last): it closes the segment of the calls since the last.
  void read(const ClockSample& s);
  // The readings bracketing the fastest call's segment (clock_reading of them); the source as given.
  // A reading that failed (ghz 0) stands aside for the nearest one on its side that did not.
  // Nothing known (ghz 0) when none did on a side, the segment was never closed, or no call was timed.
  ClockReading fastest(const char* source) const;
  // Segments closed so far.
  size_t segments() const { return readings_.empty() ? 0 : readings_.size() - 1; }

 private:
  std::vector<ClockSample> readings_;  // readings_[s] and readings_[s + 1] bracket segment s
  std::vector<double> ms_;
  std::vector<size_t> segment_;  // each call's segment
  double open_ms_ = 0;           // the open segment's calls, ms
};

}  // namespace peakprobe
