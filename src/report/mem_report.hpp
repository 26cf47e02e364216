// Reporters for memory results: bandwidth by working set, latency by working set, cache levels.
#pragma once
#include <ostream>

#include <nlohmann/json.hpp>

#include "peakprobe/mem_result.hpp"
#include "peakprobe/run_document.hpp"

namespace peakprobe {

nlohmann::json to_json(const BandwidthResult& r);
nlohmann::json to_json(const LatencyResult& r);
nlohmann::json to_json(const CacheLevelEdge& l);
// Adds "bandwidth", "latency" and "levels" keys when the document has them.
void add_memory(nlohmann::json& doc, const RunDocument& d);

void write_memory_csv(std::ostream& out, const RunDocument& d);
void write_memory_markdown(std::ostream& out, const RunDocument& d);
void write_memory_console(std::ostream& out, const RunDocument& d);

}  // namespace peakprobe
