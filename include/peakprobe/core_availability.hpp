// How much of the wall time a core gave the thread that watched it (harness/core_availability.hpp
// measures it). Reported beside products timed over milliseconds: a probe's short samples can dodge
// an interruption, a long timed call cannot.
#pragma once

namespace peakprobe {

struct CoreAvailability {
  int cpu = -1;           // the logical CPU scanned; -1 when not known
  double share = 0;       // of the scanned wall time, the part the scanning thread ran; 0: not scanned
  double scanned_ms = 0;  // wall time scanned
  int interruptions = 0;  // steps of the timestamp longer than the threshold: time taken away
  double median_interruption_us = 0, longest_interruption_us = 0;
  double threshold_us = 0;  // a step at least this long counted as an interruption
};

}  // namespace peakprobe
