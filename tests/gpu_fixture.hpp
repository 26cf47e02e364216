// A small synthetic GPU report for the JSON and console tests.
#pragma once
#include "peakprobe/gpu_result.hpp"

namespace peakprobe::test {

inline GpuReport sample_gpu_report() {
  GpuReport r;
  r.device.index = 1;
  r.device.platform = "Example Platform";
  r.device.name = "Example GPU, rev \"2\"";
  r.device.vendor = "Example";
  r.device.type = "gpu";
  r.device.compute_units = 4;
  r.device.clock_mhz = 1000;
  r.device.global_mem_bytes = 1ull << 30;
  r.device.local_mem_bytes = 48 << 10;
  r.device.max_alloc_bytes = 256ull << 20;
  r.device.max_work_group_size = 256;
  r.device.fp64 = true;
  r.device.extensions = {"cl_khr_fp64", "cl_khr_icd"};
  GpuComputeResult c;
  c.dtype = "f32";
  c.width = 4;
  c.gops = 1234.5;
  c.gops_stats = {1200, 1234.5, 1250, 0.03, 5};
  c.bound_gops = 2048;
  c.work_items = 2048;
  c.checked = true;
  r.compute.push_back(c);
  c.dtype = "f16";
  c.status = Status::skipped;
  c.reason = "the device does not offer cl_khr_fp16";
  c.gops = 0;
  c.checked = false;
  r.compute.push_back(c);
  GpuMemoryResult m;
  m.kernel = "read";
  m.width = 4;
  m.bytes = 256ull << 20;
  m.gbps = 512.25;
  m.gbps_stats = {500, 512.25, 520, 0.02, 5};
  m.checked = true;
  r.memory.push_back(m);
  m.kernel = "host_to_device";
  m.width = 0;
  m.gbps = 12.5;
  m.status = Status::mistrusted;
  m.reason = "repetitions disagree: the best ran 20.0% faster than the median";
  r.memory.push_back(m);
  GpuLatencyResult l;
  l.space = "global";
  l.bytes = 256ull << 20;
  l.ns = 480.5;
  l.ns_stats = {470, 480.5, 500, 0.02, 5};
  l.checked = true;
  r.latency.push_back(l);
  r.seconds = 3.25;
  return r;
}

}  // namespace peakprobe::test
