#include "roofline/gpu_ceilings.hpp"

#include <string>

#include <fmt/format.h>

#include "gpu/cl_kernels.hpp"
#include "roofline/ceilings.hpp"

namespace peakprobe {

namespace {
// The CPU table's kernel name for a device memory kernel, and the level it belongs to.
std::pair<std::string, std::string> level_and_kernel(const std::string& kernel) {
  if (kernel == "read") return {"DRAM", "load"};
  if (kernel == "write") return {"DRAM", "store"};
  if (kernel == "copy") return {"DRAM", "copy"};
  if (kernel == "local_read") return {"local", "load"};
  if (kernel == "host_to_device" || kernel == "device_to_host" || kernel == "host_to_device_pinned" ||
      kernel == "device_to_host_pinned")
    return {"host", kernel};
  return {"", ""};
}
}  // namespace

CeilingTable gpu_ceiling_table(const GpuReport& report) {
  CeilingTable t;
  if (report.status != Status::ok) return t;
  const double ghz = report.device.clock_mhz > 0 ? report.device.clock_mhz / 1000.0 : 0.0;
  const int units = report.device.compute_units > 0 ? report.device.compute_units : 1;
  for (const GpuComputeResult& c : report.compute) {
    if (c.status != Status::ok || !(c.gops > 0)) continue;
    ComputeCeiling x;
    x.dtype = c.dtype;
    x.isa = fmt::format("x{}", c.width);
    x.threads = 1;
    x.gops = c.gops;
    x.integer = c.integer;
    x.clock_ghz = ghz;
    x.ops_per_cycle = ghz > 0 ? c.gops / ghz / units : 0.0;
    x.source = fmt::format("OpenCL multiply-add chains, {} x{}", c.dtype, c.width);
    if (const gpu::ClDtype* d = gpu::find_dtype(c.dtype); d && d->is_dot()) {
      // An i8 roof, as the CPU table's i8 ceiling is its 8-bit dot product (ceilings.cpp), so a
      // kernel scored as i8 meets the device's fastest 8-bit instruction. Unlike the CPU table, the
      // byte multiply-add rows stay i8 roofs too (a device without the extension has only those).
      x.dtype = "i8";
      x.isa = fmt::format("dot4 {}", d->dot);
      x.source = fmt::format("OpenCL 4x8-bit dot-product chains (cl_khr_integer_dot_product), {}", c.dtype);
    }
    t.compute.push_back(x);
  }
  // Per level and kernel, the best width (the CPU table holds one row per level and kernel too).
  for (const GpuMemoryResult& m : report.memory) {
    if (m.status != Status::ok || !(m.gbps > 0)) continue;
    const auto [level, kernel] = level_and_kernel(m.kernel);
    if (level.empty()) continue;
    MemoryCeiling* same = nullptr;
    for (auto& e : t.memory)
      if (e.level == level && e.kernel == kernel) same = &e;
    if (same && same->gbps >= m.gbps) continue;
    MemoryCeiling x;
    x.level = level;
    x.kernel = kernel;
    x.threads = 1;
    x.gbps = m.gbps;
    x.bytes_per_cycle = ghz > 0 ? m.gbps / ghz / units : 0.0;
    x.size_bytes = m.bytes;
    if (same) *same = x;
    else t.memory.push_back(x);
  }
  t.ridges = ridge_points(t.compute, t.memory);
  return t;
}

}  // namespace peakprobe
