#include "report/console_report.hpp"

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "report/pipe_report.hpp"

namespace peakprobe {

namespace {

// Column widths. The reason of a skipped or error row spans the numeric columns (lat .. K).
constexpr std::size_t kMinInstruction = 11, kMaxInstruction = 40;
constexpr std::size_t kLat = 8, kRtput = 8, kIpc = 6, kRateNumber = 8, kRateUnit = 7, kK = 3;
constexpr std::size_t kGap = 2;
constexpr std::size_t kRate = kRateNumber + 1 + kRateUnit;
constexpr std::size_t kNumbers = kLat + kGap + kRtput + kGap + kIpc + kGap + kRate + kGap + kK;
constexpr const char* kMissing = "-";

// Terminal text must stay on one line and must not smuggle escape codes in.
std::string one_line(std::string_view text) {
  std::string s(text);
  std::replace_if(s.begin(), s.end(), [](unsigned char c) { return c < 0x20 || c == 0x7f; }, ' ');
  return s;
}

// Cuts to at most `width` bytes with "..." at the end, never inside a UTF-8 sequence.
std::string fit(std::string_view text, std::size_t width) {
  std::string s = one_line(text);
  if (s.size() <= width) return s;
  if (width < 3) return s.substr(0, width);
  std::size_t cut = width - 3;
  while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80) --cut;
  return s.substr(0, cut) + "...";
}

std::string fixed(const std::optional<double>& v, int decimals) {
  return v && std::isfinite(*v) ? fmt::format("{:.{}f}", *v, decimals) : kMissing;
}

bool is_fp(const ProbeResult& r) { return r.gflops.has_value() || r.total_gflops.has_value(); }

std::string rate_cell(const ProbeResult& r) {
  const std::optional<double> v = is_fp(r) ? r.gflops : r.gops;
  if (!v || !std::isfinite(*v)) return fmt::format("{:>{}}", kMissing, kRateNumber) + std::string(1 + kRateUnit, ' ');
  return fmt::format("{:>{}.2f} {:<{}}", *v, kRateNumber, is_fp(r) ? "GFLOP/s" : "GOP/s", kRateUnit);
}

std::string numbers(const ProbeResult& r) {
  const std::string k = r.accumulators > 0 ? std::to_string(r.accumulators) : kMissing;
  return fmt::format("{:>{}}  {:>{}}  {:>{}}  {}  {:>{}}", fixed(r.latency_cycles, 3), kLat,
                     fixed(r.recip_throughput_cycles, 3), kRtput, fixed(r.throughput_ipc, 3), kIpc, rate_cell(r),
                     k, kK);
}

bool shows_reason_in_place_of_numbers(const ProbeResult& r) {
  return r.status == Status::skipped || r.status == Status::error;
}

char margin(Status s) {
  switch (s) {
    case Status::mistrusted: return '?';
    case Status::error: return '!';
    default: return ' ';
  }
}

const char* ansi(Status s) {
  switch (s) {
    case Status::ok: return "\x1b[32m";
    case Status::skipped: return "\x1b[2m";
    case Status::mistrusted: return "\x1b[33m";
    case Status::error: return "\x1b[31m";
  }
  return "";
}

// Lines under a row: why it is mistrusted, and the all-core total of a multi-thread row. They get
// their own lines because the status column ends too close to the console width to hold them.
std::vector<std::string> notes(const ProbeResult& r) {
  std::vector<std::string> lines;
  if (r.status == Status::mistrusted && !r.reason.empty()) lines.push_back("mistrusted: " + r.reason);
  if (!r.latencies.empty()) {
    std::string l = "latency by operand:";
    for (size_t i = 0; i < r.latencies.size(); ++i)
      l += fmt::format("{} {} ({}) {}{:.2f}", i ? "," : "", r.latencies[i].operand, r.latencies[i].kind,
                       r.latencies[i].upper_bound ? "<=" : "", r.latencies[i].cycles);
    lines.push_back(l);
  }
  if (!r.pipes.empty()) lines.push_back("pipes: " + pipe_summary(r.pipes));
  const std::optional<double> total = is_fp(r) ? r.total_gflops : r.total_gops;
  if (multi_core_doubted(r))
    lines.push_back(fmt::format("{} threads: {}: {}", r.threads, to_string(r.threads_status), r.threads_reason));
  else if (r.threads > 1 && total && std::isfinite(*total))
    lines.push_back(fmt::format("total {:.2f} {} on {} threads", *total, is_fp(r) ? "GFLOP/s" : "GOP/s", r.threads));
  return lines;
}

class Table {
 public:
  Table(std::ostream& out, const std::vector<ProbeResult>& rows, bool color)
      : out_(out), color_(color), instruction_(instruction_width(rows)) {}

  void header() const {
    out_ << fmt::format("  {:<{}}  {:>{}}  {:>{}}  {:>{}}  {:>{}}  {:>{}}  status\n", "instruction", instruction_,
                        "lat", kLat, "rtput", kRtput, "ipc", kIpc, "GFLOP/s|GOP/s", kRate, "K", kK);
  }

  void group(const std::string& name) const { out_ << "[" << fit(name.empty() ? "(no group)" : name, 60) << "]\n"; }

  void row(const ProbeResult& r) const {
    const std::string body = shows_reason_in_place_of_numbers(r)
                                 ? fmt::format("{:<{}}", fit(reason(r), kNumbers), kNumbers)
                                 : numbers(r);
    out_ << fmt::format("{} {:<{}}  {}  ", margin(r.status), fit(r.instruction, instruction_), instruction_, body)
         << paint(r.status, to_string(r.status)) << "\n";
    // Notes start under the numbers, so the instruction column stays easy to scan.
    const std::size_t indent = 2 + instruction_ + kGap;
    for (const auto& n : notes(r))
      out_ << std::string(indent, ' ') << fit(n, kConsoleWidth - indent) << "\n";
  }

 private:
  static std::size_t instruction_width(const std::vector<ProbeResult>& rows) {
    std::size_t w = kMinInstruction;
    for (const auto& r : rows) w = std::max(w, r.instruction.size());
    return std::min(w, kMaxInstruction);
  }

  static std::string reason(const ProbeResult& r) { return r.reason.empty() ? "no reason given" : r.reason; }

  std::string paint(Status s, const std::string& text) const {
    return color_ ? ansi(s) + text + "\x1b[0m" : text;
  }

  std::ostream& out_;
  bool color_;
  std::size_t instruction_;
};

// Groups in order of first appearance, rows in their given order inside a group.
std::vector<std::string> groups_in_order(const std::vector<ProbeResult>& rows) {
  std::vector<std::string> groups;
  for (const auto& r : rows)
    if (std::find(groups.begin(), groups.end(), r.group) == groups.end()) groups.push_back(r.group);
  return groups;
}

std::string footer(const RunDocument& doc) {
  auto count = [&](Status s) {
    return std::count_if(doc.results.begin(), doc.results.end(), [s](const ProbeResult& r) { return r.status == s; });
  };
  const ClockReading& c = doc.clock;
  std::string clock = c.ghz > 0 && std::isfinite(c.ghz) ? fmt::format("clock {:.2f} GHz", c.ghz) : "clock unknown";
  if (!c.source.empty()) clock += " (" + one_line(c.source) + ")";
  std::string s = fmt::format("{}, {} ok, {} skipped, {} mistrusted, {} error", clock, count(Status::ok),
                              count(Status::skipped), count(Status::mistrusted), count(Status::error));
  // The one-core counts above do not see a doubted run on every core: count those apart.
  const auto threaded = std::count_if(doc.results.begin(), doc.results.end(), multi_core_doubted);
  if (threaded > 0) s += fmt::format("; {} multi-core {} not ok", threaded, threaded == 1 ? "run" : "runs");
  return s;
}

std::string title(const RunDocument& doc) {
  const std::string& cpu = doc.host.brand.empty() ? doc.host.vendor : doc.host.brand;
  return fit(fmt::format("peakprobe {} on {}", doc.version, cpu.empty() ? "unknown CPU" : cpu), kConsoleWidth);
}

}  // namespace

void write_console(std::ostream& out, const RunDocument& doc, bool color) {
  out << title(doc) << "\n\n";
  Table table(out, doc.results, color);
  table.header();
  for (const auto& g : groups_in_order(doc.results)) {
    table.group(g);
    for (const auto& r : doc.results)
      if (r.group == g) table.row(r);
  }
  if (doc.pipe_groups) {
    out << fmt::format("\npipe basis ({} members; issue width seen {:.2f}/cycle):\n", doc.pipe_groups->basis.size(),
                       doc.pipe_groups->issue_width);
    for (size_t k = 0; k < doc.pipe_groups->basis.size(); ++k) {
      const PipeBasisMember& b = doc.pipe_groups->basis[k];
      out << fit(fmt::format("  {}: {} ({})", k + 1, b.instruction, fmt::join(b.members, "; ")), kConsoleWidth) << "\n";
    }
  }
  out << "\n" << footer(doc) << "\n";
}

}  // namespace peakprobe
