#include <catch2/catch.hpp>

#include "catalog/sets.hpp"
#include "target_fixture.hpp"

using namespace peakprobe;

namespace {

// The target's two ruler forms, as its parser spells them.
std::string display(const std::string& text) {
  const auto form = test::target().resolve(text);
  REQUIRE(form.ok());
  return form->display;
}

// `text` with the spaces after its commas taken out.
std::string squeezed(std::string text) {
  for (size_t at; (at = text.find(", ")) != std::string::npos;) text.erase(at + 1, 1);
  return text;
}

}  // namespace

TEST_CASE("sets: rows parse, instructions are canonicalised", "[sets]") {
  const auto forms = test::target().ruler_forms();
  const std::string a = display(forms.one_cycle), b = display(forms.multi_cycle);
  auto sets = parse_sets("# c\nfp | " + squeezed(a) + " ;  " + b + ";\n", "t.sets");
  REQUIRE(sets.ok());
  REQUIRE(sets->size() == 1);
  CHECK(sets->at(0).name == "fp");
  CHECK(sets->at(0).instructions == std::vector<std::string>{a, b});
  CHECK(sets->at(0).origin == "t.sets:2");
}

TEST_CASE("sets: errors name file and line", "[sets]") {
  const auto forms = test::target().ruler_forms();
  const std::string a = forms.one_cycle, b = forms.multi_cycle, typo = test::misspelled(a);
  const auto unknown = test::target().resolve(typo);
  REQUIRE_FALSE(unknown.ok());
  struct Case { std::string text, says; };
  const Case cases[] = {
      {"fp " + a + "\n", "t.sets:1: expected"},
      {" | " + a + "; " + b + "\n", "t.sets:1: empty set name"},
      {"fp | " + a + "\n", "at least two"},
      {"fp | " + typo + "; " + b + "\n", "t.sets:1: " + unknown.error()},
      {"a | " + a + "; " + b + "\na | " + a + "; " + b + "\n", "t.sets:2: set 'a' repeats t.sets:1"},
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
