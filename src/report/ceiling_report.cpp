#include "report/ceiling_report.hpp"

#include <fmt/format.h>

#include "memory/sizes.hpp"
#include "report/csv_report.hpp"
#include "report/json_report.hpp"

namespace peakprobe {
namespace {

using nlohmann::json;

// How the table counts: stated in every document so a reader never has to guess.
json conventions() {
  return {{"flops", "each multiply and each add counts one operation; an FMA lane counts two; integer dot "
                    "products count each multiply and each add"},
          {"bytes", "instruction bytes: every load and store counts its width; write-allocate traffic of "
                    "ordinary stores is not counted"},
          {"intensity", "cache-aware: operations per byte moved by load/store instructions at the given level"},
          {"gflops", "10^9 operations per second; GOP/s for integer dtypes"},
          {"gbps", "10^9 bytes per second over all threads"},
          {"per_core", "flops_per_cycle and bytes_per_cycle are per core at clock_ghz"}};
}

}  // namespace

json to_json(const CeilingTable& t) {
  json compute = json::array(), memory = json::array(), ridges = json::array();
  for (const auto& c : t.compute)
    compute.push_back({{"dtype", c.dtype}, {"isa", c.isa}, {"threads", c.threads},
                       {c.integer ? "gops" : "gflops", json_number(c.gops)}, {"flops_per_cycle", json_number(c.ops_per_cycle)},
                       {"clock_ghz", json_number(c.clock_ghz)}, {"source", c.source}});
  for (const auto& m : t.memory)
    memory.push_back({{"level", m.level}, {"kernel", m.kernel}, {"threads", m.threads}, {"gbps", json_number(m.gbps)},
                      {"bytes_per_cycle", json_number(m.bytes_per_cycle)}, {"size_bytes", m.size_bytes}});
  for (const auto& r : t.ridges)
    ridges.push_back({{"dtype", r.dtype}, {"isa", r.isa}, {"level", r.level}, {"kernel", r.kernel},
                      {"threads", r.threads}, {"ai", json_number(r.ai)}});
  return {{"schema", kCeilingSchema}, {"compute", compute}, {"memory", memory}, {"ridges", ridges},
          {"conventions", conventions()}};
}

json to_json(const KernelScore& s) {
  return {{"name", s.name}, {"flops", s.flops}, {"bytes", s.bytes}, {"seconds", s.seconds}, {"threads", s.threads},
          {"level", s.level}, {"ai", json_number(s.ai)}, {"achieved_gflops", json_number(s.achieved_gflops)},
          {"attainable_gflops", json_number(s.attainable_gflops)}, {"bound_by", s.bound_by},
          {"efficiency", json_number(s.efficiency)}, {"ridge_ai", json_number(s.ridge_ai)},
          {"distance_to_ridge", json_number(s.distance_to_ridge)}};
}

Expected<CeilingTable> ceilings_from_json(const json& doc) {
  const json& j = doc.contains("ceilings") ? doc["ceilings"] : doc;
  if (!j.is_object() || j.value("schema", "") != kCeilingSchema)
    return make_error(std::string("not a ceiling table (expected \"schema\": \"") + kCeilingSchema + "\")");
  CeilingTable t;
  try {
    for (const auto& c : j.at("compute")) {
      ComputeCeiling x;
      x.dtype = c.at("dtype");
      x.isa = c.at("isa");
      x.threads = c.at("threads");
      x.integer = c.contains("gops");
      x.gops = c.at(x.integer ? "gops" : "gflops");
      x.ops_per_cycle = c.value("flops_per_cycle", 0.0);
      x.clock_ghz = c.value("clock_ghz", 0.0);
      x.source = c.value("source", "");
      t.compute.push_back(x);
    }
    for (const auto& m : j.at("memory")) {
      MemoryCeiling x;
      x.level = m.at("level");
      x.kernel = m.at("kernel");
      x.threads = m.at("threads");
      x.gbps = m.at("gbps");
      x.bytes_per_cycle = m.value("bytes_per_cycle", 0.0);
      x.size_bytes = m.value("size_bytes", uint64_t(0));
      t.memory.push_back(x);
    }
  } catch (const json::exception& e) {
    return make_error(std::string("malformed ceiling table: ") + e.what());
  }
  return t;
}

void add_roofline(json& doc, const RunDocument& d) {
  if (d.ceilings) doc["ceilings"] = to_json(*d.ceilings);
  if (!d.scores.empty()) {
    json a = json::array();
    for (const auto& s : d.scores) a.push_back(to_json(s));
    doc["scores"] = a;
  }
}

void write_ceilings_csv(std::ostream& out, const RunDocument& d) {
  out << "kind,dtype_or_level,isa_or_kernel,threads,value,unit,per_cycle,clock_ghz,size_bytes,source\n";
  if (d.ceilings) {
    for (const auto& c : d.ceilings->compute)
      out << fmt::format("compute,{},{},{},{:.3f},{},{:.3f},{:.3f},,{}\n", c.dtype, c.isa, c.threads, c.gops,
                         c.integer ? "GOP/s" : "GFLOP/s", c.ops_per_cycle, c.clock_ghz, csv_field(c.source));
    for (const auto& m : d.ceilings->memory)
      out << fmt::format("memory,{},{},{},{:.3f},GB/s,{:.3f},,{},\n", m.level, m.kernel, m.threads, m.gbps,
                         m.bytes_per_cycle, m.size_bytes);
    for (const auto& r : d.ceilings->ridges)
      out << fmt::format("ridge,{}/{},{}/{},{},{:.4f},FLOP/byte,,,,\n", r.dtype, r.level, r.isa, r.kernel, r.threads, r.ai);
  }
  for (const auto& s : d.scores)
    out << fmt::format("score,{},{},{},{:.3f},GFLOP/s,{:.4f},,,{}\n", s.level, csv_field(s.name), s.threads,
                       s.achieved_gflops, s.efficiency, csv_field(s.bound_by));
}

void write_ceilings_markdown(std::ostream& out, const RunDocument& d) {
  out << fmt::format("**{}** at {:.2f} GHz ({})\n\n", d.host.brand, d.clock.ghz, d.clock.source);
  if (d.ceilings) {
    out << "| compute | width | threads | GFLOP/s or GOP/s | per cycle | source |\n|---|---|---:|---:|---:|---|\n";
    for (const auto& c : d.ceilings->compute)
      out << fmt::format("| {} | {} | {} | {:.1f} {} | {:.1f} | `{}` |\n", c.dtype, c.isa, c.threads, c.gops,
                         c.integer ? "GOP/s" : "GFLOP/s", c.ops_per_cycle, c.source);
    out << "\n| memory | kernel | threads | GB/s | bytes/cycle | working set |\n|---|---|---:|---:|---:|---:|\n";
    for (const auto& m : d.ceilings->memory)
      out << fmt::format("| {} | {} | {} | {:.1f} | {:.1f} | {} |\n", m.level, m.kernel, m.threads, m.gbps,
                         m.bytes_per_cycle, format_bytes(m.size_bytes));
  }
  if (!d.scores.empty()) {
    out << "\n| kernel | AI | GFLOP/s | attainable | efficiency | bound by |\n|---|---:|---:|---:|---:|---|\n";
    for (const auto& s : d.scores)
      out << fmt::format("| {} | {:.3g} | {:.1f} | {:.1f} | {:.0f}% | {} |\n", s.name, s.ai, s.achieved_gflops,
                         s.attainable_gflops, s.efficiency * 100, s.bound_by);
  }
}

void write_ceilings_console(std::ostream& out, const RunDocument& d) {
  out << fmt::format("peakprobe {} on {}, {:.2f} GHz ({})\n", d.version, d.host.brand, d.clock.ghz, d.clock.source);
  if (d.ceilings) {
    out << "\ncompute ceilings\n";
    for (const auto& c : d.ceilings->compute)
      out << fmt::format("  {:<5} {:>6} {:>3}T {:>9.1f} {:<7} {:>7.2f}/cycle  {}\n", c.dtype, c.isa, c.threads, c.gops,
                         c.integer ? "GOP/s" : "GFLOP/s", c.ops_per_cycle, c.source);
    out << "\nmemory ceilings\n";
    for (const auto& m : d.ceilings->memory)
      out << fmt::format("  {:<5} {:<9} {:>3}T {:>9.1f} GB/s {:>7.2f} B/cycle  ({})\n", m.level, m.kernel, m.threads,
                         m.gbps, m.bytes_per_cycle, format_bytes(m.size_bytes));
    out << "\nridge points (FLOP/byte where compute and memory roofs meet, load kernel)\n";
    for (const auto& r : d.ceilings->ridges)
      out << fmt::format("  {:<5} {:>6} x {:<5} {:>3}T  {:>8.3f}\n", r.dtype, r.isa, r.level, r.threads, r.ai);
  }
  for (const auto& s : d.scores)
    out << fmt::format("\n{}: AI {:.3g} FLOP/byte, {:.2f} GFLOP/s of {:.2f} attainable ({:.0f}%), bound by {}, "
                       "{:.2f}x the ridge point ({:.3g})\n",
                       s.name, s.ai, s.achieved_gflops, s.attainable_gflops, s.efficiency * 100, s.bound_by,
                       s.distance_to_ridge, s.ridge_ai);
}

}  // namespace peakprobe
