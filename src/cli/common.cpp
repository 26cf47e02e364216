#include "cli/common.hpp"

#include <unistd.h>

#include <chrono>
#include <ctime>
#include <filesystem>
#include <iostream>
#include <tuple>
#include <utility>

#include <fmt/format.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include "report/console_report.hpp"
#include "report/csv_report.hpp"
#include "report/json_report.hpp"
#include "report/markdown_report.hpp"
#include "report/input_file.hpp"
#include "report/output_file.hpp"
#include "report/ceiling_report.hpp"
#include "report/mem_report.hpp"
#include "report/pair_report.hpp"
#include "report/svg_heatmap.hpp"

namespace peakprobe::cli {

namespace {

// The colour sink of stderr, with every message made printable first: file names, instruction
// texts and filters come from the user and may hold escape sequences or bytes that are not UTF-8.
class EscapingStderrSink final : public spdlog::sinks::stderr_color_sink_mt {
 public:
  void log(const spdlog::details::log_msg& msg) override {
    const std::string safe = printable(std::string_view(msg.payload.data(), msg.payload.size()), kMaxMessageChars);
    spdlog::details::log_msg copy = msg;
    copy.payload = spdlog::string_view_t(safe.data(), safe.size());
    spdlog::sinks::stderr_color_sink_mt::log(copy);
  }

 private:
  static constexpr std::size_t kMaxMessageChars = 2000;  // a 1 MB argument does not fill the screen
};

}  // namespace

bool OutputOptions::writes_stdout() const {
  for (const std::string* p : {&json, &csv, &markdown, &svg})
    if (!p->empty() && writes_to_stdout(*p)) return true;
  return false;
}

std::vector<OutputTarget> output_targets(const OutputOptions& o) {
  std::vector<OutputTarget> out;
  if (!o.json.empty()) out.push_back({"--json", o.json});
  if (!o.csv.empty()) out.push_back({"--csv", o.csv});
  if (!o.markdown.empty()) out.push_back({"--markdown", o.markdown});
  if (!o.svg.empty()) out.push_back({"--svg", o.svg});
  return out;
}

std::string escape_lines(const std::string& text) {
  std::string out;
  std::size_t start = 0;
  while (start < text.size()) {
    const std::size_t nl = text.find('\n', start);
    const std::size_t end = nl == std::string::npos ? text.size() : nl;
    out += printable(std::string_view(text).substr(start, end - start), 2000);
    if (nl == std::string::npos) break;
    out += '\n';
    start = nl + 1;
  }
  return out;
}

void setup_logging(const OutputOptions& o) {
  auto logger = std::make_shared<spdlog::logger>("peakprobe", std::make_shared<EscapingStderrSink>());
  logger->set_pattern("%^%l%$: %v");
  spdlog::set_default_logger(logger);
  spdlog::set_level(o.quiet ? spdlog::level::err
                    : o.verbose >= 2 ? spdlog::level::trace
                    : o.verbose == 1 ? spdlog::level::debug
                                     : spdlog::level::info);
}

int check_outputs(const std::vector<OutputTarget>& targets) {
  const OutputTarget* on_stdout = nullptr;
  std::vector<std::pair<std::filesystem::path, const OutputTarget*>> files;
  for (const auto& t : targets) {
    if (writes_to_stdout(t.path)) {
      if (on_stdout) {
        spdlog::error("{} {} and {} {} both write to standard output; one document per stream: give one of "
                      "them a file", on_stdout->option, on_stdout->path, t.option, t.path);
        return kExitUsage;
      }
      on_stdout = &t;
      continue;
    }
    if (std::string problem = output_path_problem(t.path); !problem.empty()) {
      spdlog::error("{}: {}", t.option, problem);
      return kExitOutput;
    }
    std::error_code ec;
    std::filesystem::path key = std::filesystem::weakly_canonical(t.path, ec);
    if (ec) key = std::filesystem::absolute(t.path, ec).lexically_normal();
    for (const auto& [other, who] : files)
      if (other == key) {
        spdlog::error("{} and {} both name '{}': each output needs a file of its own", who->option, t.option, t.path);
        return kExitUsage;
      }
    files.emplace_back(key, &t);
  }
  return kExitOk;
}

int check_outputs(const OutputOptions& o) { return check_outputs(output_targets(o)); }

int refuse_outputs(const OutputOptions& o, const std::string& command, bool json_ok, bool csv_ok, bool markdown_ok) {
  std::vector<std::string> can;
  if (json_ok) can.push_back("--json");
  if (csv_ok) can.push_back("--csv");
  if (markdown_ok) can.push_back("--markdown");
  const std::string offer = can.empty() ? "it writes no file" : fmt::format("use {}", fmt::join(can, " or "));
  for (auto [given, ok, name] : {std::tuple{&o.json, json_ok, "JSON (--json)"}, std::tuple{&o.csv, csv_ok, "CSV (--csv)"},
                                 std::tuple{&o.markdown, markdown_ok, "Markdown (--markdown)"}})
    if (!given->empty() && !ok) {
      spdlog::error("{} writes no {}; {}", command, name, offer);
      return kExitUsage;
    }
  return kExitOk;
}

int write_jobs(const std::vector<OutputJob>& jobs) {
  try {
    write_output_files(jobs);
  } catch (const OutputError& e) {
    spdlog::error("{}", e.what());
    return kExitOutput;
  }
  return kExitOk;
}

int emit_outputs(const RunDocument& doc, const OutputOptions& o) {
  const bool roof = doc.has_roofline(), dual = !roof && doc.has_dual_issue(), memory = doc.has_memory();
  std::vector<OutputJob> jobs;
  if (!o.json.empty())
    jobs.push_back({o.json, [&](std::ostream& out) { out << json_text(to_json(doc)) << "\n"; }});
  if (!o.csv.empty())
    jobs.push_back({o.csv, [&](std::ostream& out) {
                      if (roof) write_ceilings_csv(out, doc);
                      else if (dual) write_dual_issue_csv(out, doc);
                      else if (memory) write_memory_csv(out, doc);
                      else write_csv(out, doc.results);
                    }});
  if (!o.markdown.empty())
    jobs.push_back({o.markdown, [&](std::ostream& out) {
                      if (roof) write_ceilings_markdown(out, doc);
                      else if (dual) write_dual_issue_markdown(out, doc);
                      else if (memory) write_memory_markdown(out, doc);
                      else write_markdown(out, doc);
                    }});
  if (!o.svg.empty() && doc.matrix)
    jobs.push_back({o.svg, [&](std::ostream& out) {
                      out << pair_heatmap_svg(*doc.matrix, "Pair matrix on " + doc.host.brand);
                    }});
  if (int rc = write_jobs(jobs)) return rc;
  if (!o.writes_stdout()) {
    if (doc.has_roofline()) write_ceilings_console(std::cout, doc);
    else if (doc.has_dual_issue()) write_dual_issue_console(std::cout, doc);
    else if (doc.has_memory()) write_memory_console(std::cout, doc);
    else write_console(std::cout, doc, isatty(STDOUT_FILENO) != 0);
  }
  return document_exit_code(doc);
}

int document_exit_code(const RunDocument& doc) {
  for (const auto& r : doc.results)
    if (r.status == Status::error || r.threads_status == Status::error) return kExitResultErrors;
  for (const auto& b : doc.bandwidth)
    if (b.status == Status::error) return kExitResultErrors;
  for (const auto& l : doc.latency)
    if (l.status == Status::error) return kExitResultErrors;
  for (const auto& m : doc.mixes)
    if (m.status == Status::error) return kExitResultErrors;
  for (const auto& p : doc.pairs)
    if (p.mix.status == Status::error) return kExitResultErrors;
  for (const auto& m : doc.matmuls)  // a wrong result of the report's matmul
    if (m.status == Status::error) return kExitResultErrors;
  return kExitOk;
}

RunDocument new_document(const CpuInfo& host, int argc, char** argv) {
  RunDocument d;
  for (int i = 0; i < argc; ++i) {
    // Recorded in JSON, HTML and Markdown: bytes that are not UTF-8 and control characters escaped.
    std::string a = printable(argv[i], 4096);
    if (i == 0) a = "peakprobe";
    if (a.find_first_of(" \"'$") != std::string::npos) a = "\"" + a + "\"";
    d.command += (i ? " " : "") + a;
  }
  d.version = PEAKPROBE_VERSION;
  std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  d.started_utc = buf;
  d.host = host;
  return d;
}

void progress(const OutputOptions& o, size_t done, size_t total, const std::string& what) {
  if (o.quiet || !isatty(STDERR_FILENO)) return;
  std::string line = fmt::format("[{}/{}] {}", done, total, what);
  if (line.size() > 78) line.resize(78);
  fmt::print(stderr, "\r\033[K{}", line);
  std::fflush(stderr);
}

void progress_done(const OutputOptions& o) {
  if (o.quiet || !isatty(STDERR_FILENO)) return;
  fmt::print(stderr, "\r\033[K");
  std::fflush(stderr);
}

PartTimer::PartTimer(std::string prefix) : prefix_(std::move(prefix)), last_(std::chrono::steady_clock::now()) {}

void PartTimer::lap(const std::string& part) {
  const auto now = std::chrono::steady_clock::now();
  spdlog::debug("{}: {} in {:.1f} s", prefix_, part, std::chrono::duration<double>(now - last_).count());
  last_ = now;
}

}  // namespace peakprobe::cli
