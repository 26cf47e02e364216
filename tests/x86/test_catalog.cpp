// The x86 catalog: the rows probes/x86.catalog must hold, and how x86 rows parse (encoding prefixes,
// the parser's own errors). The ISA-neutral catalog tests are in tests/test_catalog.cpp.
#include <catch2/catch.hpp>

#include <set>

#include "catalog/catalog.hpp"

using namespace peakprobe;

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

TEST_CASE("catalog: x86 rows keep their encoding prefix, features in order, and widths filter", "[catalog]") {
  const char* text =
      "vfmadd231ps ymm, ymm, ymm | 16 | f32 | fma,avx | fp.fma\n"
      "  imul r64, r64           | 1  | i64 | -       | int.mul   \n"
      "{vex} vpdpbusd ymm, ymm, ymm | 32 | i8 | avx_vnni | vec.int.dot\n";
  auto rows = parse_catalog(text, "t.catalog");
  REQUIRE(rows.ok());
  REQUIRE(rows->size() == 3);
  CHECK(rows->at(0).text == "vfmadd231ps ymm, ymm, ymm");
  CHECK(rows->at(0).requires_features == std::vector<std::string>{"fma", "avx"});
  CHECK(rows->at(1).text == "imul r64, r64");
  CHECK(rows->at(2).text == "{vex} vpdpbusd ymm, ymm, ymm");
  CHECK(matches_filter(rows->at(0), "zmm,ymm"));
  CHECK_FALSE(matches_filter(rows->at(0), "zmm"));
}

TEST_CASE("catalog: malformed x86 rows are reported with the parser's reason", "[catalog]") {
  struct Case { const char* row; const char* says; };
  const Case cases[] = {
      {"vaddps ymm, ymm, ymm | 8 | f32 | avx9 | fp.add", "unknown CPU feature 'avx9'"},
      {"vadps ymm, ymm, ymm | 8 | f32 | avx | fp.add", "did you mean"},
      {"vaddps ymm, r64, ymm | 8 | f32 | avx | fp.add", "impossible operand form"},
      {"vaddps ymm, yyy, ymm | 8 | f32 | avx | fp.add", "unknown operand kind"},
  };
  for (const auto& c : cases) {
    INFO(c.row);
    auto rows = parse_catalog(std::string("# header\n") + c.row + "\n", "bad.catalog");
    REQUIRE_FALSE(rows.ok());
    CHECK(rows.error().rfind("bad.catalog:2: ", 0) == 0);
    CHECK(rows.error().find(c.says) != std::string::npos);
  }
}
