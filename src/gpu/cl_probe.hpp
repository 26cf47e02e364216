// Measures one OpenCL device: compute peaks per data type and vector width, global and local memory
// bandwidth, load latency by pointer chase, host<->device transfer. Every kernel's result is checked
// against the host's own computation; every figure is the median of timed repetitions (OpenCL
// profiling events), with its spread. Runs in a worker process (gpu_worker.hpp): nothing a driver
// does reaches the measuring process.
#pragma once
#include <string>
#include <vector>

#include "peakprobe/expected.hpp"
#include "peakprobe/gpu_result.hpp"

namespace peakprobe::gpu {

struct GpuOptions {
  std::vector<std::string> dtypes;   // empty: every type of compute_dtypes()
  std::vector<int> widths;           // empty: 1 2 4 8 16
  bool compute = true, memory = true, latency = true, transfer = true;
  double kernel_seconds = 0.02;      // each timed kernel run lasts about this long
  int min_repetitions = 5;
  int max_repetitions = 20;
  double min_total_seconds = 0.1;    // per figure: repetitions continue until this much was timed
  uint64_t buffer_bytes = 0;         // global-memory buffers; 0: 1 GiB on a GPU, 256 MiB otherwise
  // Tests only: OpenCL C appended to every compute program (a kernel that fails to build shows
  // that the runtime's build log reaches the user).
  std::string extra_compute_source;
  // Tests only: measure the dot-product types on a device without cl_khr_integer_dot_product, with
  // ordinary integer arithmetic in place of the built-in (kEmulateDotDefine); each such row says so.
  bool emulate_integer_dot = false;
};

// Every device of every platform, numbered as `gpu list` prints them. An empty list is not an
// error (a loader with no driver); an error is a missing loader or a failing runtime.
Expected<std::vector<GpuDevice>> list_devices();

// Measures device `index` of list_devices(). The report's status is error (with the runtime's
// message, a kernel's build log) when the device cannot be used at all; single figures that fail
// carry their own status.
GpuReport measure_device(int index, const GpuOptions& options);

// A figure is mistrusted when its best repetition ran this much faster than the median (the median
// is the figure; a device that gave one figure once and another typically is not measured yet).
inline constexpr double kGpuRepeatLimit = 0.15;

}  // namespace peakprobe::gpu
