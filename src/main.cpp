// peakprobe: wiring only. Each subcommand lives in src/cli/cmd_*.cpp.
#include <iostream>
#include <sstream>

#include <CLI/CLI.hpp>
#include <spdlog/spdlog.h>

#include "asm/target.hpp"
#include "cli/commands.hpp"
#include "cli/worker.hpp"
#include "harness/child_process.hpp"

int main(int argc, char** argv) {
  using namespace peakprobe::cli;
  // A worker started by this program to run a BLAS library away from the measuring process.
  if (is_worker_invocation(argc, argv)) return run_worker(argc, argv);
  peakprobe::enable_worker_dispatch();
  GlobalOptions g;
  g.argc = argc;
  g.argv = argv;
  CLI::App app{"peakprobe " PEAKPROBE_VERSION
               ": measure what this CPU can really do (instruction latency, throughput, peak FLOP/s)"};
  app.set_version_flag("--version", PEAKPROBE_VERSION);
  app.require_subcommand(0, 1);
  app.fallthrough();
  app.add_flag("-v,--verbose", g.out.verbose, "More log detail on stderr (-vv for trace)");
  app.add_flag("-q,--quiet", g.out.quiet, "Only errors on stderr; no progress line");
  app.add_option("--json", g.out.json, "Write the results as JSON to FILE ('-' for stdout)")
      ->type_name("FILE|-")
      ->check(not_empty());
  app.add_option("--csv", g.out.csv, "Write the results as CSV to FILE ('-' for stdout)")
      ->type_name("FILE|-")
      ->check(not_empty());
  app.add_option("--markdown", g.out.markdown, "Write a Markdown table to FILE ('-' for stdout)")
      ->type_name("FILE|-")
      ->check(not_empty());
  app.add_option("--catalog", g.catalogs, "Add the rows of a catalog FILE (repeatable; see docs/catalog.md)")
      ->type_name("FILE")
      ->check(not_empty());
  app.add_option("--cpu", g.cpu, "Pin the measuring thread to logical CPU N (default: the quietest core, measured at the start; a run moves on when its core turns busy)")
      ->type_name("N")
      ->check(CLI::Range(0, 1 << 20));
  app.add_option("--threads", g.threads, "Also run each throughput stream on N pinned cores at once and "
                                         "report per core and in total")
      ->type_name("N")
      ->check(CLI::Range(1, 1 << 20));
  auto* report_out = app.add_option("--out", g.report_out,
                                    "Without a subcommand: the full report's folder (default peakprobe-HOST-DATE)")
                         ->type_name("DIR")
                         ->check(not_empty());
  auto* report_quick = app.add_flag("--quick", g.report_quick, "Without a subcommand: a shorter full report");
  app.footer(
      "Exit codes: 0 ok, 1 some result has status error, 2 bad input, 3 output not writable,\n"
      "4 measuring could not start, 5 compare found a regression. Docs: docs/method.md, docs/cli.md, docs/output.md.\n"
      "Start with: peakprobe (the full report into a folder), peakprobe info, peakprobe run,\n"
      "peakprobe inst \"" + peakprobe::isa::host_target().help_texts().example_form +
      "\", peakprobe mem --sweep, peakprobe roofline");
  add_info_command(app, g);
  add_list_command(app, g);
  add_run_command(app, g);
  add_inst_command(app, g);
  add_table_command(app, g);
  add_pair_command(app, g);
  add_mix_command(app, g);
  add_pairs_command(app, g);
  add_flopmix_command(app, g);
  add_mem_command(app, g);
  add_latency_command(app, g);
  add_roofline_command(app, g);
  add_score_command(app, g);
  add_report_command(app, g);
  add_compare_command(app, g);
  add_matmul_command(app, g);
  add_bench_command(app, g);
  add_gpu_command(app, g);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    // CLI11 quotes the offending argument: escaped like every other message.
    std::ostringstream out, err;
    app.exit(e, out, err);
    std::cout << out.str();
    std::cerr << escape_lines(err.str());
    return kExitUsage;
  }
  setup_logging(g.out);
  // With a subcommand the global --out/--quick would be silently ignored (fallthrough hands them
  // up from any subcommand that has no option of that name).
  if (!app.get_subcommands().empty() && (report_out->count() > 0 || report_quick->count() > 0)) {
    const char* which = report_out->count() > 0 ? "--out" : "--quick";
    spdlog::error("{} before a subcommand is for the bare report ('peakprobe {}'); with '{}' it would be ignored "
                  "(report and roofline take --out and --quick after their name)",
                  which, report_out->count() > 0 ? "--out DIR" : "--quick", app.get_subcommands().front()->get_name());
    return kExitUsage;
  }
  // No subcommand: the main job, the full report with its defaults.
  if (g.action) g.action();
  else {
    ReportOptions report;
    report.out_dir = g.report_out;
    report.quick = g.report_quick;
    g.exit_code = run_report(g, report);
  }
  return g.exit_code;
}
