#include <catch2/catch.hpp>

#include "catalog/form_selection.hpp"

using namespace peakprobe;

namespace {
const std::vector<std::string> kFamilies = {"alpha", "beta"};
std::vector<isa::ListedForm> forms() {
  return {{"add a, a", "alpha", {}, ""},
          {"mul q, q", "beta", {"wide_f", "fast"}, ""},
          {"MulX q, q", "beta", {"wider"}, ""},
          {"stop", "alpha", {}, "not measurable"}};
}
std::vector<std::string> texts(const std::vector<isa::ListedForm>& v) {
  std::vector<std::string> out;
  for (const auto& f : v) out.push_back(f.text);
  return out;
}
}  // namespace

TEST_CASE("form selection: nothing chosen keeps every form, refused ones included, in order", "[form_selection]") {
  auto s = select_forms(forms(), kFamilies, {});
  REQUIRE(s.ok());
  CHECK(texts(*s) == std::vector<std::string>{"add a, a", "mul q, q", "MulX q, q", "stop"});
}

TEST_CASE("form selection: --filter matches text case-insensitively, 'a,b' either", "[form_selection]") {
  FormSelection sel;
  sel.filter = "MUL";
  CHECK(texts(*select_forms(forms(), kFamilies, sel)) == std::vector<std::string>{"mul q, q", "MulX q, q"});
  sel.filter = "add, stop";
  CHECK(texts(*select_forms(forms(), kFamilies, sel)) == std::vector<std::string>{"add a, a", "stop"});
  sel.filter = "nothing like it";
  CHECK(select_forms(forms(), kFamilies, sel)->empty());
}

TEST_CASE("form selection: --group takes known families only, --isa a feature-name prefix", "[form_selection]") {
  FormSelection sel;
  sel.groups = {"beta"};
  CHECK(texts(*select_forms(forms(), kFamilies, sel)) == std::vector<std::string>{"mul q, q", "MulX q, q"});
  sel.groups = {"alpha,beta"};
  CHECK(select_forms(forms(), kFamilies, sel)->size() == 4);
  sel.groups = {"gamma"};
  auto bad = select_forms(forms(), kFamilies, sel);
  REQUIRE_FALSE(bad.ok());
  CHECK_THAT(bad.error(), Catch::Contains("gamma") && Catch::Contains("alpha, beta"));
  sel.groups.clear();
  sel.isa = "wide";
  CHECK(texts(*select_forms(forms(), kFamilies, sel)) == std::vector<std::string>{"mul q, q", "MulX q, q"});
  sel.isa = "wider";
  CHECK(texts(*select_forms(forms(), kFamilies, sel)) == std::vector<std::string>{"MulX q, q"});
  sel.isa = "fast";
  CHECK(texts(*select_forms(forms(), kFamilies, sel)) == std::vector<std::string>{"mul q, q"});
}
