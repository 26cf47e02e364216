// One registration function per subcommand (each in its own cmd_*.cpp).
#pragma once
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "cli/common.hpp"

namespace peakprobe::cli {

struct GlobalOptions {
  OutputOptions out;
  std::vector<std::string> catalogs;
  int cpu = -1;
  int threads = 1;
  int argc = 0;
  char** argv = nullptr;
  int exit_code = kExitOk;
  std::function<void()> action;  // the chosen subcommand's work
  std::string report_out;         // bare `peakprobe --out DIR`
  bool report_quick = false;      // bare `peakprobe --quick`
};

// For options that name a file or folder: an empty value is refused while parsing (exit 2) rather
// than read as "not given".
inline CLI::Validator not_empty() {
  return CLI::Validator([](std::string& v) { return v.empty() ? std::string("an empty path names no file") : std::string(); },
                        "", "not empty");
}

// For floating-point options: a finite number from lo to hi. CLI11's own NonNegativeNumber lets nan
// through and prints its bound, DBL_MAX, with 309 digits.
inline CLI::Validator number_in(double lo, double hi) {
  auto text = [](double v) {
    char buf[32];
    std::snprintf(buf, sizeof(buf), "%g", v);
    return std::string(buf);
  };
  return CLI::Validator(
      [=](std::string& value) {
        char* end = nullptr;
        const double d = std::strtod(value.c_str(), &end);
        if (value.empty() || end != value.c_str() + value.size() || !std::isfinite(d) || d < lo || d > hi)
          return "'" + value + "' is not a number from " + text(lo) + " to " + text(hi);
        return std::string();
      },
      "NUMBER " + text(lo) + ".." + text(hi), "number_in");
}

void add_info_command(CLI::App& app, GlobalOptions& g);
void add_list_command(CLI::App& app, GlobalOptions& g);
void add_run_command(CLI::App& app, GlobalOptions& g);
void add_inst_command(CLI::App& app, GlobalOptions& g);
void add_mix_command(CLI::App& app, GlobalOptions& g);
void add_pair_command(CLI::App& app, GlobalOptions& g);
void add_pairs_command(CLI::App& app, GlobalOptions& g);
void add_flopmix_command(CLI::App& app, GlobalOptions& g);
void add_mem_command(CLI::App& app, GlobalOptions& g);
void add_latency_command(CLI::App& app, GlobalOptions& g);
void add_roofline_command(CLI::App& app, GlobalOptions& g);
void add_score_command(CLI::App& app, GlobalOptions& g);
void add_report_command(CLI::App& app, GlobalOptions& g);
void add_compare_command(CLI::App& app, GlobalOptions& g);
void add_matmul_command(CLI::App& app, GlobalOptions& g);
void add_bench_command(CLI::App& app, GlobalOptions& g);
void add_gpu_command(CLI::App& app, GlobalOptions& g);
void add_table_command(CLI::App& app, GlobalOptions& g);
// The full report into `out_dir` (default: peakprobe-HOST-DATE); what a bare `peakprobe` runs. With
// `with_gpu`, every OpenCL GPU is measured too; with `with_table`, the whole instruction table (as
// `peakprobe table`, with `pipes` as `table --pipes`) becomes a page of the report.
struct ReportOptions {
  std::string out_dir;
  bool quick = false;
  bool with_gpu = true;
  bool with_table = false;
  bool pipes = false;
};
int run_report(GlobalOptions& g, ReportOptions o);
// The report's stdout and its --json/--csv/--markdown files (the folder is written before): the
// ceiling table on the console once, and nothing on it when an output goes to stdout.
int emit_report_outputs(const RunDocument& doc, const OutputOptions& out);
// The whole table of this CPU, every form of the encoder's list, as `peakprobe table [--pipes]`
// measures it, into `doc` (no resume, no checkpoint). Ctrl-C ends it early with the rows measured and
// sets `interrupted`.
int measure_whole_table(GlobalOptions& g, const CpuInfo& cpu, bool pipes, RunDocument& doc, bool& interrupted);

}  // namespace peakprobe::cli
