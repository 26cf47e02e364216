#include "report/csv_report.hpp"

#include <cmath>
#include <optional>

#include <fmt/format.h>

#include "report/pipe_report.hpp"

namespace peakprobe {

namespace {

// Non-finite values are as good as missing: no consumer can use "nan" in a numeric column.
std::string fixed(double v, int decimals) {
  return std::isfinite(v) ? fmt::format("{:.{}f}", v, decimals) : std::string();
}

std::string fixed(const std::optional<double>& v, int decimals) {
  return v ? fixed(*v, decimals) : std::string();
}

// Zero means "not set" for these fields (no accumulators for a skipped row, no clock reading).
std::string positive(double v, int decimals) { return v > 0 ? fixed(v, decimals) : std::string(); }
std::string positive(int v) { return v > 0 ? std::to_string(v) : std::string(); }

// Shortest exact form: operation counts are small exact numbers (32, 0.5), not measurements.
std::string exact(double v) { return v > 0 && std::isfinite(v) ? fmt::format("{}", v) : std::string(); }

// A Stats with no samples was never measured (skipped and error rows).
std::string stat(const Stats& s, double Stats::*field, int decimals) {
  return s.samples > 0 ? fixed(s.*field, decimals) : std::string();
}

using Cell = std::string (*)(const ProbeResult&);
struct Column {
  std::string_view name;
  Cell cell;
};

constexpr int kCycles = 3, kIpc = 3, kRate = 2, kGhz = 3, kSpread = 4;

constexpr Column kCells[] = {
    {"instruction", [](const ProbeResult& r) { return r.instruction; }},
    {"group", [](const ProbeResult& r) { return r.group; }},
    {"dtype", [](const ProbeResult& r) { return r.dtype; }},
    {"status", [](const ProbeResult& r) { return std::string(to_string(r.status)); }},
    {"latency_cycles", [](const ProbeResult& r) { return fixed(r.latency_cycles, kCycles); }},
    {"recip_throughput_cycles", [](const ProbeResult& r) { return fixed(r.recip_throughput_cycles, kCycles); }},
    {"throughput_ipc", [](const ProbeResult& r) { return fixed(r.throughput_ipc, kIpc); }},
    {"ops_per_instruction", [](const ProbeResult& r) { return exact(r.ops_per_instruction); }},
    {"gflops", [](const ProbeResult& r) { return fixed(r.gflops, kRate); }},
    {"gops", [](const ProbeResult& r) { return fixed(r.gops, kRate); }},
    {"accumulators", [](const ProbeResult& r) { return positive(r.accumulators); }},
    {"threads", [](const ProbeResult& r) { return positive(r.threads); }},
    {"total_gflops", [](const ProbeResult& r) { return fixed(r.total_gflops, kRate); }},
    {"total_gops", [](const ProbeResult& r) { return fixed(r.total_gops, kRate); }},
    {"threads_status",
     [](const ProbeResult& r) { return r.threads > 1 ? std::string(to_string(r.threads_status)) : std::string(); }},
    {"threads_reason", [](const ProbeResult& r) { return r.threads > 1 ? r.threads_reason : std::string(); }},
    {"clock_ghz", [](const ProbeResult& r) { return positive(r.clock.ghz, kGhz); }},
    {"tput_min", [](const ProbeResult& r) { return stat(r.throughput_stats, &Stats::min, kCycles); }},
    {"tput_median", [](const ProbeResult& r) { return stat(r.throughput_stats, &Stats::median, kCycles); }},
    {"tput_spread", [](const ProbeResult& r) { return stat(r.throughput_stats, &Stats::spread, kSpread); }},
    {"lat_min", [](const ProbeResult& r) { return stat(r.latency_stats, &Stats::min, kCycles); }},
    {"lat_median", [](const ProbeResult& r) { return stat(r.latency_stats, &Stats::median, kCycles); }},
    {"lat_spread", [](const ProbeResult& r) { return stat(r.latency_stats, &Stats::spread, kSpread); }},
    {"reason", [](const ProbeResult& r) { return r.reason; }},
    {"repro", [](const ProbeResult& r) { return r.repro; }},
};

constexpr bool cells_follow_header() {
  if (std::size(kCells) != kCsvColumns.size()) return false;
  for (std::size_t i = 0; i < kCsvColumns.size(); ++i)
    if (kCells[i].name != kCsvColumns[i]) return false;
  return true;
}
static_assert(cells_follow_header(), "kCells must list exactly kCsvColumns, in the same order");

template <typename Range, typename Text>
void write_line(std::ostream& out, const Range& range, Text text) {
  bool first = true;
  for (const auto& item : range) {
    if (!first) out << ',';
    out << csv_field(text(item));
    first = false;
  }
  out << '\n';
}

}  // namespace

std::string csv_field(std::string_view text) {
  if (text.find_first_of(",\"\r\n") == std::string_view::npos) return std::string(text);
  std::string quoted = "\"";
  for (char c : text) {
    if (c == '"') quoted += '"';
    quoted += c;
  }
  return quoted + '"';
}

void write_csv(std::ostream& out, const std::vector<ProbeResult>& results) {
  // `table --pipes`: one more column per basis member (the same-port measure, empty where not
  // judged) and a `pipes` summary, named after the basis of the first row that has verdicts.
  std::vector<std::string> basis;
  for (const auto& r : results)
    if (!r.pipes.empty()) {
      for (const auto& v : r.pipes) basis.push_back(v.basis);
      break;
    }
  std::vector<std::string> header(kCsvColumns.begin(), kCsvColumns.end());
  if (!basis.empty()) {
    header.push_back("pipes");
    for (const auto& b : basis) header.push_back("pipe:" + b);
  }
  write_line(out, header, [](const std::string& name) { return name; });
  for (const auto& r : results) {
    std::vector<std::string> cells;
    for (const auto& c : kCells) cells.push_back(c.cell(r));
    if (!basis.empty()) {
      cells.push_back(r.pipes.empty() ? "" : pipe_summary(r.pipes));
      for (size_t k = 0; k < basis.size(); ++k)
        cells.push_back(k < r.pipes.size() && r.pipes[k].basis == basis[k] ? fixed(r.pipes[k].same_port, 2) : "");
    }
    write_line(out, cells, [](const std::string& cell) { return cell; });
  }
}

}  // namespace peakprobe
