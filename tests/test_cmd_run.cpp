// `peakprobe run` (src/cli/cmd_run.cpp): every catalog row, or those --filter matches, measured.
#include <catch2/catch.hpp>

#include <string>

#include <nlohmann/json.hpp>

#include "catalog/catalog.hpp"
#include "cli_forms.hpp"
#include "cli_run.hpp"
#include "scratch_dir.hpp"
#include "target_fixture.hpp"

namespace {

using peakprobe::test::add_form;
using peakprobe::test::check_refused;
using peakprobe::test::quoted;
using peakprobe::test::Run;
using peakprobe::test::run_peakprobe;
using peakprobe::test::target;

}  // namespace

TEST_CASE("run: --help teaches --filter with this ISA's examples", "[main]") {
  const auto help = target().help_texts();
  Run r = run_peakprobe("run --help");
  CHECK(r.rc == 0);
  CHECK(r.err.empty());
  CHECK_THAT(r.out, Catch::Contains("--filter") && Catch::Contains("--filter " + help.run_filter));
  CHECK_THAT(r.out, Catch::Contains(help.run_examples));
}

TEST_CASE("run: a --filter that matches no row is refused, naming the filter", "[main]") {
  check_refused({{"run --filter zz-matches-no-row", "no catalog row matches --filter 'zz-matches-no-row'"}});
}

TEST_CASE("run: only the rows --filter matches are measured, those of a --catalog file included", "[main][hw]") {
  // The built-in row of the one-cycle add, moved to a group of its own by a catalog file.
  const auto catalog = peakprobe::default_catalog();
  REQUIRE(catalog.ok());
  const std::string display = target().resolve(add_form())->display;
  std::string row;
  for (const auto& s : *catalog)
    if (s.text == display) {
      std::string needs;
      for (const auto& f : s.requires_features) needs += (needs.empty() ? "" : ",") + f;
      row = s.text + " | " + std::to_string(s.ops_per_instruction) + " | " + s.dtype + " | " +
            (needs.empty() ? "-" : needs) + " | zz.run-filter\n";
    }
  REQUIRE_FALSE(row.empty());
  const peakprobe::test::ScratchDir dir;
  const std::string path = dir.write("moved.catalog", row);
  Run r = run_peakprobe("run --catalog " + quoted(path) + " --filter zz.run-filter --json - --quiet");
  REQUIRE(r.rc == 0);
  const auto doc = nlohmann::json::parse(r.out);
  CHECK(doc["schema"] == "peakprobe/1");
  REQUIRE(doc["results"].size() == 1);
  CHECK(doc["results"][0]["instruction"] == display);
  CHECK(doc["results"][0]["group"] == "zz.run-filter");
  CHECK(doc["results"][0]["origin"] == path + ":1");
}
