#include "compare/compare.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <unordered_map>

#include <fmt/format.h>

namespace peakprobe {
namespace {

using nlohmann::json;

constexpr Direction kHigher = Direction::higher_is_better;
constexpr Direction kLower = Direction::lower_is_better;

// ---- reads that never throw: a document from another peakprobe version may lack a key or hold
// another type there, and one odd row must not abort the whole comparison ----

const json* member(const json& obj, const char* key) {
  if (!obj.is_object()) return nullptr;
  auto it = obj.find(key);
  return it == obj.end() ? nullptr : &*it;
}

std::optional<double> number_at(const json& obj, const char* key) {
  const json* v = member(obj, key);
  if (v == nullptr || !v->is_number()) return std::nullopt;
  double d = v->get<double>();
  if (!std::isfinite(d)) return std::nullopt;
  return d;
}

std::string text_at(const json& obj, const char* key) {
  const json* v = member(obj, key);
  return v != nullptr && v->is_string() ? v->get<std::string>() : std::string();
}

long long integer_at(const json& obj, const char* key, long long fallback) {
  const json* v = member(obj, key);
  if (v == nullptr || !v->is_number()) return fallback;
  // json converts a double with a plain cast, undefined outside long long's range (1e300).
  if (v->is_number_float()) {
    const double d = v->get<double>();
    return d >= -9.0e18 && d <= 9.0e18 ? static_cast<long long>(d) : fallback;
  }
  return v->get<long long>();
}

// A row without a status (benchmark entries, ceilings) is a plain measurement, so it counts as ok.
std::string status_of(const json& row) {
  const json* v = member(row, "status");
  return v != nullptr && v->is_string() ? v->get<std::string>() : std::string("ok");
}

// ---- row identities: what a row measures, so that reordered or filtered runs still line up ----

std::string counted(long long n, const char* noun) { return fmt::format("{} {}{}", n, noun, n == 1 ? "" : "s"); }

// Exact, so that two different sizes never print alike (they key the match).
std::string size_text(long long bytes) {
  constexpr long long kKiB = 1024, kMiB = kKiB * 1024, kGiB = kMiB * 1024;
  if (bytes > 0 && bytes % kGiB == 0) return fmt::format("{} GiB", bytes / kGiB);
  if (bytes > 0 && bytes % kMiB == 0) return fmt::format("{} MiB", bytes / kMiB);
  if (bytes > 0 && bytes % kKiB == 0) return fmt::format("{} KiB", bytes / kKiB);
  return fmt::format("{} B", bytes);
}

std::string inst_identity(const json& r) {
  long long threads = integer_at(r, "threads", 1);
  std::string text = text_at(r, "instruction");
  return threads == 1 ? text : fmt::format("{} [{}]", text, counted(threads, "thread"));
}

std::string bandwidth_identity(const json& r) {
  return fmt::format("{} {} {}, {}", text_at(r, "kernel"), text_at(r, "isa"),
                     size_text(integer_at(r, "size_bytes", 0)), counted(integer_at(r, "threads", 1), "thread"));
}

std::string latency_identity(const json& r) {
  return fmt::format("{} {} pages {}, {}", text_at(r, "mode"), text_at(r, "pages"),
                     size_text(integer_at(r, "size_bytes", 0)), counted(integer_at(r, "chains", 1), "chain"));
}

// The same spelling as the dual-issue CSV's `parts` column: "<form A>:1 + <form B>:1".
std::string parts_identity(const json& r) {
  std::string s;
  const json* parts = member(r, "parts");
  if (parts == nullptr || !parts->is_array()) return s;
  for (const auto& p : *parts)
    s += (s.empty() ? "" : " + ") + fmt::format("{}:{}", text_at(p, "instruction"), integer_at(p, "weight", 1));
  return s;
}

std::string compute_ceiling_identity(const json& r) {
  return fmt::format("{} {}, {}", text_at(r, "dtype"), text_at(r, "isa"),
                     counted(integer_at(r, "threads", 1), "thread"));
}

std::string memory_ceiling_identity(const json& r) {
  return fmt::format("{} {}, {}", text_at(r, "level"), text_at(r, "kernel"),
                     counted(integer_at(r, "threads", 1), "thread"));
}

std::string name_identity(const json& r) { return text_at(r, "name"); }

// ---- the kinds of rows a peakprobe/1 document can carry ----

struct MetricSpec {
  const char* key;
  Direction direction;
  const char* stats = nullptr;  // the row's statistics object whose `spread` this metric shares
  // A rate per second that is a rate per cycle times the row's clock: the key of the row's cycle
  // figure it follows (CompareOptions::clock_moves_absorbed).
  const char* per_cycle = nullptr;
  // The key of a verdict of its own that this metric depends on (a row's `threads_status` for its
  // all-cores totals): where either side's is present and not ok, the metric is not comparable,
  // and the rest of the row still is.
  const char* status = nullptr;
  // The least a change is measured against, in the metric's unit (0: the old value itself). An
  // instruction's latency is a count of cycles a result waits: a chain the renamer eliminates runs
  // faster than a cycle a link, and its figure (0.17 cycles on a 6-wide renamer) is then the
  // renamer's rate, which moves by several percent between runs of one machine as the moves are or
  // are not all eliminated (Zen 4 VM: 0.164-0.178 for a vector register move in two tables minutes
  // apart). Such a chain's change is judged as a share of one cycle: losing the elimination (0.17
  // to 1.0) stays a regression, 0.168 to 0.178 does not.
  double floor = 0;
};

struct RowKind {
  const char* kind;
  std::vector<std::vector<const char*>> paths;  // key paths to arrays of rows, e.g. {"matrix", "pairs"}
  std::string (*identity)(const json&);
  std::vector<MetricSpec> metrics;
};

const std::vector<RowKind>& row_kinds() {
  static const std::vector<MetricSpec> mix_metrics = {{"cycles_per_group", kLower},
                                                      {"flops_per_cycle", kHigher},
                                                      {"gflops", kHigher, nullptr, "cycles_per_group"},
                                                      {"gops", kHigher, nullptr, "cycles_per_group"}};
  static const std::vector<MetricSpec> benchmark_metrics = {{"mean_ms", kLower}, {"gflops", kHigher}};
  static const std::vector<RowKind> kinds = {
      // The totals only exist with --threads N; they catch a loss of multi-core scaling that the
      // per-core figures (always from the single-thread run) cannot show.
      // Rates derived from the reciprocal throughput share its samples, and so its spread.
      {"inst", {{"results"}}, inst_identity,
       {{"latency_cycles", kLower, "latency", nullptr, nullptr, 1.0}, {"recip_throughput_cycles", kLower, "throughput"},
        {"throughput_ipc", kHigher, "throughput"}, {"gflops", kHigher, "throughput", "recip_throughput_cycles"},
        {"gops", kHigher, "throughput", "recip_throughput_cycles"},
        {"total_gflops", kHigher, nullptr, nullptr, "threads_status"},
        {"total_gops", kHigher, nullptr, nullptr, "threads_status"}}},
      {"bandwidth", {{"bandwidth"}}, bandwidth_identity, {{"gbps", kHigher, "stats"}}},
      {"latency", {{"latency"}}, latency_identity, {{"latency_cycles", kLower}, {"latency_ns", kLower}}},
      {"mix", {{"mixes"}}, parts_identity, mix_metrics},
      {"pair", {{"pairs"}, {"matrix", "pairs"}}, parts_identity, mix_metrics},
      // A floating-point ceiling's rate is `gflops`, an integer one's `gops` (ceiling_report.cpp).
      {"compute ceiling", {{"ceilings", "compute"}}, compute_ceiling_identity, {{"gflops", kHigher}, {"gops", kHigher}}},
      {"memory ceiling", {{"ceilings", "memory"}}, memory_ceiling_identity, {{"gbps", kHigher}}},
      {"matmul", {{"matmul"}}, name_identity, benchmark_metrics},
      {"benchmark", {{"benchmarks"}}, name_identity, benchmark_metrics},
  };
  return kinds;
}

struct Row {
  std::string item;
  const json* obj;
};

const json* find_path(const json& doc, const std::vector<const char*>& path) {
  const json* at = &doc;
  for (const char* key : path) {
    at = member(*at, key);
    if (at == nullptr) return nullptr;
  }
  return at;
}

// A repeated identity (the same form given twice to `inst`) gets "#2", "#3": repeats then pair up
// in order instead of all matching the first.
std::vector<Row> collect_rows(const json& doc, const RowKind& kind) {
  std::vector<Row> rows;
  std::unordered_map<std::string, int> seen;
  for (const auto& path : kind.paths) {
    const json* array = find_path(doc, path);
    if (array == nullptr || !array->is_array()) continue;
    for (const auto& obj : *array) {
      if (!obj.is_object()) continue;
      std::string item = kind.identity(obj);
      int n = ++seen[item];
      rows.push_back({n == 1 ? item : fmt::format("{} #{}", item, n), &obj});
    }
  }
  return rows;
}

// ---- judging ----

// The spec's rule (docs and CI seed): time regresses when new > old * 1.05, a rate when new < old * 0.95;
// `widen` (the rows' spreads) is added to either threshold.
Verdict judge(Direction dir, double old_value, double new_value, const CompareOptions& o, double widen = 0) {
  if (dir == kLower) {
    const double t = o.time_threshold + widen;
    if (new_value > old_value * (1 + t)) return Verdict::regression;
    if (new_value < old_value * (1 - t)) return Verdict::improvement;
  } else {
    const double t = std::min(1.0, o.throughput_threshold + widen);
    if (new_value < old_value * (1 - t)) return Verdict::regression;
    if (new_value > old_value * (1 + t)) return Verdict::improvement;
  }
  return Verdict::same;
}

// The spread a row measured for a metric (`stats`.spread), 0 when it has none or it is not a
// finite non-negative number.
double row_spread(const json& row, const char* stats) {
  if (stats == nullptr) return 0;
  const json* obj = member(row, stats);
  if (obj == nullptr || !obj->is_object()) return 0;
  const auto s = number_at(*obj, "spread");
  return s && std::isfinite(*s) && *s > 0 ? *s : 0;
}

MetricDelta whole_row(const char* kind, const std::string& item, Verdict verdict, std::string old_status,
                      std::string new_status) {
  MetricDelta d;
  d.kind = kind;
  d.item = item;
  d.verdict = verdict;
  d.old_status = std::move(old_status);
  d.new_status = std::move(new_status);
  return d;
}

MetricDelta metric_delta(const char* kind, const Row& old_row, const Row& new_row, const MetricSpec& m,
                         const CompareOptions& o) {
  MetricDelta d = whole_row(kind, old_row.item, Verdict::same, "ok", "ok");
  d.metric = m.key;
  d.direction = m.direction;
  d.old_value = number_at(*old_row.obj, m.key);
  d.new_value = number_at(*new_row.obj, m.key);
  const std::string old_part = m.status ? text_at(*old_row.obj, m.status) : "",
                    new_part = m.status ? text_at(*new_row.obj, m.status) : "";
  if (!old_part.empty() && old_part != "ok") {
    d.verdict = Verdict::not_comparable;
    d.note = fmt::format("the old run's {} is {}", m.status, old_part);
  } else if (!new_part.empty() && new_part != "ok") {
    d.verdict = Verdict::not_comparable;
    d.note = fmt::format("the new run's {} is {}", m.status, new_part);
  } else if (!d.new_value) {
    d.verdict = Verdict::removed;
  } else if (!d.old_value) {
    d.verdict = Verdict::added;
  } else if (*d.old_value <= 0) {
    // No ratio exists against a zero baseline; flagging it is safer than guessing a direction.
    d.verdict = Verdict::not_comparable;
    d.note = "baseline is 0";
  } else {
    d.ratio = *d.new_value / *d.old_value;
    if (o.widen_by_spread) d.spread_allowance = row_spread(*old_row.obj, m.stats) + row_spread(*new_row.obj, m.stats);
    // Below the floor the change is judged against the floor: both values move up by the same
    // amount, which keeps the difference and takes the floor as its base.
    const double lift = *d.old_value < m.floor ? m.floor - *d.old_value : 0.0;
    const double was = *d.old_value + lift, now = *d.new_value + lift;
    d.verdict = judge(m.direction, was, now, o, d.spread_allowance);
    if (d.verdict == Verdict::same && judge(m.direction, *d.old_value, *d.new_value, o, d.spread_allowance) != Verdict::same)
      d.note = fmt::format("a change of {:+.3f} against at least {:g}: below that the figure is no longer what the "
                           "metric means (a latency under one cycle is the renamer's rate)",
                           *d.new_value - *d.old_value, m.floor);
    else if (d.verdict == Verdict::same && judge(m.direction, was, now, o) != Verdict::same)
      d.note = fmt::format("within the rows' spread, {:.1f}%", d.spread_allowance * 100);
  }
  return d;
}

// `table --pipes` rows: the verdict against each basis member both documents have. A change counts
// only when the class changes (none, partial, shared) and the same-port measure moves by this much
// or more: a measure near a class threshold crosses it between two runs of one machine.
constexpr double kPipeChange = 0.25;

bool judged_contention(const std::string& c) { return c == "none" || c == "partial" || c == "shared"; }

void compare_pipes(const Row& old_row, const Row& new_row, std::vector<MetricDelta>& out) {
  const json* before = member(*old_row.obj, "pipes");
  const json* after = member(*new_row.obj, "pipes");
  if (before == nullptr || after == nullptr || !before->is_array() || !after->is_array()) return;
  std::unordered_map<std::string, const json*> by_basis;
  for (const auto& v : *after)
    if (v.is_object()) by_basis.emplace(text_at(v, "basis"), &v);
  for (const auto& v : *before) {
    if (!v.is_object()) continue;
    const std::string basis = text_at(v, "basis");
    auto it = by_basis.find(basis);
    if (basis.empty() || it == by_basis.end()) continue;
    const std::string was = text_at(v, "contention"), now = text_at(*it->second, "contention");
    const auto a = number_at(v, "same_port"), b = number_at(*it->second, "same_port");
    // A penalty gained or lost against `none` or `partial` (the pair went from at most three quarters
    // of the way to its parts in sequence to more than 1.5 times that, docs/pairs.md) is far beyond
    // run-to-run noise: it counts without a threshold on the measure. Against `shared` it may be one
    // pipe served a little worse or better across the 1.5 line: not counted.
    auto below_shared = [](const std::string& c) { return c == "none" || c == "partial"; };
    const bool penalty_moved = (was == "penalty" && below_shared(now)) || (now == "penalty" && below_shared(was));
    if (!penalty_moved) {
      if (!judged_contention(was) || !judged_contention(now) || was == now) continue;
      if (!a || !b || std::fabs(*b - *a) < kPipeChange) continue;
    }
    MetricDelta d = whole_row("inst", old_row.item, Verdict::pipe_changed, "ok", "ok");
    d.metric = "pipe " + basis;
    d.old_value = a;
    d.new_value = b;
    d.note = was + " -> " + now;
    out.push_back(std::move(d));
  }
}

// The row's core clock in GHz (`clock.ghz`), when it has one.
std::optional<double> row_ghz(const json& row) {
  const json* clock = member(row, "clock");
  return clock != nullptr && clock->is_object() ? number_at(*clock, "ghz") : std::nullopt;
}

// A skipped, mistrusted or error row says nothing reliable about speed: listing it keeps it visible
// without letting noise fail the build. `same_machine`: both documents come from one machine.
void compare_row(const RowKind& kind, const Row& old_row, const Row& new_row, const CompareOptions& o,
                 bool same_machine, std::vector<MetricDelta>& out) {
  std::string old_status = status_of(*old_row.obj), new_status = status_of(*new_row.obj);
  if (old_status != "ok" || new_status != "ok") {
    out.push_back(whole_row(kind.kind, old_row.item, Verdict::not_comparable, old_status, new_status));
    return;
  }
  const size_t first = out.size();
  for (const auto& m : kind.metrics) {
    // A metric null on both sides does not apply to this row (a store's latency, an integer gflops).
    if (!number_at(*old_row.obj, m.key) && !number_at(*new_row.obj, m.key)) continue;
    out.push_back(metric_delta(kind.kind, old_row, new_row, m, o));
  }
  // One machine: a rate per second that moved while its cycles did not moved with the clock.
  if (same_machine && o.clock_moves_absorbed)
    for (const auto& m : kind.metrics) {
      if (m.per_cycle == nullptr) continue;
      auto at = [&](const char* key) -> MetricDelta* {
        for (size_t i = first; i < out.size(); ++i)
          if (out[i].metric == key) return &out[i];
        return nullptr;
      };
      MetricDelta* rate = at(m.key);
      const MetricDelta* cycles = at(m.per_cycle);
      if (rate == nullptr || cycles == nullptr || cycles->verdict != Verdict::same || !rate->ratio ||
          (rate->verdict != Verdict::regression && rate->verdict != Verdict::improvement))
        continue;
      const auto was = row_ghz(*old_row.obj), now = row_ghz(*new_row.obj);
      if (!was || !now || !(*was > 0) || !(*now > 0)) continue;
      // At one clock the rate must hold by its own threshold (the cycles' may be wider): then the
      // change was the clock's.
      if (judge(kHigher, 1.0, *rate->ratio * *was / *now, o, rate->spread_allowance) != Verdict::same) continue;
      rate->verdict = Verdict::same;
      rate->note = fmt::format("the clock moved ({:.2f} -> {:.2f} GHz); at one clock within the threshold", *was,
                               *now);
    }
  if (std::string(kind.kind) == "inst") compare_pipes(old_row, new_row, out);
}

// Returns how many rows appeared in both documents.
int compare_kind(const RowKind& kind, const json& old_doc, const json& new_doc, const CompareOptions& o,
                 bool same_machine, std::vector<MetricDelta>& out) {
  std::vector<Row> old_rows = collect_rows(old_doc, kind), new_rows = collect_rows(new_doc, kind);
  std::unordered_map<std::string, size_t> new_index;
  for (size_t i = 0; i < new_rows.size(); ++i) new_index.emplace(new_rows[i].item, i);
  std::vector<bool> matched(new_rows.size(), false);
  int both = 0;
  for (const auto& r : old_rows) {
    auto it = new_index.find(r.item);
    if (it == new_index.end()) {
      out.push_back(whole_row(kind.kind, r.item, Verdict::removed, status_of(*r.obj), ""));
      continue;
    }
    matched[it->second] = true;
    ++both;
    compare_row(kind, r, new_rows[it->second], o, same_machine, out);
  }
  for (size_t i = 0; i < new_rows.size(); ++i)
    if (!matched[i]) out.push_back(whole_row(kind.kind, new_rows[i].item, Verdict::added, "", status_of(*new_rows[i].obj)));
  return both;
}

std::string host_text(const json& host) {
  return fmt::format("\"{}\" (family {}, model {})", text_at(host, "brand"), integer_at(host, "family", -1),
                     integer_at(host, "model", -1));
}

// Both documents name their host and it is one kind of CPU (brand, family, model).
bool same_machine(const json& old_doc, const json& new_doc) {
  const json* a = member(old_doc, "host");
  const json* b = member(new_doc, "host");
  if (a == nullptr || b == nullptr || !a->is_object() || !b->is_object()) return false;
  return !text_at(*a, "brand").empty() && text_at(*a, "brand") == text_at(*b, "brand") &&
         integer_at(*a, "family", -1) == integer_at(*b, "family", -1) &&
         integer_at(*a, "model", -1) == integer_at(*b, "model", -1);
}

// Timings from two machines differ for reasons no code change caused; the verdicts still apply, but
// the reader must know.
std::optional<std::string> host_warning(const json& old_doc, const json& new_doc) {
  const json* a = member(old_doc, "host");
  const json* b = member(new_doc, "host");
  if (a == nullptr || b == nullptr || !a->is_object() || !b->is_object()) return std::nullopt;
  if (text_at(*a, "brand") == text_at(*b, "brand") && integer_at(*a, "family", -1) == integer_at(*b, "family", -1) &&
      integer_at(*a, "model", -1) == integer_at(*b, "model", -1))
    return std::nullopt;
  return fmt::format("different hosts: old {}, new {}; differences may come from the machine, not the code",
                     host_text(*a), host_text(*b));
}

// A matmul row's time is its fastest round of the side by side with the baselines (matmul_run.hpp):
// more rounds read faster by the method alone, so rows that ran a different number are flagged.
std::optional<std::string> rounds_warning(const json& old_doc, const json& new_doc) {
  auto rounds_by_name = [](const json& doc) {
    std::map<std::string, long long> out;
    for (const char* key : {"matmul", "benchmarks"})
      if (const json* rows = member(doc, key); rows != nullptr && rows->is_array())
        for (const json& row : *rows)
          // A row that was not timed (skipped, error) ran no rounds to speak of.
          if (row.is_object() && !text_at(row, "name").empty() &&
              (text_at(row, "status").empty() || text_at(row, "status") == "ok" || text_at(row, "status") == "mistrusted"))
            out[text_at(row, "name")] = std::max(1LL, integer_at(row, "rounds", 1));
    return out;
  };
  const auto before = rounds_by_name(old_doc), after = rounds_by_name(new_doc);
  int differ = 0;
  std::string example;
  for (const auto& [name, rounds] : before)
    if (auto it = after.find(name); it != after.end() && it->second != rounds)
      if (differ++ == 0) example = fmt::format("{}: {} against {}", name, rounds, it->second);
  if (differ == 0) return std::nullopt;
  return fmt::format("{} matmul row{} ran a different number of rounds with the baselines ({}): a row's time is its "
                     "fastest round, so more rounds read faster by the method alone",
                     differ, differ == 1 ? "" : "s", example);
}

std::string threshold_problem(const CompareOptions& o) {
  if (!std::isfinite(o.time_threshold) || o.time_threshold < 0)
    return fmt::format("time threshold must be a non-negative fraction, got {}", o.time_threshold);
  if (!std::isfinite(o.throughput_threshold) || o.throughput_threshold < 0 || o.throughput_threshold > 1)
    return fmt::format("throughput threshold must be a fraction from 0 to 1, got {}", o.throughput_threshold);
  return "";
}

int severity_rank(Verdict v) {
  switch (v) {
    case Verdict::regression: return 0;
    case Verdict::not_comparable: return 1;
    case Verdict::removed: return 2;
    case Verdict::added: return 3;
    case Verdict::improvement: return 4;
    case Verdict::pipe_changed: return 5;
    case Verdict::same: return 6;
  }
  return 7;
}

// ---- text shared by the console and Markdown writers ----

// Enough digits to see a 1% change at every magnitude peakprobe reports (0.25 cycles to 900 GB/s).
std::string value_text(double v) {
  double a = std::fabs(v);
  int decimals = a >= 1000 ? 1 : a >= 100 ? 2 : a >= 1 ? 3 : 4;
  return fmt::format("{:.{}f}", v, decimals);
}

std::string change_text(const MetricDelta& d) {
  return d.ratio ? fmt::format("{:+.1f}%", (*d.ratio - 1) * 100) : std::string("-");
}

// A value cell; a whole-row delta shows the row's status instead, so "mistrusted" is visible.
std::string side_text(const std::optional<double>& value, const std::string& status, const MetricDelta& d) {
  if (value) return value_text(*value);
  if (d.metric.empty() && !status.empty()) return status;
  return "-";
}

std::string percent_text(double fraction) { return fmt::format("{:.3g}%", fraction * 100); }

std::string thresholds_text(const CompareOptions& o) {
  return fmt::format("a time more than {} higher or a rate more than {} lower is a regression{}",
                     percent_text(o.time_threshold), percent_text(o.throughput_threshold),
                     o.widen_by_spread ? " (each widened by the two rows' own spread)" : "");
}

std::string verdict_text(const MetricDelta& d) {
  std::string s = to_string(d.verdict);
  return d.note.empty() ? s : s + " (" + d.note + ")";
}

std::string counts_text(const CompareReport& r) {
  int counts[8] = {};
  for (const auto& d : r.deltas) ++counts[severity_rank(d.verdict)];
  std::string text = fmt::format("{}, {}, {} same, {} not comparable, {} removed, {} added",
                                 counted(counts[0], "regression"), counted(counts[4], "improvement"), counts[6],
                                 counts[1], counts[2], counts[3]);
  if (counts[5] > 0) text += ", " + counted(counts[5], "pipe change");
  return text;
}

// "1474 skipped on both sides, 27 mistrusted on both sides", in the order the statuses first occur;
// "" when every not-comparable row changed its status.
std::string unchanged_status_text(const CompareReport& r) {
  std::vector<std::pair<std::string, int>> by_status;
  for (const auto& d : r.deltas) {
    if (!unchanged_status(d)) continue;
    auto it = std::find_if(by_status.begin(), by_status.end(), [&](const auto& p) { return p.first == d.old_status; });
    if (it == by_status.end()) by_status.emplace_back(d.old_status, 1);
    else ++it->second;
  }
  std::vector<std::string> parts;
  for (const auto& [status, n] : by_status) parts.push_back(fmt::format("{} {} on both sides", n, status));
  return fmt::format("{}", fmt::join(parts, ", "));
}

// One table row always stays one row: '|' would split it, control characters would break the line.
std::string md_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '|') out += "\\|";
    else if (static_cast<unsigned char>(c) < 0x20) out += ' ';
    else out += c;
  }
  return out;
}

std::string code_span(const std::string& s) {
  std::string fence = s.find('`') == std::string::npos ? "`" : "`` ";
  std::string close = fence == "`" ? "`" : " ``";
  return fence + md_escape(s) + close;
}

std::string md_metric_cell(const MetricDelta& d) {
  std::string cell = d.kind + " " + code_span(d.item);
  return d.metric.empty() ? cell : cell + " " + md_escape(d.metric);
}

const char* verdict_color(Verdict v) {
  switch (v) {
    case Verdict::regression: return "\033[31m";
    case Verdict::improvement: return "\033[32m";
    case Verdict::not_comparable: return "\033[33m";
    case Verdict::pipe_changed: return "\033[36m";
    default: return "";
  }
}

json optional_number(const std::optional<double>& v) { return v ? json(*v) : json(nullptr); }

json delta_json(const MetricDelta& d) {
  return {{"kind", d.kind},
          {"item", d.item},
          {"metric", d.metric},
          {"direction", d.metric.empty() || d.verdict == Verdict::pipe_changed ? "" : to_string(d.direction)},
          {"old", optional_number(d.old_value)},
          {"new", optional_number(d.new_value)},
          {"ratio", optional_number(d.ratio)},
          {"change_percent", d.ratio ? json((*d.ratio - 1) * 100) : json(nullptr)},
          {"verdict", to_string(d.verdict)},
          {"old_status", d.old_status},
          {"new_status", d.new_status},
          {"spread_allowance", d.spread_allowance},
          {"note", d.note}};
}

}  // namespace

const char* to_string(Direction d) {
  return d == Direction::higher_is_better ? "higher is better" : "lower is better";
}

const char* to_string(Verdict v) {
  switch (v) {
    case Verdict::regression: return "regression";
    case Verdict::improvement: return "improvement";
    case Verdict::same: return "same";
    case Verdict::not_comparable: return "not comparable";
    case Verdict::added: return "added";
    case Verdict::removed: return "removed";
    case Verdict::pipe_changed: return "pipe changed";
  }
  return "unknown";
}

std::string schema_problem(const json& doc) {
  if (!doc.is_object()) return "not a JSON object";
  const json* schema = member(doc, "schema");
  if (schema == nullptr || !schema->is_string()) return "has no \"schema\" key: not a peakprobe document";
  if (*schema != kRunSchema)
    return fmt::format("schema is \"{}\", expected \"{}\"", schema->get<std::string>(), kRunSchema);
  return "";
}

Expected<CompareReport> compare_documents(const json& old, const json& now, const CompareOptions& options) {
  if (std::string p = schema_problem(old); !p.empty()) return make_error("old document: " + p);
  if (std::string p = schema_problem(now); !p.empty()) return make_error("new document: " + p);
  if (std::string p = threshold_problem(options); !p.empty()) return make_error(p);
  CompareReport report;
  report.options = options;
  if (auto w = host_warning(old, now)) report.warnings.push_back(*w);
  if (auto w = rounds_warning(old, now)) report.warnings.push_back(*w);
  int matched_rows = 0;
  const bool one_machine = same_machine(old, now);
  for (const auto& kind : row_kinds())
    matched_rows += compare_kind(kind, old, now, options, one_machine, report.deltas);
  // Comparing the output of two different commands passes trivially; say so rather than stay silent.
  if (matched_rows == 0)
    report.warnings.push_back("the documents share no measured row (different commands or filters?): "
                              "nothing was compared");
  for (const auto& d : report.deltas) {
    report.regressions += d.verdict == Verdict::regression;
    report.improvements += d.verdict == Verdict::improvement;
  }
  return report;
}

std::vector<MetricDelta> deltas_by_severity(const CompareReport& report) {
  std::vector<MetricDelta> v = report.deltas;
  // Within regressions and within improvements, the largest change first (by |log ratio|, so that
  // twice as slow and twice as fast weigh the same): what a reviewer of two tables reads first.
  auto size = [](const MetricDelta& d) {
    const bool sized = (d.verdict == Verdict::regression || d.verdict == Verdict::improvement) && d.ratio && *d.ratio > 0;
    return sized ? std::fabs(std::log(*d.ratio)) : 0.0;
  };
  std::stable_sort(v.begin(), v.end(), [&](const MetricDelta& a, const MetricDelta& b) {
    if (severity_rank(a.verdict) != severity_rank(b.verdict)) return severity_rank(a.verdict) < severity_rank(b.verdict);
    return size(a) > size(b);
  });
  return v;
}

bool unchanged_status(const MetricDelta& d) {
  // An error stays listed: a form that fails in both runs is something to fix, not background.
  return d.verdict == Verdict::not_comparable && d.metric.empty() && !d.old_status.empty() &&
         d.old_status == d.new_status && d.old_status != "error";
}

void write_compare_markdown(std::ostream& out, const CompareReport& report, bool list_unchanged) {
  out << fmt::format("## peakprobe compare: {}, {}\n\n", counted(report.regressions, "regression"),
                     counted(report.improvements, "improvement"));
  out << "Thresholds: " << thresholds_text(report.options) << ". " << counts_text(report) << ".\n\n";
  for (const auto& w : report.warnings) out << "> **Warning:** " << md_escape(w) << "\n\n";
  if (report.deltas.empty()) {
    out << "No metrics to compare.\n";
    return;
  }
  const std::string unchanged = list_unchanged ? "" : unchanged_status_text(report);
  if (!unchanged.empty())
    out << "Not listed, not comparable and unchanged: " << md_escape(unchanged)
        << " (`peakprobe compare --all` lists them).\n\n";
  bool header = false;
  for (const auto& d : deltas_by_severity(report)) {
    if (!list_unchanged && unchanged_status(d)) continue;
    if (!header) out << "| metric | old | new | change | verdict |\n|---|--:|--:|--:|---|\n";
    header = true;
    std::string verdict = md_escape(verdict_text(d));
    if (d.verdict == Verdict::regression) verdict = "**" + verdict + "**";
    out << "| " << md_metric_cell(d) << " | " << side_text(d.old_value, d.old_status, d) << " | "
        << side_text(d.new_value, d.new_status, d) << " | " << change_text(d) << " | " << verdict << " |\n";
  }
}

json to_json(const CompareReport& report) {
  json deltas = json::array();
  for (const auto& d : report.deltas) deltas.push_back(delta_json(d));
  return {{"schema", kCompareSchema},
          {"thresholds",
           {{"time", report.options.time_threshold},
            {"throughput", report.options.throughput_threshold},
            {"widened_by_spread", report.options.widen_by_spread},
            {"clock_moves_absorbed", report.options.clock_moves_absorbed}}},
          {"regressions", report.regressions},
          {"improvements", report.improvements},
          {"warnings", report.warnings},
          {"deltas", deltas}};
}

void write_compare_console(std::ostream& out, const CompareReport& report, bool color, bool list_unchanged) {
  out << "peakprobe compare: " << thresholds_text(report.options) << "\n";
  for (const auto& w : report.warnings) out << "warning: " << w << "\n";
  out << "\n";
  bool any = false;
  for (const auto& d : deltas_by_severity(report)) {
    if (d.verdict == Verdict::same || (!list_unchanged && unchanged_status(d))) continue;
    if (!any) out << fmt::format("  {:<15}{:>8}  {:>12}  {:>12}  {}\n", "verdict", "change", "old", "new", "metric");
    any = true;
    std::string verdict = fmt::format("{:<15}", to_string(d.verdict));
    if (color && *verdict_color(d.verdict) != '\0') verdict = verdict_color(d.verdict) + verdict + "\033[0m";
    std::string what = d.kind + "  " + d.item + (d.metric.empty() ? "" : "  " + d.metric);
    if (!d.note.empty()) what += "  (" + d.note + ")";
    out << fmt::format("  {}{:>8}  {:>12}  {:>12}  {}\n", verdict, change_text(d),
                       side_text(d.old_value, d.old_status, d), side_text(d.new_value, d.new_status, d), what);
  }
  if (any) out << "\n";
  out << counts_text(report) << "\n";
  if (const std::string unchanged = list_unchanged ? "" : unchanged_status_text(report); !unchanged.empty())
    out << "not listed (not comparable, unchanged): " << unchanged << " (--all lists them)\n";
}

}  // namespace peakprobe
