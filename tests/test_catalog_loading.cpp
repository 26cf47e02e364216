// src/cli/catalog_loading.cpp: the built-in catalog with the --catalog files over it, and the spec of
// an instruction text (its catalog row when there is one), as every measuring command loads them.
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>
#include <vector>

#include "catalog/catalog.hpp"
#include "cli/catalog_loading.hpp"
#include "cli_forms.hpp"
#include "cli_run.hpp"
#include "log_capture.hpp"
#include "scratch_dir.hpp"
#include "target_fixture.hpp"

using namespace peakprobe;

namespace {

using test::add_form;
using test::mul_form;
using test::quoted;
using test::Run;
using test::run_peakprobe;
using test::target;

std::string display_of(const std::string& text) {
  const auto form = target().resolve(text);
  REQUIRE(form.ok());
  return form->display;
}

const ProbeSpec* row_of(const std::vector<ProbeSpec>& rows, const std::string& text) {
  const auto it = std::find_if(rows.begin(), rows.end(), [&](const ProbeSpec& s) { return s.text == text; });
  return it == rows.end() ? nullptr : &*it;
}

// A form the target can measure that no built-in catalog row names ("" when there is none).
std::string form_outside_catalog(const std::vector<ProbeSpec>& catalog) {
  for (const auto& f : target().all_forms())
    if (f.refusal.empty())
      if (const auto form = target().resolve(f.text); form && !row_of(catalog, form->display)) return form->display;
  return "";
}

size_t count_of(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

}  // namespace

TEST_CASE("cli: malformed catalog names file and line", "[main]") {
  const test::ScratchDir dir;
  // Four fields where five are needed.
  const std::string row = target().help_texts().example_form + " | 8 | f32 | -";
  const std::string path = dir.write("test_main_bad.catalog", "# comment\n" + row + "\n");
  Run r = run_peakprobe("run --catalog " + quoted(path));
  CHECK(r.rc == 2);
  CHECK(r.err.find("test_main_bad.catalog:2:") != std::string::npos);
}

TEST_CASE("catalog loading: a --catalog row replaces the built-in row of its text, the later file wins, new rows are added",
          "[catalog_loading]") {
  const auto builtin = default_catalog();
  REQUIRE(builtin.ok());
  const std::string known = display_of(target().help_texts().example_form);
  const auto known_at = std::find_if(builtin->begin(), builtin->end(), [&](const ProbeSpec& s) { return s.text == known; });
  REQUIRE(known_at != builtin->end());
  const std::string added = form_outside_catalog(*builtin);
  REQUIRE_FALSE(added.empty());
  const test::ScratchDir dir;
  cli::GlobalOptions g;
  g.catalogs = {dir.write("first.catalog", known + " | 1 | f32 | - | test.first\n" + added + " | 0 | - | - | test.added\n"),
                dir.write("second.catalog", "# the same form again\n" + known + " | 2 | f64 | - | test.second\n")};
  const auto all = cli::load_catalogs(g);
  REQUIRE(all.ok());
  CHECK(all->size() == builtin->size() + 1);
  // In the built-in row's place, as the second file has it.
  const ProbeSpec& replaced = (*all)[size_t(known_at - builtin->begin())];
  CHECK(replaced.text == known);
  CHECK(replaced.group == "test.second");
  CHECK(replaced.dtype == "f64");
  CHECK(replaced.origin == g.catalogs[1] + ":2");
  const ProbeSpec* extra = row_of(*all, added);
  REQUIRE(extra);
  CHECK(extra->group == "test.added");
  CHECK(extra->origin == g.catalogs[0] + ":2");
  CHECK(all->back().text == added);
}

TEST_CASE("catalog loading: a --catalog file that cannot be read fails the load, naming it", "[catalog_loading]") {
  const test::ScratchDir dir;
  cli::GlobalOptions g;
  g.catalogs = {dir.write("good.catalog", "# nothing but a comment\n"), dir.file("missing.catalog")};
  const auto all = cli::load_catalogs(g);
  REQUIRE_FALSE(all.ok());
  CHECK_THAT(all.error(), Catch::Contains(dir.file("missing.catalog")));
}

TEST_CASE("catalog loading: spec_for_text takes the catalog row of its form, else a row of its own", "[catalog_loading]") {
  const auto catalog = default_catalog();
  REQUIRE(catalog.ok());
  const std::string example = target().help_texts().example_form;
  const ProbeSpec* row = row_of(*catalog, display_of(example));
  REQUIRE(row);
  const auto in_catalog = cli::spec_for_text(example, *catalog);
  REQUIRE(in_catalog.ok());
  CHECK(in_catalog->text == row->text);
  CHECK(in_catalog->group == row->group);
  CHECK(in_catalog->dtype == row->dtype);
  CHECK(in_catalog->ops_per_instruction == row->ops_per_instruction);
  CHECK(in_catalog->origin == row->origin);
  // Not in the (here empty) catalog: the canonical spelling, no ops, no dtype, said to come from the
  // command line.
  const auto alone = cli::spec_for_text(example, {});
  REQUIRE(alone.ok());
  CHECK(alone->text == display_of(example));
  CHECK(alone->group == "inst");
  CHECK(alone->origin == "command line");
  CHECK(alone->ops_per_instruction == 0);
  CHECK(alone->dtype == "-");
  const std::string typo = test::misspelled(example);
  const auto unknown = cli::spec_for_text(typo, *catalog);
  REQUIRE_FALSE(unknown.ok());
  CHECK(unknown.error() == target().resolve(typo).error());
}

TEST_CASE("catalog loading: features_missing names what the form and the row need that the CPU lacks", "[catalog_loading]") {
  ProbeSpec spec;
  spec.text = target().help_texts().example_form;
  const auto form = target().resolve(spec.text);
  REQUIRE(form.ok());
  const CpuInfo bare;  // no features at all
  const auto lacking = cli::features_missing(spec, bare);
  CHECK(lacking.size() == form->features.size());
  for (const auto& f : form->features) CHECK(std::find(lacking.begin(), lacking.end(), f) != lacking.end());
  CHECK(cli::features_missing(spec, test::cpu_with_every_feature()).empty());
  // The row's own requirement counts too, and alone for a text the target cannot resolve.
  spec.requires_features = {"zz_row_feature"};
  CHECK(cli::features_missing(spec, test::cpu_with_every_feature()) == std::vector<std::string>{"zz_row_feature"});
  spec.text = "zz not an instruction";
  CHECK(cli::features_missing(spec, bare) == std::vector<std::string>{"zz_row_feature"});
}

TEST_CASE("catalog loading: specs_for_texts logs every bad text and fails, or gives the specs in order", "[catalog_loading]") {
  const auto catalog = default_catalog();
  REQUIRE(catalog.ok());
  const std::string first = test::misspelled(add_form()), second = test::misspelled(mul_form());
  REQUIRE_FALSE(target().resolve(first).ok());
  REQUIRE_FALSE(target().resolve(second).ok());
  {
    const test::LogCapture log;
    const auto bad = cli::specs_for_texts({first, add_form(), second}, *catalog);
    CHECK_FALSE(bad.ok());
    CHECK(count_of(log.str(), "error: ") == 2);
    CHECK_THAT(log.str(), Catch::Contains(target().resolve(first).error()) &&
                              Catch::Contains(target().resolve(second).error()));
  }
  const auto good = cli::specs_for_texts({mul_form(), add_form()}, *catalog);
  REQUIRE(good.ok());
  REQUIRE(good->size() == 2);
  CHECK((*good)[0].text == display_of(mul_form()));
  CHECK((*good)[1].text == display_of(add_form()));
}
