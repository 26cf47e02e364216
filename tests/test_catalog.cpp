// Catalog rows and files, with the target's own forms as the rows' instructions (the shipped
// catalog's rows of one ISA are checked in tests/<isa>/test_catalog.cpp).
#include <catch2/catch.hpp>

#include <map>
#include <set>

#include "catalog/catalog.hpp"
#include "cpu/cpu_info.hpp"
#include "scratch_dir.hpp"
#include "target_fixture.hpp"

using namespace peakprobe;

namespace {

// A form the target's help shows, as its parser spells it, and the features it needs.
isa::FormInfo example() {
  const auto form = test::target().resolve(test::target().help_texts().example_form);
  REQUIRE(form.ok());
  return *form;
}

std::string joined(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ",") + n;
  return out.empty() ? "-" : out;
}

// `text` with every space doubled: the same form, spelled differently.
std::string spaced_out(const std::string& text) {
  std::string out;
  for (char c : text) out += c == ' ' ? std::string("  ") : std::string(1, c);
  return out;
}

}  // namespace

TEST_CASE("catalog: rows parse into specs", "[catalog]") {
  const isa::FormInfo f0 = example();
  const std::string add = test::target().ruler_forms().one_cycle;
  const std::string text =
      "# instruction | ops | dtype | requires | group\n"
      "\n" +
      f0.display + " | 16 | f32 | " + joined(f0.features) + " | fp.mul\n" +
      "  " + add + "           | 1  | i64 | -       | int.add   \n";
  auto rows = parse_catalog(text, "t.catalog");
  REQUIRE(rows.ok());
  REQUIRE(rows->size() == 2);
  const ProbeSpec& f = rows->at(0);
  CHECK(f.text == f0.display);
  CHECK(f.ops_per_instruction == 16);
  CHECK(f.dtype == "f32");
  CHECK(f.requires_features == f0.features);
  CHECK(f.group == "fp.mul");
  CHECK(f.origin == "t.catalog:3");
  CHECK(rows->at(1).text == test::target().resolve(add)->display);
  CHECK(rows->at(1).requires_features.empty());
  CHECK(rows->at(1).group == "int.add");
  CHECK(rows->at(1).origin == "t.catalog:4");
}

TEST_CASE("catalog: every malformed row is reported with file and line", "[catalog]") {
  const std::string form = example().display, typo = test::misspelled(form);
  const auto unknown = test::target().resolve(typo);
  REQUIRE_FALSE(unknown.ok());
  REQUIRE_FALSE(cpu_feature_known("nosuchfeature9"));
  struct Case { std::string row, says; };
  const Case cases[] = {
      {form + " | 8 | f32 | -", "expected 5 fields"},
      {form + " | eight | f32 | - | fp.add", "not a non-negative number"},
      {form + " | -1 | f32 | - | fp.add", "not a non-negative number"},
      {form + " | 8 | f33 | - | fp.add", "unknown dtype"},
      {form + " | 8 | - | - | fp.add", "needs a dtype"},
      {form + " | 8 | f32 | nosuchfeature9 | fp.add", "unknown CPU feature 'nosuchfeature9'"},
      {form + " | 8 | f32 | - | fp add", "group"},
      {" | 8 | f32 | - | fp.add", "empty instruction"},
      {typo + " | 8 | f32 | - | fp.add", unknown.error()},
  };
  for (const auto& c : cases) {
    INFO(c.row);
    std::string text = "# header\n" + c.row + "\n";
    auto rows = parse_catalog(text, "bad.catalog");
    REQUIRE_FALSE(rows.ok());
    CHECK(rows.error().rfind("bad.catalog:2: ", 0) == 0);
    CHECK(rows.error().find(c.says) != std::string::npos);
  }
}

TEST_CASE("catalog: a repeated form names the first line", "[catalog]") {
  const std::string add = test::target().ruler_forms().one_cycle;
  auto rows = parse_catalog(add + "|1|i64|-|int\n" + spaced_out(add) + "|1|i64|-|int\n", "d.catalog");
  REQUIRE_FALSE(rows.ok());
  CHECK(rows.error().find("d.catalog:2") != std::string::npos);
  CHECK(rows.error().find("repeats line 1") != std::string::npos);
}

TEST_CASE("catalog: files load from disk, a missing one is an error", "[catalog]") {
  const test::ScratchDir dir;
  const std::string path = dir.write("tmp.catalog", example().display + " | 8 | f32 | - | fp.add\n");
  auto rows = load_catalog_file(path);
  REQUIRE(rows.ok());
  CHECK(rows->size() == 1);
  auto missing = load_catalog_file("/nonexistent/dir/x.catalog");
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.error().find("/nonexistent/dir/x.catalog") != std::string::npos);
}

TEST_CASE("default catalog: every row is the target's, valid, and the matmul roofs are among them", "[catalog]") {
  // Which rows one ISA's catalog must hold is checked in tests/<isa>/test_catalog.cpp; here, what
  // every shipped catalog promises.
  const isa::Target& t = test::target();
  auto rows = default_catalog();
  REQUIRE(rows.ok());
  REQUIRE_FALSE(rows->empty());
  std::set<std::string> texts;
  for (const auto& r : rows.value()) texts.insert(r.text);
  // The matmul roofs are catalog rows, as the catalog spells them (Target::matmul_roof), on this CPU
  // and on one with every feature.
  for (const CpuInfo& cpu : {detect_cpu_info(), test::cpu_with_every_feature()})
    for (MatmulDtype dt : {MatmulDtype::f32, MatmulDtype::bf16, MatmulDtype::i8}) {
      if (!t.gemm_unsupported(cpu, dt).empty()) continue;
      const std::string roof = t.matmul_roof(cpu, dt).instruction;
      INFO(to_string(dt) << " roof " << roof);
      CHECK(texts.count(roof) == 1);
    }
  const std::string origin = "probes/" + t.name() + ".catalog:";
  for (const auto& r : rows.value()) {
    INFO(r.origin << " " << r.text);
    CHECK(r.origin.rfind(origin, 0) == 0);
    if (r.ops_per_instruction > 0) CHECK(r.dtype != "-");
  }
}

TEST_CASE("default catalog: every FLOP pair of the target is an FMA row and an add row of one type and width", "[catalog][roofline]") {
  // The roofline searches each pair's best mix and offers it as the ceiling of the FMA's type and
  // width: a pair of two types or widths would put one type's FLOPs under the other's roof.
  const isa::Target& t = test::target();
  auto rows = default_catalog();
  REQUIRE(rows.ok());
  std::map<std::string, ProbeSpec> by_text;
  for (const auto& r : rows.value()) by_text.emplace(r.text, r);
  const auto pairs = t.flop_pairs();
  REQUIRE_FALSE(pairs.empty());
  std::set<std::string> fmas;
  for (const auto& p : pairs) {
    INFO(p.mul << " + " << p.add);
    CHECK(p.fused);
    REQUIRE(by_text.count(p.mul) == 1);
    REQUIRE(by_text.count(p.add) == 1);
    const ProbeSpec &mul = by_text.at(p.mul), &add = by_text.at(p.add);
    CHECK(mul.group == "fp.fma");
    CHECK(add.group == "fp.add");
    CHECK(mul.dtype == add.dtype);
    CHECK(mul.ops_per_instruction == 2 * add.ops_per_instruction);  // one lane's multiply and add
    CHECK(t.width_class(p.mul) == t.width_class(p.add));
    CHECK(fmas.insert(p.mul).second);  // searched once
  }
  // The widest f32 pair first: the one `flopmix` measures without arguments on a CPU with every feature.
  const auto widest = t.flop_pair(test::cpu_with_every_feature(), true);
  REQUIRE(widest);
  CHECK(pairs.front().mul == widest->mul);
  CHECK(pairs.front().add == widest->add);
}

TEST_CASE("filter matches instruction, group or dtype, comma means or", "[catalog]") {
  const std::string form = example().display, mnemonic = test::mnemonic_of(form);
  REQUIRE_FALSE(mnemonic.empty());
  ProbeSpec s;
  s.text = form;
  s.group = "fp.fma";
  s.dtype = "f32";
  CHECK(matches_filter(s, ""));
  CHECK(matches_filter(s, "FMA"));  // case-insensitive
  CHECK(matches_filter(s, "no-such-term," + mnemonic));
  CHECK(matches_filter(s, "f32"));
  CHECK_FALSE(matches_filter(s, "no-such-term"));
  CHECK_FALSE(matches_filter(s, "no-such-term,f64"));
}

TEST_CASE("catalog: only a regular file is read (a directory is not an empty catalog)", "[catalog]") {
  const test::ScratchDir dir;
  auto d = load_catalog_file(dir.path.string());
  REQUIRE_FALSE(d.ok());
  CHECK_THAT(d.error(), Catch::Contains("a directory, not a regular file"));
  auto z = load_catalog_file("/dev/zero");
  REQUIRE_FALSE(z.ok());
  CHECK_THAT(z.error(), Catch::Contains("a character device"));
  // A row's bytes come back escaped in the message.
  const std::string form = example().display, mnemonic = test::mnemonic_of(form);
  const std::string odd_form = mnemonic + "\xff" + form.substr(form.find(mnemonic) + mnemonic.size());
  auto odd = parse_catalog(odd_form + " | 8 | f32 | - | fp\n", "o.catalog");
  REQUIRE_FALSE(odd.ok());
  CHECK_THAT(odd.error(), Catch::StartsWith("o.catalog:1: ") && Catch::Contains("\\xFF"));
}
