// `peakprobe gpu` and `peakprobe gpu list`: OpenCL devices, their compute peaks per data type and
// vector width, memory bandwidth and latency (docs/gpu.md). Every device is measured in a worker
// process of its own.
#include <iostream>
#include <memory>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "cli/commands.hpp"
#include "cpu/cpu_info.hpp"
#include "gpu/cl_kernels.hpp"
#include "gpu/gpu_json.hpp"
#include "gpu/gpu_worker.hpp"
#include "roofline/gpu_ceilings.hpp"
#include "report/ceiling_report.hpp"
#include "report/gpu_report.hpp"
#include "report/json_report.hpp"
#include "report/svg_plots.hpp"
#include "util/text.hpp"

namespace peakprobe::cli {
namespace {

// Listing asks the loader and every driver for their devices: seconds, unless one hangs.
constexpr double kListSeconds = 60;
// One device's whole measurement.
constexpr double kDeviceSeconds = 300;

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  std::string item;
  std::istringstream in(s);
  while (std::getline(in, item, ','))
    if (!item.empty()) out.push_back(item);
  return out;
}

nlohmann::json gpu_document(const std::vector<GpuReport>& reports, const GlobalOptions& g) {
  const RunDocument d = new_document(detect_cpu_info(), g.argc, g.argv);
  nlohmann::json devices = nlohmann::json::array();
  // Each device with its roofline in the CPU's table format: `peakprobe score --table` reads it.
  for (const GpuReport& r : reports) devices.push_back(gpu_device_json(r));
  return {{"schema", kGpuSchema},
          {"tool", {{"name", "peakprobe"}, {"version", d.version}}},
          {"command", d.command},
          {"started_utc", d.started_utc},
          {"devices", devices}};
}

// The devices `--device` names: an index, a part of a name (case-insensitive), or "all"; by default
// every GPU, or every device when there is no GPU.
Expected<std::vector<int>> choose(const std::vector<GpuDevice>& devices, const std::string& which) {
  std::vector<int> out;
  if (which.empty()) {
    for (const GpuDevice& d : devices)
      if (d.type == "gpu") out.push_back(d.index);
    if (out.empty())
      for (const GpuDevice& d : devices) out.push_back(d.index);
    return out;
  }
  if (which == "all") {
    for (const GpuDevice& d : devices) out.push_back(d.index);
    return out;
  }
  char* end = nullptr;
  const long n = std::strtol(which.c_str(), &end, 10);
  if (end != which.c_str() && *end == '\0') {
    if (n < 0 || n >= long(devices.size()))
      return make_error(fmt::format("--device {}: there are {} OpenCL devices (see `peakprobe gpu list`)", which,
                                    devices.size()));
    return std::vector<int>{int(n)};
  }
  for (const GpuDevice& d : devices)
    if (contains_nocase(d.name, which)) out.push_back(d.index);
  if (out.empty()) return make_error(fmt::format("--device '{}' names no OpenCL device (see `peakprobe gpu list`)", which));
  return out;
}

}  // namespace

void add_gpu_command(CLI::App& app, GlobalOptions& g) {
  auto* cmd = app.add_subcommand(
      "gpu",
      "OpenCL devices: compute peaks per data type and vector width, memory bandwidth and latency (MegPeak's GPU half)");
  cmd->footer(
      "Kernels are generated as OpenCL C at run time, checked against the host's own computation, and timed with\n"
      "OpenCL profiling events (median of repetitions). Each device is measured in a worker process: a driver\n"
      "that crashes or hangs costs its own report. No OpenCL runtime or no device is a skipped report, not an error.\n"
      "The loader is libOpenCL.so.1 (Debian: ocl-icd-libopencl1); drivers are found through /etc/OpenCL/vendors or\n"
      "OCL_ICD_VENDORS. Examples:\n"
      "  peakprobe gpu list\n"
      "  peakprobe gpu --device 0 --dtypes f32,i32 --widths 1,4\n"
      "  peakprobe gpu --quick --json gpu.json\n"
      "  peakprobe gpu --device 0 --svg gpu-roofline.svg\n"
      "Docs: docs/gpu.md.");
  auto device = std::make_shared<std::string>();
  auto dtypes = std::make_shared<std::string>();
  auto widths = std::make_shared<std::string>();
  auto quick = std::make_shared<bool>(false);
  auto only = std::make_shared<std::string>();
  cmd->add_option("--device", *device, "Device index from `gpu list`, part of its name, or 'all' (default: every GPU, else every device)");
  cmd->add_option("--dtypes", *dtypes, "Compute data types, comma-separated: f32,f64,f16,i32,i16,i8, and the 4x8-bit integer dot products i8dot (signed x signed) and u8i8dot (unsigned x signed), which need cl_khr_integer_dot_product and run at width 4 only (default: all the device offers)");
  cmd->add_option("--widths", *widths, "Vector widths, comma-separated: 1,2,4,8,16 (default: all)");
  cmd->add_option("--only", *only, "Parts to measure, comma-separated: compute,memory,latency,transfer (default: all)");
  cmd->add_flag("--quick", *quick, "Shorter runs: fewer repetitions, 10 ms kernels");
  cmd->add_option("--svg", g.out.svg, "Write the device's roofline plot as SVG to FILE (one device: pick it with --device)")
      ->type_name("FILE");
  auto* list = cmd->add_subcommand("list", "List the OpenCL platforms and devices (name, units, clock, memory, extensions)");
  cmd->require_subcommand(0, 1);

  list->callback([&g] {
    g.action = [&g] {
      if (int rc = refuse_outputs(g.out, "gpu list", true, false, false)) return void(g.exit_code = rc);
      if (!g.out.svg.empty()) {
        spdlog::error("gpu list writes no SVG; `gpu --device N --svg FILE` plots a device's roofline");
        return void(g.exit_code = kExitUsage);
      }
      if (int rc = check_outputs(g.out)) return void(g.exit_code = rc);
      auto devices = gpu::list_devices_isolated(kListSeconds);
      if (!devices) {
        // No loader, or a driver that fails: said, and nothing to list.
        spdlog::warn("{}", devices.error());
        devices = std::vector<GpuDevice>{};
      }
      if (!g.out.json.empty()) {
        nlohmann::json list = nlohmann::json::array();
        for (const GpuDevice& d : *devices) list.push_back(to_json(d));
        g.exit_code = write_jobs({{g.out.json, [&](std::ostream& o) {
                                     o << json_text({{"schema", kGpuSchema}, {"devices", list}}) << "\n";
                                   }}});
      }
      if (!g.out.writes_stdout()) print_gpu_devices(std::cout, *devices);
    };
  });

  cmd->callback([&g, cmd, device, dtypes, widths, quick, only] {
    if (cmd->got_subcommand("list")) return;
    g.action = [&g, device, dtypes, widths, quick, only] {
      if (int rc = refuse_outputs(g.out, "gpu", true, true, false)) return void(g.exit_code = rc);
      if (int rc = check_outputs(g.out)) return void(g.exit_code = rc);
      gpu::GpuOptions o;
      o.dtypes = split(*dtypes);
      for (const std::string& t : o.dtypes)
        if (!gpu::find_dtype(t)) {
          spdlog::error("--dtypes: unknown data type '{}' (known: f32, f64, f16, i32, i16, i8, i8dot, u8i8dot)", t);
          return void(g.exit_code = kExitUsage);
        }
      for (const std::string& w : split(*widths)) {
        const auto& known = gpu::vector_widths();
        char* end = nullptr;
        const long n = std::strtol(w.c_str(), &end, 10);
        if (end == w.c_str() || *end || std::find(known.begin(), known.end(), int(n)) == known.end()) {
          spdlog::error("--widths: '{}' is not an OpenCL vector width (1, 2, 4, 8, 16)", w);
          return void(g.exit_code = kExitUsage);
        }
        o.widths.push_back(int(n));
      }
      if (!only->empty()) {
        o.compute = o.memory = o.latency = o.transfer = false;
        for (const std::string& p : split(*only)) {
          if (p == "compute") o.compute = true;
          else if (p == "memory") o.memory = true;
          else if (p == "latency") o.latency = true;
          else if (p == "transfer") o.transfer = true;
          else {
            spdlog::error("--only: unknown part '{}' (compute, memory, latency, transfer)", p);
            return void(g.exit_code = kExitUsage);
          }
        }
      }
      if (*quick) {
        o.kernel_seconds = 0.01;
        o.min_repetitions = 3;
        o.min_total_seconds = 0.03;
      }
      std::vector<GpuReport> reports;
      auto devices = gpu::list_devices_isolated(kListSeconds);
      if (!devices || devices->empty()) {
        GpuReport r;
        r.status = Status::skipped;
        r.reason = devices ? "no OpenCL device: the loader found no platform with a device" : devices.error();
        reports.push_back(r);
      } else {
        auto chosen = choose(*devices, *device);
        if (!chosen) {
          spdlog::error("{}", chosen.error());
          return void(g.exit_code = kExitUsage);
        }
        size_t done = 0;
        for (int i : *chosen) {
          progress(g.out, done++, chosen->size(), (*devices)[size_t(i)].name);
          spdlog::info("measuring OpenCL device {}: {}", i, (*devices)[size_t(i)].name);
          reports.push_back(gpu::measure_device_isolated(i, o, kDeviceSeconds));
          if (reports.back().device.name.empty()) reports.back().device = (*devices)[size_t(i)];
        }
        progress_done(g.out);
      }
      std::vector<OutputJob> jobs;
      // The roofline plot is of one device: with several, the first that has figures, and a warning.
      CeilingTable plot;
      const GpuReport* plotted = nullptr;
      if (!g.out.svg.empty()) {
        size_t with_roofs = 0;
        for (const GpuReport& r : reports) {
          const CeilingTable t = gpu_ceiling_table(r);
          if (t.compute.empty() && t.memory.empty()) continue;
          if (with_roofs++ == 0) plot = t, plotted = &r;
        }
        if (!plotted) {
          spdlog::error("--svg: no device has figures to plot (nothing written)");
          g.exit_code = kExitResultErrors;
        } else {
          if (with_roofs > 1)
            spdlog::warn("--svg plots one device: {} (device {}); pick another with --device", plotted->device.name,
                         plotted->device.index);
          jobs.push_back({g.out.svg, [&](std::ostream& out) {
                            out << roofline_svg(plot, {}, 1,
                                                fmt::format("Roofline, OpenCL device {}: {}", plotted->device.index,
                                                            plotted->device.name));
                          }});
        }
      }
      if (!g.out.json.empty())
        jobs.push_back({g.out.json, [&](std::ostream& out) { out << json_text(gpu_document(reports, g)) << "\n"; }});
      if (!g.out.csv.empty()) jobs.push_back({g.out.csv, [&](std::ostream& out) { write_gpu_csv(out, reports); }});
      if (int rc = write_jobs(jobs)) g.exit_code = rc;
      if (!g.out.writes_stdout())
        for (size_t i = 0; i < reports.size(); ++i) {
          if (i) std::cout << "\n";
          print_gpu_report(std::cout, reports[i]);
        }
      if (g.exit_code == kExitOk) {
        bool error = false;
        for (const GpuReport& r : reports) {
          error = error || r.status == Status::error;
          for (const auto& c : r.compute) error = error || c.status == Status::error;
          for (const auto& m : r.memory) error = error || m.status == Status::error;
          for (const auto& l : r.latency) error = error || l.status == Status::error;
        }
        if (error) g.exit_code = kExitResultErrors;
      }
    };
  });
}

}  // namespace peakprobe::cli
