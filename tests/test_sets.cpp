#include <catch2/catch.hpp>

#include "catalog/sets.hpp"

using namespace peakprobe;

TEST_CASE("sets: rows parse, instructions are canonicalised", "[sets]") {
  auto sets = parse_sets("# c\nfp | vaddps ymm,ymm,ymm ; vmulps ymm, ymm, ymm;\n", "t.sets");
  REQUIRE(sets.ok());
  REQUIRE(sets->size() == 1);
  CHECK(sets->at(0).name == "fp");
  CHECK(sets->at(0).instructions == std::vector<std::string>{"vaddps ymm, ymm, ymm", "vmulps ymm, ymm, ymm"});
  CHECK(sets->at(0).origin == "t.sets:2");
}

TEST_CASE("sets: errors name file and line", "[sets]") {
  struct Case { const char* text; const char* says; };
  const Case cases[] = {
      {"fp vaddps ymm, ymm, ymm\n", "t.sets:1: expected"},
      {" | vaddps ymm, ymm, ymm; vmulps ymm, ymm, ymm\n", "t.sets:1: empty set name"},
      {"fp | vaddps ymm, ymm, ymm\n", "at least two"},
      {"fp | vadps ymm, ymm, ymm; vmulps ymm, ymm, ymm\n", "did you mean"},
      {"a | add r64, r64; sub r64, r64\na | add r64, r64; sub r64, r64\n", "t.sets:2: set 'a' repeats t.sets:1"},
  };
  for (const auto& c : cases) {
    INFO(c.text);
    auto s = parse_sets(c.text, "t.sets");
    REQUIRE_FALSE(s.ok());
    CHECK(s.error().find(c.says) != std::string::npos);
  }
}

TEST_CASE("sets: the shipped sets are valid and have seven members each", "[sets]") {
  auto sets = default_sets();
  REQUIRE(sets.ok());
  REQUIRE(sets->size() >= 8);
  for (const auto& s : sets.value()) {
    INFO(s.name);
    CHECK(s.instructions.size() == 7);
  }
}
