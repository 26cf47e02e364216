// Results of `peakprobe gpu`: OpenCL devices, their compute peaks per data type and vector width,
// memory bandwidth and latency, and host<->device transfer (docs/gpu.md).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "peakprobe/result.hpp"

namespace peakprobe {

inline constexpr const char* kGpuSchema = "peakprobe-gpu/1";

struct GpuDevice {
  int index = 0;                 // position in `peakprobe gpu list` (platforms in order, then devices)
  std::string platform, name, vendor, type;  // type: gpu, cpu, accelerator, other
  std::string driver_version, device_version, opencl_c_version;
  int compute_units = 0;
  int clock_mhz = 0;             // CL_DEVICE_MAX_CLOCK_FREQUENCY as the driver reports it
  uint64_t global_mem_bytes = 0, local_mem_bytes = 0, max_alloc_bytes = 0;
  uint64_t max_work_group_size = 0;
  bool fp16 = false, fp64 = false;
  std::vector<std::string> extensions;
};

// Independent multiply-add chains in every work-item, enough work-groups to fill the device.
struct GpuComputeResult {
  std::string dtype;             // f32 f64 f16 i32 i16 i8
  int width = 1;                 // OpenCL vector width (1, 2, 4, 8, 16)
  bool integer = false;
  double gops = 0;               // GFLOP/s (float types) or GOP/s: 2 per multiply-add, median of repetitions
  Stats gops_stats;              // over repetitions
  double bound_gops = 0;         // the device's own upper bound (docs/gpu.md): beyond it, mistrusted
  uint64_t work_items = 0;
  bool checked = false;          // the kernel's results matched the host's
  Status status = Status::ok;
  std::string reason;
};

// Bandwidth of a kernel over a buffer: global read, write, copy, local read; or a host<->device
// transfer (host_to_device, device_to_host).
struct GpuMemoryResult {
  std::string kernel;
  int width = 0;                 // float vector width of each access (0 for transfers)
  uint64_t bytes = 0;            // buffer size (per array)
  double gbps = 0;               // 10^9 bytes moved per second, median of repetitions
  Stats gbps_stats;
  bool checked = false;
  Status status = Status::ok;
  std::string reason;
};

// Dependent loads along a random cycle through a buffer, one work-item.
struct GpuLatencyResult {
  std::string space;             // global, local
  uint64_t bytes = 0;
  double ns = 0;                 // per load, median of repetitions
  Stats ns_stats;
  bool checked = false;
  Status status = Status::ok;
  std::string reason;
};

struct GpuReport {
  GpuDevice device;
  Status status = Status::ok;    // skipped: no runtime or no device; error: the runtime failed
  std::string reason;
  std::vector<GpuComputeResult> compute;
  std::vector<GpuMemoryResult> memory;
  std::vector<GpuLatencyResult> latency;
  double seconds = 0;            // wall time of the measurement
};

}  // namespace peakprobe
