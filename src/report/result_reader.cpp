#include "report/result_reader.hpp"

#include <cmath>
#include <string>

#include "peakprobe/run_document.hpp"
#include "report/json_read.hpp"
#include "report/pipe_report.hpp"

namespace peakprobe {
namespace {
using nlohmann::json;
using namespace json_read;

Stats stats_from(const json& row, const char* key) {
  Stats s;
  const json* j = member(row, key);
  if (j == nullptr || !j->is_object()) return s;
  s.min = number_at(*j, "min");
  s.median = number_at(*j, "median");
  s.max = number_at(*j, "max");
  s.spread = number_at(*j, "spread");
  s.samples = integer_at(*j, "samples", 0);
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
  const std::string status = text_at(row, "status");
  const std::optional<Status> known = status_from(status);
  if (!known) return make_error("row '" + r.instruction + "': status '" + status + "' is not ok, skipped, mistrusted or error");
  r.status = *known;
  r.group = text_at(row, "group");
  r.dtype = text_at(row, "dtype");
  r.origin = text_at(row, "origin");
  r.reason = text_at(row, "reason");
  r.repro = text_at(row, "repro");
  r.latency_cycles = optional_at(row, "latency_cycles");
  r.latency_method = text_at(row, "latency_method");
  if (auto it = row.find("latencies"); it != row.end() && it->is_array())
    for (const auto& l : *it) {
      if (!l.is_object()) continue;
      OperandLatency ol;
      ol.operand = integer_at(l, "operand", 0);
      ol.kind = text_at(l, "kind");
      ol.cycles = number_at(l, "cycles");
      ol.method = text_at(l, "method");
      auto ub = l.find("upper_bound");
      ol.upper_bound = ub != l.end() && ub->is_boolean() && ub->get<bool>();
      r.latencies.push_back(ol);
    }
  r.recip_throughput_cycles = optional_at(row, "recip_throughput_cycles");
  r.throughput_ipc = optional_at(row, "throughput_ipc");
  r.ops_per_instruction = number_at(row, "ops_per_instruction");
  r.gflops = optional_at(row, "gflops");
  r.gops = optional_at(row, "gops");
  r.accumulators = integer_at(row, "accumulators", 0);
  auto lim = row.find("chains_limited_by_registers");
  r.chains_limited_by_registers = lim != row.end() && lim->is_boolean() && lim->get<bool>();
  r.threads = integer_at(row, "threads", 1);
  r.total_gflops = optional_at(row, "total_gflops");
  r.total_gops = optional_at(row, "total_gops");
  if (auto it = row.find("per_thread_recip_throughput"); it != row.end() && it->is_array())
    for (const auto& v : *it)
      if (v.is_number()) r.per_thread_recip_throughput.push_back(v.get<double>());
  if (auto it = row.find("per_thread_core"); it != row.end() && it->is_array())
    for (const auto& v : *it)
      if (v.is_number_integer()) r.per_thread_core.push_back(v.get<int>());
  r.threads_shortfall = optional_at(row, "threads_shortfall");
  // Documents from before the threaded run had a verdict of its own: the row's status covered both.
  if (r.threads > 1) {
    const std::string ts = text_at(row, "threads_status");
    const std::optional<Status> tk = ts.empty() ? std::optional<Status>(r.status) : status_from(ts);
    if (!tk)
      return make_error("row '" + r.instruction + "': threads_status '" + ts +
                        "' is not ok, skipped, mistrusted or error");
    r.threads_status = *tk;
    // (An ok row's reason is a note on its figures, not a doubt of its multi-core run.)
    r.threads_reason = !ts.empty() ? text_at(row, "threads_reason") : r.status == Status::ok ? "" : r.reason;
  }
  r.cpu = integer_at(row, "cpu", -1);
  if (const json* clock = member(row, "clock"); clock != nullptr && clock->is_object()) r.clock = clock_from(*clock);
  r.throughput_stats = stats_from(row, "throughput");
  r.latency_stats = stats_from(row, "latency");
  if (const json* pipes = member(row, "pipes"); pipes != nullptr) r.pipes = pipe_verdicts_from_json(*pipes);
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
