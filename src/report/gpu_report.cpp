#include "report/gpu_report.hpp"

#include <algorithm>
#include <map>

#include <fmt/format.h>

namespace peakprobe {
namespace {

std::string mib(uint64_t b) {
  if (b >= (1ull << 30)) return fmt::format("{:.1f} GiB", double(b) / double(1ull << 30));
  if (b >= (1ull << 20)) return fmt::format("{:.0f} MiB", double(b) / double(1ull << 20));
  return fmt::format("{:.0f} KiB", double(b) / 1024.0);
}

const char* mark(Status s) {
  switch (s) {
    case Status::ok: return " ";
    case Status::skipped: return "-";
    case Status::mistrusted: return "?";
    case Status::error: return "!";
  }
  return " ";
}

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

}  // namespace

void print_gpu_devices(std::ostream& out, const std::vector<GpuDevice>& devices) {
  if (devices.empty()) {
    out << "no OpenCL device\n";
    return;
  }
  for (const GpuDevice& d : devices) {
    out << fmt::format("{:>2}  {} ({}, {})\n", d.index, d.name, d.type, d.vendor);
    out << fmt::format("    platform {}, driver {}, {}\n", d.platform, d.driver_version, d.device_version);
    out << fmt::format("    {} compute units at {} MHz, {} global ({} per buffer), {} local, work-groups up to {}, "
                       "fp16 {}, fp64 {}\n",
                       d.compute_units, d.clock_mhz, mib(d.global_mem_bytes), mib(d.max_alloc_bytes),
                       mib(d.local_mem_bytes), d.max_work_group_size, d.fp16 ? "yes" : "no", d.fp64 ? "yes" : "no");
  }
}

void print_gpu_report(std::ostream& out, const GpuReport& r) {
  const GpuDevice& d = r.device;
  if (!d.name.empty())
    out << fmt::format("OpenCL device {}: {} ({}, {} compute units at {} MHz; {})\n", d.index, d.name, d.type,
                       d.compute_units, d.clock_mhz, d.platform);
  if (r.status != Status::ok) {
    out << fmt::format("{} {}: {}\n", mark(r.status), to_string(r.status), r.reason);
    if (r.compute.empty() && r.memory.empty() && r.latency.empty()) return;
  }
  std::vector<std::string> notes;
  if (!r.compute.empty()) {
    // dtype by width, in the order measured.
    std::vector<std::string> order;
    std::vector<int> widths;
    std::map<std::pair<std::string, int>, const GpuComputeResult*> cell;
    for (const GpuComputeResult& c : r.compute) {
      if (std::find(order.begin(), order.end(), c.dtype) == order.end()) order.push_back(c.dtype);
      if (std::find(widths.begin(), widths.end(), c.width) == widths.end()) widths.push_back(c.width);
      cell[{c.dtype, c.width}] = &c;
      if (c.status != Status::ok)
        notes.push_back(fmt::format("{} {} x{}: {}", mark(c.status), c.dtype, c.width, c.reason));
    }
    size_t name = 5;
    bool dots = false;
    for (const std::string& t : order) {
      name = std::max(name, t.size());
      dots = dots || t.find("dot") != std::string::npos;
    }
    out << "\ncompute, GFLOP/s (float types) or GOP/s (integer), 2 per multiply-add"
        << (dots ? ", 8 per 4x8-bit dot product" : "") << "\n  " << fmt::format("{:<{}}", "type", name);
    for (int w : widths) out << fmt::format("{:>12}", fmt::format("x{}", w));
    out << fmt::format("{:>12}\n", "best");
    for (const std::string& t : order) {
      out << fmt::format("  {:<{}}", t, name);
      double best = 0;
      for (int w : widths) {
        const auto it = cell.find({t, w});
        if (it == cell.end() || it->second->status == Status::skipped || it->second->status == Status::error) {
          out << fmt::format("{:>12}", it == cell.end() ? "" : mark(it->second->status));
          continue;
        }
        const GpuComputeResult& c = *it->second;
        if (c.status == Status::ok) best = std::max(best, c.gops);
        out << fmt::format("{:>11.1f}{}", c.gops, c.status == Status::ok ? " " : mark(c.status));
      }
      out << (best > 0 ? fmt::format("{:>12.1f}", best) : fmt::format("{:>12}", "-")) << "\n";
    }
  }
  if (!r.memory.empty()) {
    out << "\nmemory, GB/s (copy counts bytes read and written)\n";
    for (const GpuMemoryResult& m : r.memory) {
      const std::string what = m.width ? fmt::format("{} float{}", m.kernel, m.width == 1 ? "" : std::to_string(m.width))
                                       : m.kernel;
      if (m.status == Status::ok || m.status == Status::mistrusted)
        out << fmt::format("{} {:<24} {:>10.1f} GB/s  ({})\n", mark(m.status), what, m.gbps, mib(m.bytes));
      else
        out << fmt::format("{} {:<24} {:>10}\n", mark(m.status), what, "-");
      if (m.status != Status::ok) notes.push_back(fmt::format("{} {}: {}", mark(m.status), what, m.reason));
    }
  }
  if (!r.latency.empty()) {
    out << "\nlatency, dependent loads of one work-item\n";
    for (const GpuLatencyResult& l : r.latency) {
      if (l.status == Status::ok || l.status == Status::mistrusted)
        out << fmt::format("{} {:<24} {:>10.1f} ns    ({})\n", mark(l.status), l.space, l.ns, mib(l.bytes));
      else
        out << fmt::format("{} {:<24} {:>10}\n", mark(l.status), l.space, "-");
      if (l.status != Status::ok) notes.push_back(fmt::format("{} {} latency: {}", mark(l.status), l.space, l.reason));
    }
  }
  if (!notes.empty()) {
    out << "\n";
    for (const std::string& n : notes) out << n << "\n";
  }
  out << fmt::format("\nmeasured in {:.1f} s\n", r.seconds);
}

void write_gpu_csv(std::ostream& out, const std::vector<GpuReport>& reports) {
  out << "device,name,section,what,width,value,unit,status,reason\n";
  for (const GpuReport& r : reports) {
    const std::string head = fmt::format("{},{}", r.device.index, csv_field(r.device.name));
    if (r.status != Status::ok)
      out << fmt::format("{},device,,,,,{},{}\n", head, to_string(r.status), csv_field(r.reason));
    for (const GpuComputeResult& c : r.compute)
      out << fmt::format("{},compute,{},{},{},{},{},{}\n", head, c.dtype, c.width,
                         c.status == Status::ok || c.status == Status::mistrusted ? fmt::format("{:.6g}", c.gops) : "",
                         c.integer ? "GOP/s" : "GFLOP/s", to_string(c.status), csv_field(c.reason));
    for (const GpuMemoryResult& m : r.memory)
      out << fmt::format("{},memory,{},{},{},GB/s,{},{}\n", head, m.kernel, m.width,
                         m.status == Status::ok || m.status == Status::mistrusted ? fmt::format("{:.6g}", m.gbps) : "",
                         to_string(m.status), csv_field(m.reason));
    for (const GpuLatencyResult& l : r.latency)
      out << fmt::format("{},latency,{},,{},ns,{},{}\n", head, l.space,
                         l.status == Status::ok || l.status == Status::mistrusted ? fmt::format("{:.6g}", l.ns) : "",
                         to_string(l.status), csv_field(l.reason));
  }
}

}  // namespace peakprobe
