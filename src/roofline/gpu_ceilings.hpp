// The roofline of an OpenCL device, in the same ceiling table as the CPU's (include/peakprobe/ceiling.hpp),
// so that `score` places a kernel on a device's roofs exactly as on the CPU's.
//
// The device is one "thread" (threads 1): its figures are already the whole device's. Compute
// ceilings: one per checked `ok` dtype and vector width, `isa` the OpenCL width ("x1" .. "x16").
// Memory ceilings: global memory is level "DRAM" (the device's own memory, what `score` assumes without
// --level), local memory level "local"; the kernels keep the CPU's names where they mean the same
// ("read" -> "load", "write" -> "store", "copy"), transfers are level "host" ("host_to_device",
// "device_to_host"). Per-cycle figures are per compute unit at the clock the driver reports.
#pragma once
#include "peakprobe/ceiling.hpp"
#include "peakprobe/gpu_result.hpp"

namespace peakprobe {

CeilingTable gpu_ceiling_table(const GpuReport& report);

}  // namespace peakprobe
