// `peakprobe list` (src/cli/cmd_list.cpp): the catalog's rows, built-in and --catalog, with whether
// this CPU runs each, on the console or as JSON, CSV or Markdown; it measures nothing.
#include <catch2/catch.hpp>

#include <algorithm>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "cli_forms.hpp"
#include "cli_run.hpp"
#include "cpu/cpu_info.hpp"
#include "matmul/gemm.hpp"
#include "scratch_dir.hpp"
#include "skip.hpp"
#include "target_fixture.hpp"

namespace {

using peakprobe::test::arg;
using peakprobe::test::quoted;
using peakprobe::test::Run;
using peakprobe::test::run_peakprobe;
using peakprobe::test::target;

// This CPU's f32 matmul roof: a catalog row (Target::matmul_roof spells it as the catalog does).
std::string roof_form() {
  static const peakprobe::CpuInfo cpu = peakprobe::detect_cpu_info();
  return target().matmul_roof(cpu, peakprobe::MatmulDtype::f32).instruction;
}

// "N forms, M supported on this CPU", the last line of the console listing and of the Markdown.
struct Counts {
  size_t forms = 0, supported = 0;
};
Counts counts_line(const std::string& text) {
  const size_t end = text.rfind(" supported on this CPU\n");
  REQUIRE(end != std::string::npos);
  const size_t start = text.rfind('\n', end - 1);
  std::istringstream in(text.substr(start + 1, end - start - 1));
  Counts c;
  std::string forms;
  in >> c.forms >> forms;
  CHECK(forms == "forms,");
  in >> c.supported;
  return c;
}

// A CPU feature the target knows that this CPU lacks ("" when it has them all).
std::string feature_lacking() {
  const peakprobe::CpuInfo cpu = peakprobe::detect_cpu_info();
  for (const auto& f : peakprobe::test::cpu_with_every_feature().features)
    if (!cpu.has(f) && peakprobe::cpu_feature_known(f)) return peakprobe::normalize_feature_name(f);
  return "";
}

}  // namespace

TEST_CASE("cli: list shows support on this CPU", "[main]") {
  Run r = run_peakprobe("list --filter " + arg(peakprobe::test::mnemonic_of(roof_form())));
  CHECK(r.rc == 0);
  CHECK(r.out.find(roof_form()) != std::string::npos);
  CHECK(r.out.find("supported on this CPU") != std::string::npos);
}

TEST_CASE("cli: /dev/stdout is written in place, list honours --csv", "[main]") {
  const std::string filter = arg(peakprobe::test::mnemonic_of(roof_form()));
  Run r = run_peakprobe("list --filter " + filter + " --json /dev/stdout");
  REQUIRE(r.rc == 0);
  CHECK(nlohmann::json::parse(r.out)["catalog"].size() > 0);  // one document, no console table after it
  Run csv = run_peakprobe("list --filter " + filter + " --csv -");
  REQUIRE(csv.rc == 0);
  CHECK_THAT(csv.out, Catch::StartsWith("instruction,group,dtype,ops_per_instruction,supported,missing,origin\n"));
  CHECK_THAT(csv.out, Catch::Contains(roof_form()));
}

TEST_CASE("list: --help teaches --filter", "[main]") {
  Run r = run_peakprobe("list --help");
  CHECK(r.rc == 0);
  CHECK_THAT(r.out, Catch::Contains("--filter") && Catch::Contains("whether this CPU supports each"));
}

TEST_CASE("list: a --filter that matches no row is refused with exit 2, naming the filter", "[main]") {
  Run r = run_peakprobe("list --filter zz-no-row --json -");
  CHECK(r.rc == 2);
  CHECK_THAT(r.err, Catch::Contains("zz-no-row"));
  CHECK(r.out.empty());
}

TEST_CASE("list: --json - is one catalog document whose rows agree with the console's counts", "[main]") {
  Run console = run_peakprobe("list");
  REQUIRE(console.rc == 0);
  const Counts c = counts_line(console.out);
  Run r = run_peakprobe("list --json -");
  REQUIRE(r.rc == 0);
  CHECK(r.err.empty());
  const auto doc = nlohmann::json::parse(r.out);
  CHECK(doc["schema"] == "peakprobe/1");
  REQUIRE(doc["catalog"].is_array());
  CHECK(doc["catalog"].size() == c.forms);
  size_t supported = 0;
  for (const auto& row : doc["catalog"]) {
    INFO(row.dump());
    for (const char* key : {"instruction", "group", "dtype", "ops_per_instruction", "requires", "supported", "missing", "origin"})
      CHECK(row.contains(key));
    CHECK(row["supported"].get<bool>() == row["missing"].empty());
    supported += row["supported"].get<bool>();
  }
  CHECK(supported == c.supported);
}

TEST_CASE("list: --markdown - is a table of every row with the counts under it", "[main]") {
  Run console = run_peakprobe("list");
  REQUIRE(console.rc == 0);
  Run r = run_peakprobe("list --markdown -");
  REQUIRE(r.rc == 0);
  CHECK_THAT(r.out, Catch::StartsWith("| instruction | group | dtype | ops | supported on this CPU |\n|---|---|---|--:|---|\n"));
  const Counts c = counts_line(console.out), md = counts_line(r.out);
  CHECK(md.forms == c.forms);
  CHECK(md.supported == c.supported);
  size_t rows = 0;
  for (size_t at = r.out.find("\n| `"); at != std::string::npos; at = r.out.find("\n| `", at + 1)) ++rows;
  CHECK(rows == c.forms);
}

TEST_CASE("list: a --catalog row needing a feature this CPU lacks is listed unsupported, naming the feature and its line",
          "[main]") {
  const std::string feature = feature_lacking();
  if (feature.empty()) PP_SKIP("this CPU has every feature the target knows");
  const peakprobe::test::ScratchDir dir;
  const std::string path = dir.write("lacking.catalog", "# one row\n" + target().help_texts().example_form +
                                                            " | 1 | f32 | " + feature + " | zz.lacking\n");
  const std::string args = "list --catalog " + quoted(path) + " --filter zz.lacking";
  Run console = run_peakprobe(args);
  REQUIRE(console.rc == 0);
  CHECK_THAT(console.out, Catch::Contains("zz.lacking") && Catch::Contains("no: needs " + feature));
  CHECK_THAT(console.out, Catch::EndsWith("1 forms, 0 supported on this CPU\n"));
  Run json = run_peakprobe(args + " --json -");
  REQUIRE(json.rc == 0);
  const auto rows = nlohmann::json::parse(json.out)["catalog"];
  REQUIRE(rows.size() == 1);
  CHECK(rows[0]["supported"] == false);
  REQUIRE(rows[0]["missing"].size() == 1);
  CHECK_THAT(rows[0]["missing"][0].get<std::string>(), Catch::StartsWith(feature));
  CHECK(rows[0]["origin"] == path + ":2");
  Run csv = run_peakprobe(args + " --csv -");
  REQUIRE(csv.rc == 0);
  CHECK_THAT(csv.out, Catch::Contains(",zz.lacking,f32,1,no,") && Catch::Contains(path + ":2\n"));
}
