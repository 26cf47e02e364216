// Everything one peakprobe command measured, as reporters receive it.
#pragma once
#include <string>
#include <vector>

#include "peakprobe/cpu_info.hpp"
#include "peakprobe/result.hpp"

namespace peakprobe {

inline constexpr const char* kSchema = "peakprobe/1";

struct RunDocument {
  std::string command;            // the command line that produced it
  std::string version;            // peakprobe version
  std::string started_utc;        // ISO 8601
  CpuInfo host;
  ClockReading clock;             // calibration at the start of the run
  std::vector<ProbeResult> results;
};

}  // namespace peakprobe
