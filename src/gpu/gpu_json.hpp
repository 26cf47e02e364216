// JSON form of `peakprobe gpu` results (schema peakprobe-gpu/1, docs/output.md), also how a GPU
// worker process hands its report back to the measuring process.
#pragma once
#include <nlohmann/json.hpp>

#include "peakprobe/expected.hpp"
#include "peakprobe/gpu_result.hpp"

namespace peakprobe {

nlohmann::json to_json(const GpuDevice& d);
nlohmann::json to_json(const GpuReport& r);
// The inverse of to_json; a typed error for anything that is not such a document.
Expected<GpuDevice> gpu_device_from_json(const nlohmann::json& j);
Expected<GpuReport> gpu_report_from_json(const nlohmann::json& j);

}  // namespace peakprobe
