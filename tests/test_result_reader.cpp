#include <catch2/catch.hpp>

#include "report/json_report.hpp"
#include "report/result_reader.hpp"

using namespace peakprobe;

namespace {
ProbeResult sample() {
  ProbeResult r;
  r.instruction = "op a, b";
  r.group = "int.op";
  r.dtype = "-";
  r.origin = "table";
  r.latency_cycles = 3.004;
  r.latency_method = "chain through the destination";
  r.latencies = {{1, "a", 3.0, "chain through operand 1", false}, {2, "b", 3.1, "bridge", true}};
  r.recip_throughput_cycles = 0.998;
  r.throughput_ipc = 1.002;
  r.ops_per_instruction = 1;
  r.gops = 3.7;
  r.accumulators = 12;
  r.chains_limited_by_registers = true;
  r.cpu = 1;
  r.clock = {"tsc + add-chain calibration", 3.7, 3.69, 3.71, 0.005};
  r.throughput_stats = {0.998, 1.0, 1.01, 0.002, 9};
  r.status = Status::mistrusted;
  r.reason = "why";
  r.repro = "peakprobe inst \"op a, b\"";
  return r;
}
}  // namespace

TEST_CASE("result reader: a row written by to_json reads back the same", "[result_reader]") {
  const ProbeResult a = sample();
  auto b = probe_result_from_json(to_json(a));
  REQUIRE(b.ok());
  CHECK(b->instruction == a.instruction);
  CHECK(b->status == Status::mistrusted);
  CHECK(b->reason == a.reason);
  CHECK(b->latency_cycles == a.latency_cycles);
  REQUIRE(b->latencies.size() == 2);
  CHECK(b->latencies[1].upper_bound);
  CHECK(b->latencies[1].cycles == 3.1);
  CHECK(b->recip_throughput_cycles == a.recip_throughput_cycles);
  CHECK_FALSE(b->gflops.has_value());
  CHECK(b->gops == a.gops);
  CHECK(b->accumulators == 12);
  CHECK(b->chains_limited_by_registers);
  CHECK(b->clock.ghz == 3.7);
  CHECK(b->throughput_stats.samples == 9);
  CHECK(b->pipes.empty());
  // Written again, the same document.
  CHECK(to_json(*b) == to_json(a));
}

TEST_CASE("result reader: a threaded row's per-core judgement reads back", "[result_reader]") {
  ProbeResult a = sample();
  a.threads = 2;
  a.total_gops = 7.3;
  a.per_thread_recip_throughput = {0.998, 1.004};
  a.per_thread_core = {0, -1};
  a.threads_shortfall = 0.0031;
  auto b = probe_result_from_json(to_json(a));
  REQUIRE(b.ok());
  CHECK(b->per_thread_core == std::vector<int>{0, -1});
  CHECK(b->threads_shortfall == 0.0031);
  CHECK(to_json(*b) == to_json(a));
  // A document from before the key: the row's status covers the multi-core run, and an ok row's note
  // is not a doubt of it.
  nlohmann::json older = to_json(a);
  older.erase("threads_status");
  older.erase("threads_reason");
  older["reason"] = "latency: chain through dest";
  auto was = probe_result_from_json(older);
  REQUIRE(was.ok());
  CHECK(was->threads_status == Status::mistrusted);  // sample() is mistrusted
  CHECK(was->threads_reason == "latency: chain through dest");
  older["status"] = "ok";
  auto fine = probe_result_from_json(older);
  REQUIRE(fine.ok());
  CHECK(fine->threads_status == Status::ok);
  CHECK(fine->threads_reason.empty());
  // One thread: neither key is written, and neither reads back.
  auto one = probe_result_from_json(to_json(sample()));
  REQUIRE(one.ok());
  CHECK(one->per_thread_core.empty());
  CHECK_FALSE(one->threads_shortfall.has_value());
}

TEST_CASE("result reader: a row's pipe verdicts (table --pipes) read back", "[result_reader]") {
  ProbeResult a = sample();
  PipeVerdict v;
  v.basis = "add r64, r64";
  v.contention = Contention::partial;
  v.same_port = 0.4;
  a.pipes = {v};
  const auto j = to_json(a);
  REQUIRE(j.contains("pipes"));
  CHECK_FALSE(to_json(sample()).contains("pipes"));  // only where measured
  auto b = probe_result_from_json(j);
  REQUIRE(b.ok());
  REQUIRE(b->pipes.size() == 1);
  CHECK(b->pipes[0].basis == "add r64, r64");
  CHECK(b->pipes[0].contention == Contention::partial);
  CHECK(to_json(*b) == j);
}

TEST_CASE("result reader: rows without an instruction or with an unknown status are errors", "[result_reader]") {
  CHECK_FALSE(probe_result_from_json(nlohmann::json::array()).ok());
  CHECK_FALSE(probe_result_from_json({{"status", "ok"}}).ok());
  auto bad = probe_result_from_json({{"instruction", "add a, b"}, {"status", "fine"}});
  REQUIRE_FALSE(bad.ok());
  CHECK_THAT(bad.error(), Catch::Contains("fine"));
}

TEST_CASE("result reader: a document must be peakprobe/1 with a results array", "[result_reader]") {
  CHECK_FALSE(probe_results_from_document({{"schema", "other/1"}, {"results", nlohmann::json::array()}}).ok());
  CHECK_FALSE(probe_results_from_document({{"schema", "peakprobe/1"}}).ok());
  nlohmann::json doc = {{"schema", "peakprobe/1"}, {"results", {to_json(sample()), {{"status", "ok"}}}}};
  auto r = probe_results_from_document(doc);
  REQUIRE_FALSE(r.ok());
  CHECK_THAT(r.error(), Catch::Contains("results[1]"));
  doc["results"].erase(1);
  REQUIRE(probe_results_from_document(doc).ok());
  CHECK(probe_results_from_document(doc)->size() == 1);
}
