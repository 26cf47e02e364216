#include "report/result_reader.hpp"

#include <cmath>
#include <string>

#include "peakprobe/run_document.hpp"

namespace peakprobe {
namespace {
using nlohmann::json;

std::optional<double> opt_number(const json& row, const char* key) {
  auto it = row.find(key);
  if (it == row.end() || !it->is_number()) return std::nullopt;
  const double v = it->get<double>();
  return std::isfinite(v) ? std::optional<double>(v) : std::nullopt;
}

double number_or(const json& row, const char* key, double fallback) { return opt_number(row, key).value_or(fallback); }

std::string text_or(const json& row, const char* key) {
  auto it = row.find(key);
  return it != row.end() && it->is_string() ? it->get<std::string>() : std::string();
}

int int_or(const json& row, const char* key, int fallback) {
  auto it = row.find(key);
  return it != row.end() && it->is_number_integer() ? it->get<int>() : fallback;
}

Stats stats_from(const json& row, const char* key) {
  Stats s;
  auto it = row.find(key);
  if (it == row.end() || !it->is_object()) return s;
  s.min = number_or(*it, "min", 0);
  s.median = number_or(*it, "median", 0);
  s.max = number_or(*it, "max", 0);
  s.spread = number_or(*it, "spread", 0);
  s.samples = int_or(*it, "samples", 0);
  return s;
}

}  // namespace

Expected<ProbeResult> probe_result_from_json(const json& row) {
  if (!row.is_object()) return make_error("a result row is not a JSON object");
  auto inst = row.find("instruction");
  if (inst == row.end() || !inst->is_string() || inst->get<std::string>().empty())
    return make_error("a result row has no 'instruction' text");
  ProbeResult r;
  r.instruction = inst->get<std::string>();
  const std::string status = text_or(row, "status");
  bool known = false;
  for (Status s : {Status::ok, Status::skipped, Status::mistrusted, Status::error})
    if (status == to_string(s)) r.status = s, known = true;
  if (!known) return make_error("row '" + r.instruction + "': status '" + status + "' is not ok, skipped, mistrusted or error");
  r.group = text_or(row, "group");
  r.dtype = text_or(row, "dtype");
  r.origin = text_or(row, "origin");
  r.reason = text_or(row, "reason");
  r.repro = text_or(row, "repro");
  r.latency_cycles = opt_number(row, "latency_cycles");
  r.latency_method = text_or(row, "latency_method");
  if (auto it = row.find("latencies"); it != row.end() && it->is_array())
    for (const auto& l : *it) {
      if (!l.is_object()) continue;
      OperandLatency ol;
      ol.operand = int_or(l, "operand", 0);
      ol.kind = text_or(l, "kind");
      ol.cycles = number_or(l, "cycles", 0);
      ol.method = text_or(l, "method");
      auto ub = l.find("upper_bound");
      ol.upper_bound = ub != l.end() && ub->is_boolean() && ub->get<bool>();
      r.latencies.push_back(ol);
    }
  r.recip_throughput_cycles = opt_number(row, "recip_throughput_cycles");
  r.throughput_ipc = opt_number(row, "throughput_ipc");
  r.ops_per_instruction = number_or(row, "ops_per_instruction", 0);
  r.gflops = opt_number(row, "gflops");
  r.gops = opt_number(row, "gops");
  r.accumulators = int_or(row, "accumulators", 0);
  auto lim = row.find("chains_limited_by_registers");
  r.chains_limited_by_registers = lim != row.end() && lim->is_boolean() && lim->get<bool>();
  r.threads = int_or(row, "threads", 1);
  r.total_gflops = opt_number(row, "total_gflops");
  r.total_gops = opt_number(row, "total_gops");
  if (auto it = row.find("per_thread_recip_throughput"); it != row.end() && it->is_array())
    for (const auto& v : *it)
      if (v.is_number()) r.per_thread_recip_throughput.push_back(v.get<double>());
  r.cpu = int_or(row, "cpu", -1);
  if (auto it = row.find("clock"); it != row.end() && it->is_object()) {
    r.clock.source = text_or(*it, "source");
    r.clock.ghz = number_or(*it, "ghz", 0);
    r.clock.ghz_before = number_or(*it, "ghz_before", 0);
    r.clock.ghz_after = number_or(*it, "ghz_after", 0);
    r.clock.drift = number_or(*it, "drift", 0);
  }
  r.throughput_stats = stats_from(row, "throughput");
  r.latency_stats = stats_from(row, "latency");
  return r;
}

Expected<std::vector<ProbeResult>> probe_results_from_document(const json& doc) {
  if (!doc.is_object() || !doc.contains("schema") || !doc["schema"].is_string() || doc["schema"] != kSchema)
    return make_error(std::string("not a ") + kSchema + " document");
  auto it = doc.find("results");
  if (it == doc.end() || !it->is_array()) return make_error("the document has no 'results' array");
  std::vector<ProbeResult> out;
  for (size_t i = 0; i < it->size(); ++i) {
    auto r = probe_result_from_json((*it)[i]);
    if (!r) return make_error("results[" + std::to_string(i) + "]: " + r.error());
    out.push_back(std::move(*r));
  }
  return out;
}

}  // namespace peakprobe
