// Tests for src/report/svg_heatmap.cpp: well-formed, escaped, self-contained SVG with the matrix
// embedded as JSON, and a golden file for the drawing itself.
#include <catch2/catch.hpp>

#include <cstddef>
#include <optional>
#include <regex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "pairs/cluster.hpp"
#include "report/svg_heatmap.hpp"
#include "report_fixture.hpp"

namespace {

using peakprobe::PairMatrix;
using peakprobe::pair_heatmap_svg;

// A realistic 7-instruction matrix (values shaped like an AVX-512 core: FP arithmetic shares the
// FMA pipes, integer ALU work does not), with one pair not measured.
PairMatrix seven_instructions() {
  PairMatrix m;
  m.instructions = {"vfmadd231ps zmm, zmm, zmm", "vaddps zmm, zmm, zmm", "vmulps zmm, zmm, zmm",
                    "vpaddd zmm, zmm, zmm",      "vpermps zmm, zmm, zmm", "imul r64, r64",
                    "add r64, r64"};
  m.alone_cycles = {0.5, 0.5, 0.5, 0.5, 1.0, 1.0, 0.25};
  const std::optional<double> na;
  m.same_port = {{1.00, 0.97, 0.99, 0.41, 0.12, 0.02, 0.05},
                 {0.97, 1.00, 0.95, 0.38, 0.10, 0.00, 0.04},
                 {0.99, 0.95, 1.00, 0.44, 0.15, 0.03, 0.06},
                 {0.41, 0.38, 0.44, 1.00, 0.86, 0.01, 0.31},
                 {0.12, 0.10, 0.15, 0.86, 1.00, 0.00, na},
                 {0.02, 0.00, 0.03, 0.01, 0.00, 1.00, 0.22},
                 {0.05, 0.04, 0.06, 0.31, na, 0.22, 0.68}};
  m.groups = peakprobe::name_groups(peakprobe::cluster_pipe_groups(m.same_port), m.instructions);
  return m;
}

std::string unescape(std::string s) {
  const std::vector<std::pair<std::string, std::string>> entities = {
      {"&lt;", "<"}, {"&gt;", ">"}, {"&quot;", "\""}, {"&apos;", "'"}, {"&amp;", "&"}};
  for (const auto& [entity, ch] : entities) {
    for (std::size_t at = s.find(entity); at != std::string::npos; at = s.find(entity, at + ch.size()))
      s.replace(at, entity.size(), ch);
  }
  return s;
}

nlohmann::json metadata_json(const std::string& svg) {
  const std::string open = "<metadata id=\"peakprobe-pair-matrix\">";
  const std::size_t begin = svg.find(open);
  REQUIRE(begin != std::string::npos);
  const std::size_t end = svg.find("</metadata>", begin);
  REQUIRE(end != std::string::npos);
  return nlohmann::json::parse(unescape(svg.substr(begin + open.size(), end - begin - open.size())));
}

// Enough of XML to catch what a string-built document gets wrong: every tag closed in order,
// attribute values quoted, no raw '<' or stray '&' in text. Returns "" or what went wrong.
std::string well_formed(const std::string& s) {
  std::vector<std::string> open;
  std::size_t i = 0;
  if (s.rfind("<?xml ", 0) == 0) i = s.find("?>") + 2;
  static const std::regex tag(R"re(<(/?)([A-Za-z][\w:-]*)((?:\s+[\w:-]+="[^"<]*")*)\s*(/?)>)re");
  static const std::regex entity(R"re(&(amp|lt|gt|quot|apos|#[0-9]+|#x[0-9a-fA-F]+);)re");
  while (i < s.size()) {
    const std::size_t lt = s.find('<', i);
    const std::string text = s.substr(i, lt == std::string::npos ? std::string::npos : lt - i);
    for (std::size_t amp = text.find('&'); amp != std::string::npos; amp = text.find('&', amp + 1)) {
      if (!std::regex_search(text.substr(amp, 12), entity, std::regex_constants::match_continuous))
        return "stray '&' in text: " + text;
    }
    if (text.find('>') != std::string::npos) return "raw '>' in text: " + text;
    if (lt == std::string::npos) break;
    std::smatch mt;
    const std::string rest = s.substr(lt);
    if (!std::regex_search(rest, mt, tag, std::regex_constants::match_continuous))
      return "malformed tag at: " + rest.substr(0, 60);
    if (mt[1].length() > 0) {
      if (open.empty() || open.back() != mt[2].str()) return "unbalanced </" + mt[2].str() + ">";
      open.pop_back();
    } else if (mt[4].length() == 0) {
      open.push_back(mt[2].str());
    }
    i = lt + static_cast<std::size_t>(mt[0].length());
  }
  if (!open.empty()) return "unclosed <" + open.back() + ">";
  return "";
}

int count(const std::string& haystack, const std::string& needle) {
  int n = 0;
  for (std::size_t at = haystack.find(needle); at != std::string::npos; at = haystack.find(needle, at + 1)) ++n;
  return n;
}

}  // namespace

TEST_CASE("SVG heatmap matches the golden file", "[report]") {
  peakprobe::test::check_golden("heatmap.svg", pair_heatmap_svg(seven_instructions(), "Pair matrix: test host"));
}

TEST_CASE("SVG heatmap is well-formed", "[report]") {
  const std::string svg = pair_heatmap_svg(seven_instructions(), "Pair matrix");
  CHECK(well_formed(svg).empty());
  CHECK(svg.rfind("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\"", 0) == 0);
  CHECK(svg.substr(svg.size() - 7) == "</svg>\n");
  // The checker itself must catch what it claims to.
  CHECK_FALSE(well_formed("<svg><g></svg>").empty());
  CHECK_FALSE(well_formed("<svg><text>a & b</text></svg>").empty());
  CHECK_FALSE(well_formed("<svg><text x=1>a</text></svg>").empty());
}

TEST_CASE("SVG heatmap is self-contained", "[report]") {
  const std::string svg = pair_heatmap_svg(seven_instructions(), "Pair matrix");
  CHECK(svg.find("<script") == std::string::npos);
  CHECK(svg.find("@import") == std::string::npos);
  CHECK(svg.find("@font-face") == std::string::npos);
  CHECK(svg.find("href") == std::string::npos);
  CHECK(svg.find("font-family=\"sans-serif\"") != std::string::npos);
}

TEST_CASE("SVG heatmap labels both axes with every instruction", "[report]") {
  const PairMatrix m = seven_instructions();
  const std::string svg = pair_heatmap_svg(m, "Pair matrix");
  for (const auto& name : m.instructions) {
    INFO(name);
    CHECK(count(svg, ">" + peakprobe::xml_escape(name) + "</text>") == 2);
  }
  CHECK(count(svg, "transform=\"rotate(-45 ") == 7);
}

TEST_CASE("SVG heatmap prints every value and marks missing cells", "[report]") {
  const std::string svg = pair_heatmap_svg(seven_instructions(), "Pair matrix");
  CHECK(count(svg, "<rect x=") >= 49);
  CHECK(count(svg, ">0.86</text>") == 2);
  CHECK(count(svg, ">n/a</text>") == 2);
  // Text colour follows the fill: dark ink on the light co-issue end, white on the dark shared end.
  CHECK(count(svg, "fill=\"#000000\">0.00</text>") == 4);
  CHECK(count(svg, "fill=\"#ffffff\">1.00</text>") == 6);
}

TEST_CASE("SVG heatmap has a legend and lists the pipe groups", "[report]") {
  const std::string svg = pair_heatmap_svg(seven_instructions(), "Pair matrix");
  CHECK(svg.find(">co-issue &lt; 0.25</text>") != std::string::npos);
  CHECK(svg.find(">partial 0.25 to 0.75</text>") != std::string::npos);
  CHECK(svg.find(">shared &gt; 0.75</text>") != std::string::npos);
  CHECK(svg.find(">n/a = not measured</text>") != std::string::npos);
  CHECK(svg.find(">pipe group 1: vfmadd231ps zmm, zmm, zmm; vaddps zmm, zmm, zmm; vmulps zmm, zmm, zmm</text>") !=
        std::string::npos);
  CHECK(svg.find(">pipe group 4: add r64, r64</text>") != std::string::npos);
}

TEST_CASE("SVG heatmap infers groups when the matrix has none", "[report]") {
  PairMatrix m = seven_instructions();
  const std::string with_groups = pair_heatmap_svg(m, "Pair matrix");
  m.groups.clear();
  CHECK(pair_heatmap_svg(m, "Pair matrix") == with_groups);
}

TEST_CASE("SVG heatmap embeds the matrix as JSON", "[report]") {
  const PairMatrix m = seven_instructions();
  const nlohmann::json doc = metadata_json(pair_heatmap_svg(m, "Pair matrix"));
  CHECK(doc["instructions"] == m.instructions);
  CHECK(doc["alone_cycles"] == m.alone_cycles);
  CHECK(doc["groups"] == m.groups);
  CHECK(doc["co_issue_below"] == 0.25);
  CHECK(doc["shared_above"] == 0.75);
  REQUIRE(doc["same_port"].size() == 7);
  for (std::size_t i = 0; i < 7; ++i) {
    REQUIRE(doc["same_port"][i].size() == 7);
    for (std::size_t j = 0; j < 7; ++j) {
      INFO(i << "," << j);
      const auto& v = m.same_port[i][j];
      if (v)
        CHECK(doc["same_port"][i][j].get<double>() == *v);
      else
        CHECK(doc["same_port"][i][j].is_null());
    }
  }
}

TEST_CASE("XML special characters are escaped everywhere", "[report]") {
  CHECK(peakprobe::xml_escape(R"(a&b<c>"d"'e')") == "a&amp;b&lt;c&gt;&quot;d&quot;&apos;e&apos;");
  CHECK(peakprobe::xml_escape("tab\there\nnewline") == "tab here newline");
  CHECK(peakprobe::xml_escape("vfmadd231ps zmm, zmm, zmm") == "vfmadd231ps zmm, zmm, zmm");

  PairMatrix m;
  const std::string odd = R"(cmp <&> "q" 'x')";
  m.instructions = {odd, "add r64, r64"};
  m.alone_cycles = {1.0, 0.25};
  m.same_port = {{1.0, 0.5}, {0.5, std::nullopt}};
  const std::string svg = pair_heatmap_svg(m, "A & B <test>");
  CHECK(well_formed(svg).empty());
  CHECK(svg.find("<&>") == std::string::npos);
  CHECK(svg.find("A & B") == std::string::npos);
  CHECK(count(svg, "cmp &lt;&amp;&gt; &quot;q&quot; &apos;x&apos;") >= 3);  // row, column, group
  CHECK(svg.find("A &amp; B &lt;test&gt;") != std::string::npos);
  CHECK(metadata_json(svg)["instructions"][0] == odd);
}

TEST_CASE("SVG heatmap margins grow with the longest name", "[report]") {
  auto width_of = [](const std::string& svg) {
    std::smatch mt;
    REQUIRE(std::regex_search(svg, mt, std::regex(R"re(<svg [^>]*width="(\d+)" height="(\d+)")re")));
    return std::pair<int, int>(std::stoi(mt[1]), std::stoi(mt[2]));
  };
  PairMatrix m;
  m.instructions = {"a", "b"};
  m.same_port = {{1.0, 0.0}, {0.0, 1.0}};
  const auto small = width_of(pair_heatmap_svg(m, "t"));
  m.instructions[1] = std::string(60, 'x');
  const auto large = width_of(pair_heatmap_svg(m, "t"));
  // Room for the name as a row label on the left and slanted at 45 degrees over the last column.
  const int label = 60 * 13 / 2;
  CHECK(large.first >= label + label * 2 / 3);
  CHECK(large.second >= small.second + label * 2 / 3);
}

TEST_CASE("SVG heatmap of an empty matrix is still a valid document", "[report]") {
  const std::string svg = pair_heatmap_svg(PairMatrix{}, "nothing measured");
  CHECK(well_formed(svg).empty());
  CHECK(metadata_json(svg)["instructions"].empty());
  CHECK(svg.find(">none</text>") != std::string::npos);
}
