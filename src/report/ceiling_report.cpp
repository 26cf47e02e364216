#include "report/ceiling_report.hpp"

#include <fmt/format.h>

#include <climits>
#include <cmath>
#include <optional>
#include <stdexcept>

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

// A whole number of a saved file. nlohmann converts a double to an integer with a plain cast, which
// is undefined outside the integer's range (1e300 threads): only whole numbers in range get through.
std::optional<long long> whole_number(const json& v) {
  if (v.is_number_unsigned()) {
    const auto u = v.get<unsigned long long>();
    if (u > static_cast<unsigned long long>(LLONG_MAX)) return std::nullopt;
    return static_cast<long long>(u);
  }
  if (v.is_number_integer()) return v.get<long long>();
  if (v.is_number_float()) {
    const double d = v.get<double>();
    if (std::isfinite(d) && d == std::trunc(d) && d >= -9.0e18 && d <= 9.0e18) return static_cast<long long>(d);
  }
  return std::nullopt;
}

// Throws like json's own accessors (the readers below turn every exception into an error).
long long whole_field(const json& obj, const char* key, long long lo, long long hi) {
  const auto n = whole_number(obj.at(key));
  if (!n || *n < lo || *n > hi)
    throw std::out_of_range(fmt::format("\"{}\" must be a whole number from {} to {}", key, lo, hi));
  return *n;
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
  return {{"name", s.name}, {"dtype", s.dtype}, {"flops", s.flops}, {"bytes", s.bytes}, {"seconds", s.seconds}, {"threads", s.threads},
          {"level", s.level}, {"ai", json_number(s.ai)}, {"achieved_gflops", json_number(s.achieved_gflops)},
          {"attainable_gflops", json_number(s.attainable_gflops)}, {"bound_by", s.bound_by},
          {"efficiency", json_number(s.efficiency)}, {"ridge_ai", json_number(s.ridge_ai)},
          {"distance_to_ridge", json_number(s.distance_to_ridge)},
          {"peak_gflops", s.peak_gflops > 0 ? json_number(s.peak_gflops) : json(nullptr)}};
}

Expected<CeilingTable> ceilings_from_json(const json& doc) {
  const json& j = doc.contains("ceilings") ? doc["ceilings"] : doc;
  // A "schema" of another type is not a ceiling table either (json's value() would throw here).
  if (!j.is_object() || !j.contains("schema") || j["schema"] != kCeilingSchema)
    return make_error(std::string("not a ceiling table (expected \"schema\": \"") + kCeilingSchema + "\")");
  CeilingTable t;
  try {
    for (const auto& c : j.at("compute")) {
      ComputeCeiling x;
      x.dtype = c.at("dtype");
      x.isa = c.at("isa");
      x.threads = int(whole_field(c, "threads", INT_MIN, INT_MAX));
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
      x.threads = int(whole_field(m, "threads", INT_MIN, INT_MAX));
      x.gbps = m.at("gbps");
      x.bytes_per_cycle = m.value("bytes_per_cycle", 0.0);
      x.size_bytes = m.contains("size_bytes") ? uint64_t(whole_field(m, "size_bytes", 0, LLONG_MAX)) : 0;
      t.memory.push_back(x);
    }
  } catch (const std::exception& e) {
    return make_error(std::string("malformed ceiling table: ") + e.what());
  }
  return t;
}

Expected<std::vector<ScoreRequest>> score_requests_from_json(const json& kernels, int default_threads) {
  if (!kernels.is_array()) return make_error("expected a JSON array of kernels");
  std::vector<ScoreRequest> out;
  for (size_t i = 0; i < kernels.size(); ++i) {
    const json& k = kernels[i];
    if (!k.is_object()) return make_error(fmt::format("kernel {}: expected an object {{name, flops, bytes, seconds}}", i + 1));
    ScoreRequest r;
    try {
      r.name = k.value("name", "kernel");
      r.flops = k.value("flops", 0.0);
      r.bytes = k.value("bytes", 0.0);
      r.seconds = k.value("seconds", 0.0);
      r.dtype = k.value("dtype", std::string("f32"));
      r.level = k.value("level", std::string());
      r.threads = k.contains("threads") ? int(whole_field(k, "threads", INT_MIN, INT_MAX)) : default_threads;
    } catch (const std::exception& e) {
      return make_error(fmt::format("kernel {}: {}", i + 1, e.what()));
    }
    out.push_back(r);
  }
  return out;
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

namespace {
// A score's share of the table's highest ceiling of its dtype: "61.2%", "-" when the table has none.
std::string share_of_peak(const KernelScore& s) {
  return s.peak_gflops > 0 ? fmt::format("{:.1f}%", 100 * s.achieved_gflops / s.peak_gflops) : "-";
}
// A ceiling's clock, "3.36", or "-" when its probe read none.
std::string ceiling_clock_text(double ghz) { return ghz > 0 ? fmt::format("{:.2f}", ghz) : "-"; }
}  // namespace

std::string core_availability_text(const CoreAvailability& a) {
  std::string text = a.cpu >= 0 ? fmt::format("CPU {} ", a.cpu) : std::string();
  text += fmt::format("{:.1f}% of {:.0f} ms ({} interruption{}", 100 * a.share, a.scanned_ms, a.interruptions,
                      a.interruptions == 1 ? "" : "s");
  if (a.interruptions > 0)
    text += fmt::format(", median {:.1f} us, longest {:.1f} us", a.median_interruption_us, a.longest_interruption_us);
  return text + ")";
}

void write_ceilings_markdown(std::ostream& out, const RunDocument& d) {
  out << fmt::format("**{}** at {:.2f} GHz ({})\n\n", d.host.brand, d.clock.ghz, d.clock.source);
  if (!d.availability.empty()) {
    out << "Wall time the cores gave a thread:";
    for (size_t i = 0; i < d.availability.size(); ++i)
      out << (i ? "; " : " ") << core_availability_text(d.availability[i]);
    out << ". Probe samples mostly run between interruptions; a kernel timed over milliseconds pays them "
           "(docs/method.md, Limits).\n\n";
  }
  if (d.ceilings) {
    // The clock of each row's own probe: on a core with vector frequency licences the widest vectors
    // run at a lower clock (Sapphire Rapids-class VM: 3.36 GHz for 512-bit FMA rows, 3.57 for 256-bit).
    out << "| compute | width | threads | GFLOP/s or GOP/s | per cycle | at GHz | source |\n"
           "|---|---|---:|---:|---:|---:|---|\n";
    for (const auto& c : d.ceilings->compute)
      out << fmt::format("| {} | {} | {} | {:.1f} {} | {:.1f} | {} | `{}` |\n", c.dtype, c.isa, c.threads, c.gops,
                         c.integer ? "GOP/s" : "GFLOP/s", c.ops_per_cycle, ceiling_clock_text(c.clock_ghz), c.source);
    out << "\n| memory | kernel | threads | GB/s | bytes/cycle | working set |\n|---|---|---:|---:|---:|---:|\n";
    for (const auto& m : d.ceilings->memory)
      out << fmt::format("| {} | {} | {} | {:.1f} | {:.1f} | {} |\n", m.level, m.kernel, m.threads, m.gbps,
                         m.bytes_per_cycle, format_bytes(m.size_bytes));
  }
  if (!d.scores.empty()) {
    out << "\n| kernel | AI | GFLOP/s | attainable | efficiency | bound by | of the dtype's peak |\n"
           "|---|---:|---:|---:|---:|---|---:|\n";
    for (const auto& s : d.scores)
      out << fmt::format("| {} | {:.3g} | {:.1f} | {:.1f} | {:.1f}% | {} | {} |\n", s.name, s.ai, s.achieved_gflops,
                         s.attainable_gflops, s.efficiency * 100, s.bound_by, share_of_peak(s));
  }
}

void write_ceilings_console(std::ostream& out, const RunDocument& d) {
  out << fmt::format("peakprobe {} on {}, {:.2f} GHz ({})\n", d.version, d.host.brand, d.clock.ghz, d.clock.source);
  if (d.ceilings) {
    out << "\ncompute ceilings\n";
    for (const auto& c : d.ceilings->compute)
      out << fmt::format("  {:<5} {:>6} {:>3}T {:>9.1f} {:<7} {:>7.2f}/cycle {:<11}  {}\n", c.dtype, c.isa, c.threads,
                         c.gops, c.integer ? "GOP/s" : "GFLOP/s", c.ops_per_cycle,
                         c.clock_ghz > 0 ? fmt::format("at {:.2f} GHz", c.clock_ghz) : std::string(), c.source);
    out << "\nmemory ceilings\n";
    for (const auto& m : d.ceilings->memory)
      out << fmt::format("  {:<5} {:<9} {:>3}T {:>9.1f} GB/s {:>7.2f} B/cycle  ({})\n", m.level, m.kernel, m.threads,
                         m.gbps, m.bytes_per_cycle, format_bytes(m.size_bytes));
    out << "\nridge points (FLOP/byte where compute and memory roofs meet, load kernel)\n";
    for (const auto& r : d.ceilings->ridges)
      out << fmt::format("  {:<5} {:>6} x {:<5} {:>3}T  {:>8.3f}\n", r.dtype, r.isa, r.level, r.threads, r.ai);
  }
  for (const auto& s : d.scores) {
    out << fmt::format("\n{}: AI {:.3g} FLOP/byte, {:.2f} GFLOP/s of {:.2f} attainable ({:.1f}%), bound by {}, "
                       "{:.2f}x the ridge point ({:.3g})",
                       s.name, s.ai, s.achieved_gflops, s.attainable_gflops, s.efficiency * 100, s.bound_by,
                       s.distance_to_ridge, s.ridge_ai);
    // Scored against its own roof, the dtype's ceiling may be higher (a mix it cannot use): say both.
    if (s.peak_gflops > s.attainable_gflops * 1.005)
      out << fmt::format("; {} of the table's {} peak, {:.1f}", share_of_peak(s), s.dtype, s.peak_gflops);
    out << "\n";
  }
}

}  // namespace peakprobe
