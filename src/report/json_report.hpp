// JSON form of finished records. The document layout is the "peakprobe/1" schema (docs/output.md).
// Numbers keep full double precision (consumers round); NaN and infinities become null, because JSON
// has no spelling for them and a parser would reject the whole file.
#pragma once
#include <optional>

#include <nlohmann/json.hpp>

#include "peakprobe/cpu_info.hpp"
#include "peakprobe/result.hpp"
#include "peakprobe/run_document.hpp"

namespace peakprobe {

// A number, or null where it is missing or not finite (JSON has no NaN).
nlohmann::json json_number(double v);
nlohmann::json json_number(const std::optional<double>& v);

nlohmann::json to_json(const CacheLevel& cache);
nlohmann::json to_json(const CpuInfo& info);
nlohmann::json to_json(const ClockReading& clock);
// A core's scan (harness/core_availability.hpp); null when it was not scanned.
nlohmann::json to_json(const CoreAvailability& availability);
nlohmann::json to_json(const Stats& stats);
// Carries every key of the schema; empty optionals are null, never left out. `pipes` is the one key
// that appears only where measured (`table --pipes`).
nlohmann::json to_json(const ProbeResult& result);
// { schema, tool {name, version}, command, started_utc, host, clock, results [...] }, plus the
// sections a command measured (dual issue, memory, roofline, gpus).
nlohmann::json to_json(const RunDocument& doc);
// One OpenCL device as `gpu --json` writes it (gpu/gpu_json.hpp), with its roofline as a ceiling
// table under "ceilings" when it has any figure to build one from.
nlohmann::json gpu_device_json(const GpuReport& report);

// The document as indented text. Bytes that are not UTF-8 (an instruction text or path given on the
// command line) become U+FFFD instead of aborting the write after all the measuring.
std::string json_text(const nlohmann::json& doc);

}  // namespace peakprobe
