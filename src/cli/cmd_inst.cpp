#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdint>
#include <iostream>
#include <optional>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "asm/target.hpp"
#include "catalog/catalog.hpp"
#include "cli/catalog_loading.hpp"
#include "cli/commands.hpp"
#include "cli/measure.hpp"
#include "harness/stream_listing.hpp"
#include "report/input_file.hpp"

namespace peakprobe::cli {
namespace {
// The largest matrix instruction in any catalog does 16 x 16 x 32 x 2 = 16384 operations; nothing does
// a thousand times more.
constexpr double kMaxOps = 1 << 24;

// --listing: each form's streams as they were timed, after its results.
void print_listings(const CpuInfo& cpu, const std::vector<ProbeSpec>& specs, const RunDocument& doc) {
  for (size_t i = 0; i < specs.size() && i < doc.results.size(); ++i) {
    const ProbeResult& r = doc.results[i];
    // The texts come from the command line: escaped as the console table escapes them.
    std::cout << fmt::format("\n# {}\n", printable(r.instruction));
    auto listings = probe_listings(isa::host_target(), cpu, specs[i], r);
    if (!listings) {
      std::cout << fmt::format("#   no code: {}\n", printable(listings.error(), 1000));
      continue;
    }
    if (r.status == Status::skipped || r.status == Status::error)
      std::cout << fmt::format("#   not timed ({}: {}); the code it would run:\n", to_string(r.status),
                               printable(r.reason, 1000));
    for (const StreamListing& l : *listings) std::cout << fmt::format("\n## {}\n{}", l.title, l.code);
  }
}
}  // namespace

void add_inst_command(CLI::App& app, GlobalOptions& g) {
  auto* cmd = app.add_subcommand("inst", "Measure any instruction form given as text");
  auto texts = std::make_shared<std::vector<std::string>>();
  auto ops = std::make_shared<double>(-1.0);
  auto dtype = std::make_shared<std::string>("-");
  auto imm = std::make_shared<std::optional<int64_t>>();
  auto listing = std::make_shared<bool>(false);
  const isa::Target::HelpTexts help = isa::host_target().help_texts();
  cmd->add_option("instructions", *texts,
                  fmt::format("Instruction forms in {}, one per argument, e.g. \"{}\"", help.notation, help.example_form))
      ->required();
  cmd->add_option("--ops", *ops,
                  "Arithmetic operations per instruction, for GFLOP/s or GOP/s (default: the catalog row's "
                  "value when the form is in the catalog, else 0)")
      ->check(number_in(0, kMaxOps));
  cmd->add_option("--dtype", *dtype, "Data type of the operations (f64 f32 f16 bf16 i64 i32 i16 i8 u8, or - "
                                     "for none); default: from the mnemonic");
  cmd->add_option("--imm", *imm,
                  "Value of every immediate operand (default: the common case: 5 for shift and rotate counts, "
                  "where 1 takes a faster path on many cores; 0 for enter's nesting level; else 1)")
      ->check(CLI::Range(int64_t(INT32_MIN), int64_t(UINT32_MAX)));
  cmd->add_flag("--listing", *listing,
               "After the results, print the code each form was timed with: its latency chains and its "
               "throughput stream at the chains the sweep chose, as generated (set-up, loop, restore)");
  cmd->footer(help.operand_kinds + "Examples:\n" + help.inst_examples);
  // Parsing only records the action; main() runs it once logging is set up.
  cmd->callback([&g, texts, ops, dtype, imm, listing] {
    g.action = [&g, texts, ops, dtype, imm, listing] {
    // The label of every row comes from these two: a value outside what the reports know would lie.
    if (!std::isfinite(*ops) || *ops > kMaxOps) {
      spdlog::error("--ops {}: expected a number from 0 to {} (operations per instruction)", *ops, kMaxOps);
      return void(g.exit_code = kExitUsage);
    }
    if (*dtype != "-" && std::find(std::begin(kDtypes), std::end(kDtypes), *dtype) == std::end(kDtypes)) {
      spdlog::error("--dtype '{}': one of f64 f32 f16 bf16 i64 i32 i16 i8 u8 or -", *dtype);
      return void(g.exit_code = kExitUsage);
    }
    if (*listing && g.out.writes_stdout()) {
      spdlog::error("--listing prints to stdout, which a document already takes ('-'): write the document to a file");
      return void(g.exit_code = kExitUsage);
    }
    auto catalog = load_catalogs(g);
    if (!catalog) {
      spdlog::error("{}", catalog.error());
      g.exit_code = kExitUsage;
      return;
    }
    auto specs = specs_for_texts(*texts, catalog.value());
    if (!specs) {
      g.exit_code = kExitUsage;
      return;
    }
    for (auto& s : *specs) {
      if (*imm)
        if (std::string why = isa::host_target().check_immediate(s.text, **imm); !why.empty()) {
          spdlog::error("{}", why);
          return void(g.exit_code = kExitUsage);
        }
      if (*ops >= 0) s.ops_per_instruction = *ops;
      if (*dtype != "-") s.dtype = *dtype;
      if (*imm) s.imm = **imm;
    }
    const std::vector<ProbeSpec>& chosen = specs.value();
    g.exit_code = measure_and_report(g, chosen, [&](const CpuInfo& cpu, const RunDocument& doc) {
      if (*listing) print_listings(cpu, chosen, doc);
    });
    };
  });
}

}  // namespace peakprobe::cli
