// src/cli/measure.cpp: what every measuring command does first (outputs, then the CPU, then --cpu and
// --threads checked), the probe options it hands a runner, and the shared driver of run and inst.
#include <catch2/catch.hpp>

#include <sched.h>

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "catalog/catalog.hpp"
#include "cli/catalog_loading.hpp"
#include "cli/measure.hpp"
#include "cli_forms.hpp"
#include "cpu/cpu_info.hpp"
#include "harness/probe_runner.hpp"
#include "log_capture.hpp"
#include "scratch_dir.hpp"

using namespace peakprobe;

namespace {

using test::LogCapture;

int first_allowed_cpu() {
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  REQUIRE(sched_getaffinity(0, sizeof(allowed), &allowed) == 0);
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &allowed)) return c;
  FAIL("no CPU allowed");
  return -1;
}

}  // namespace

TEST_CASE("measure: check_placement refuses a CPU below 0 or not allowed, and threads outside 1 to the usable CPUs",
          "[measure]") {
  const CpuInfo cpu = detect_cpu_info();
  const size_t usable = cpu.core_order.size();
  REQUIRE(usable >= 1);
  cli::GlobalOptions g;
  CHECK(cli::check_placement(g, cpu) == 0);
  g.threads = int(usable);
  CHECK(cli::check_placement(g, cpu) == 0);
  g.cpu = first_allowed_cpu();
  CHECK(cli::check_placement(g, cpu) == 0);
  {
    const LogCapture log;
    g.threads = int(usable) + 1;
    CHECK(cli::check_placement(g, cpu) == cli::kExitUsage);
    CHECK_THAT(log.str(), Catch::Contains("--threads " + std::to_string(usable + 1) + ": must be between 1 and " +
                                          std::to_string(usable)));
  }
  {
    const LogCapture log;
    g.threads = 0;
    CHECK(cli::check_placement(g, cpu) == cli::kExitUsage);
    CHECK_THAT(log.str(), Catch::Contains("--threads 0"));
  }
  g.threads = 1;
  {
    const LogCapture log;
    g.cpu = -2;  // -1 means not given
    CHECK(cli::check_placement(g, cpu) == cli::kExitUsage);
    CHECK_THAT(log.str(), Catch::Contains("--cpu -2: a logical CPU number is 0 or more"));
  }
  const LogCapture log;
  g.cpu = 1 << 20;
  CHECK(cli::check_placement(g, cpu) == cli::kExitUsage);
  CHECK_THAT(log.str(), Catch::Contains("--cpu 1048576: this process may not run there"));
}

TEST_CASE("measure: prepare_measuring checks the outputs before the placement", "[measure]") {
  const test::ScratchDir dir;
  cli::GlobalOptions g;
  g.threads = 1 << 20;
  CpuInfo cpu;
  {
    const LogCapture log;
    g.out.json = dir.file("missing/doc.json");
    CHECK(cli::prepare_measuring(g, cpu) == cli::kExitOutput);
    CHECK_THAT(log.str(), Catch::Contains("--json: "));
  }
  const LogCapture log;
  g.out.json = dir.file("doc.json");
  CHECK(cli::prepare_measuring(g, cpu) == cli::kExitUsage);
  CHECK_THAT(log.str(), Catch::Contains("--threads 1048576"));
  CHECK_FALSE(cpu.core_order.empty());  // described before the placement was checked against it
}

TEST_CASE("measure: probe_options carries --cpu, and --threads into the repro lines only above 1", "[measure]") {
  cli::GlobalOptions g;
  g.cpu = 3;
  const ProbeOptions one = cli::probe_options(g, 1);
  CHECK(one.cpu == 3);
  CHECK(one.threads == 1);
  CHECK(one.repro_extra.empty());
  const ProbeOptions four = cli::probe_options(g, 4);
  CHECK(four.threads == 4);
  CHECK(four.repro_extra == " --threads 4");
}

TEST_CASE("measure: prefer_quiet_core puts a --cpu given by hand first, then one CPU of every other core", "[measure]") {
  CpuInfo cpu;
  cpu.core_order = {0, 2, 1, 3};  // two cores of two hardware threads: 0 and 1 on core 0, 2 and 3 on core 1
  cpu.cpu_core = {0, 0, 1, 1};
  cli::GlobalOptions g;
  g.cpu = 1;
  cli::prefer_quiet_core(g, cpu);
  CHECK(cpu.core_order == std::vector<int>{1, 2, 0, 3});
}

TEST_CASE("measure: measure_and_report writes the outputs, then hands its callback the CPU it placed and the document",
          "[measure][hw]") {
  const auto catalog = default_catalog();
  REQUIRE(catalog.ok());
  const auto spec = cli::spec_for_text(test::add_form(), *catalog);
  REQUIRE(spec.ok());
  const test::ScratchDir dir;
  cli::GlobalOptions g;
  g.cpu = first_allowed_cpu();  // by hand: no ranking of the cores first
  g.out.json = dir.file("doc.json");
  int calls = 0;
  bool written_before = false;
  size_t rows = 0;
  int placed_first = -1;
  const LogCapture log;
  std::ostringstream console;
  auto* saved = std::cout.rdbuf(console.rdbuf());
  const int rc = cli::measure_and_report(g, {*spec}, [&](const CpuInfo& cpu, const RunDocument& doc) {
    ++calls;
    written_before = std::filesystem::exists(g.out.json);
    rows = doc.results.size();
    placed_first = cpu.core_order.empty() ? -1 : cpu.core_order.front();
  });
  std::cout.rdbuf(saved);
  CHECK(rc == cli::kExitOk);
  CHECK(calls == 1);
  CHECK(written_before);
  CHECK(rows == 1);
  CHECK(placed_first == g.cpu);
  CHECK_THAT(console.str(), Catch::Contains(spec->text));  // the console table, no document on stdout
  CHECK_THAT(log.str(), Catch::Contains("on CPU " + std::to_string(g.cpu)) && Catch::Contains("measuring 1 form"));
}
