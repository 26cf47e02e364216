// Reads of peakprobe's own JSON documents that never throw: a document from another version (or a
// user's hand) may lack a key or hold another type. Shared by the readers of matmul documents
// (report/matmul_report) and of result rows (report/result_reader).
#pragma once
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <type_traits>

#include <nlohmann/json.hpp>

#include "peakprobe/core_availability.hpp"
#include "peakprobe/result.hpp"

namespace peakprobe::json_read {

using nlohmann::json;

// The member `key` of an object, or nullptr (no such key, or not an object).
const json* member(const json& obj, const char* key);
// Missing: the fallback; null: NaN, the only thing to_json writes as null for a plain number.
double number_at(const json& obj, const char* key, double fallback = 0);
// A number, or nullopt (missing, null, another type).
std::optional<double> optional_at(const json& obj, const char* key);
std::string text_at(const json& obj, const char* key, std::string fallback = "");

// An integer, or the fallback (missing, another type, or a number out of Int's range).
template <typename Int>
Int integer_at(const json& obj, const char* key, Int fallback) {
  const json* v = member(obj, key);
  if (v == nullptr || !v->is_number()) return fallback;
  if (v->is_number_float()) {
    const double d = v->get<double>();
    // A cast of a double outside Int's range is undefined: such a value is no count of ours.
    // (max + 1 as a double is exact, 2^63 for int64_t; max itself rounds up to it.)
    if (!(d >= double(std::numeric_limits<Int>::lowest()) && d < double(std::numeric_limits<Int>::max()) + 1.0))
      return fallback;
    return static_cast<Int>(d);
  }
  // An integer outside Int's range would be converted modulo its width (5e9 as an int: 705032704).
  if (v->is_number_unsigned()) {
    const auto u = v->get<std::uint64_t>();
    if (u > static_cast<std::uint64_t>(std::numeric_limits<Int>::max())) return fallback;
    return static_cast<Int>(u);
  }
  const auto i = v->get<std::int64_t>();
  if constexpr (std::is_unsigned_v<Int>) {
    if (i < 0 || static_cast<std::uint64_t>(i) > static_cast<std::uint64_t>(std::numeric_limits<Int>::max()))
      return fallback;
  } else {
    if (i < static_cast<std::int64_t>(std::numeric_limits<Int>::lowest()) ||
        i > static_cast<std::int64_t>(std::numeric_limits<Int>::max()))
      return fallback;
  }
  return static_cast<Int>(i);
}

// A ClockReading as to_json(ClockReading) writes it.
ClockReading clock_from(const json& j);
CoreAvailability availability_from(const json& j);
// "ok", "skipped", "mistrusted", "error", or nullopt.
std::optional<Status> status_from(const std::string& text);

}  // namespace peakprobe::json_read
