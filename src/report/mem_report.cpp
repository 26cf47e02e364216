#include "report/mem_report.hpp"

#include <fmt/format.h>

#include "memory/sizes.hpp"
#include "report/csv_report.hpp"
#include "report/json_report.hpp"

namespace peakprobe {
namespace {

using nlohmann::json;

std::string opt(const std::optional<double>& v, int decimals) {
  return v ? fmt::format("{:.{}f}", *v, decimals) : "";
}

}  // namespace

json to_json(const BandwidthResult& r) {
  json per_thread = json::array();
  for (double g : r.per_thread_gbps) per_thread.push_back(json_number(g));
  json thread_clocks = json::array();
  for (double g : r.per_thread_ghz) thread_clocks.push_back(json_number(g));
  return {{"kernel", r.kernel},
          {"isa", r.isa},
          {"size_bytes", r.size_bytes},
          {"threads", r.threads},
          {"bytes_per_iteration", r.bytes_per_iteration},
          {"gbps", json_number(r.gbps)},
          {"bytes_per_cycle", json_number(r.bytes_per_cycle)},
          {"stats", to_json(r.gbps_stats)},
          {"per_thread_gbps", per_thread},
          {"per_thread_ghz", thread_clocks},
          {"imbalance", json_number(r.imbalance)},
          {"clock", to_json(r.clock)},
          {"clock_ghz", json_number(r.clock.ghz)},
          {"status", to_string(r.status)},
          {"reason", r.reason},
          {"repro", r.repro}};
}

json to_json(const LatencyResult& r) {
  return {{"mode", r.mode},
          {"pages", r.pages},
          {"pages_granted", r.pages_granted},
          {"size_bytes", r.size_bytes},
          {"chains", r.chains},
          {"latency_ns", json_number(r.latency_ns)},
          {"latency_cycles", json_number(r.latency_cycles)},
          {"stats", to_json(r.ns_stats)},
          {"clock", to_json(r.clock)},
          {"clock_ghz", json_number(r.clock.ghz)},
          {"status", to_string(r.status)},
          {"reason", r.reason},
          {"repro", r.repro}};
}

json to_json(const CacheLevelEdge& l) {
  return {{"name", l.name},
          {"edge_bytes", l.edge_bytes ? json(*l.edge_bytes) : json(nullptr)},
          {"gbps", json_number(l.gbps)},
          {"reported_bytes", l.reported_bytes ? json(*l.reported_bytes) : json(nullptr)},
          {"note", l.note}};
}

void add_memory(json& doc, const RunDocument& d) {
  if (!d.bandwidth.empty()) {
    json a = json::array();
    for (const auto& r : d.bandwidth) a.push_back(to_json(r));
    doc["bandwidth"] = a;
  }
  if (!d.latency.empty()) {
    json a = json::array();
    for (const auto& r : d.latency) a.push_back(to_json(r));
    doc["latency"] = a;
  }
  if (!d.levels.empty()) {
    json a = json::array();
    for (const auto& l : d.levels) a.push_back(to_json(l));
    doc["levels"] = a;
  }
}

void write_memory_csv(std::ostream& out, const RunDocument& d) {
  if (!d.bandwidth.empty()) {
    out << "kind,kernel,isa,size_bytes,threads,gbps,bytes_per_cycle,gbps_median,spread,imbalance,clock_ghz,status,"
           "reason,repro\n";
    for (const auto& r : d.bandwidth)
      out << "bandwidth," << r.kernel << ',' << r.isa << ',' << r.size_bytes << ',' << r.threads << ','
          << opt(r.gbps, 3) << ',' << opt(r.bytes_per_cycle, 3) << ',' << fmt::format("{:.3f}", r.gbps_stats.median)
          << ',' << fmt::format("{:.4f}", r.gbps_stats.spread) << ',' << fmt::format("{:.4f}", r.imbalance) << ','
          << fmt::format("{:.3f}", r.clock.ghz) << ',' << to_string(r.status) << ',' << csv_field(r.reason) << ','
          << csv_field(r.repro) << '\n';
  }
  if (!d.latency.empty()) {
    out << "kind,mode,pages,pages_granted,size_bytes,chains,latency_ns,latency_cycles,ns_median,clock_ghz,status,"
           "reason,repro\n";
    for (const auto& r : d.latency)
      out << "latency," << r.mode << ',' << r.pages << ',' << r.pages_granted << ',' << r.size_bytes << ','
          << r.chains << ',' << opt(r.latency_ns, 3) << ',' << opt(r.latency_cycles, 2) << ','
          << fmt::format("{:.3f}", r.ns_stats.median) << ',' << fmt::format("{:.3f}", r.clock.ghz) << ','
          << to_string(r.status) << ',' << csv_field(r.reason) << ',' << csv_field(r.repro) << '\n';
  }
}

void write_memory_markdown(std::ostream& out, const RunDocument& d) {
  out << fmt::format("**{}** at {:.2f} GHz ({})\n\n", d.host.brand, d.clock.ghz, d.clock.source);
  if (!d.bandwidth.empty()) {
    out << "| kernel | isa | working set | threads | GB/s | bytes/cycle | status |\n|---|---|---:|---:|---:|---:|---|\n";
    for (const auto& r : d.bandwidth)
      out << fmt::format("| {} | {} | {} | {} | {} | {} | {} |\n", r.kernel, r.isa, format_bytes(r.size_bytes),
                         r.threads, opt(r.gbps, 1), opt(r.bytes_per_cycle, 2), to_string(r.status));
    // Why a row is not ok, under its table as for instruction rows (a table cell would hold a whole
    // sentence).
    bool noted = false;
    for (const auto& r : d.bandwidth)
      if (r.status != Status::ok && !r.reason.empty()) {
        out << (noted ? "" : "\n") << fmt::format("- {} {} {} x{} ({}): {}\n", r.kernel, r.isa, format_bytes(r.size_bytes),
                                                  r.threads, to_string(r.status), r.reason);
        noted = true;
      }
  }
  if (!d.latency.empty()) {
    // A blank line first: a table row right after another table's would join it.
    if (!d.bandwidth.empty()) out << "\n";
    out << "| mode | pages | working set | chains | ns | cycles | status |\n|---|---|---:|---:|---:|---:|---|\n";
    for (const auto& r : d.latency)
      out << fmt::format("| {} | {} ({}) | {} | {} | {} | {} | {} |\n", r.mode, r.pages, r.pages_granted,
                         format_bytes(r.size_bytes), r.chains, opt(r.latency_ns, 2), opt(r.latency_cycles, 1),
                         to_string(r.status));
    bool noted = false;
    for (const auto& r : d.latency)
      if (r.status != Status::ok && !r.reason.empty()) {
        out << (noted ? "" : "\n") << fmt::format("- {} {} ({}), {} chain(s) ({}): {}\n", r.mode, format_bytes(r.size_bytes),
                                                  r.pages, r.chains, to_string(r.status), r.reason);
        noted = true;
      }
  }
  if (!d.levels.empty()) {
    out << "\n| level | edge | GB/s | reported | note |\n|---|---:|---:|---:|---|\n";
    for (const auto& l : d.levels)
      out << fmt::format("| {} | {} | {:.1f} | {} | {} |\n", l.name, l.edge_bytes ? format_bytes(*l.edge_bytes) : "-",
                         l.gbps, l.reported_bytes ? format_bytes(*l.reported_bytes) : "-", l.note);
  }
}

void write_memory_console(std::ostream& out, const RunDocument& d) {
  out << fmt::format("peakprobe {} on {}, {:.2f} GHz ({})\n\n", d.version, d.host.brand, d.clock.ghz, d.clock.source);
  if (!d.bandwidth.empty()) {
    out << fmt::format("  {:<9} {:<7} {:>11} {:>3} {:>9} {:>8} {:>7}  {}\n", "kernel", "isa", "working set", "T",
                       "GB/s", "B/cycle", "spread", "status");
    for (const auto& r : d.bandwidth)
      out << fmt::format("  {:<9} {:<7} {:>11} {:>3} {:>9} {:>8} {:>6.1f}%  {}{}\n", r.kernel, r.isa,
                         format_bytes(r.size_bytes), r.threads, opt(r.gbps, 2), opt(r.bytes_per_cycle, 2),
                         r.gbps_stats.spread * 100, to_string(r.status), r.reason.empty() ? "" : ": " + r.reason);
  }
  if (!d.latency.empty()) {
    if (!d.bandwidth.empty()) out << "\n";
    out << fmt::format("  {:<10} {:<9} {:>11} {:>6} {:>9} {:>8}  {}\n", "mode", "pages", "working set", "chains", "ns",
                       "cycles", "status");
    for (const auto& r : d.latency)
      out << fmt::format("  {:<10} {:<9} {:>11} {:>6} {:>9} {:>8}  {}{}\n", r.mode, r.pages + "/" + r.pages_granted,
                         format_bytes(r.size_bytes), r.chains, opt(r.latency_ns, 2), opt(r.latency_cycles, 1),
                         to_string(r.status), r.reason.empty() ? "" : ": " + r.reason);
  }
  if (!d.levels.empty()) {
    out << "\ncache levels found from the curve:\n";
    for (const auto& l : d.levels)
      out << fmt::format("  {:<5} edge {:>9}  {:>8.1f} GB/s  reported {:>9}{}\n", l.name,
                         l.edge_bytes ? format_bytes(*l.edge_bytes) : "-", l.gbps,
                         l.reported_bytes ? format_bytes(*l.reported_bytes) : "-", l.note.empty() ? "" : "  " + l.note);
  }
}

}  // namespace peakprobe
