// Regression check between two peakprobe/1 documents (a baseline and a new run), for CI: every
// metric present in both is matched by what it measures (not by its position in the file), its
// ratio new/old is judged against a threshold, and the outcome is written for people (console,
// Markdown for a pull request) or for programs (JSON).
#pragma once
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "peakprobe/expected.hpp"

namespace peakprobe {

inline constexpr const char* kRunSchema = "peakprobe/1";
inline constexpr const char* kCompareSchema = "peakprobe-compare/1";

// Fractions, not percentages: 0.05 means 5%.
struct CompareOptions {
  // A lower-is-better value (time, cycles) regresses when new > old * (1 + time_threshold).
  double time_threshold = 0.05;
  // A higher-is-better value (rate, IPC) regresses when new < old * (1 - throughput_threshold).
  double throughput_threshold = 0.05;
  // Each threshold is widened, metric by metric, by the spread both rows measured for it (a row's
  // `spread`: how far its typical sample sat from its best one), so a change no larger than the two
  // runs' own scatter is not called a regression. Rows without spreads keep the plain thresholds.
  bool widen_by_spread = true;
  // Two documents of one machine (same named CPU brand, family and model): a rate per second
  // (GFLOP/s, GOP/s) whose cycles per instruction (or per group) are judged `same`, and which scaled
  // to one clock (the rows' `clock.ghz`) is within its own threshold, is `same` too, with a note
  // naming both clocks. The core clock of a row moves between runs and the cycles do not: on the
  // Intel VM two whole tables back to back measured a 256-bit byte compare with a memory operand
  // at 1.001 and 1.002 cycles, at 3.56 and 4.06 GHz, and 33 such rates read as changed. Across
  // machines the rates stand.
  bool clock_moves_absorbed = true;
};

enum class Direction { higher_is_better, lower_is_better };

enum class Verdict {
  regression,
  improvement,
  same,
  not_comparable,  // a side's row is not ok, or the baseline is 0 so no ratio exists
  added,           // only the new document has it
  removed,         // only the old document has it
  pipe_changed,    // `table --pipes`: the form contends with a basis member differently (neither better nor worse)
};

const char* to_string(Direction d);
const char* to_string(Verdict v);

// One metric of one row, or a whole row when the row itself is added, removed or not comparable
// (then `metric` is empty and the values are absent).
struct MetricDelta {
  std::string kind;    // "inst", "bandwidth", "latency", "mix", "pair", "compute ceiling", ...
  std::string item;    // the row's identity: an instruction text, "load <width> 32 KiB, 1 thread"
  std::string metric;  // the JSON key: "recip_throughput_cycles", "gbps", "mean_ms"; "" for a whole row
  Direction direction = Direction::lower_is_better;
  std::optional<double> old_value, new_value;
  std::optional<double> ratio;  // new / old, when both exist and old > 0
  Verdict verdict = Verdict::same;
  std::string old_status, new_status;  // "" on the side that lacks the row
  std::string note;                    // why a delta is not comparable, or that the spread absorbed it
  double spread_allowance = 0;         // the rows' spreads added to the threshold (fraction)
};

struct CompareReport {
  std::vector<MetricDelta> deltas;  // in the old document's order, added rows last
  std::vector<std::string> warnings;
  int regressions = 0;
  int improvements = 0;
  CompareOptions options;  // the thresholds used, so every output can state them
};

// "" when doc is a peakprobe/1 document, else what is wrong with it ("schema is ..., expected ...").
std::string schema_problem(const nlohmann::json& doc);

// Fails when either document is not peakprobe/1 or a threshold is negative or not finite.
Expected<CompareReport> compare_documents(const nlohmann::json& old, const nlohmann::json& now,
                                          const CompareOptions& options);

// Deltas in the order a reviewer needs them: regressions, not comparable, removed, added,
// improvements, same; the largest change first within regressions and within improvements, document
// order within the others.
std::vector<MetricDelta> deltas_by_severity(const CompareReport& report);

// A heading with the counts, the warnings, and a GitHub table (metric, old, new, change, verdict)
// with one row per delta, regressions first.
// A whole row that is not ok with the same status on both sides (skipped in both, mistrusted in
// both; an error stays listed) changed nothing a reviewer can act on: by default the writers give those as one count per
// status instead of a line each (a table of 7800 forms has 1500 skipped ones); list_unchanged
// lists them all. The JSON always has every delta.
bool unchanged_status(const MetricDelta& d);
void write_compare_markdown(std::ostream& out, const CompareReport& report, bool list_unchanged = false);
// { schema: "peakprobe-compare/1", thresholds, regressions, improvements, warnings, deltas [...] }
nlohmann::json to_json(const CompareReport& report);
// Every delta except the unchanged ones, then one line of counts; color = ANSI colors for verdicts.
void write_compare_console(std::ostream& out, const CompareReport& report, bool color, bool list_unchanged = false);

}  // namespace peakprobe
