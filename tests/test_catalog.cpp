#include <catch2/catch.hpp>

#include <set>

#include "catalog/catalog.hpp"
#include "scratch_dir.hpp"

using namespace peakprobe;

TEST_CASE("catalog: rows parse into specs", "[catalog]") {
  const char* text =
      "# instruction | ops | dtype | requires | group\n"
      "\n"
      "vfmadd231ps ymm, ymm, ymm | 16 | f32 | fma,avx | fp.fma\n"
      "  imul r64, r64           | 1  | i64 | -       | int.mul   \n"
      "{vex} vpdpbusd ymm, ymm, ymm | 32 | i8 | avx_vnni | vec.int.dot\n";
  auto rows = parse_catalog(text, "t.catalog");
  REQUIRE(rows.ok());
  REQUIRE(rows->size() == 3);
  const ProbeSpec& f = rows->at(0);
  CHECK(f.text == "vfmadd231ps ymm, ymm, ymm");
  CHECK(f.ops_per_instruction == 16);
  CHECK(f.dtype == "f32");
  CHECK(f.requires_features == std::vector<std::string>{"fma", "avx"});
  CHECK(f.group == "fp.fma");
  CHECK(f.origin == "t.catalog:3");
  CHECK(rows->at(1).requires_features.empty());
  CHECK(rows->at(2).text == "{vex} vpdpbusd ymm, ymm, ymm");
}

TEST_CASE("catalog: every malformed row is reported with file and line", "[catalog]") {
  struct Case { const char* row; const char* says; };
  const Case cases[] = {
      {"vaddps ymm, ymm, ymm | 8 | f32 | avx", "expected 5 fields"},
      {"vaddps ymm, ymm, ymm | eight | f32 | avx | fp.add", "not a non-negative number"},
      {"vaddps ymm, ymm, ymm | -1 | f32 | avx | fp.add", "not a non-negative number"},
      {"vaddps ymm, ymm, ymm | 8 | f33 | avx | fp.add", "unknown dtype"},
      {"vaddps ymm, ymm, ymm | 8 | - | avx | fp.add", "needs a dtype"},
      {"vaddps ymm, ymm, ymm | 8 | f32 | avx9 | fp.add", "unknown CPU feature 'avx9'"},
      {"vaddps ymm, ymm, ymm | 8 | f32 | avx | fp add", "group"},
      {"vadps ymm, ymm, ymm | 8 | f32 | avx | fp.add", "did you mean"},
      {"vaddps ymm, r64, ymm | 8 | f32 | avx | fp.add", "impossible operand form"},
      {"vaddps ymm, yyy, ymm | 8 | f32 | avx | fp.add", "unknown operand kind"},
  };
  for (const auto& c : cases) {
    INFO(c.row);
    std::string text = std::string("# header\n") + c.row + "\n";
    auto rows = parse_catalog(text, "bad.catalog");
    REQUIRE_FALSE(rows.ok());
    CHECK(rows.error().rfind("bad.catalog:2: ", 0) == 0);
    CHECK(rows.error().find(c.says) != std::string::npos);
  }
}

TEST_CASE("catalog: a repeated form names the first line", "[catalog]") {
  auto rows = parse_catalog("add r64, r64|1|i64|-|int\nadd  r64,r64|1|i64|-|int\n", "d.catalog");
  REQUIRE_FALSE(rows.ok());
  CHECK(rows.error().find("d.catalog:2") != std::string::npos);
  CHECK(rows.error().find("repeats line 1") != std::string::npos);
}

TEST_CASE("catalog: files load from disk, a missing one is an error", "[catalog]") {
  const test::ScratchDir dir;
  const std::string path = dir.write("tmp.catalog", "vaddps ymm, ymm, ymm | 8 | f32 | avx | fp.add\n");
  auto rows = load_catalog_file(path);
  REQUIRE(rows.ok());
  CHECK(rows->size() == 1);
  auto missing = load_catalog_file("/nonexistent/dir/x.catalog");
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.error().find("/nonexistent/dir/x.catalog") != std::string::npos);
}

TEST_CASE("default catalog: at least 150 valid rows covering the required families", "[catalog]") {
  auto rows = default_catalog();
  REQUIRE(rows.ok());
  CHECK(rows->size() >= 150);
  std::set<std::string> texts;
  for (const auto& r : rows.value()) texts.insert(r.text);
  for (const char* must : {"imul r64, r64", "popcnt r64, r64", "div r64", "mov r64, m64", "mov m64, r64",
                           "vfmadd231ps ymm, ymm, ymm", "vfmadd231ps zmm, zmm, zmm", "vpdpbusd zmm, zmm, zmm",
                           "vdpbf16ps zmm, zmm, zmm", "vpermps ymm, ymm, ymm", "vcvtdq2ps ymm, ymm",
                           "tdpbf16ps tmm, tmm, tmm"})
    CHECK(texts.count(must) == 1);
  for (const auto& r : rows.value()) {
    INFO(r.origin << " " << r.text);
    CHECK(r.origin.rfind("probes/x86.catalog:", 0) == 0);
    if (r.ops_per_instruction > 0) CHECK(r.dtype != "-");
  }
}

TEST_CASE("filter matches instruction, group or dtype, comma means or", "[catalog]") {
  ProbeSpec s;
  s.text = "vfmadd231ps ymm, ymm, ymm";
  s.group = "fp.fma";
  s.dtype = "f32";
  CHECK(matches_filter(s, ""));
  CHECK(matches_filter(s, "FMA"));
  CHECK(matches_filter(s, "zmm,ymm"));
  CHECK(matches_filter(s, "f32"));
  CHECK_FALSE(matches_filter(s, "zmm"));
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
  auto odd = parse_catalog("vaddps\xff ymm | 8 | f32 | - | fp\n", "o.catalog");
  REQUIRE_FALSE(odd.ok());
  CHECK_THAT(odd.error(), Catch::StartsWith("o.catalog:1: ") && Catch::Contains("\\xFF"));
}
