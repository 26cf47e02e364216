// Reading ProbeResult rows back from a peakprobe/1 document (the `results` array that
// report/json_report.cpp writes): what `table --resume` keeps from an interrupted run.
#pragma once
#include <vector>

#include <nlohmann/json.hpp>

#include "peakprobe/expected.hpp"
#include "peakprobe/result.hpp"

namespace peakprobe {

// One row as to_json(ProbeResult) wrote it. Unknown keys are ignored; a missing or mistyped key the
// row cannot do without (instruction, status) is an error naming it, and optional figures that are
// null or absent stay empty.
Expected<ProbeResult> probe_result_from_json(const nlohmann::json& row);

// Every row of doc["results"]; fails on the first bad row, naming its index, or when the document
// is not peakprobe/1.
Expected<std::vector<ProbeResult>> probe_results_from_document(const nlohmann::json& doc);

}  // namespace peakprobe
