#include <iostream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "catalog/catalog.hpp"
#include "cli/catalog_loading.hpp"
#include "cli/commands.hpp"
#include "report/json_report.hpp"
#include "cpu/cpu_info.hpp"
#include "harness/probe_runner.hpp"
#include "asm/target.hpp"
#include "report/csv_report.hpp"
#include "report/output_file.hpp"

namespace peakprobe::cli {

void add_list_command(CLI::App& app, GlobalOptions& g) {
  auto* cmd = app.add_subcommand("list", "List catalog forms and whether this CPU supports each");
  auto filter = std::make_shared<std::string>();
  cmd->add_option("-f,--filter", *filter, "Only rows whose instruction, group or dtype contains this text");
  // Parsing only records the action; main() runs it once logging is set up.
  cmd->callback([&g, filter] {
    g.action = [&g, filter] {
    if (int rc = check_outputs(g.out)) return void(g.exit_code = rc);
    auto specs = load_catalogs(g);
    if (!specs) {
      spdlog::error("{}", specs.error());
      g.exit_code = kExitUsage;
      return;
    }
    CpuInfo cpu = detect_cpu_info();
    nlohmann::json rows = nlohmann::json::array();
    size_t supported = 0, shown = 0;
    std::string table, csv, markdown;
    for (const auto& s : specs.value()) {
      if (!matches_filter(s, *filter)) continue;
      auto missing = features_missing(s, cpu);
      std::string support = missing.empty() ? "yes" : "no: needs " + fmt::format("{}", fmt::join(missing, ", "));
      supported += missing.empty();
      ++shown;
      table += fmt::format("{:<40} {:<16} {:<5} {:>6} {}\n", s.text, s.group, s.dtype, s.ops_per_instruction, support);
      csv += fmt::format("{},{},{},{},{},{},{}\n", csv_field(s.text), csv_field(s.group), csv_field(s.dtype),
                         s.ops_per_instruction, missing.empty() ? "yes" : "no", csv_field(fmt::format("{}", fmt::join(missing, " "))),
                         csv_field(s.origin));
      markdown += fmt::format("| `{}` | {} | {} | {} | {} |\n", s.text, s.group, s.dtype, s.ops_per_instruction, support);
      rows.push_back({{"instruction", s.text}, {"group", s.group}, {"dtype", s.dtype},
                      {"ops_per_instruction", s.ops_per_instruction}, {"requires", s.requires_features},
                      {"supported", missing.empty()}, {"missing", missing}, {"origin", s.origin}});
    }
    if (shown == 0 && !filter->empty()) {
      // As `run` does: a filter that names no row is a mistake to say, not an empty list.
      spdlog::error("no catalog row matches --filter '{}' (peakprobe list without it shows every row)", *filter);
      g.exit_code = kExitUsage;
      return;
    }
    std::vector<OutputJob> jobs;
    if (!g.out.json.empty()) {
      jobs.push_back({g.out.json, [&](std::ostream& o) {
                        o << json_text(nlohmann::json{{"schema", "peakprobe/1"}, {"catalog", rows}}) << "\n";
                      }});
    }
    if (!g.out.csv.empty())
      jobs.push_back({g.out.csv, [&](std::ostream& o) {
                        o << "instruction,group,dtype,ops_per_instruction,supported,missing,origin\n" << csv;
                      }});
    if (!g.out.markdown.empty())
      jobs.push_back({g.out.markdown, [&](std::ostream& o) {
                        o << "| instruction | group | dtype | ops | supported on this CPU |\n|---|---|---|--:|---|\n"
                          << markdown << fmt::format("\n{} forms, {} supported on this CPU\n", shown, supported);
                      }});
    if ((g.exit_code = write_jobs(jobs)) != kExitOk) return;
    if (g.out.writes_stdout()) return;
    std::cout << fmt::format("{:<40} {:<16} {:<5} {:>6} {}\n", "instruction", "group", "dtype", "ops", "supported")
              << table << fmt::format("{} forms, {} supported on this CPU\n", shown, supported);
    };
  });
}

}  // namespace peakprobe::cli
