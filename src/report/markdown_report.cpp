#include "report/markdown_report.hpp"

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>

#include <fmt/format.h>

namespace peakprobe {

namespace {

constexpr const char* kMissing = "-";

// Table cells and list items are single lines; a stray newline or control byte would end the row.
std::string one_line(std::string_view text) {
  std::string s(text);
  std::replace_if(s.begin(), s.end(), [](unsigned char c) { return c < 0x20 || c == 0x7f; }, ' ');
  return s;
}

// GitHub ends a cell at any unescaped '|', even inside a code span.
std::string escape_pipes(std::string_view text) {
  std::string s;
  for (char c : one_line(text)) {
    if (c == '|') s += '\\';
    s += c;
  }
  return s;
}

// A code span keeps '*', '_' and '[' in operands literal; a longer fence covers a backtick.
std::string code(std::string_view text) {
  const bool has_tick = text.find('`') != std::string_view::npos;
  const std::string fence = has_tick ? "``" : "`";
  const std::string pad = has_tick ? " " : "";
  return fence + pad + escape_pipes(text) + pad + fence;
}

std::string fixed(const std::optional<double>& v, int decimals) {
  return v && std::isfinite(*v) ? fmt::format("{:.{}f}", *v, decimals) : kMissing;
}

// Per-core rate with its unit; with several threads the all-core total follows.
std::string rate(const ProbeResult& r) {
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

std::string clock_text(const ClockReading& c) {
  std::string s = c.ghz > 0 && std::isfinite(c.ghz) ? fmt::format("{:.2f} GHz", c.ghz) : "unknown clock";
  if (!c.source.empty()) s += " (" + one_line(c.source) + ")";
  return s;
}

void write_heading(std::ostream& out, const RunDocument& doc) {
  const std::string& cpu = doc.host.brand.empty() ? doc.host.vendor : doc.host.brand;
  out << "## " << escape_pipes(cpu.empty() ? "unknown CPU" : cpu) << " at " << clock_text(doc.clock) << "\n\n";
}

// The destination chain, then each operand's latency when the form has several: "1.000 (2: 5.00)".
std::string latency_cell(const ProbeResult& r) {
  std::string s = fixed(r.latency_cycles, 3);
  if (r.latencies.empty()) return s;
  s += " (";
  for (size_t i = 0; i < r.latencies.size(); ++i)
    s += fmt::format("{}{}: {}{:.2f}", i ? ", " : "", r.latencies[i].operand, r.latencies[i].upper_bound ? "≤" : "",
                     r.latencies[i].cycles);
  return s + ")";
}

void write_row(std::ostream& out, const ProbeResult& r) {
  out << fmt::format("| {} | {} | {} | {} | {} | {} | {} |\n", code(r.instruction), latency_cell(r),
                     fixed(r.recip_throughput_cycles, 3), fixed(r.throughput_ipc, 3), rate(r),
                     r.accumulators > 0 ? std::to_string(r.accumulators) : kMissing, to_string(r.status));
}

void write_table(std::ostream& out, const RunDocument& doc) {
  out << "| instruction | latency (cyc) | recip. tput (cyc) | IPC | GFLOP/s or GOP/s | K | status |\n"
         "|---|--:|--:|--:|--:|--:|---|\n";
  for (const auto& r : doc.results) write_row(out, r);
}

void write_reasons(std::ostream& out, const RunDocument& doc) {
  const bool any = std::any_of(doc.results.begin(), doc.results.end(), [](const ProbeResult& r) {
    return r.status != Status::ok || multi_core_doubted(r);
  });
  if (!any) return;
  out << "\nNot ok:\n\n";
  auto because = [](const std::string& reason) { return reason.empty() ? "no reason given" : escape_pipes(reason); };
  for (const auto& r : doc.results) {
    if (r.status != Status::ok)
      out << "- " << code(r.instruction) << " (" << to_string(r.status) << "): " << because(r.reason) << "\n";
    if (multi_core_doubted(r))
      out << "- " << code(r.instruction) << " on " << r.threads << " threads (" << to_string(r.threads_status)
          << "): " << because(r.threads_reason) << "\n";
  }
}

}  // namespace

void write_markdown(std::ostream& out, const RunDocument& doc) {
  write_heading(out, doc);
  write_table(out, doc);
  write_reasons(out, doc);
}

}  // namespace peakprobe
