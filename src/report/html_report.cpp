#include "report/html_report.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <optional>
#include <string_view>
#include <utility>

#include <fmt/format.h>

#include "memory/sizes.hpp"
#include "report/ceiling_report.hpp"
#include "report/pair_report.hpp"
#include "roofline/ceilings.hpp"
#include "roofline/gpu_ceilings.hpp"
#include "report/svg_util.hpp"

namespace peakprobe {

namespace {

constexpr const char* kMissing = "-";

// No '>' anywhere in the sheet: child selectors are not needed, and keeping the page free of raw
// '>' in text lets the tests check it with the same well-formedness rules as the SVGs.
constexpr const char* kStyle = R"css(
:root { color-scheme: light; }
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif;
  font-size: 15px; line-height: 1.45; color: #1f2328; background: #ffffff;
  max-width: 1280px; margin: 0 auto; padding: 24px 32px 48px; }
h1 { font-size: 1.6em; margin: 0 0 4px; }
h2 { font-size: 1.25em; margin: 36px 0 8px; padding-bottom: 4px; border-bottom: 1px solid #d0d7de; }
h3 { font-size: 1.05em; margin: 20px 0 6px; }
h4 { font-size: 0.95em; margin: 14px 0 4px; color: #424a53; }
p.sub { color: #57606a; margin: 0 0 2px; }
table { border-collapse: collapse; margin: 6px 0 16px; font-size: 14px; }
th, td { padding: 4px 10px; border-bottom: 1px solid #e3e6ea; text-align: left; vertical-align: top; }
thead th { background: #eef1f4; font-weight: 600; border-bottom: 1px solid #c8ced5; }
tbody tr:nth-child(even) { background: #f6f8fa; }
th.num, td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
table.kv th { font-weight: 600; background: none; white-space: nowrap; }
td code { white-space: nowrap; }
code { font-family: ui-monospace, "SFMono-Regular", Menlo, Consolas, "Liberation Mono", monospace; font-size: 0.93em; }
td.skipped { color: #57606a; }
td.mistrusted { color: #8a5300; }
td.error { color: #b3261e; }
figure { margin: 16px 0 28px; }
figcaption { font-weight: 600; margin-bottom: 6px; }
figure svg { display: block; max-width: 100%; height: auto; border: 1px solid #e3e6ea; }
ol.groups li { margin: 2px 0; }
footer { margin-top: 40px; color: #57606a; font-size: 13px; }
)css";

// ---- numbers ----
std::string fixed(double v, int decimals) {
  return std::isfinite(v) ? fmt::format("{:.{}f}", v, decimals) : kMissing;
}

std::string fixed(const std::optional<double>& v, int decimals) { return v ? fixed(*v, decimals) : kMissing; }

std::string percent(double fraction) { return std::isfinite(fraction) ? fmt::format("{:.1f}%", fraction * 100) : kMissing; }

std::string ghz(double v) { return v > 0 && std::isfinite(v) ? fmt::format("{:.2f} GHz", v) : "unknown"; }

std::string count(int n, const char* one, const char* many) { return fmt::format("{} {}", n, n == 1 ? one : many); }

// ---- tables ----
// A cell is plain text, escaped when the table is written; `code` cells are set in monospace and
// `cls` names a CSS class (numbers, statuses).
struct Cell {
  Cell(std::string text_, std::string cls_ = "", bool code_ = false)
      : text(std::move(text_)), cls(std::move(cls_)), code(code_) {}
  std::string text;
  std::string cls;
  bool code = false;
};

Cell num(std::string text) { return {std::move(text), "num"}; }

struct Column {
  std::string heading;
  bool numeric = false;
};

class Table {
 public:
  explicit Table(std::vector<Column> columns) : columns_(std::move(columns)) {}
  void add(std::vector<Cell> row) { rows_.push_back(std::move(row)); }
  bool empty() const { return rows_.empty(); }

  std::string html() const {
    std::string s = "<table>\n<thead><tr>";
    for (const auto& c : columns_)
      s += fmt::format("<th{}>{}</th>", c.numeric ? " class=\"num\"" : "", xml_escape(c.heading));
    s += "</tr></thead>\n<tbody>\n";
    for (const auto& row : rows_) s += row_html(row);
    return s + "</tbody>\n</table>\n";
  }

 private:
  static std::string row_html(const std::vector<Cell>& row) {
    std::string s = "<tr>";
    for (const auto& c : row) {
      const std::string text = c.code ? "<code>" + xml_escape(c.text) + "</code>" : xml_escape(c.text);
      s += fmt::format("<td{}>{}</td>", c.cls.empty() ? "" : " class=\"" + c.cls + "\"", text);
    }
    return s + "</tr>\n";
  }

  std::vector<Column> columns_;
  std::vector<std::vector<Cell>> rows_;
};

// Two columns, names on the left: for descriptions rather than data.
std::string key_value_table(const std::vector<std::pair<std::string, std::string>>& rows) {
  std::string s = "<table class=\"kv\">\n<tbody>\n";
  for (const auto& [key, value] : rows)
    s += fmt::format("<tr><th>{}</th><td>{}</td></tr>\n", xml_escape(key), xml_escape(value));
  return s + "</tbody>\n</table>\n";
}

std::string heading(int level, const std::string& text) {
  return fmt::format("<h{0}>{1}</h{0}>\n", level, xml_escape(text));
}

// The status, and for rows that are not ok the reason too, coloured by the status's class.
Cell status_cell(Status status, const std::string& reason) {
  const std::string name = to_string(status);
  if (status == Status::ok) return {name, ""};
  return {reason.empty() ? name : name + ": " + reason, name};
}

// ---- host ----
std::string cache_text(const CacheLevel& c) {
  std::string s = format_bytes(c.size_bytes);
  if (c.associativity > 0) s += fmt::format(", {}-way", c.associativity);
  if (c.associativity < 0) s += ", fully associative";
  if (c.line_bytes > 0) s += fmt::format(", {} B lines", c.line_bytes);
  if (c.shared_by_cpus > 0) s += ", shared by " + count(c.shared_by_cpus, "logical CPU", "logical CPUs");
  if (c.instances > 0) s += ", " + count(c.instances, "instance", "instances");
  return s;
}

std::string joined(const std::vector<std::string>& items, const char* separator) {
  std::string s;
  for (const auto& item : items) s += (s.empty() ? "" : separator) + item;
  return s;
}

std::string host_section(const RunDocument& doc) {
  const CpuInfo& h = doc.host;
  std::vector<std::pair<std::string, std::string>> rows = {
      {"CPU", h.brand.empty() ? "unknown" : h.brand},
      {"vendor", h.vendor.empty() ? "unknown" : h.vendor},
      {"family / model / stepping",
       fmt::format("family {}, model {} (0x{:x}), stepping {}", h.family, h.model, h.model, h.stepping)},
      {"hypervisor", h.hypervisor ? "yes (timings may include virtualisation overhead)" : "no"},
      {"cores", fmt::format("{}, {}, {}, {}-way SMT", count(h.physical_cores, "physical core", "physical cores"),
                            count(h.logical_cpus, "logical CPU", "logical CPUs"),
                            count(h.packages, "package", "packages"), h.smt_per_core)}};
  for (const auto& c : h.caches) rows.push_back({fmt::format("L{} {}", c.level, c.type), cache_text(c)});
  rows.push_back({"TSC", h.tsc_hz > 0 ? ghz(h.tsc_hz / 1e9) + (h.tsc_invariant ? ", invariant" : ", not invariant")
                                      : "unknown"});
  rows.push_back({"measured clock", ghz(doc.clock.ghz) + (doc.clock.source.empty() ? "" : " (" + doc.clock.source + ")")});
  if (std::isfinite(doc.clock.drift) && doc.clock.ghz > 0) rows.push_back({"clock drift", percent(doc.clock.drift)});
  if (!doc.availability.empty()) {
    std::string cores;
    for (const CoreAvailability& a : doc.availability) cores += (cores.empty() ? "" : "; ") + core_availability_text(a);
    rows.push_back({"wall time the cores gave a thread", cores});
  }
  if (!h.features.empty()) rows.push_back({"ISA features", joined(h.features, ", ")});
  if (!h.os_disabled.empty()) rows.push_back({"disabled by the OS", joined(h.os_disabled, ", ")});
  return "<section id=\"host\">\n" + heading(2, "Host") + key_value_table(rows) + "</section>\n";
}

// ---- ceilings ----
std::string compute_table(const CeilingTable& t, int level = 3) {
  Table table({{"dtype"}, {"isa"}, {"threads", true}, {"rate", true}, {"unit"}, {"ops/cycle/core", true},
               {"clock (GHz)", true}, {"reached by"}});
  for (const auto& c : t.compute)
    table.add({{c.dtype}, {c.isa}, num(std::to_string(c.threads)), num(fixed(c.gops, 1)),
               {c.integer ? "GOP/s" : "GFLOP/s"}, num(fixed(c.ops_per_cycle, 2)), num(fixed(c.clock_ghz, 2)),
               {c.source, "", true}});
  return heading(level, "Compute ceilings") + table.html();
}

std::string memory_table(const CeilingTable& t, int level = 3) {
  Table table({{"level"}, {"kernel"}, {"threads", true}, {"GB/s", true}, {"bytes/cycle/core", true},
               {"working set", true}});
  for (const auto& m : t.memory)
    table.add({{m.level}, {m.kernel}, num(std::to_string(m.threads)), num(fixed(m.gbps, 1)),
               num(fixed(m.bytes_per_cycle, 2)), num(m.size_bytes ? format_bytes(m.size_bytes) : kMissing)});
  return heading(level, "Memory ceilings") + table.html();
}

std::string ridge_table(const CeilingTable& t, int level = 3) {
  Table table({{"dtype"}, {"isa"}, {"level"}, {"kernel"}, {"threads", true}, {"ridge (FLOP/byte)", true}});
  for (const auto& r : t.ridges)
    table.add({{r.dtype}, {r.isa}, {r.level}, {r.kernel}, num(std::to_string(r.threads)), num(fmt_si(r.ai))});
  return heading(level, "Ridge points") + "<p class=\"sub\">Arithmetic intensity where a memory roof meets a compute "
                                      "roof: below it a kernel is memory-bound.</p>\n" + table.html();
}

std::string ceilings_section(const CeilingTable& t) {
  if (t.compute.empty() && t.memory.empty() && t.ridges.empty()) return "";
  std::string s = "<section id=\"ceilings\">\n" + heading(2, "Ceilings");
  if (!t.compute.empty()) s += compute_table(t);
  if (!t.memory.empty()) s += memory_table(t);
  if (!t.ridges.empty()) s += ridge_table(t);
  return s + "</section>\n";
}

// ---- kernels on the roofline ----
// Each scored kernel (the report's bundled matmul, one row a thread count): where it sits against
// the roof that binds it and against its dtype's highest ceiling.
std::string kernels_section(const RunDocument& doc) {
  if (doc.scores.empty()) return "";
  Table table({{"kernel"}, {"threads", true}, {"AI (FLOP/byte)", true}, {"GFLOP/s", true}, {"attainable", true},
               {"efficiency", true}, {"bound by"}, {"of the dtype's peak", true}});
  for (const KernelScore& k : doc.scores)
    table.add({{k.name}, num(std::to_string(k.threads)), num(fmt_si(k.ai)), num(fixed(k.achieved_gflops, 1)),
               num(fixed(k.attainable_gflops, 1)), num(fixed(100 * k.efficiency, 1) + "%"), {k.bound_by, "", true},
               num(k.peak_gflops > 0 ? fixed(100 * k.achieved_gflops / k.peak_gflops, 1) + "%" : kMissing)});
  return "<section id=\"kernels\">\n" + heading(2, "Kernels on the roofline") +
         "<p class=\"sub\">Efficiency is against the roof that binds the kernel: a kernel made of one instruction "
         "(the matmul's multiply-add) is held to that instruction's rate on the same cores; the dtype's peak "
         "may be a mix of instructions it cannot use. Intensity counts the operands moved once, against DRAM.</p>\n" +
         table.html() + "</section>\n";
}

// ---- OpenCL GPUs ----
// Each device: what the driver says of it, then its roofline as ceiling tables (the plot is among
// the plots). Per-cycle figures are per compute unit at the clock the driver reports.
std::string gpu_section(const RunDocument& doc) {
  if (doc.gpus.empty()) return "";
  std::string s = "<section id=\"gpus\">\n" + heading(2, "OpenCL GPUs");
  for (const GpuReport& r : doc.gpus) {
    const GpuDevice& d = r.device;
    s += heading(3, fmt::format("Device {}: {}", d.index, d.name.empty() ? "unnamed" : d.name));
    std::vector<std::pair<std::string, std::string>> rows = {
        {"vendor", d.vendor},
        {"platform", d.platform},
        {"driver", d.driver_version},
        {"compute units", std::to_string(d.compute_units)},
        {"clock (driver)", fmt::format("{} MHz", d.clock_mhz)},
        {"global memory", format_bytes(d.global_mem_bytes)},
        {"local memory", format_bytes(d.local_mem_bytes)},
        {"measured in", fmt::format("{:.1f} s", r.seconds)}};
    if (r.status != Status::ok) rows.push_back({"status", std::string(to_string(r.status)) + ": " + r.reason});
    s += key_value_table(rows);
    const CeilingTable t = gpu_ceiling_table(r);
    if (!t.compute.empty()) s += compute_table(t, 4);
    if (!t.memory.empty()) s += memory_table(t, 4);
    if (!t.ridges.empty()) s += ridge_table(t, 4);
  }
  return s + "</section>\n";
}

// ---- plots ----
// An inline <svg> in HTML takes no XML declaration: drop everything before the <svg element.
std::string inline_svg(const std::string& svg) {
  const std::size_t at = svg.find("<svg");
  return at == std::string::npos ? svg : svg.substr(at);
}

std::string plots_section(const std::vector<std::pair<std::string, std::string>>& svgs) {
  if (svgs.empty()) return "";
  std::string s = "<section id=\"plots\">\n" + heading(2, "Plots");
  for (const auto& [title, svg] : svgs)
    s += "<figure>\n<figcaption>" + xml_escape(title) + "</figcaption>\n" + inline_svg(svg) + "</figure>\n";
  return s + "</section>\n";
}

// ---- instructions ----
// Per-core rate with its unit; with several threads the all-core total follows.
std::string rate_text(const ProbeResult& r) {
  const bool fp = r.gflops.has_value();
  const std::optional<double> per_core = fp ? r.gflops : r.gops;
  if (!per_core || !std::isfinite(*per_core)) return kMissing;
  std::string s = fmt::format("{:.2f} {}", *per_core, fp ? "GFLOP/s" : "GOP/s");
  const std::optional<double> total = fp ? r.total_gflops : r.total_gops;
  if (multi_core_doubted(r))
    s += fmt::format(" ({} threads: {})", r.threads, to_string(r.threads_status));
  else if (r.threads > 1 && total && std::isfinite(*total))
    s += fmt::format(" ({} threads: {:.2f})", r.threads, *total);
  return s;
}

// A probe row's status cell; where its run on every core was doubted, that verdict and its reason
// follow (an `ok` row then takes the threaded verdict's colour).
Cell probe_status_cell(const ProbeResult& r) {
  if (!multi_core_doubted(r)) return status_cell(r.status, r.reason);
  const std::string t = fmt::format("{} threads {}: {}", r.threads, to_string(r.threads_status), r.threads_reason);
  if (r.status == Status::ok) return {"ok; " + t, to_string(r.threads_status)};
  Cell c = status_cell(r.status, r.reason);
  c.text += "; " + t;
  return c;
}

std::string instructions_section(const RunDocument& doc) {
  if (doc.results.empty()) return "";
  Table table({{"instruction"}, {"latency (cyc)", true}, {"recip. throughput (cyc)", true}, {"IPC", true},
               {"GFLOP/s | GOP/s", true}, {"K", true}, {"status"}});
  for (const auto& r : doc.results)
    table.add({{r.instruction, "", true}, num(fixed(r.latency_cycles, 3)), num(fixed(r.recip_throughput_cycles, 3)),
               num(fixed(r.throughput_ipc, 3)), num(rate_text(r)),
               num(r.accumulators > 0 ? std::to_string(r.accumulators) : kMissing),
               probe_status_cell(r)});
  return "<section id=\"instructions\">\n" + heading(2, "Instructions") + table.html() + "</section>\n";
}

// ---- memory ----
std::string bandwidth_table(const RunDocument& doc) {
  Table table({{"kernel"}, {"isa"}, {"working set", true}, {"threads", true}, {"GB/s", true},
               {"bytes/cycle", true}, {"spread", true}, {"imbalance", true}, {"status"}});
  for (const auto& r : doc.bandwidth)
    table.add({{r.kernel}, {r.isa}, num(format_bytes(r.size_bytes)), num(std::to_string(r.threads)),
               num(fixed(r.gbps, 1)), num(fixed(r.bytes_per_cycle, 2)), num(percent(r.gbps_stats.spread)),
               num(percent(r.imbalance)), status_cell(r.status, r.reason)});
  return heading(3, "Bandwidth") + table.html();
}

std::string pages_text(const LatencyResult& r) {
  if (r.pages_granted.empty() || r.pages_granted == r.pages) return r.pages;
  return r.pages + " (granted " + r.pages_granted + ")";
}

std::string latency_table(const RunDocument& doc) {
  Table table({{"mode"}, {"pages"}, {"working set", true}, {"chains", true}, {"ns", true}, {"cycles", true},
               {"status"}});
  for (const auto& r : doc.latency)
    table.add({{r.mode}, {pages_text(r)}, num(format_bytes(r.size_bytes)), num(std::to_string(r.chains)),
               num(fixed(r.latency_ns, 2)), num(fixed(r.latency_cycles, 1)), status_cell(r.status, r.reason)});
  return heading(3, "Latency") + table.html();
}

std::string levels_table(const RunDocument& doc) {
  Table table({{"level"}, {"edge", true}, {"GB/s", true}, {"reported", true}, {"note"}});
  for (const auto& l : doc.levels)
    table.add({{l.name}, num(l.edge_bytes ? format_bytes(*l.edge_bytes) : kMissing), num(fixed(l.gbps, 1)),
               num(l.reported_bytes ? format_bytes(*l.reported_bytes) : kMissing), {l.note}});
  return heading(3, "Cache levels found in the sweep") + table.html();
}

std::string memory_section(const RunDocument& doc) {
  if (!doc.has_memory() && doc.levels.empty()) return "";
  std::string s = "<section id=\"memory\">\n" + heading(2, "Memory");
  if (!doc.bandwidth.empty()) s += bandwidth_table(doc);
  if (!doc.levels.empty()) s += levels_table(doc);
  if (!doc.latency.empty()) s += latency_table(doc);
  return s + "</section>\n";
}

// ---- dual issue ----
std::string parts_text(const MixResult& m) {
  std::string s;
  for (const auto& p : m.parts) s += (s.empty() ? "" : " + ") + fmt::format("{} x{}", p.instruction, p.weight);
  return s;
}

std::string mixes_table(const std::vector<MixResult>& mixes) {
  Table table({{"mix"}, {"cycles/group", true}, {"IPC", true}, {"GFLOP/s | GOP/s", true}, {"status"}});
  for (const auto& m : mixes) {
    const std::string rate = m.gflops ? fixed(m.gflops, 2) + " GFLOP/s" : m.gops ? fixed(m.gops, 2) + " GOP/s" : kMissing;
    table.add({{parts_text(m), "", true}, num(fixed(m.cycles_per_group, 3)), num(fixed(m.ipc, 3)), num(rate),
               status_cell(m.status, m.reason)});
  }
  return heading(3, "Mixes") + table.html();
}

std::string part_name(const MixResult& m, std::size_t i) { return i < m.parts.size() ? m.parts[i].instruction : kMissing; }

std::string pairs_table(const std::vector<PairResult>& pairs) {
  Table table({{"A"}, {"B"}, {"cycles/group", true}, {"same-port", true}, {"class"}, {"status"}});
  for (const auto& p : pairs)
    table.add({{part_name(p.mix, 0), "", true}, {part_name(p.mix, 1), "", true}, num(fixed(p.mix.cycles_per_group, 3)),
               num(fixed(p.same_port, 2)), {p.classification ? pair_class_text(p) : kMissing},
               status_cell(p.mix.status, p.mix.reason)});
  return heading(3, "Pairs") + table.html();
}

std::string groups_list(const PairMatrix& m) {
  std::string s = heading(3, "Inferred pipe groups");
  if (m.groups.empty()) {
    s += "<p>none</p>\n";
  } else {
    s += "<ol class=\"groups\">\n";
    for (const auto& g : m.groups) {
      std::string items;
      for (const auto& name : g) items += (items.empty() ? "" : "; ") + ("<code>" + xml_escape(name) + "</code>");
      s += "<li>" + items + "</li>\n";
    }
    s += "</ol>\n";
  }
  std::string paid;
  for (const auto& p : m.pairs)
    if (p.penalty && p.mix.parts.size() == 2)
      paid += (paid.empty() ? "" : "; ") + ("<code>" + xml_escape(p.mix.parts[0].instruction) + "</code> + <code>" +
                                            xml_escape(p.mix.parts[1].instruction) + "</code>");
  if (!paid.empty())
    s += "<p>Left out of the groups, far slower than their two parts one after the other (a cost paid only "
         "together, not a pipe): " + paid + ".</p>\n";
  return s;
}

std::string flop_mix_text(const FlopMixSearch& f) {
  return fmt::format("Best FLOP mix of {} and {}: {}:{}, {} FLOP/cycle, {} GFLOP/s ({} ratios tried).", f.a, f.b,
                     f.best_a, f.best_b, fixed(f.best_flops_per_cycle, 2), fixed(f.best_gflops, 2), f.tried.size());
}

std::string dual_issue_section(const RunDocument& doc, const CeilingTable& t) {
  if (!doc.has_dual_issue()) return "";
  std::string s = "<section id=\"pairs\">\n" + heading(2, "Dual issue");
  if (!doc.mixes.empty()) s += mixes_table(doc.mixes);
  // A matrix carries its own pairs; show them when the document has no separate list.
  const auto& pairs = !doc.pairs.empty() || !doc.matrix ? doc.pairs : doc.matrix->pairs;
  if (!pairs.empty()) s += pairs_table(pairs);
  if (doc.matrix) s += groups_list(*doc.matrix);
  // Of the searches (one per type and width, some in two encodings), say which set a ceiling.
  for (const auto& f : doc.flop_mixes) {
    std::string text = flop_mix_text(f);
    const std::string source = mix_source(f);
    for (const auto& c : t.compute)
      if (c.threads == 1 && c.source == source)
        text += fmt::format(" It sets the {} {} ceiling.", c.dtype, c.isa);
    s += "<p>" + xml_escape(text) + "</p>\n";
  }
  return s + "</section>\n";
}

// ---- the whole table (report --table) ----
std::string table_section(const TablePage* page) {
  if (page == nullptr || page->doc == nullptr) return "";
  const RunDocument& t = *page->doc;
  std::map<Status, int> by_status;
  for (const auto& r : t.results) ++by_status[r.status];
  std::string forms = fmt::format("{}: {} ok, {} mistrusted, {} error, {} skipped", t.results.size(),
                                  by_status[Status::ok], by_status[Status::mistrusted], by_status[Status::error],
                                  by_status[Status::skipped]);
  // The counts above judge the one-core figures: a doubted all-cores run of an `ok` form is counted apart.
  if (const auto doubted = std::count_if(t.results.begin(), t.results.end(), multi_core_doubted); doubted > 0)
    forms += fmt::format("; {} multi-core {} not ok", doubted, doubted == 1 ? "run" : "runs");
  std::vector<std::pair<std::string, std::string>> rows = {{"forms", forms}, {"measured clock", ghz(t.clock.ghz)}};
  if (t.pipe_groups && !t.pipe_groups->basis.empty()) {
    std::vector<std::string> members;
    for (const auto& b : t.pipe_groups->basis) members.push_back(b.instruction);
    rows.push_back({"pipe basis", fmt::format("{} members: {}", members.size(), joined(members, "; "))});
    rows.push_back({"issue width seen", fixed(t.pipe_groups->issue_width, 2) + " instructions/cycle"});
  }
  std::string s = "<section id=\"table\">\n" + heading(2, "Instruction table");
  s += "<p><a href=\"" + xml_escape(page->file) + "\">" + xml_escape(page->file) +
       "</a>: every instruction form of this CPU, measured as by <code>peakprobe table</code> (filter, sort by any "
       "column" + (t.pipe_groups ? ", pipe groups as columns" : std::string()) + ").</p>\n";
  return s + key_value_table(rows) + "</section>\n";
}

// ---- page ----
std::string page_head(const RunDocument& doc) {
  const std::string cpu = doc.host.brand.empty() ? "unknown CPU" : doc.host.brand;
  std::string s = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\"/>\n";
  s += "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"/>\n";
  s += "<title>" + xml_escape("peakprobe: " + cpu) + "</title>\n";
  s += std::string("<style>") + kStyle + "</style>\n</head>\n<body>\n";
  s += "<header>\n" + heading(1, "peakprobe report: " + cpu);
  s += "<p class=\"sub\">" + xml_escape(fmt::format("peakprobe {}, started {}", doc.version, doc.started_utc)) + "</p>\n";
  if (!doc.command.empty()) s += "<p class=\"sub\"><code>" + xml_escape(doc.command) + "</code></p>\n";
  return s + "</header>\n";
}

}  // namespace

std::string html_report(const RunDocument& doc, const CeilingTable& t,
                        const std::vector<std::pair<std::string, std::string>>& svgs, const TablePage* table) {
  std::string s = page_head(doc);
  s += "<main>\n";
  s += host_section(doc) + ceilings_section(t) + kernels_section(doc) + gpu_section(doc) + plots_section(svgs) +
       instructions_section(doc) + table_section(table) + memory_section(doc) + dual_issue_section(doc, t);
  s += "</main>\n<footer>" + xml_escape("Generated by peakprobe " + doc.version + ".") + "</footer>\n";
  return s + "</body>\n</html>\n";
}

}  // namespace peakprobe
