// `peakprobe table`: every instruction form the ISA's encoder knows, measured with the method of
// `inst` (or listed as skipped, with the reason), in chunks, with a time budget, a checkpoint of the
// JSON document as it grows, and --resume to go on from one.
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "asm/target.hpp"
#include "catalog/form_selection.hpp"
#include "cli/catalog_loading.hpp"
#include "cli/commands.hpp"
#include "cli/measure.hpp"
#include "cpu/cpu_info.hpp"
#include "harness/probe_runner.hpp"
#include "pairs/pipe_groups.hpp"
#include "report/input_file.hpp"
#include "report/json_report.hpp"
#include "report/output_file.hpp"
#include "report/pipe_report.hpp"
#include "report/result_reader.hpp"
#include "report/table_html.hpp"

namespace peakprobe::cli {
namespace {

using Clock = std::chrono::steady_clock;

// Rows the run did not reach start with this; --resume measures them (and mistrusted rows) again.
constexpr const char* kNotReached = kNotMeasured;  // pairs/pipe_groups.hpp: one prefix for rows and verdicts
// The JSON document is written whole this often while measuring, so a killed run leaves its figures.
constexpr double kCheckpointSeconds = 10.0;
// Tries at the pipe basis when a disturbance leaves fewer than two trusted seeds, and the pause
// between them (a busy co-tenant on the Zen 4 VM came and went over tens of seconds).
constexpr int kBasisAttempts = 3;
constexpr double kBasisPauseSeconds = 5.0;

std::atomic<bool> g_interrupted{false};
struct sigaction g_previous_sigint {};

// The first Ctrl-C finishes the forms in flight and writes what was measured; a second one stops at
// once (the last checkpoint stays).
void on_sigint(int) {
  if (g_interrupted.exchange(true)) {
    ::sigaction(SIGINT, &g_previous_sigint, nullptr);
    ::raise(SIGINT);
  }
}

struct SigintScope {
  SigintScope() {
    g_interrupted = false;
    struct sigaction sa {};
    sa.sa_handler = on_sigint;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    ::sigaction(SIGINT, &sa, &g_previous_sigint);
  }
  ~SigintScope() { ::sigaction(SIGINT, &g_previous_sigint, nullptr); }
};

struct TableOptions {
  FormSelection selection;
  std::vector<std::string> forms;  // --forms: these forms instead of the encoder's whole list
  bool pipes = false;              // --pipes: pipe groups for every measured form
  double budget_s = 0;  // 0: no limit
  std::string resume;
  std::string html;  // the sortable page, written with the other outputs
  bool list = false;
};

ProbeResult skipped_row(const isa::ListedForm& f, const std::string& reason) {
  ProbeResult r;
  r.instruction = f.text;
  r.group = "table." + f.family;
  r.origin = "table";
  r.status = Status::skipped;
  r.reason = reason;
  r.repro = "peakprobe inst \"" + f.text + "\"";
  return r;
}

struct Resumed {
  std::map<std::string, ProbeResult> rows;  // by text
  std::optional<PipeGroups> pipe_groups;     // the earlier run's basis, when it had one
};

// Rows of an earlier run that --resume keeps: everything it finished, not what it doubted or never
// reached; and its pipe basis, so that verdicts it gave stay comparable with the ones still to come.
Expected<Resumed> rows_to_keep(const std::string& path) {
  auto text = read_input_file(path, "--resume document");
  if (!text) return make_error(text.error());
  nlohmann::json doc = nlohmann::json::parse(*text, nullptr, false);
  if (doc.is_discarded()) return make_error("--resume '" + printable(path, 200) + "': not a JSON document");
  auto rows = probe_results_from_document(doc);
  if (!rows) return make_error("--resume '" + printable(path, 200) + "': " + rows.error());
  Resumed keep;
  if (auto it = doc.find("pipe_groups"); it != doc.end()) {
    auto g = pipe_groups_from_json(*it);
    if (!g) return make_error("--resume '" + printable(path, 200) + "': " + g.error());
    if (!g->basis.empty()) keep.pipe_groups = std::move(*g);
  }
  for (auto& r : *rows) {
    if (r.status == Status::mistrusted || r.threads_status == Status::mistrusted ||
        r.reason.rfind(kNotReached, 0) == 0)
      continue;
    keep.rows[r.instruction] = std::move(r);
  }
  return keep;
}

// True when a row's verdicts are complete against `basis`: one per member, in order, none cut short.
bool pipes_complete(const ProbeResult& r, const std::vector<PipeBasisMember>& basis) {
  if (r.pipes.size() != basis.size()) return false;
  for (size_t k = 0; k < basis.size(); ++k)
    if (r.pipes[k].basis != basis[k].instruction || r.pipes[k].reason.rfind(kNotReached, 0) == 0) return false;
  return true;
}

// --forms: each text resolved to its canonical spelling, taken from the encoder's list where it is
// there (family, features, refusal) and described by the resolver where it is not.
Expected<std::vector<isa::ListedForm>> listed_forms(const isa::Target& target, const std::vector<std::string>& texts) {
  std::map<std::string, const isa::ListedForm*> by_text;
  for (const auto& f : target.all_forms()) by_text[f.text] = &f;
  std::vector<isa::ListedForm> out;
  std::set<std::string> seen;
  for (const auto& text : texts) {
    auto info = target.resolve(text);
    if (!info) return make_error("--forms '" + printable(text, 200) + "': " + info.error());
    if (!seen.insert(info->display).second) continue;
    if (auto it = by_text.find(info->display); it != by_text.end()) {
      out.push_back(*it->second);
    } else {
      isa::ListedForm f;
      f.text = info->display;
      f.family = "forms";
      f.features = info->features;
      out.push_back(std::move(f));
    }
  }
  return out;
}

int list_forms(const std::vector<isa::ListedForm>& forms) {
  const CpuInfo cpu = detect_cpu_info();
  size_t runnable = 0, missing = 0, refused = 0;
  for (const auto& f : forms) {
    std::string state;
    if (!f.refusal.empty()) {
      state = "refused: " + f.refusal;
      ++refused;
    } else if (auto m = missing_features(cpu, f.features); !m.empty()) {
      state = "skipped: needs";
      for (const auto& x : m) state += " " + x;
      ++missing;
    } else {
      state = "measured";
      ++runnable;
    }
    fmt::print("{:<48} {:<7} {}\n", f.text, f.family, state);
  }
  fmt::print("{} forms: {} measured on this CPU, {} need features it lacks, {} refused\n", forms.size(), runnable,
             missing, refused);
  return kExitOk;
}

// More than a third of the seeds without trusted figures alone: the pipes only they stand for have no
// basis member (a basis measured so is tried again, and kept with a warning when it stays so).
bool missing_many_seeds(const PipeGroups& g) {
  return 3 * g.skipped_seeds.size() > g.seeds.size() + g.skipped_seeds.size();
}

// --pipes: the basis (found now, or the --resume document's), then every `ok` row without complete
// verdicts against it, in list order. Rows that are not `ok` get no verdicts: their figures alone,
// which set the pair's weights and floors, are not trusted.
void measure_pipes(GlobalOptions& g, ProbeRunner& runner, const CpuInfo& cpu, RunDocument& doc,
                   const std::vector<isa::ListedForm>& chosen, std::map<std::string, ProbeResult>& done,
                   std::map<std::string, ProbeResult>& kept, std::optional<PipeGroups> basis,
                   const std::function<bool()>& stop, const std::function<void()>& checkpoint) {
  const auto t0 = Clock::now();
  if (!cpu.emulator.empty()) {  // every pair would be mistrusted: no verdict can come of it
    spdlog::warn("no pipe groups under emulation ({}): pipes are told apart by timing, which means nothing here",
                 cpu.emulator);
    return;
  }
  if (basis) {
    spdlog::info("pipe basis of the --resume document: {} members", basis->basis.size());
  } else {
    std::vector<ProbeSpec> seeds;
    for (const auto& text : pipe_seeds(cpu)) {
      ProbeSpec s;
      s.text = text;
      s.origin = "pipe seed";
      seeds.push_back(std::move(s));
    }
    // A busy moment of the host can leave most seeds doubted and the whole table without pipes: the
    // basis takes seconds, so it is measured again after a pause, a few times, before giving up.
    // The attempt with the most trusted seeds is kept.
    PipeGroups found;
    for (int attempt = 1; attempt <= kBasisAttempts; ++attempt) {
      PipeGroups now = find_pipe_basis(
          runner, seeds,
          [&](size_t i, size_t n, const std::string& what) { progress(g.out, i, n, "pipe basis: " + what); }, stop);
      progress_done(g.out);
      if (attempt == 1 || now.seeds.size() > found.seeds.size()) found = std::move(now);
      if ((found.basis.size() >= 2 && !missing_many_seeds(found)) || stop() || attempt == kBasisAttempts) break;
      spdlog::warn("pipe basis, attempt {} of {}: {} of {} seed forms had trusted figures alone (first doubted: {}); "
                   "measuring it again in {:.0f} s",
                   attempt, kBasisAttempts, found.seeds.size(), seeds.size(),
                   found.skipped_seeds.empty() ? "-" : found.skipped_seeds.front(), kBasisPauseSeconds);
      std::this_thread::sleep_for(std::chrono::duration<double>(kBasisPauseSeconds));
    }
    if (found.basis.empty()) {
      if (stop())
        spdlog::warn("no pipe groups: the run stopped while the basis was measured");
      else
        spdlog::warn("no pipe groups: no seed form had trusted figures alone (first: {})",
                     found.skipped_seeds.empty() ? "-" : found.skipped_seeds.front());
      return;
    }
    // Seeds without a trusted reference leave the basis short of the pipes they stand for: say so.
    const size_t total = found.seeds.size() + found.skipped_seeds.size();
    if (found.basis.size() < 2) {
      spdlog::warn("no pipe groups: only {} of {} seed forms had trusted figures alone (first: {}); measure again "
                   "on a quieter machine",
                   found.seeds.size(), total, found.skipped_seeds.empty() ? "-" : found.skipped_seeds.front());
      return;
    }
    if (missing_many_seeds(found))
      spdlog::warn("the pipe basis is incomplete: {} of {} seed forms had no trusted figures alone (first: {}); "
                   "pipes only they stand for have no column",
                   found.skipped_seeds.size(), total, found.skipped_seeds.front());
    basis = std::move(found);
  }
  doc.pipe_groups = basis;
  std::vector<PipeSubject> subjects;
  std::vector<ProbeResult*> rows;
  for (const auto& f : chosen) {
    ProbeResult* r = nullptr;
    if (auto d = done.find(f.text); d != done.end()) r = &d->second;
    else if (auto k = kept.find(f.text); k != kept.end()) r = &k->second;
    if (r == nullptr || r->status != Status::ok) {
      if (r != nullptr) r->pipes.clear();
      continue;
    }
    if (pipes_complete(*r, basis->basis)) continue;
    // Queued: until its pairs are judged, it has a verdict per member of this basis, not reached yet
    // (never verdicts against another basis of an older document).
    r->pipes.clear();
    for (const auto& b : basis->basis) {
      PipeVerdict v;
      v.basis = b.instruction;
      v.reason = std::string(kNotReached) + "the run stopped before this pair";
      r->pipes.push_back(std::move(v));
    }
    PipeSubject subject;
    subject.spec.text = f.text;
    subject.spec.origin = "table";
    subject.alone = r;
    subjects.push_back(std::move(subject));
    rows.push_back(r);
  }
  spdlog::info("pipes: {} forms against {} basis members ({} pairs)", subjects.size(), basis->basis.size(),
               subjects.size() * basis->basis.size());
  double last_checkpoint = 0;
  auto elapsed = [&] { return std::chrono::duration<double>(Clock::now() - t0).count(); };
  classify_against_basis(
      runner, *basis, subjects,
      [&](size_t i, size_t n, const std::string& what) { progress(g.out, i, n, "pipes: " + what); }, stop,
      [&](size_t i, const std::vector<PipeVerdict>& verdicts) {
        rows[i]->pipes = verdicts;
        if (elapsed() - last_checkpoint >= kCheckpointSeconds) {
          checkpoint();
          last_checkpoint = elapsed();
        }
      });
  progress_done(g.out);
  std::map<Contention, size_t> counts;
  for (const ProbeResult* r : rows)
    for (const auto& v : r->pipes) ++counts[v.contention];
  spdlog::info("pipes: {:.1f} s: {} shared, {} partial, {} none, {} at the issue width, {} with a penalty, {} unmeasured",
               elapsed(), counts[Contention::shared], counts[Contention::partial], counts[Contention::none],
               counts[Contention::issue_width], counts[Contention::penalty], counts[Contention::unmeasured]);
}

// What measure_table_rows does beyond the forms: pipe groups, a time budget, a checkpoint file.
struct TableMeasure {
  bool pipes = false;
  double budget_s = 0;     // 0: no limit
  std::string checkpoint;  // the JSON document rewritten every kCheckpointSeconds ("" or "-": none)
};

// Every chosen form into doc.results, in list order: measured now, kept, refused, or not reached (with
// --resume's prefix); with m.pipes, the basis and the rows' verdicts. Returns kExitMeasure when no
// runner starts. `measured`/`to_measure` say how far the run got.
int measure_table_rows(GlobalOptions& g, const CpuInfo& cpu, const std::vector<isa::ListedForm>& chosen,
                       std::map<std::string, ProbeResult> kept, std::optional<PipeGroups> resumed_basis,
                       const std::vector<ProbeSpec>& catalog, const TableMeasure& m, RunDocument& doc) {
  const isa::Target& target = isa::host_target();
  // What gets measured now: not refused, not kept from the earlier run.
  std::vector<ProbeSpec> specs;
  std::map<std::string, ProbeResult> done;  // by text, this run's rows
  for (const auto& f : chosen) {
    if (!f.refusal.empty() || kept.count(f.text)) continue;
    auto s = spec_for_text(f.text, catalog);
    if (!s) {
      ProbeResult r = skipped_row(f, "");
      r.status = Status::error;
      r.reason = s.error();
      done[f.text] = r;
      continue;
    }
    if (s->origin == "command line") {  // not a catalog row: name the family it came from
      s->group = "table." + f.family;
      s->origin = "table";
      if (auto a = target.arithmetic(f.text)) {  // GFLOP/s or GOP/s by the catalog's convention
        s->ops_per_instruction = a->ops;
        s->dtype = a->dtype;
      }
    }
    specs.push_back(std::move(*s));
  }
  auto runner = start_runner(g, cpu, doc);
  if (!runner) return kExitMeasure;
  // Kept rows' verdicts refer to the earlier document's basis: it stays in the document whether or
  // not this run gets as far as (or asks for) the pipes.
  doc.pipe_groups = resumed_basis;
  spdlog::info("core clock {:.3f} GHz on CPU {}; {} forms chosen: {} to measure, {} kept from --resume, {} refused",
               doc.clock.ghz, runner->cpu(), chosen.size(), specs.size(), kept.size(),
               std::count_if(chosen.begin(), chosen.end(), [](const isa::ListedForm& f) { return !f.refusal.empty(); }));

  // Every chosen form gets a row, in list order: measured, kept, refused, or not reached (yet).
  std::string stop_reason = "the run stopped before this form";
  auto assemble = [&] {
    doc.results.clear();
    for (const auto& f : chosen) {
      if (!f.refusal.empty()) doc.results.push_back(skipped_row(f, f.refusal));
      else if (auto d = done.find(f.text); d != done.end()) doc.results.push_back(d->second);
      else if (auto k = kept.find(f.text); k != kept.end()) doc.results.push_back(k->second);
      else doc.results.push_back(skipped_row(f, kNotReached + stop_reason + " (peakprobe table --resume FILE measures it)"));
    }
  };
  const bool checkpoint = !m.checkpoint.empty() && !writes_to_stdout(m.checkpoint);
  auto write_checkpoint = [&] {
    if (!checkpoint) return;
    assemble();
    try {
      write_output_file(m.checkpoint, [&](std::ostream& out) { out << json_text(to_json(doc)) << "\n"; });
    } catch (const std::exception& e) {
      spdlog::warn("checkpoint not written: {}", e.what());
    }
  };

  const auto t0 = Clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(Clock::now() - t0).count(); };
  double last_checkpoint = 0;
  size_t measured = 0;
  auto stop_now = [&] {
    if (g_interrupted) {
      stop_reason = "the run was interrupted (Ctrl-C) before this form";
      return true;
    }
    if (m.budget_s > 0 && elapsed() >= m.budget_s) {
      stop_reason = fmt::format("the time budget of {:g} s ran out before this form", m.budget_s);
      return true;
    }
    return false;
  };
  {
    // One batch for the whole table: every form once, then the mistrusted ones again, round by
    // round, with one pause per round. (Chunks of 32 paid up to 1.3 s of pauses each: 290 s of a
    // 414 s whole-table run on a Zen 4 VM whose sibling thread was busy.)
    runner->run_batch(
        specs, [&](size_t i, const ProbeSpec& s) { progress(g.out, i + 1, specs.size(), s.text); },
        [&](size_t i, const ProbeResult& r) {
          done[r.instruction] = r;
          measured = std::max(measured, i + 1);
          if (elapsed() - last_checkpoint >= kCheckpointSeconds) {
            write_checkpoint();
            last_checkpoint = elapsed();
          }
        },
        stop_now);
  }
  progress_done(g.out);
  if (m.pipes && !stop_now())
    measure_pipes(g, *runner, cpu, doc, chosen, done, kept, std::move(resumed_basis), stop_now,
                  [&] { write_checkpoint(); });
  assemble();
  std::map<Status, size_t> counts;
  for (const auto& r : doc.results) ++counts[r.status];
  const auto threaded = std::count_if(doc.results.begin(), doc.results.end(), multi_core_doubted);
  spdlog::info("table: {} rows in {:.1f} s: {} ok, {} mistrusted, {} error, {} skipped{} (measured now: {} of {})",
               doc.results.size(), elapsed(), counts[Status::ok], counts[Status::mistrusted], counts[Status::error],
               counts[Status::skipped],
               threaded > 0 ? fmt::format("; {} multi-core runs not ok", threaded) : std::string(), measured,
               specs.size());
  if (measured < specs.size())
    spdlog::warn("{} forms not measured: {}; --resume with this run's JSON goes on from there",
                 specs.size() - measured, stop_reason);
  return kExitOk;
}

int run_table(GlobalOptions& g, const TableOptions& o) {
  const isa::Target& target = isa::host_target();
  std::vector<isa::ListedForm> given;
  std::vector<std::string> families = target.form_families();
  if (!o.forms.empty()) {
    auto f = listed_forms(target, o.forms);
    if (!f) {
      spdlog::error("{}", f.error());
      return kExitUsage;
    }
    given = std::move(*f);
    families.push_back("forms");
  }
  auto chosen = select_forms(o.forms.empty() ? target.all_forms() : given, families, o.selection);
  if (!chosen) {
    spdlog::error("{}", chosen.error());
    return kExitUsage;
  }
  if (chosen->empty()) {
    spdlog::error("no form matches the selection (peakprobe table --list shows every form)");
    return kExitUsage;
  }
  if (o.list) return list_forms(*chosen);

  std::map<std::string, ProbeResult> kept;
  std::optional<PipeGroups> resumed_basis;
  if (!o.resume.empty()) {
    auto k = rows_to_keep(o.resume);
    if (!k) {
      spdlog::error("{}", k.error());
      return kExitUsage;
    }
    kept = std::move(k->rows);
    resumed_basis = std::move(k->pipe_groups);
  }
  auto catalog = load_catalogs(g);
  if (!catalog) {
    spdlog::error("{}", catalog.error());
    return kExitUsage;
  }
  if (!o.html.empty()) {
    if (std::string why = output_path_problem(o.html); !why.empty()) {
      spdlog::error("--html: {}", why);
      return kExitOutput;
    }
    if (writes_to_stdout(o.html)) {  // the console table goes there
      spdlog::error("--html takes a file name, not '-'");
      return kExitUsage;
    }
  }
  CpuInfo cpu;
  if (int rc = prepare_measuring(g, cpu)) return rc;
  RunDocument doc;
  SigintScope sigint;
  TableMeasure m;
  m.pipes = o.pipes;
  m.budget_s = o.budget_s;
  m.checkpoint = g.out.json;
  if (int rc = measure_table_rows(g, cpu, *chosen, std::move(kept), std::move(resumed_basis), *catalog, m, doc))
    return rc;
  if (!o.html.empty())
    if (int rc = write_jobs({{o.html, [&](std::ostream& out) { out << table_html(doc); }}})) return rc;
  const int rc = emit_outputs(doc, g.out);
  if (rc == kExitOk && g_interrupted) return kExitInterrupted;
  return rc;
}

}  // namespace

int measure_whole_table(GlobalOptions& g, const CpuInfo& cpu, bool pipes, RunDocument& doc, bool& interrupted) {
  const isa::Target& target = isa::host_target();
  auto chosen = select_forms(target.all_forms(), target.form_families(), FormSelection{});
  if (!chosen) {
    spdlog::error("table: {}", chosen.error());
    return kExitUsage;
  }
  auto catalog = load_catalogs(g);
  if (!catalog) {
    spdlog::error("table: {}", catalog.error());
    return kExitUsage;
  }
  SigintScope sigint;  // Ctrl-C ends the table early: the report keeps what it measured
  TableMeasure m;
  m.pipes = pipes;
  const int rc = measure_table_rows(g, cpu, *chosen, {}, std::nullopt, *catalog, m, doc);
  interrupted = g_interrupted;
  return rc;
}

void add_table_command(CLI::App& app, GlobalOptions& g) {
  auto* cmd = app.add_subcommand(
      "table", "Every instruction form the encoder knows, measured (or skipped, with why): this CPU's whole table");
  auto o = std::make_shared<TableOptions>();
  const isa::Target& target = isa::host_target();
  std::string families;
  for (const auto& f : target.form_families()) families += (families.empty() ? "" : ", ") + f;
  cmd->add_option("-f,--filter", o->selection.filter,
                  "Only forms whose text contains this (case-insensitive); 'a,b' matches either");
  cmd->add_option("--group", o->selection.groups, "Only these families: " + families + " ('a,b' or repeated)");
  cmd->add_option("--isa", o->selection.isa,
                  "Only forms that need a CPU feature whose name starts with this (as 'peakprobe info' names them)");
  cmd->add_option("--budget", o->budget_s,
                  "Stop starting new forms after this many seconds (0: no limit); the rest are listed as not "
                  "measured, and --resume goes on")
      ->check(number_in(0, 1e6));
  cmd->add_option("--resume", o->resume,
                  "A table JSON of an earlier run (interrupted, or over budget): keep its finished rows, measure the "
                  "rest")
      ->check(not_empty());
  cmd->add_option("--html", o->html, "Write the table as one self-contained page (filter, sort by any column)")
      ->check(not_empty());
  cmd->add_option("--forms", o->forms,
                  "Measure these forms (as 'peakprobe inst' takes them) instead of the encoder's whole list")
      ->expected(1, -1);
  cmd->add_flag("--pipes", o->pipes,
                "Also find this CPU's pipe groups and classify every ok form by the groups it contends with "
                "(docs/table.md)");
  cmd->add_flag("--list", o->list, "List the chosen forms and what would happen to each on this CPU; measure nothing");
  cmd->footer(
      "Forms: one per operand signature and register width of the encoder's instruction database, spelled as\n"
      "'peakprobe inst' takes them; each is measured with the method of 'inst' (latency per operand,\n"
      "throughput with K swept). Forms this CPU lacks a feature for are skipped, with the feature named;\n"
      "forms that cannot run in user space are refused before anything runs, with the reason.\n"
      "With --json FILE the document is rewritten whole every 10 s while measuring, so an interrupted\n"
      "run (Ctrl-C stops after the forms in flight) keeps what it measured: --resume FILE goes on.\n"
      "With --pipes, a seed set of instructions is measured pair by pair and clustered into a basis,\n"
      "one member per kind of pipe this CPU has; every ok form is then interleaved with each member and\n"
      "marked shared, partial, none, issue-width (the pair ran at the core's issue width: no verdict) or\n"
      "penalty (far slower than the two one after the other: a cost at every switch, not a pipe).\n"
      "Examples:\n" +
      target.help_texts().table_examples +
      "  peakprobe table --json t.json --budget 60 && peakprobe table --json t.json --resume t.json\n"
      "  peakprobe compare old-table.json new-table.json --markdown diff.md   # what got faster or slower\n");
  cmd->callback([&g, o] { g.action = [&g, o] { g.exit_code = run_table(g, *o); }; });
}

}  // namespace peakprobe::cli
