// `peakprobe compare OLD.json NEW.json`: the regression gate for CI. It measures nothing; it reads two
// peakprobe/1 documents and exits 5 when any metric got worse beyond the thresholds.
#include <unistd.h>

#include <iostream>
#include <memory>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "cli/commands.hpp"
#include "report/json_report.hpp"
#include "compare/compare.hpp"
#include "report/input_file.hpp"
#include "report/output_file.hpp"

namespace peakprobe::cli {
namespace {

// At least one metric regressed. common.hpp's ExitCode stops at 4; this one belongs to compare only.
constexpr int kExitRegression = 5;

struct CompareArgs {
  std::string old_path, new_path;
  double time_percent = 5.0, throughput_percent = 5.0;
  bool fixed_thresholds = false;
  bool list_all = false;
};

std::string display_name(const std::string& path) { return path == "-" ? "standard input" : path; }

// Every failure names the file, so a CI log says which of the two inputs is broken.
Expected<nlohmann::json> parse_document(const std::string& text, const std::string& path) {
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    // parse_error, and out_of_range for a number beyond a double (1e400).
    return make_error(fmt::format("{}: not valid JSON ({})", display_name(path), e.what()));
  }
  if (std::string p = schema_problem(doc); !p.empty()) return make_error(display_name(path) + ": " + p);
  return doc;
}

Expected<nlohmann::json> load_document(const std::string& path) {
  auto text = path == "-" ? read_input_stream(std::cin, "standard input") : read_input_file(path, "document");
  if (!text) return make_error(text.error());
  return parse_document(*text, path);
}

// Returns kExitOk, or kExitOutput after logging why a file could not be written.
int write_outputs(const CompareReport& report, const CompareArgs& args, const OutputOptions& o) {
  std::vector<OutputJob> jobs;
  if (!o.json.empty())
    jobs.push_back({o.json, [&](std::ostream& out) {
                      nlohmann::json j = to_json(report);
                      j["old_file"] = args.old_path;
                      j["new_file"] = args.new_path;
                      out << json_text(j) << "\n";
                    }});
  if (!o.markdown.empty())
    jobs.push_back({o.markdown, [&](std::ostream& out) { write_compare_markdown(out, report, args.list_all); }});
  if (int rc = write_jobs(jobs)) return rc;
  return kExitOk;
}

int run_compare(const CompareArgs& args, const OutputOptions& o) {
  if (args.old_path == "-" && args.new_path == "-") {
    spdlog::error("compare: OLD and NEW cannot both be '-': standard input holds one document");
    return kExitUsage;
  }
  if (int rc = refuse_outputs(o, "compare", true, false, true)) return rc;
  if (int rc = check_outputs(o)) return rc;
  auto old_doc = load_document(args.old_path);
  if (!old_doc) {
    spdlog::error("{}", old_doc.error());
    return kExitUsage;
  }
  auto new_doc = load_document(args.new_path);
  if (!new_doc) {
    spdlog::error("{}", new_doc.error());
    return kExitUsage;
  }
  CompareOptions options{args.time_percent / 100, args.throughput_percent / 100, !args.fixed_thresholds,
                         !args.fixed_thresholds};
  auto report = compare_documents(*old_doc, *new_doc, options);
  if (!report) {
    spdlog::error("{}", report.error());
    return kExitUsage;
  }
  if (int rc = write_outputs(*report, args, o); rc != kExitOk) return rc;
  // Same rule as the measuring commands: stdout carries either a requested format or the console text.
  if (o.writes_stdout()) {
    for (const auto& w : report->warnings) spdlog::warn("{}", w);
  } else {
    write_compare_console(std::cout, *report, isatty(STDOUT_FILENO) != 0, args.list_all);
  }
  return report->regressions > 0 ? kExitRegression : kExitOk;
}

}  // namespace

void add_compare_command(CLI::App& app, GlobalOptions& g) {
  auto* cmd = app.add_subcommand("compare", "Compare two JSON documents and flag regressions (for CI)");
  auto args = std::make_shared<CompareArgs>();
  cmd->add_option("old", args->old_path, "Baseline document (peakprobe/1 JSON; '-' for stdin)")
      ->required()
      ->type_name("OLD.json");
  cmd->add_option("new", args->new_path, "New document to check against it ('-' for stdin)")
      ->required()
      ->type_name("NEW.json");
  cmd->add_option("--time-threshold", args->time_percent,
                  "A time or cycle count more than PCT percent higher is a regression (default 5)")
      ->type_name("PCT")
      ->check(number_in(0, 1e6));
  cmd->add_option("--throughput-threshold", args->throughput_percent,
                  "A rate (GFLOP/s, GB/s, IPC) more than PCT percent lower is a regression (default 5)")
      ->type_name("PCT")
      ->check(number_in(0, 100));
  cmd->add_flag("--fixed-thresholds", args->fixed_thresholds,
                "Judge every metric by the thresholds alone (by default each is widened by the spread\n"
                "both rows measured for it: a change within the runs' own scatter is not a regression;\n"
                "and on one machine a GFLOP/s or GOP/s change whose cycles held is the clock's, not a change)");
  cmd->footer(
      "Rows are matched by what they measure (instruction and threads, kernel and size, ...), not by\n"
      "position. Rows not ok on either side are not comparable, never regressions: those whose\n"
      "status changed are listed, those not ok alike on both sides are counted (--all lists them).\n"
      "A change no larger than the thresholds plus both rows' spread for that metric is 'same'.\n"
      "Two documents of one CPU: a rate per second that moved only with the core clock (its cycles\n"
      "held) is 'same', with both clocks in the note.\n"
      "Exit codes: 0 no regression, 5 at least one regression, 2 unreadable or invalid input,\n"
      "3 output not writable. Example:\n"
      "  peakprobe compare baseline.json new.json --markdown compare.md\n");
  cmd->add_flag("--all", args->list_all,
                "List every row that is not comparable, also those with the same status on both sides\n"
                "(skipped in both, mistrusted in both); by default the console and Markdown give those as\n"
                "one count per status. The JSON lists every row either way");
  // Parsing only records the action; main() runs it once logging is set up.
  cmd->callback([&g, args] { g.action = [&g, args] { g.exit_code = run_compare(*args, g.out); }; });
}

}  // namespace peakprobe::cli
