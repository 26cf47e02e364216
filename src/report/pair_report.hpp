// Reporters for dual-issue results: mixes, pairs, pair matrices and the best FLOP mix.
#pragma once
#include <ostream>
#include <string>

#include <nlohmann/json.hpp>

#include "peakprobe/pair_result.hpp"
#include "peakprobe/run_document.hpp"

namespace peakprobe {

// A pair's class as every writer shows it: `co-issue`, `partial`, `shared`, or `penalty` for a pair
// far slower than its parts in sequence (whose clamped measure would read `shared`); "" unmeasured.
std::string pair_class_text(const PairResult& p);

nlohmann::json to_json(const MixResult& m);
nlohmann::json to_json(const PairResult& p);
nlohmann::json to_json(const PairMatrix& m);
nlohmann::json to_json(const FlopMixSearch& s);
// Adds the "mixes", "pairs", "matrix" and "flop_mixes" (with "flop_mix", its first) keys the document
// has content for.
void add_dual_issue(nlohmann::json& doc, const RunDocument& d);

// CSV, one row per mix or pair (fixed header): parts as "text:weight" joined by " + ".
void write_dual_issue_csv(std::ostream& out, const RunDocument& d);
void write_dual_issue_markdown(std::ostream& out, const RunDocument& d);
void write_dual_issue_console(std::ostream& out, const RunDocument& d);

}  // namespace peakprobe
