#include "gpu/gpu_json.hpp"

#include "report/json_report.hpp"

namespace peakprobe {
namespace {

using nlohmann::json;

Status status_from(const std::string& s) {
  if (s == "ok") return Status::ok;
  if (s == "skipped") return Status::skipped;
  if (s == "mistrusted") return Status::mistrusted;
  if (s == "error") return Status::error;
  throw json::type_error::create(302, "unknown status '" + s + "'", nullptr);
}

Stats stats_from(const json& j) {
  Stats s;
  auto num = [&](const char* k) { return j.at(k).is_null() ? 0.0 : j.at(k).get<double>(); };
  s.min = num("min");
  s.median = num("median");
  s.max = num("max");
  s.spread = num("spread");
  s.samples = j.at("samples").get<int>();
  return s;
}

double number_from(const json& j) { return j.is_null() ? 0.0 : j.get<double>(); }

}  // namespace

json to_json(const GpuDevice& d) {
  return {{"index", d.index},
          {"platform", d.platform},
          {"name", d.name},
          {"vendor", d.vendor},
          {"type", d.type},
          {"driver_version", d.driver_version},
          {"device_version", d.device_version},
          {"opencl_c_version", d.opencl_c_version},
          {"compute_units", d.compute_units},
          {"clock_mhz", d.clock_mhz},
          {"global_mem_bytes", d.global_mem_bytes},
          {"local_mem_bytes", d.local_mem_bytes},
          {"max_alloc_bytes", d.max_alloc_bytes},
          {"max_work_group_size", d.max_work_group_size},
          {"fp16", d.fp16},
          {"fp64", d.fp64},
          {"extensions", d.extensions}};
}

json to_json(const GpuReport& r) {
  json compute = json::array(), memory = json::array(), latency = json::array();
  for (const GpuComputeResult& c : r.compute)
    compute.push_back({{"dtype", c.dtype},
                       {"width", c.width},
                       {"integer", c.integer},
                       {"gops", json_number(c.gops)},
                       {"gops_stats", to_json(c.gops_stats)},
                       {"bound_gops", json_number(c.bound_gops)},
                       {"work_items", c.work_items},
                       {"checked", c.checked},
                       {"status", to_string(c.status)},
                       {"reason", c.reason}});
  for (const GpuMemoryResult& m : r.memory)
    memory.push_back({{"kernel", m.kernel},
                      {"width", m.width},
                      {"bytes", m.bytes},
                      {"gbps", json_number(m.gbps)},
                      {"gbps_stats", to_json(m.gbps_stats)},
                      {"checked", m.checked},
                      {"status", to_string(m.status)},
                      {"reason", m.reason}});
  for (const GpuLatencyResult& l : r.latency)
    latency.push_back({{"space", l.space},
                       {"bytes", l.bytes},
                       {"ns", json_number(l.ns)},
                       {"ns_stats", to_json(l.ns_stats)},
                       {"checked", l.checked},
                       {"status", to_string(l.status)},
                       {"reason", l.reason}});
  return {{"device", to_json(r.device)}, {"status", to_string(r.status)}, {"reason", r.reason},
          {"compute", compute},          {"memory", memory},              {"latency", latency},
          {"seconds", json_number(r.seconds)}};
}

Expected<GpuDevice> gpu_device_from_json(const json& j) {
  try {
    GpuDevice d;
    d.index = j.at("index").get<int>();
    d.platform = j.at("platform").get<std::string>();
    d.name = j.at("name").get<std::string>();
    d.vendor = j.at("vendor").get<std::string>();
    d.type = j.at("type").get<std::string>();
    d.driver_version = j.at("driver_version").get<std::string>();
    d.device_version = j.at("device_version").get<std::string>();
    d.opencl_c_version = j.at("opencl_c_version").get<std::string>();
    d.compute_units = j.at("compute_units").get<int>();
    d.clock_mhz = j.at("clock_mhz").get<int>();
    d.global_mem_bytes = j.at("global_mem_bytes").get<uint64_t>();
    d.local_mem_bytes = j.at("local_mem_bytes").get<uint64_t>();
    d.max_alloc_bytes = j.at("max_alloc_bytes").get<uint64_t>();
    d.max_work_group_size = j.at("max_work_group_size").get<uint64_t>();
    d.fp16 = j.at("fp16").get<bool>();
    d.fp64 = j.at("fp64").get<bool>();
    d.extensions = j.at("extensions").get<std::vector<std::string>>();
    return d;
  } catch (const json::exception& e) {
    return make_error(std::string("not a GPU device description: ") + e.what());
  }
}

Expected<GpuReport> gpu_report_from_json(const json& j) {
  try {
    GpuReport r;
    auto dev = gpu_device_from_json(j.at("device"));
    if (!dev) return make_error(dev.error());
    r.device = *dev;
    r.status = status_from(j.at("status").get<std::string>());
    r.reason = j.at("reason").get<std::string>();
    r.seconds = number_from(j.at("seconds"));
    for (const json& c : j.at("compute")) {
      GpuComputeResult x;
      x.dtype = c.at("dtype").get<std::string>();
      x.width = c.at("width").get<int>();
      x.integer = c.at("integer").get<bool>();
      x.gops = number_from(c.at("gops"));
      x.gops_stats = stats_from(c.at("gops_stats"));
      x.bound_gops = number_from(c.at("bound_gops"));
      x.work_items = c.at("work_items").get<uint64_t>();
      x.checked = c.at("checked").get<bool>();
      x.status = status_from(c.at("status").get<std::string>());
      x.reason = c.at("reason").get<std::string>();
      r.compute.push_back(x);
    }
    for (const json& m : j.at("memory")) {
      GpuMemoryResult x;
      x.kernel = m.at("kernel").get<std::string>();
      x.width = m.at("width").get<int>();
      x.bytes = m.at("bytes").get<uint64_t>();
      x.gbps = number_from(m.at("gbps"));
      x.gbps_stats = stats_from(m.at("gbps_stats"));
      x.checked = m.at("checked").get<bool>();
      x.status = status_from(m.at("status").get<std::string>());
      x.reason = m.at("reason").get<std::string>();
      r.memory.push_back(x);
    }
    for (const json& l : j.at("latency")) {
      GpuLatencyResult x;
      x.space = l.at("space").get<std::string>();
      x.bytes = l.at("bytes").get<uint64_t>();
      x.ns = number_from(l.at("ns"));
      x.ns_stats = stats_from(l.at("ns_stats"));
      x.checked = l.at("checked").get<bool>();
      x.status = status_from(l.at("status").get<std::string>());
      x.reason = l.at("reason").get<std::string>();
      r.latency.push_back(x);
    }
    return r;
  } catch (const json::exception& e) {
    return make_error(std::string("not a GPU report: ") + e.what());
  }
}

}  // namespace peakprobe
