// `roofline` measures what the ceiling table needs (arithmetic catalog rows at one and all cores,
// the best FLOP mix of each floating-point type and width, bandwidth of every level at one and all
// cores) and derives the table; `score` places kernels on it.
#include <algorithm>
#include <optional>

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "catalog/catalog.hpp"
#include "cli/catalog_loading.hpp"
#include "cli/commands.hpp"
#include "asm/target.hpp"
#include "peakprobe/gpu_result.hpp"
#include "cli/measure.hpp"
#include "cpu/cpu_info.hpp"
#include "harness/probe_runner.hpp"
#include "memory/mem_runner.hpp"
#include "memory/sizes.hpp"
#include "memory/wait_retries.hpp"
#include "pairs/pair_runner.hpp"
#include "report/ceiling_report.hpp"
#include "report/input_file.hpp"
#include "report/output_file.hpp"
#include "roofline/ceilings.hpp"

namespace peakprobe::cli {
namespace {

const char* kMemKernels[] = {"load", "copy", "triad"};

// The arithmetic rows that can set a ceiling: ok-able rows with ops and a dtype.
std::vector<ProbeSpec> arithmetic_rows(const std::vector<ProbeSpec>& catalog) {
  std::vector<ProbeSpec> out;
  for (const auto& s : catalog)
    if (s.ops_per_instruction > 0 && s.dtype != "-" && s.group.rfind("mem", 0) != 0) out.push_back(s);
  return out;
}

// The best one-core FLOP mix of each type and width (the target's FMA and add: register forms, the
// same pair of instructions at every width), as narrow_rates_short_of_wider compares them; `of[k]`
// lists the searches behind rates[k]. The best of a width, not each search: a width may be searched
// in two encodings with different register files (16 and 32 vector registers below 512 bits), and
// the one with fewer registers runs slower for that reason alone. Catalog rows are not compared: a row
// at one width may be a memory form and its wider namesake a register form, which the load ports
// do not limit alike.
struct MixRates {
  std::vector<WidthRate> rates;
  std::vector<std::vector<size_t>> of;
};
MixRates mix_rates(const std::vector<std::pair<ProbeSpec, ProbeSpec>>& flop_pairs, const std::vector<FlopMixSearch>& searches) {
  MixRates out;
  for (size_t i = 0; i < flop_pairs.size() && i < searches.size(); ++i) {
    const std::string& dtype = flop_pairs[i].first.dtype;  // a floating-point type: the ceilings' name
    const std::string width = isa::host_target().width_class(flop_pairs[i].first.text);
    size_t k = 0;
    while (k < out.rates.size() && (out.rates[k].dtype != dtype || out.rates[k].width != width)) ++k;
    if (k == out.rates.size()) {
      out.rates.push_back({"FMA:add mix", dtype, width, 0});
      out.of.emplace_back();
    }
    out.rates[k].ops_per_cycle = std::max(out.rates[k].ops_per_cycle, searches[i].best_flops_per_cycle);
    out.of[k].push_back(i);
  }
  return out;
}

// A one-core FLOP mix of a type and width that reads below the same type's mix at a wider width, per
// lane (narrow_rates_short_of_wider: measured in a slowed moment, a busy host), is searched once
// more, each search of that width, the faster of the two kept (by FLOP per cycle, as it was judged);
// a width still short after that is said. `searches[i]` is `flop_pairs[i]`'s. A report on the Zen 5
// VM with its host busy read the f32 and f64 128-bit mixes 7.5% and 6.5% under the 256-bit ones per
// lane, both `ok`, and they set those ceilings.
void remeasure_short_widths(GlobalOptions& g, ProbeRunner& runner,
                            const std::vector<std::pair<ProbeSpec, ProbeSpec>>& flop_pairs,
                            std::vector<FlopMixSearch>& searches) {
  const MixRates before = mix_rates(flop_pairs, searches);
  const auto short_ones = narrow_rates_short_of_wider(before.rates);
  if (short_ones.empty()) return;
  for (const NarrowShortfall& s : short_ones) {
    const WidthRate& n = before.rates[s.narrow];
    spdlog::info("the {} {} FMA:add mix (one core) read {:.1f}% below the {}-bit one per lane: searched again (a busy "
                 "moment of the host?)", n.dtype, n.width, s.shortfall * 100, before.rates[s.wide].width);
    size_t done = 0;
    for (size_t i : before.of[s.narrow]) {
      const auto& [a, b] = flop_pairs[i];
      progress(g.out, ++done, before.of[s.narrow].size(), "again: FLOP mix " + a.text);
      FlopMixSearch redo = search_flop_mix(runner, a, b, false);
      if (redo.best_flops_per_cycle > searches[i].best_flops_per_cycle) searches[i] = std::move(redo);
    }
  }
  const MixRates after = mix_rates(flop_pairs, searches);
  for (const NarrowShortfall& s : narrow_rates_short_of_wider(after.rates))
    spdlog::warn("the {} {} FMA:add mix (one core) still reads {:.1f}% below the {}-bit one per lane, searched twice: "
                 "that ceiling may be low (the host busy both times)",
                 after.rates[s.narrow].dtype, after.rates[s.narrow].width, s.shortfall * 100, after.rates[s.wide].width);
}

}  // namespace

// Fills doc.results, doc.flop_mixes, doc.bandwidth and doc.ceilings. Returns 0 or an exit code.
int measure_roofline(GlobalOptions& g, const CpuInfo& cpu, RunDocument& doc, bool quick, bool whole_catalog,
                     uint64_t* last_level_end) {
  auto catalog = load_catalogs(g);
  if (!catalog) {
    spdlog::error("{}", catalog.error());
    return kExitUsage;
  }
  const int all = int(cpu.core_order.size());
  ProbeOptions one;
  one.cpu = g.cpu;
  auto runner = ProbeRunner::create(cpu, one);
  if (!runner) {
    spdlog::error("{}", runner.error());
    return kExitMeasure;
  }
  doc.clock = (*runner)->start_clock();
  PartTimer laps("roofline");  // for -v: where the time goes
  const auto rows = arithmetic_rows(catalog.value());
  const auto& measured = whole_catalog ? catalog.value() : rows;
  std::vector<ProbeResult> results = (*runner)->run_batch(measured, [&](size_t i, const ProbeSpec& s) {
    progress(g.out, i + 1, measured.size(), "instruction " + s.text);
  });
  laps.lap(whole_catalog ? "catalog rows" : "arithmetic rows");
  // The best FMA + add mix of every floating-point type and width: where the two issue on separate
  // pipes (AMD's FMA and FADD pipes), peak FLOP/s needs both at once, at every width alike (Zen 5
  // VM: 48 FLOP/cycle for a 1:1 mix of 256-bit forms where the FMA alone gave 32). Each search is
  // some ten probes of a few milliseconds.
  // Under an emulator every mix is mistrusted: no search runs.
  std::vector<std::pair<ProbeSpec, ProbeSpec>> flop_pairs;
  for (const auto& pair : cpu.emulator.empty() ? isa::host_target().flop_pairs() : std::vector<isa::FlopPair>{}) {
    auto sa = spec_for_text(pair.mul, catalog.value()), sb = spec_for_text(pair.add, catalog.value());
    if (!sa || !sb || !features_missing(*sa, cpu).empty() || !features_missing(*sb, cpu).empty()) continue;
    flop_pairs.emplace_back(*sa, *sb);
  }
  std::vector<FlopMixSearch> searches;  // searches[i] is flop_pairs[i]'s
  for (size_t i = 0; i < flop_pairs.size(); ++i) {
    progress(g.out, i + 1, flop_pairs.size(), "FLOP mix " + flop_pairs[i].first.text);
    searches.push_back(search_flop_mix(**runner, flop_pairs[i].first, flop_pairs[i].second, false));
  }
  laps.lap("FLOP mixes");
  remeasure_short_widths(g, **runner, flop_pairs, searches);
  // All cores: the best single-core row of each dtype and width, run on every core at once.
  if (all > 1) {
    CeilingTable single = make_ceiling_table(results, {}, {}, cpu.caches);
    auto team = ProbeRunner::create(cpu, probe_options(g, all));
    if (!team) {
      spdlog::error("{}", team.error());
      return kExitMeasure;
    }
    std::vector<ProbeSpec> best;
    for (const auto& c : single.compute)
      for (const auto& s : rows)
        if (s.text == c.source) best.push_back(s);
    auto multi = (*team)->run_batch(best, [&](size_t i, const ProbeSpec& s) {
      progress(g.out, i + 1, best.size(), fmt::format("compute x{} {}", all, s.text));
    });
    // A row that stays doubtful after its retries sets no all-cores ceiling: say which, and why, rather
    // than leave the table a row short (a busy host slows both vCPUs of a 2-core VM for seconds). One
    // row's reason is in its warning; several rows share one warning that names them (a busy host left
    // 7-25 rows so, each warning two lines long), their reasons at -v and in the JSON rows.
    std::vector<std::pair<std::string, std::string>> short_rows;  // instruction, why
    for (const ProbeResult& r : multi)
      if (r.status != Status::ok)
        short_rows.emplace_back(r.instruction, fmt::format("{} ({})", to_string(r.status), r.reason));
      else if (r.threads_status != Status::ok)
        short_rows.emplace_back(r.instruction, fmt::format("the {}-thread run is {} ({})", all,
                                                           to_string(r.threads_status), r.threads_reason));
    if (short_rows.size() == 1)
      spdlog::warn("no {}-core ceiling from {}: {}", all, short_rows[0].first, short_rows[0].second);
    if (short_rows.size() > 1) {
      std::vector<std::string> names;
      for (const auto& [text, why] : short_rows) {
        spdlog::debug("no {}-core ceiling from {}: {}", all, text, why);
        names.push_back(text);
      }
      spdlog::warn("no {}-core ceiling from {} of {} rows, doubtful after their retries (the host or another "
                   "program was busy; -v gives each reason): {}",
                   all, short_rows.size(), multi.size(), fmt::join(names, "; "));
    }
    results.insert(results.end(), multi.begin(), multi.end());
    // Each FLOP mix that sets a one-core ceiling, on every core too: its all-cores ceiling measured,
    // not scaled from one core. (A search won by one instruction alone has that row among `best`;
    // of two encodings of one type and width, only the faster sets the ceiling.) The first search
    // always, as before there were several: its best_all_threads is what `flop_mix` has carried.
    std::vector<size_t> on_all = mixes_setting_ceilings(results, searches);
    if (!searches.empty() && (on_all.empty() || on_all.front() != 0)) on_all.insert(on_all.begin(), 0);
    for (size_t n = 0; n < on_all.size(); ++n) {
      const size_t i = on_all[n];
      progress(g.out, n + 1, on_all.size(), fmt::format("FLOP mix x{} {}", all, searches[i].a));
      measure_best_mix_on_all_threads(**team, flop_pairs[i].first, flop_pairs[i].second, searches[i]);
    }
  }
  laps.lap("all-cores rows");
  doc.results = results;
  doc.flop_mixes = std::move(searches);
  // Memory: one working set inside each level, at one and all cores.
  auto mem = MemRunner::create(cpu, g.cpu);
  if (!mem) {
    spdlog::error("{}", mem.error());
    return kExitMeasure;
  }
  std::vector<int> thread_counts = {1};
  if (all > 1) thread_counts.push_back(all);
  size_t done = 0;
  // The caches as the one-core searches showed them (caches_as_shown): the plans of more cores, DRAM's
  // working sets and the ceilings' level names follow from them.
  std::vector<CacheLevel> shown = cpu.caches;
  for (int t : thread_counts) {
    // Rows whose threads waited for their CPUs in every repetition are measured again (WaitRetries),
    // and those that stay so set no ceiling (bounds_memory): one warning names them.
    WaitRetries retries;
    std::vector<std::string> spoiled;
    // Where the level before ends as measured, when sooner than reported (2 x its plateau size): the
    // last cache level's sets DRAM's working set.
    uint64_t ended_at = 0;
    for (auto [level, size] : level_sizes(shown, t)) {
      if (level == "DRAM" && ended_at > 0) {
        size = dram_working_set(shown, t, ended_at);
        if (t == 1 && last_level_end) *last_level_end = ended_at;
      }
      ended_at = 0;
      // Past the first level: where the level really ends on this machine (plateau_size). Not under
      // an emulator, whose rates say nothing about caches.
      const uint64_t floor = level_floor(level, shown, t);
      if (floor > 0 && cpu.emulator.empty()) {
        progress(g.out, done, 0, fmt::format("memory {} x{}: where the level ends", level, t));
        const PlateauSearch p = plateau_size(size, floor, [&](uint64_t s) {
          const BandwidthResult r = retries.measure([&] { return (*mem)->bandwidth({"load", 0, s, t}); });
          return bounds_memory(r) ? *r.gbps : 0.0;
        });
        if (p.past_end) ended_at = 2 * p.size;
        if (p.past_end)
          spdlog::info("memory {} x{}: {} reads {:.1f} GB/s, {} {:.1f}: the level ends sooner than the OS reports "
                       "(a VM may hold a fraction of a shared cache); its ceilings are measured at {}",
                       level, t, format_bytes(size), p.tried.front().second, format_bytes(p.size), p.gbps,
                       format_bytes(p.size));
        else if (p.size != size)
          spdlog::debug("memory {} x{}: {} reads {:.1f} GB/s, {} {:.1f}: measured at {}, inside the level's plateau", level,
                        t, format_bytes(size), p.tried.front().second, format_bytes(p.size), p.gbps,
                        format_bytes(p.size));
        if (level_for_size(p.size, shown, t) == level) size = p.size;
        if (t == 1 && p.past_end) shown = caches_as_shown(shown, level, ended_at);
        // Every size the search tried spoiled by another program: where the level ends is not known,
        // and rows at the planned size (the OS's) may read the next level under this one's name.
        if (retries.spoiled_in_a_row() > 0 &&
            std::all_of(p.tried.begin(), p.tried.end(), [](const auto& tried) { return tried.second <= 0; })) {
          spoiled.push_back(fmt::format("{} (every size of the search for where it ends)", level));
          continue;
        }
      }
      for (const char* k : kMemKernels) {
        if (quick && std::string(k) != "load") continue;
        progress(g.out, ++done, 0, fmt::format("memory {} {} x{}", level, k, t));
        const uint64_t at = size;  // a structured binding: clang before 16 cannot capture it
        doc.bandwidth.push_back(retries.measure([&] { return (*mem)->bandwidth({k, 0, at, t}); }));
        if (doc.bandwidth.back().waited_every_repetition) spoiled.push_back(fmt::format("{} {}", level, k));
      }
    }
    if (!spoiled.empty())
      spdlog::warn("no {}-core memory ceiling for {}: {} in every repetition, also when measured again "
                   "(another program ran there); run again when {} idle",
                   t, fmt::join(spoiled, ", "),
                   t == 1 ? "the thread waited for its CPU" : "the threads waited for their CPUs",
                   t == 1 ? "its core is" : "the cores are");
  }
  progress_done(g.out);
  laps.lap("memory ceilings");
  doc.ceilings = make_ceiling_table(doc.results, doc.flop_mixes, doc.bandwidth, shown);
  return kExitOk;
}

void add_roofline_command(CLI::App& app, GlobalOptions& g) {
  auto* cmd = app.add_subcommand("roofline", "The ceiling table: compute and memory roofs, ridge points");
  auto out_dir = std::make_shared<std::string>();
  auto quick = std::make_shared<bool>(false);
  cmd->add_option("--out", *out_dir, "Write roofline.json, ceilings.csv and ceilings.md into DIR")
      ->type_name("DIR")
      ->check(not_empty());
  cmd->add_flag("--quick", *quick, "Memory ceilings with the load kernel only");
  cmd->footer(
      "Compute ceilings per dtype and vector width at one and all cores (the best catalog row, or the\n"
      "best FMA+ADD mix); memory ceilings per level and kernel at one and all cores; ridge points =\n"
      "peak / bandwidth. Intensity is cache-aware: bytes moved by load/store instructions.\n");
  cmd->callback([&g, out_dir, quick] {
    g.action = [&g, out_dir, quick] {
      CpuInfo cpu = detect_cpu_info();
      if (int rc = check_placement(g, cpu)) return void(g.exit_code = rc);
      std::optional<OutputFolder> folder;  // removed again if the run ends before writing into it
      if (!out_dir->empty()) {
        try {
          folder.emplace(*out_dir);
        } catch (const OutputError& e) {
          spdlog::error("--out: {}", e.what());
          return void(g.exit_code = kExitOutput);
        }
        if (g.out.json.empty()) g.out.json = *out_dir + "/roofline.json";
        if (g.out.csv.empty()) g.out.csv = *out_dir + "/ceilings.csv";
        if (g.out.markdown.empty()) g.out.markdown = *out_dir + "/ceilings.md";
      }
      if (int rc = check_outputs(g.out)) return void(g.exit_code = rc);
      prefer_quiet_core(g, cpu);  // after the outputs are checked: a usage error costs no measuring
      RunDocument doc = new_document(cpu, g.argc, g.argv);
      if (int rc = measure_roofline(g, cpu, doc, *quick, false)) return void(g.exit_code = rc);
      g.exit_code = emit_outputs(doc, g.out);
    };
  });
}

void add_score_command(CLI::App& app, GlobalOptions& g) {
  auto* cmd = app.add_subcommand("score", "Place a kernel on the roofline: bound, efficiency, binding roof");
  auto req = std::make_shared<ScoreRequest>();
  auto table = std::make_shared<std::string>();
  auto kernels = std::make_shared<std::string>();
  cmd->add_option("--flops", req->flops, "Floating-point operations the kernel performs");
  cmd->add_option("--bytes", req->bytes, "Bytes it moves at the chosen level");
  cmd->add_option("--seconds", req->seconds, "Its run time");
  cmd->add_option("--name", req->name, "A label for the kernel");
  cmd->add_option("--dtype", req->dtype, "Data type whose compute roof applies (default f32)");
  cmd->add_option("--level", req->level, "Memory level its bytes come from: L1, L2, L3 or DRAM (default DRAM)");
  cmd->add_option("--table", *table,
                  "A saved ceiling table (roofline --json output, or a gpu --json document of one device); measured "
                  "now if absent")
      ->type_name("FILE")
      ->check(not_empty());
  cmd->add_option("--kernels", *kernels,
                  "Score several kernels from a JSON array of {name, flops, bytes, seconds[, dtype, level, threads]}")
      ->type_name("FILE")
      ->check(not_empty());
  cmd->footer("The thread count is --threads (default 1). Example:\n"
              "  peakprobe score --table roof.json --flops 2.1e9 --bytes 1.2e7 --seconds 0.02 --level L2\n"
              "  peakprobe score --table gpu.json --flops 4e12 --bytes 8e9 --seconds 0.1   # an OpenCL device:\n"
              "      levels DRAM (its global memory, the default) and local\n");
  cmd->callback([&g, req, table, kernels] {
    g.action = [&g, req, table, kernels] {
      if (int rc = check_outputs(g.out)) return void(g.exit_code = rc);
      std::vector<ScoreRequest> reqs;
      if (!kernels->empty()) {
        auto text = read_input_file(*kernels, "kernel list");
        if (!text) return spdlog::error("{}", text.error()), void(g.exit_code = kExitUsage);
        nlohmann::json arr = nlohmann::json::parse(*text, nullptr, false);
        auto parsed = arr.is_discarded() ? Expected<std::vector<ScoreRequest>>(make_error("not JSON"))
                                         : score_requests_from_json(arr, g.threads);
        if (!parsed) {
          spdlog::error("cannot read '{}' as a JSON array of kernels: {}", *kernels, parsed.error());
          return void(g.exit_code = kExitUsage);
        }
        reqs = parsed.value();
      } else {
        req->threads = g.threads;
        reqs.push_back(*req);
      }
      // Every request checked before a table is read or, worse, measured for a minute.
      for (const auto& r : reqs)
        if (std::string why = score_request_problem(r); !why.empty())
          return spdlog::error("{}: {}", r.name, why), void(g.exit_code = kExitUsage);
      CpuInfo cpu = detect_cpu_info();
      RunDocument doc = new_document(cpu, g.argc, g.argv);
      CeilingTable t;
      if (!table->empty()) {
        auto text = read_input_file(*table, "ceiling table");
        if (!text) return spdlog::error("{}", text.error()), void(g.exit_code = kExitUsage);
        nlohmann::json j = nlohmann::json::parse(*text, nullptr, false);
        // A `peakprobe gpu --json` document: its one device's ceiling table.
        if (j.is_object() && j.contains("schema") && j["schema"] == kGpuSchema) {
          const nlohmann::json devices = j.contains("devices") ? j["devices"] : nlohmann::json();
          if (!devices.is_array() || devices.size() != 1) {
            spdlog::error("'{}' holds {} OpenCL devices; score needs one (peakprobe gpu --device N --json FILE)",
                          *table, devices.is_array() ? devices.size() : 0);
            return void(g.exit_code = kExitUsage);
          }
          if (!devices[0].is_object() || !devices[0].contains("ceilings")) {
            const bool has_reason = devices[0].is_object() && devices[0].contains("reason") && devices[0]["reason"].is_string();
            spdlog::error("the device in '{}' has no ceiling table (nothing was measured there: {})", *table,
                          has_reason ? devices[0]["reason"].get<std::string>() : std::string("no reason given"));
            return void(g.exit_code = kExitUsage);
          }
          j = devices[0];
        }
        auto parsed = j.is_discarded() ? Expected<CeilingTable>(make_error("not JSON")) : ceilings_from_json(j);
        if (!parsed) {
          spdlog::error("cannot read a ceiling table from '{}': {}", *table, parsed.error());
          return void(g.exit_code = kExitUsage);
        }
        t = parsed.value();
      } else {
        spdlog::info("no --table given: measuring the roofline first (save it with 'peakprobe roofline --json FILE')");
        if (int rc = measure_roofline(g, cpu, doc, true, false)) return void(g.exit_code = rc);
        t = *doc.ceilings;
        doc.results.clear();
        doc.bandwidth.clear();
        doc.flop_mixes.clear();
      }
      for (auto r : reqs) {
        r.name = printable(r.name, 200);  // a label goes into tables and terminals as it is
        auto s = score_kernel(t, r);
        if (!s) {
          spdlog::error("{}: {}", r.name, s.error());
          return void(g.exit_code = kExitUsage);
        }
        doc.scores.push_back(s.value());
      }
      doc.ceilings = t;
      g.exit_code = emit_outputs(doc, g.out);
    };
  });
}

}  // namespace peakprobe::cli
