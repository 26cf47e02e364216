// Dual-issue subcommands: mix, pair, pairs, flopmix. They share the catalog lookup (ops, dtype) and
// the measuring driver; what differs is which mixes they build.
#include <algorithm>
#include <charconv>

#include <fmt/format.h>

#include <spdlog/spdlog.h>

#include "asm/target.hpp"
#include "catalog/sets.hpp"
#include "cpu/cpu_info.hpp"
#include "cli/catalog_loading.hpp"
#include "cli/commands.hpp"
#include "cli/measure.hpp"
#include "pairs/pair_runner.hpp"

namespace peakprobe::cli {
namespace {

constexpr size_t kMaxPairForms = 64;

bool parse_positive(const std::string& s, int& out) {
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && p == s.data() + s.size() && out >= 1 && out <= 16;
}

// "TEXT:2" -> the instruction text and its weight (default 1).
bool split_weight(const std::string& arg, std::string& text, int& weight, std::string& error) {
  weight = 1;
  text = arg;
  const size_t colon = arg.rfind(':');
  if (colon == std::string::npos) return true;
  text = arg.substr(0, colon);
  if (!parse_positive(arg.substr(colon + 1), weight)) {
    error = "weight '" + arg.substr(colon + 1) + "' in '" + arg + "' must be a whole number from 1 to 16";
    return false;
  }
  return true;
}

bool parse_ratio(const std::string& r, int& a, int& b) {
  const size_t colon = r.find(':');
  return colon != std::string::npos && parse_positive(r.substr(0, colon), a) && parse_positive(r.substr(colon + 1), b);
}

Expected<std::vector<ProbeSpec>> catalog_or_fail(GlobalOptions& g) {
  auto c = load_catalogs(g);
  if (!c) spdlog::error("{}", c.error());
  return c;
}

void on_progress(GlobalOptions& g, size_t done, size_t total, const std::string& what) {
  progress(g.out, done, total ? total : done, what);
}

// The widest multiply (FMA where there is one) and add of the same width this CPU runs.
std::pair<std::string, std::string> default_flop_pair(const CpuInfo& cpu) {
  const auto pair = isa::host_target().flop_pair(cpu, /*fused_only=*/false);
  return pair ? std::pair{pair->mul, pair->add} : std::pair<std::string, std::string>{};
}

}  // namespace

void add_mix_command(CLI::App& app, GlobalOptions& g) {
  auto* cmd = app.add_subcommand("mix", "Peak of any instruction combination, e.g. \"A:2\" \"B:1\"");
  auto args = std::make_shared<std::vector<std::string>>();
  cmd->add_option("parts", *args, "Instruction forms, each optionally followed by :WEIGHT (instances per group)")
      ->required();
  cmd->footer(
      "The parts are interleaved in the ratio of their weights with no dependency between or within\n"
      "them; reported: cycles per group, IPC, FLOP/cycle (or ops/cycle) and GFLOP/s of the mix.\n"
      "Each part is first measured alone and its latency taken, so that a part with a long chain gets\n"
      "the independent chains its rate needs (instances of the others share registers); a mix that\n"
      "still runs at what its own chains allow is mistrusted, with why.\n"
      "Example: peakprobe mix " + isa::host_target().help_texts().mix_example + "\n");
  cmd->callback([&g, args] {
    g.action = [&g, args] {
      auto catalog = catalog_or_fail(g);
      if (!catalog) return void(g.exit_code = kExitUsage);
      std::vector<MixSpec> parts;
      for (const auto& a : *args) {
        std::string text, err;
        int w = 1;
        if (!split_weight(a, text, w, err)) {
          spdlog::error("{}", err);
          return void(g.exit_code = kExitUsage);
        }
        auto spec = spec_for_text(text, catalog.value());
        if (!spec) {
          spdlog::error("{}", spec.error());
          return void(g.exit_code = kExitUsage);
        }
        parts.push_back({spec.value(), w});
      }
      g.exit_code = measure_dual_issue(g, [&](ProbeRunner& r, RunDocument& doc, ProbeRunner*) {
        doc.mixes.push_back(measure_mix(r, parts));
      });
    };
  });
}

void add_pair_command(CLI::App& app, GlobalOptions& g) {
  auto* cmd = app.add_subcommand("pair", "Do two instructions issue together? (co-issue, partial or shared)");
  auto a = std::make_shared<std::string>(), b = std::make_shared<std::string>();
  auto ratio = std::make_shared<std::string>("1:1");
  cmd->add_option("A", *a, "First instruction form")->required();
  cmd->add_option("B", *b, "Second instruction form")->required();
  cmd->add_option("--ratio", *ratio, "Instances of A and B per group, a:b (default 1:1)");
  cmd->footer(
      "Each alone and the interleaved pair are timed. same-port = (t_pair - max(a.tA, b.tB)) / min(a.tA, b.tB):\n"
      "0 = they issue together (co-issue, < 0.25), 1 = they share one pipe (shared, > 0.75), partial between.\n"
      "Example: peakprobe pair " + isa::host_target().help_texts().pair_example + "\n");
  cmd->callback([&g, a, b, ratio] {
    g.action = [&g, a, b, ratio] {
      int wa = 1, wb = 1;
      if (!parse_ratio(*ratio, wa, wb)) {
        spdlog::error("--ratio '{}': expected a:b with whole numbers from 1 to 16", *ratio);
        return void(g.exit_code = kExitUsage);
      }
      auto catalog = catalog_or_fail(g);
      if (!catalog) return void(g.exit_code = kExitUsage);
      auto specs = specs_for_texts({*a, *b}, catalog.value());
      if (!specs) return void(g.exit_code = kExitUsage);
      g.exit_code = measure_dual_issue(g, [&](ProbeRunner& r, RunDocument& doc, ProbeRunner*) {
        doc.pairs.push_back(measure_pair(r, specs->at(0), specs->at(1), wa, wb));
      });
    };
  });
}

void add_pairs_command(CLI::App& app, GlobalOptions& g) {
  auto* cmd = app.add_subcommand("pairs", "Pair matrix of a set of instructions and the pipe groups it implies");
  auto texts = std::make_shared<std::vector<std::string>>();
  auto set = std::make_shared<std::string>();
  cmd->add_option("instructions", *texts, "Instruction forms (or use --set)");
  const isa::Target::HelpTexts help = isa::host_target().help_texts();
  cmd->add_option("--set", *set, "A named set from probes/" + isa::host_target().name() + ".sets (see --list-sets)");
  auto list = std::make_shared<bool>(false);
  cmd->add_flag("--list-sets", *list, "List the named sets and exit");
  cmd->add_option("--svg", g.out.svg, "Write the heatmap as SVG to FILE (text as text, data embedded)")
      ->type_name("FILE")
      ->check(not_empty());
  cmd->footer(
      "Every pair (each with itself too) is measured; instructions that contend are clustered into\n"
      "inferred pipe groups (average linkage on the same-port measure, threshold 0.5).\n"
      "Examples: peakprobe pairs --set " + help.pairs_set + " --svg fp.svg\n"
      "          peakprobe pairs " + help.pairs_example + "\n");
  cmd->callback([&g, texts, set, list] {
    g.action = [&g, texts, set, list] {
      auto sets = default_sets();
      if (!sets) {
        spdlog::error("{}", sets.error());
        return void(g.exit_code = kExitUsage);
      }
      if (*list) {
        for (const auto& s : sets.value())
          fmt::print("{:<14} {}\n", s.name, fmt::join(s.instructions, "; "));
        return;
      }
      std::vector<std::string> chosen = *texts;
      if (!set->empty()) {
        auto it = std::find_if(sets->begin(), sets->end(), [&](const InstructionSet& s) { return s.name == *set; });
        if (it == sets->end()) {
          spdlog::error("no set named '{}' (see peakprobe pairs --list-sets)", *set);
          return void(g.exit_code = kExitUsage);
        }
        chosen.insert(chosen.end(), it->instructions.begin(), it->instructions.end());
      }
      if (chosen.size() < 2) {
        spdlog::error("pairs needs at least two instructions (or --set NAME)");
        return void(g.exit_code = kExitUsage);
      }
      // The matrix grows with the square: n forms make n(n+1)/2 pairs, each timed three ways.
      if (chosen.size() > kMaxPairForms) {
        spdlog::error("pairs: {} instructions would make {} pairs; at most {} instructions ({} pairs)", chosen.size(),
                      chosen.size() * (chosen.size() + 1) / 2, kMaxPairForms, kMaxPairForms * (kMaxPairForms + 1) / 2);
        return void(g.exit_code = kExitUsage);
      }
      auto catalog = catalog_or_fail(g);
      if (!catalog) return void(g.exit_code = kExitUsage);
      auto specs = specs_for_texts(chosen, catalog.value());
      if (!specs) return void(g.exit_code = kExitUsage);
      g.exit_code = measure_dual_issue(g, [&](ProbeRunner& r, RunDocument& doc, ProbeRunner*) {
        doc.matrix = measure_pair_matrix(r, specs.value(), [&](size_t d, size_t t, const std::string& w) {
          on_progress(g, d, t, w);
        });
      });
    };
  });
}

void add_flopmix_command(CLI::App& app, GlobalOptions& g) {
  auto* cmd = app.add_subcommand("flopmix", "Find the ratio of two FP instructions that maximises FLOP/s");
  auto a = std::make_shared<std::string>(), b = std::make_shared<std::string>();
  const isa::Target::HelpTexts help = isa::host_target().help_texts();
  cmd->add_option("A", *a, "First instruction (default: " + help.flop_a + ")");
  cmd->add_option("B", *b, "Second instruction (default: " + help.flop_b + ")");
  auto exhaustive = std::make_shared<bool>(false);
  cmd->add_flag("--exhaustive", *exhaustive, "Try every reduced ratio up to 4:4 instead of the guided search");
  cmd->footer(
      "On several cores peak FLOP/s needs FMA and ADD issued together (separate pipes); the ratio\n"
      "that reaches it differs by generation. The best FLOP/cycle feeds the compute ceilings.\n"
      "The search runs on one core; with --threads N the best ratio is then run on N cores at once\n"
      "(best_all_threads: the all-cores ceiling of the mix, measured).\n");
  cmd->callback([&g, a, b, exhaustive] {
    g.action = [&g, a, b, exhaustive] {
      auto catalog = catalog_or_fail(g);
      if (!catalog) return void(g.exit_code = kExitUsage);
      if (a->empty() != b->empty()) {
        spdlog::error("give both instructions or neither");
        return void(g.exit_code = kExitUsage);
      }
      std::vector<std::string> texts = {*a, *b};
      if (a->empty()) {
        auto [fa, fb] = default_flop_pair(detect_cpu_info());
        texts = {fa, fb};
      }
      auto specs = specs_for_texts(texts, catalog.value());
      if (!specs) return void(g.exit_code = kExitUsage);
      for (const auto& s : specs.value()) {
        const bool fp = s.dtype == "f64" || s.dtype == "f32" || s.dtype == "f16" || s.dtype == "bf16";
        if (s.ops_per_instruction <= 0 || !fp) {
          spdlog::error("'{}' has no FLOP count (a floating-point catalog row with ops > 0 is needed; "
                        "see docs/catalog.md)", s.text);
          return void(g.exit_code = kExitUsage);
        }
      }
      const bool all = *exhaustive;
      g.exit_code = measure_dual_issue(
          g,
          [&](ProbeRunner& r, RunDocument& doc, ProbeRunner* team) {
            doc.flop_mixes = {search_flop_mix(r, specs->at(0), specs->at(1), all,
                                              [&](size_t d, size_t t, const std::string& w) { on_progress(g, d, t, w); })};
            if (team) measure_best_mix_on_all_threads(*team, specs->at(0), specs->at(1), doc.flop_mixes.front());
          },
          /*with_team=*/true);
    };
  });
}

}  // namespace peakprobe::cli
