// OpenCL runs in a worker process (harness/child_process.hpp): a driver that crashes, calls exit(),
// hangs in a kernel or its compiler costs the device's report, never the run. The parent sends the
// job as JSON on the command line; the worker answers with the device list or the report as JSON.
#pragma once
#include <string>
#include <vector>

#include "gpu/cl_probe.hpp"
#include "peakprobe/expected.hpp"
#include "peakprobe/gpu_result.hpp"

namespace peakprobe::gpu {

struct GpuJob {
  bool list = false;  // true: answer the device list; false: measure `device`
  int device = 0;
  GpuOptions options;
};

std::string encode_job(const GpuJob& job);
Expected<GpuJob> decode_job(const std::string& text);

// Each never throws and never lets the runtime touch this process.
Expected<std::vector<GpuDevice>> list_devices_isolated(double time_limit_s);
GpuReport measure_device_isolated(int index, const GpuOptions& options, double time_limit_s);

// The worker's side of `<exe> __worker gpu PARENT_PID JOB`.
int gpu_worker_main(const std::string& job_text, int parent_pid);

}  // namespace peakprobe::gpu
