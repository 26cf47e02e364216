// `peakprobe info` (src/cli/cmd_info.cpp): this CPU described, its core clock measured on the CPU
// the probes would use, and how much of the wall time that core gives a thread.
#include <catch2/catch.hpp>

#include <sched.h>

#include <string>

#include <nlohmann/json.hpp>

#include "cli_run.hpp"
#include "cpu/cpu_info.hpp"

namespace {

using peakprobe::test::check_refused;
using peakprobe::test::Run;
using peakprobe::test::run_peakprobe;

// The last CPU this process may run on (on a machine of several, not the first core).
int last_allowed_cpu() {
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  REQUIRE(sched_getaffinity(0, sizeof(allowed), &allowed) == 0);
  int last = 0;
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &allowed)) last = c;
  return last;
}

}  // namespace

TEST_CASE("cli: info --json - says how much of the wall time the probes' core gives a thread", "[main][hw]") {
  Run r = run_peakprobe("info --json - --quiet");
  REQUIRE(r.rc == 0);
  auto doc = nlohmann::json::parse(r.out);
  if (doc["host"].contains("emulator")) {
    CHECK(doc["core_availability"].is_null());  // the timestamp says nothing of an emulated core
    return;
  }
  const auto& a = doc["core_availability"];
  REQUIRE(a.is_object());
  CHECK(a["cpu"] == doc["cpu"]);
  CHECK(a["scanned_ms"].get<double>() >= 49.5);
  CHECK(a["share"].get<double>() > 0.0);
  CHECK(a["share"].get<double>() <= 1.0);
  CHECK(a["threshold_us"].get<double>() > 0.0);
}

TEST_CASE("info: a format it does not write and a CPU it may not use are refused before measuring", "[main]") {
  check_refused({
      {"info --csv -", "info writes no CSV (--csv); use --json"},
      {"info --markdown -", "info writes no Markdown (--markdown); use --json"},
      {"info --cpu 1000000", "--cpu 1000000: this process may not run there"},
      {"--threads 1000000 info", "--threads 1000000: must be between 1 and"},
  });
}

TEST_CASE("info: the console describes this CPU and measures the clock on the CPU --cpu names", "[main][hw]") {
  const peakprobe::CpuInfo cpu = peakprobe::detect_cpu_info();
  const int on = last_allowed_cpu();
  Run r = run_peakprobe("info --cpu " + std::to_string(on));
  REQUIRE(r.rc == 0);
  CHECK_THAT(r.out, Catch::StartsWith("CPU        " + cpu.brand));
  CHECK_THAT(r.out, Catch::Contains("\nTopology   ") && Catch::Contains("\nTSC        "));
  CHECK_THAT(r.out, Catch::Contains(" GHz measured on CPU " + std::to_string(on) + " ("));
  for (const auto& f : cpu.features) CHECK_THAT(r.out, Catch::Contains(" " + f));
  Run j = run_peakprobe("info --cpu " + std::to_string(on) + " --json - --quiet");
  REQUIRE(j.rc == 0);
  const auto doc = nlohmann::json::parse(j.out);  // the document alone: no console text after it
  CHECK(doc["schema"] == "peakprobe/1");
  CHECK(doc["cpu"] == on);
  CHECK(doc["host"]["brand"] == cpu.brand);
  CHECK(doc["host"]["features"].size() == cpu.features.size());
  CHECK(doc["clock"]["ghz"].get<double>() > 0);
  CHECK(doc.contains("core_availability"));
}
