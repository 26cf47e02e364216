#include <spdlog/spdlog.h>

#include "asm/target.hpp"
#include "catalog/catalog.hpp"
#include "cli/catalog_loading.hpp"
#include "cli/commands.hpp"
#include "cli/measure.hpp"

namespace peakprobe::cli {

void add_run_command(CLI::App& app, GlobalOptions& g) {
  auto* cmd = app.add_subcommand("run", "Measure every catalog form (or those matching --filter)");
  auto filter = std::make_shared<std::string>();
  const isa::Target::HelpTexts help = isa::host_target().help_texts();
  cmd->add_option("-f,--filter", *filter,
                  "Only rows whose instruction, group or dtype contains this text; 'a,b' matches either "
                  "(e.g. --filter " + help.run_filter + ")");
  cmd->footer(
      "Each row gets latency (cycles), reciprocal throughput (cycles), IPC and GFLOP/s or GOP/s per core\n"
      "at the measured core clock. Rows whose CPU feature is missing are skipped, never executed.\n"
      "Examples:\n"
      "  peakprobe run                        # the whole built-in catalog\n" +
      help.run_examples +
      "  peakprobe run --filter fp.fma --threads 2   # FMA peaks per core and all cores\n");
  // Parsing only records the action; main() runs it once logging is set up.
  cmd->callback([&g, filter] {
    g.action = [&g, filter] {
    auto specs = load_catalogs(g);
    if (!specs) {
      spdlog::error("{}", specs.error());
      g.exit_code = kExitUsage;
      return;
    }
    std::vector<ProbeSpec> chosen;
    for (const auto& s : specs.value())
      if (matches_filter(s, *filter)) chosen.push_back(s);
    if (chosen.empty()) {
      spdlog::error("no catalog row matches --filter '{}' (see 'peakprobe list')", *filter);
      g.exit_code = kExitUsage;
      return;
    }
    g.exit_code = measure_and_report(g, chosen);
    };
  });
}

}  // namespace peakprobe::cli
