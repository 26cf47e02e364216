// Console and CSV forms of `peakprobe gpu` results.
#pragma once
#include <ostream>
#include <vector>

#include "peakprobe/gpu_result.hpp"

namespace peakprobe {

// One line per device: index, name, type, platform, units, clock, memory.
void print_gpu_devices(std::ostream& out, const std::vector<GpuDevice>& devices);
// The device, then its compute table (data type by vector width), memory, latency and transfers,
// and every figure that is not ok with its reason.
void print_gpu_report(std::ostream& out, const GpuReport& report);
// One row per figure: device,section,what,width,value,unit,status,reason.
void write_gpu_csv(std::ostream& out, const std::vector<GpuReport>& reports);

}  // namespace peakprobe
