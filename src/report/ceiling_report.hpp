// Reporters for the roofline: the ceiling table (JSON, CSV, Markdown, console), kernel scores, and
// reading a saved table back (for `score --table`).
#pragma once
#include <ostream>

#include <nlohmann/json.hpp>

#include "peakprobe/ceiling.hpp"
#include "peakprobe/expected.hpp"
#include "peakprobe/run_document.hpp"
#include "roofline/ceilings.hpp"

namespace peakprobe {

nlohmann::json to_json(const CeilingTable& t);
nlohmann::json to_json(const KernelScore& s);
// Reads the "ceilings" object of a peakprobe document (or a bare ceilings object).
Expected<CeilingTable> ceilings_from_json(const nlohmann::json& j);
// Reads `score --kernels`: a JSON array of {name, flops, bytes, seconds[, dtype, level, threads]};
// a kernel without "threads" gets default_threads. A key of the wrong type is an error naming it.
Expected<std::vector<ScoreRequest>> score_requests_from_json(const nlohmann::json& kernels, int default_threads);
// Adds "ceilings" and "scores" when present.
void add_roofline(nlohmann::json& doc, const RunDocument& d);

// "CPU 0 94.9% of 25 ms (65 interruptions, median 37.1 us, longest 75.5 us)": one core's scan.
std::string core_availability_text(const CoreAvailability& a);

void write_ceilings_csv(std::ostream& out, const RunDocument& d);
void write_ceilings_markdown(std::ostream& out, const RunDocument& d);
void write_ceilings_console(std::ostream& out, const RunDocument& d);

}  // namespace peakprobe
