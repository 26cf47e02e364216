// Tests for src/report/json_report.cpp: the "peakprobe/1" document, its keys, nulls and precision.
#include <catch2/catch.hpp>

#include <set>
#include <string>

#include "report/json_report.hpp"
#include "gpu_fixture.hpp"
#include "report_fixture.hpp"

namespace {

using nlohmann::json;

std::set<std::string> keys(const json& object) {
  std::set<std::string> k;
  for (const auto& item : object.items()) k.insert(item.key());
  return k;
}

const std::set<std::string> kResultKeys = {
    "instruction", "group", "dtype", "status", "reason", "latency_cycles", "latency_method",
    "recip_throughput_cycles", "throughput_ipc", "ops_per_instruction", "gflops", "gops", "accumulators",
    "chains_limited_by_registers", "latencies",
    "threads", "total_gflops", "total_gops", "per_thread_recip_throughput", "cpu", "clock_ghz", "clock",
    "throughput", "latency", "origin", "repro"};
const std::set<std::string> kStatsKeys = {"min", "median", "max", "spread", "samples"};
const std::set<std::string> kClockKeys = {"source", "ghz", "ghz_before", "ghz_after", "drift"};

json fixture_json() { return json::parse(peakprobe::to_json(peakprobe::test::report_fixture()).dump(2)); }

}  // namespace

TEST_CASE("JSON report matches the golden file", "[report]") {
  peakprobe::test::check_golden("report.json", peakprobe::to_json(peakprobe::test::report_fixture()).dump(2) + "\n");
}

TEST_CASE("JSON report has the schema header", "[report]") {
  const json doc = fixture_json();
  CHECK(keys(doc) == std::set<std::string>{"schema", "tool", "command", "started_utc", "host", "clock", "results"});
  CHECK(doc["schema"] == "peakprobe/1");
  CHECK(doc["tool"] == json{{"name", "peakprobe"}, {"version", "0.1.0"}});
  CHECK(doc["command"] == "peakprobe run --json out.json");
  CHECK(doc["started_utc"] == "2024-05-01T12:00:00Z");
  CHECK(keys(doc["clock"]) == kClockKeys);
  CHECK(doc["clock"]["ghz"] == 3.65);
}

TEST_CASE("JSON host carries every CpuInfo field", "[report]") {
  const json host = fixture_json()["host"];
  CHECK(keys(host) == std::set<std::string>{"vendor", "brand", "family", "model", "stepping", "hypervisor", "xcr0",
                                            "os_avx", "os_avx512", "os_amx", "features", "os_disabled",
                                            "logical_cpus", "physical_cores", "packages", "smt_per_core",
                                            "core_order", "cpu_kind", "caches", "tsc_hz", "tsc_invariant"});
  REQUIRE(host["caches"].size() == 4);
  CHECK(keys(host["caches"][0]) == std::set<std::string>{"level", "type", "size_bytes", "line_bytes",
                                                         "associativity", "shared_by_cpus", "instances"});
  CHECK(host["caches"][3]["size_bytes"] == 105 * 1024 * 1024);
  CHECK(host["xcr0"] == 0x2e7);
  CHECK(host["features"].size() == 6);
}

TEST_CASE("JSON report lists the cores scanned for the wall time they give a thread", "[report]") {
  using namespace peakprobe;
  RunDocument d = test::report_fixture();
  CHECK_FALSE(to_json(d).contains("core_availability"));  // not scanned: no key
  d.availability = {{0, 0.949, 25.0, 33, 37.1, 75.5, 1.0}, {1, 0.928, 25.0, 0, 0, 0, 1.0}};
  const json cores = to_json(d)["core_availability"];
  REQUIRE(cores.size() == 2);
  CHECK(cores[0]["cpu"] == 0);
  CHECK(cores[0]["share"].get<double>() == Approx(0.949));
  CHECK(cores[0]["interruptions"] == 33);
  CHECK(cores[1]["cpu"] == 1);
  CHECK(cores[1]["median_interruption_us"].get<double>() == 0);
  // A scan that did not happen is null; a CPU that is not known is null too.
  CHECK(to_json(CoreAvailability{}).is_null());
  CoreAvailability anywhere;
  anywhere.scanned_ms = 10, anywhere.share = 1;
  CHECK(to_json(anywhere)["cpu"].is_null());
}

TEST_CASE("JSON results carry exactly the schema keys", "[report]") {
  const json results = fixture_json()["results"];
  REQUIRE(results.size() == 5);
  for (const auto& r : results) {
    INFO(r["instruction"]);
    // Rows of several threads add how the threaded run compared with one core.
    std::set<std::string> expected = kResultKeys;
    if (r["threads"].get<int>() > 1) expected.insert({"threads_status", "threads_reason", "per_thread_core", "threads_shortfall"});
    CHECK(keys(r) == expected);
    CHECK(keys(r["clock"]) == kClockKeys);
    CHECK(keys(r["throughput"]) == kStatsKeys);
    CHECK(keys(r["latency"]) == kStatsKeys);
    CHECK(r["per_thread_recip_throughput"].is_array());
  }
}

TEST_CASE("JSON results write null for empty optionals and non-finite numbers", "[report]") {
  const json results = fixture_json()["results"];
  const json& fp = results[0];
  const json& integer = results[1];
  const json& skipped = results[2];
  const json& mistrusted = results[3];
  const json& error = results[4];
  CHECK(fp["gflops"] == 233.6);
  CHECK(fp["gops"].is_null());
  CHECK(fp["total_gflops"].is_null());
  CHECK(integer["gflops"].is_null());
  CHECK(integer["total_gops"] == 175.2);
  for (const char* key : {"latency_cycles", "recip_throughput_cycles", "throughput_ipc", "gflops", "gops"})
    CHECK(skipped[key].is_null());
  CHECK(skipped["status"] == "skipped");
  CHECK(skipped["reason"] == "needs avx512_fp16");
  CHECK(mistrusted["latency"]["spread"].is_null());
  CHECK(mistrusted["latency"]["median"] == 14.05);
  CHECK(error["clock"]["drift"].is_null());
  CHECK(error["reason"] == "probe crashed, SIGSEGV in \"vpgatherdd\" | operand 2");
}

TEST_CASE("JSON keeps full double precision", "[report]") {
  const json integer = fixture_json()["results"][1];
  CHECK(integer["recip_throughput_cycles"].get<double>() == 1.0 / 3.0);
  CHECK(integer["clock_ghz"].get<double>() == 3.6497);
  CHECK(integer["per_thread_recip_throughput"] == json{0.33334, 0.33341});
  CHECK(integer["per_thread_core"] == json{0, 1});
  CHECK(integer["threads_shortfall"].get<double>() == -0.00012);
}

TEST_CASE("JSON text never holds NaN or infinity", "[report]") {
  const std::string text = peakprobe::to_json(peakprobe::test::report_fixture()).dump();
  for (const char* bad : {"NaN", "nan", "Infinity", "inf"}) CHECK(text.find(bad) == std::string::npos);
}

TEST_CASE("JSON report of the full run carries each OpenCL GPU as gpu --json does with its ceilings", "[report]") {
  peakprobe::RunDocument d = peakprobe::test::report_fixture();
  d.gpus.push_back(peakprobe::test::sample_gpu_report());
  const json doc = json::parse(peakprobe::to_json(d).dump(2));
  REQUIRE(doc.contains("gpus"));
  REQUIRE(doc["gpus"].size() == 1);
  const json& g = doc["gpus"][0];
  CHECK(g == json::parse(peakprobe::gpu_device_json(peakprobe::test::sample_gpu_report()).dump(2)));
  CHECK(g["device"]["name"] == "Example GPU, rev \"2\"");
  REQUIRE(g.contains("ceilings"));
  REQUIRE(g["ceilings"]["compute"].size() == 1);  // f32 x4 only: the skipped f16 row is no roof
  CHECK(g["ceilings"]["compute"][0]["isa"] == "x4");
  // Without a GPU the key is left out, as the golden file shows.
  CHECK_FALSE(fixture_json().contains("gpus"));
}
