#include "cli/common.hpp"

#include <unistd.h>

#include <chrono>
#include <ctime>
#include <filesystem>
#include <iostream>

#include <fmt/format.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include "report/console_report.hpp"
#include "report/csv_report.hpp"
#include "report/json_report.hpp"
#include "report/markdown_report.hpp"
#include "report/output_file.hpp"
#include "report/ceiling_report.hpp"
#include "report/mem_report.hpp"
#include "report/pair_report.hpp"
#include "report/svg_heatmap.hpp"

namespace peakprobe::cli {

void setup_logging(const OutputOptions& o) {
  auto logger = spdlog::stderr_color_mt("peakprobe");
  logger->set_pattern("%^%l%$: %v");
  spdlog::set_default_logger(logger);
  spdlog::set_level(o.quiet ? spdlog::level::err
                    : o.verbose >= 2 ? spdlog::level::trace
                    : o.verbose == 1 ? spdlog::level::debug
                                     : spdlog::level::info);
}

bool check_output_paths(const OutputOptions& o, std::string& error) {
  for (const std::string* p : {&o.json, &o.csv, &o.markdown, &o.svg}) {
    if (p->empty() || *p == "-") continue;
    std::filesystem::path path(*p);
    std::filesystem::path dir = path.has_parent_path() ? path.parent_path() : ".";
    std::error_code ec;
    if (!std::filesystem::is_directory(dir, ec)) {
      error = "cannot write '" + *p + "': directory '" + dir.string() + "' does not exist";
      return false;
    }
    if (access(dir.c_str(), W_OK) != 0) {
      error = "cannot write '" + *p + "': directory '" + dir.string() + "' is not writable";
      return false;
    }
    if (std::filesystem::is_directory(path, ec)) {
      error = "cannot write '" + *p + "': it is a directory";
      return false;
    }
  }
  return true;
}

int emit_outputs(const RunDocument& doc, const OutputOptions& o) {
  try {
    const bool roof = doc.has_roofline(), dual = !roof && doc.has_dual_issue(), memory = doc.has_memory();
    if (!o.json.empty())
      write_output_file(o.json, [&](std::ostream& out) { out << json_text(to_json(doc)) << "\n"; });
    if (!o.csv.empty())
      write_output_file(o.csv, [&](std::ostream& out) {
        if (roof) write_ceilings_csv(out, doc);
        else if (dual) write_dual_issue_csv(out, doc);
        else if (memory) write_memory_csv(out, doc);
        else write_csv(out, doc.results);
      });
    if (!o.markdown.empty())
      write_output_file(o.markdown, [&](std::ostream& out) {
        if (roof) write_ceilings_markdown(out, doc);
        else if (dual) write_dual_issue_markdown(out, doc);
        else if (memory) write_memory_markdown(out, doc);
        else write_markdown(out, doc);
      });
    if (!o.svg.empty() && doc.matrix)
      write_output_file(o.svg, [&](std::ostream& out) {
        out << pair_heatmap_svg(*doc.matrix, "Pair matrix on " + doc.host.brand);
      });
  } catch (const OutputError& e) {
    spdlog::error("{}", e.what());
    return kExitOutput;
  }
  if (!o.writes_stdout()) {
    if (doc.has_roofline()) write_ceilings_console(std::cout, doc);
    else if (doc.has_dual_issue()) write_dual_issue_console(std::cout, doc);
    else if (doc.has_memory()) write_memory_console(std::cout, doc);
    else write_console(std::cout, doc, isatty(STDOUT_FILENO) != 0);
  }
  for (const auto& r : doc.results)
    if (r.status == Status::error) return kExitResultErrors;
  for (const auto& b : doc.bandwidth)
    if (b.status == Status::error) return kExitResultErrors;
  for (const auto& l : doc.latency)
    if (l.status == Status::error) return kExitResultErrors;
  for (const auto& m : doc.mixes)
    if (m.status == Status::error) return kExitResultErrors;
  for (const auto& p : doc.pairs)
    if (p.mix.status == Status::error) return kExitResultErrors;
  return kExitOk;
}

RunDocument new_document(const CpuInfo& host, int argc, char** argv) {
  RunDocument d;
  for (int i = 0; i < argc; ++i) {
    std::string a = argv[i];
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

}  // namespace peakprobe::cli
