#include "report/json_report.hpp"

#include "gpu/gpu_json.hpp"
#include "report/ceiling_report.hpp"
#include "roofline/gpu_ceilings.hpp"
#include "report/matmul_report.hpp"
#include "report/mem_report.hpp"
#include "report/pair_report.hpp"
#include "report/pipe_report.hpp"

#include <cmath>

namespace peakprobe {

namespace {

using nlohmann::json;

json number(double v) { return std::isfinite(v) ? json(v) : json(nullptr); }

json number(const std::optional<double>& v) { return v ? number(*v) : json(nullptr); }

json numbers(const std::vector<double>& values) {
  json a = json::array();
  for (double v : values) a.push_back(number(v));
  return a;
}

json caches(const std::vector<CacheLevel>& levels) {
  json a = json::array();
  for (const auto& c : levels) a.push_back(to_json(c));
  return a;
}

}  // namespace

json json_number(double v) { return number(v); }
json json_number(const std::optional<double>& v) { return number(v); }

json to_json(const CacheLevel& c) {
  return {{"level", c.level},
          {"type", c.type},
          {"size_bytes", c.size_bytes},
          {"line_bytes", c.line_bytes},
          {"associativity", c.associativity},
          {"shared_by_cpus", c.shared_by_cpus},
          {"instances", c.instances}};
}

json to_json(const CpuInfo& i) {
  json host = {{"vendor", i.vendor},
          {"brand", i.brand},
          {"family", i.family},
          {"model", i.model},
          {"stepping", i.stepping},
          {"hypervisor", i.hypervisor},
          {"features", i.features},
          {"os_disabled", i.os_disabled},
          {"logical_cpus", i.logical_cpus},
          {"physical_cores", i.physical_cores},
          {"packages", i.packages},
          {"smt_per_core", i.smt_per_core},
          {"core_order", i.core_order},
          {"cpu_kind", i.cpu_kind},
          {"caches", caches(i.caches)},
          {"tsc_hz", number(i.tsc_hz)},
          {"tsc_invariant", i.tsc_invariant}};
  if (!i.emulator.empty()) host["emulator"] = i.emulator;  // only under emulation: timings mean nothing
  for (const auto& s : i.isa_state)
    host[s.key] = s.is_flag ? json(s.value != 0) : json(s.value);
  return host;
}

json to_json(const ClockReading& c) {
  return {{"source", c.source},
          {"ghz", number(c.ghz)},
          {"ghz_before", number(c.ghz_before)},
          {"ghz_after", number(c.ghz_after)},
          {"drift", number(c.drift)}};
}

json to_json(const CoreAvailability& a) {
  if (!(a.scanned_ms > 0)) return nullptr;
  json j = {{"share", number(a.share)},
            {"scanned_ms", number(a.scanned_ms)},
            {"interruptions", a.interruptions},
            {"median_interruption_us", number(a.median_interruption_us)},
            {"longest_interruption_us", number(a.longest_interruption_us)},
            {"threshold_us", number(a.threshold_us)}};
  j["cpu"] = a.cpu >= 0 ? json(a.cpu) : json(nullptr);
  return j;
}

json to_json(const Stats& s) {
  return {{"min", number(s.min)},
          {"median", number(s.median)},
          {"max", number(s.max)},
          {"spread", number(s.spread)},
          {"samples", s.samples}};
}

json latencies_json(const std::vector<OperandLatency>& ls) {
  json a = json::array();
  for (const auto& l : ls)
    a.push_back({{"operand", l.operand}, {"kind", l.kind}, {"cycles", number(l.cycles)},
                 {"method", l.method}, {"upper_bound", l.upper_bound}});
  return a;
}

json to_json(const ProbeResult& r) {
  json row = {{"instruction", r.instruction},
          {"group", r.group},
          {"dtype", r.dtype},
          {"status", to_string(r.status)},
          {"reason", r.reason},
          {"latency_cycles", number(r.latency_cycles)},
          {"latency_method", r.latency_method},
          {"latencies", latencies_json(r.latencies)},
          {"recip_throughput_cycles", number(r.recip_throughput_cycles)},
          {"throughput_ipc", number(r.throughput_ipc)},
          {"ops_per_instruction", number(r.ops_per_instruction)},
          {"gflops", number(r.gflops)},
          {"gops", number(r.gops)},
          {"accumulators", r.accumulators},
          {"chains_limited_by_registers", r.chains_limited_by_registers},
          {"threads", r.threads},
          {"total_gflops", number(r.total_gflops)},
          {"total_gops", number(r.total_gops)},
          {"per_thread_recip_throughput", numbers(r.per_thread_recip_throughput)},
          {"cpu", r.cpu},
          {"clock_ghz", number(r.clock.ghz)},
          {"clock", to_json(r.clock)},
          {"throughput", to_json(r.throughput_stats)},
          {"latency", to_json(r.latency_stats)},
          {"origin", r.origin},
          {"repro", r.repro}};
  if (!r.pipes.empty()) row["pipes"] = pipe_verdicts_json(r.pipes);  // table --pipes only
  if (r.threads > 1) {  // --threads above 1 only
    row["threads_status"] = to_string(r.threads_status);
    row["threads_reason"] = r.threads_reason;
    row["per_thread_core"] = r.per_thread_core;
    row["threads_shortfall"] = number(r.threads_shortfall);
  }
  return row;
}

json to_json(const RunDocument& d) {
  json results = json::array();
  for (const auto& r : d.results) results.push_back(to_json(r));
  json doc = {{"schema", kSchema},
              {"tool", {{"name", "peakprobe"}, {"version", d.version}}},
              {"command", d.command},
              {"started_utc", d.started_utc},
              {"host", to_json(d.host)},
              {"clock", to_json(d.clock)},
              {"results", std::move(results)}};
  if (!d.availability.empty()) {
    json cores = json::array();
    for (const CoreAvailability& a : d.availability) cores.push_back(to_json(a));
    doc["core_availability"] = std::move(cores);
  }
  if (d.pipe_groups) doc["pipe_groups"] = to_json(*d.pipe_groups);
  add_dual_issue(doc, d);  // mixes, pairs, matrix, flop_mixes: present only when measured
  add_memory(doc, d);      // bandwidth, latency, levels: present only when measured
  add_roofline(doc, d);    // ceilings, scores
  if (!d.matmuls.empty()) {  // the key `matmul` writes, so that `compare` pairs the rows alike
    json rows = json::array();
    for (const MatmulResult& r : d.matmuls) rows.push_back(to_json(r));
    doc["matmul"] = std::move(rows);
  }
  if (!d.gpus.empty()) {
    json gpus = json::array();
    for (const GpuReport& r : d.gpus) gpus.push_back(gpu_device_json(r));
    doc["gpus"] = std::move(gpus);
  }
  return doc;
}

json gpu_device_json(const GpuReport& r) {
  json j = to_json(r);
  const CeilingTable t = gpu_ceiling_table(r);
  if (!t.compute.empty() || !t.memory.empty()) j["ceilings"] = to_json(t);
  return j;
}

std::string json_text(const json& doc) { return doc.dump(2, ' ', false, json::error_handler_t::replace); }

}  // namespace peakprobe
