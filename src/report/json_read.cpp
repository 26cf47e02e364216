#include "report/json_read.hpp"

namespace peakprobe::json_read {

const json* member(const json& obj, const char* key) {
  if (!obj.is_object()) return nullptr;
  auto it = obj.find(key);
  return it == obj.end() ? nullptr : &*it;
}

double number_at(const json& obj, const char* key, double fallback) {
  const json* v = member(obj, key);
  if (v == nullptr) return fallback;
  if (v->is_null()) return std::numeric_limits<double>::quiet_NaN();
  return v->is_number() ? v->get<double>() : fallback;
}

std::optional<double> optional_at(const json& obj, const char* key) {
  const json* v = member(obj, key);
  if (v == nullptr || !v->is_number()) return std::nullopt;
  return v->get<double>();
}

std::string text_at(const json& obj, const char* key, std::string fallback) {
  const json* v = member(obj, key);
  return v != nullptr && v->is_string() ? v->get<std::string>() : fallback;
}

ClockReading clock_from(const json& j) {
  ClockReading c;
  c.source = text_at(j, "source");
  c.ghz = number_at(j, "ghz");
  c.ghz_before = number_at(j, "ghz_before");
  c.ghz_after = number_at(j, "ghz_after");
  c.drift = number_at(j, "drift");
  return c;
}

CoreAvailability availability_from(const json& j) {
  CoreAvailability a;
  a.cpu = integer_at(j, "cpu", -1);
  a.share = number_at(j, "share");
  a.scanned_ms = number_at(j, "scanned_ms");
  a.interruptions = integer_at(j, "interruptions", 0);
  a.median_interruption_us = number_at(j, "median_interruption_us");
  a.longest_interruption_us = number_at(j, "longest_interruption_us");
  a.threshold_us = number_at(j, "threshold_us");
  return a;
}

std::optional<Status> status_from(const std::string& text) {
  for (Status s : {Status::ok, Status::skipped, Status::mistrusted, Status::error})
    if (text == to_string(s)) return s;
  return std::nullopt;
}

}  // namespace peakprobe::json_read
