// Tests for src/report/svg_util.cpp: number labels, ticks, scales, text extents and label placement.
// It also defines the XML well-formedness check that test_svg_plots.cpp and test_html_report.cpp use.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <regex>
#include <string>
#include <vector>

#include "report/svg_util.hpp"

namespace peakprobe::test {

// Enough of XML to catch what a string-built document gets wrong: every tag closed in order,
// attribute values quoted, no raw '<' or '>' and no stray '&' in text. Returns "" or what went wrong.
std::string xml_problem(const std::string& s) {
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
        return "stray '&' in text: " + text.substr(0, 80);
    }
    if (text.find('>') != std::string::npos) return "raw '>' in text: " + text.substr(0, 80);
    if (lt == std::string::npos) break;
    std::smatch mt;
    // Bounded: a tag is far shorter, and copying the whole rest at every tag would be quadratic.
    const std::string rest = s.substr(lt, 20000);
    if (!std::regex_search(rest, mt, tag, std::regex_constants::match_continuous))
      return "malformed tag at: " + rest.substr(0, 80);
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

}  // namespace peakprobe::test

namespace {

using namespace peakprobe;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

}  // namespace

TEST_CASE("fmt_si keeps three significant digits and no more", "[plots]") {
  CHECK(fmt_si(118) == "118");
  CHECK(fmt_si(117.6) == "118");
  CHECK(fmt_si(31.44) == "31.4");
  CHECK(fmt_si(0.4671) == "0.467");
  CHECK(fmt_si(1234) == "1230");
  CHECK(fmt_si(222000) == "222000");
  CHECK(fmt_si(0.015625) == "0.0156");
  CHECK(fmt_si(2) == "2");
  CHECK(fmt_si(59.0) == "59");
  CHECK(fmt_si(9.996) == "10");
  CHECK(fmt_si(999.6) == "1000");
  CHECK(fmt_si(0) == "0");
  CHECK(fmt_si(-31.4) == "-31.4");
  CHECK(fmt_si(kNaN) == "-");
  CHECK(fmt_si(kInf) == "-");
  CHECK(fmt_si(-kInf) == "-");
}

TEST_CASE("fmt_px prints one decimal and never -0", "[plots]") {
  CHECK(fmt_px(12.26) == "12.3");
  CHECK(fmt_px(300) == "300.0");
  CHECK(fmt_px(-0.04) == "0.0");
  CHECK(fmt_px(-7.5) == "-7.5");
}

TEST_CASE("log_ticks gives decades, and 2 and 5 steps over short ranges", "[plots]") {
  CHECK(log_ticks(1.0 / 64, 256) == std::vector<double>{0.1, 1, 10, 100});
  CHECK(log_ticks(0.2, 1000) == std::vector<double>{1, 10, 100, 1000});
  CHECK(log_ticks(1, 100) == std::vector<double>{1, 2, 5, 10, 20, 50, 100});
  CHECK(log_ticks(0.2, 200) == std::vector<double>{0.2, 0.5, 1, 2, 5, 10, 20, 50, 100, 200});
  CHECK(log_ticks(3, 8) == std::vector<double>{3, 4, 5, 6, 7, 8});
  // Nothing round inside: both ends are labelled instead.
  CHECK(log_ticks(1.1, 1.9) == std::vector<double>{1.1, 1.9});
}

TEST_CASE("log_ticks thins out very wide ranges", "[plots]") {
  const auto ticks = log_ticks(1e-3, 1e12);
  CHECK(ticks.size() <= 9);
  CHECK(ticks.front() == Approx(1e-2));
  for (const double t : ticks) CHECK(static_cast<long>(std::lround(std::log10(t))) % 2 == 0);
}

TEST_CASE("tick helpers reject ranges a log axis cannot show", "[plots]") {
  CHECK(log_ticks(0, 10).empty());
  CHECK(log_ticks(-1, 10).empty());
  CHECK(log_ticks(10, 10).empty());
  CHECK(log_ticks(10, 1).empty());
  CHECK(log_ticks(1, kInf).empty());
  CHECK(log_ticks(kNaN, 10).empty());
  CHECK(log2_ticks(0, 1024).empty());
  CHECK(linear_ticks(5, 5).empty());
  CHECK(linear_ticks(0, kNaN).empty());
}

TEST_CASE("log2_ticks keeps the exponents of binary units", "[plots]") {
  CHECK(log2_ticks(1.0 / 64, 256, 10) ==
        std::vector<double>{1.0 / 64, 1.0 / 16, 1.0 / 4, 1, 4, 16, 64, 256});
  const auto bytes = log2_ticks(2048, 2.0 * (1u << 30), 10);
  REQUIRE(bytes.size() == 10);
  CHECK(bytes.front() == 4096);
  CHECK(bytes[3] == 1 << 18);
  CHECK(bytes.back() == 1u << 30);
  CHECK(log2_ticks(1, 8, 10) == std::vector<double>{1, 2, 4, 8});
}

TEST_CASE("linear_ticks steps by 1, 2 or 5 times a power of ten", "[plots]") {
  CHECK(linear_ticks(0, 250) == std::vector<double>{0, 50, 100, 150, 200, 250});
  const auto unit = linear_ticks(0, 1);
  REQUIRE(unit.size() == 6);
  CHECK(unit[3] == Approx(0.6));
  CHECK(unit.back() == Approx(1.0));
  CHECK(linear_ticks(13, 97).front() == 20);
}

TEST_CASE("nice_ceil and nice_floor snap to 1, 2, 5 x 10^k", "[plots]") {
  CHECK(nice_ceil(757) == 1000);
  CHECK(nice_ceil(2) == 2);
  CHECK(nice_ceil(2.1) == 5);
  CHECK(nice_ceil(0.48) == Approx(0.5));
  CHECK(nice_floor(0.48) == Approx(0.2));
  CHECK(nice_floor(5) == 5);
  CHECK(nice_floor(9.9) == 5);
  CHECK(nice_floor(1000) == 1000);
}

TEST_CASE("Scale maps data to pixels, y upwards", "[plots]") {
  const Scale x{1.0 / 64, 256, 100, 700, true};
  CHECK(x(1.0 / 64) == Approx(100));
  CHECK(x(256) == Approx(700));
  CHECK(x(2) == Approx(100 + 600.0 * 7 / 14));
  const Scale y{0, 250, 500, 50, false};
  CHECK(y(0) == Approx(500));
  CHECK(y(125) == Approx(275));
  // A value a log axis cannot show stays finite instead of poisoning the output with NaN.
  CHECK(std::isfinite(x(0)));
  CHECK(std::isfinite(x(-1)));
}

TEST_CASE("text extents are estimated per character", "[plots]") {
  CHECK(text_width("abcd", 12) == Approx(4 * kCharEm * 12));
  CHECK(text_width("\xC2\xB5s", 12) == Approx(2 * kCharEm * 12));  // "µs": two characters, three bytes

  const Box start = text_box(10, 100, "abcd", "start", 0, 12, 0);
  CHECK(start.cx == Approx(10 + 2 * kCharEm * 12));
  CHECK(start.cy < 100);  // most of a line of text sits above its baseline
  const Box end = text_box(10, 100, "abcd", "end", 0, 12, 0);
  CHECK(end.cx == Approx(10 - 2 * kCharEm * 12));
  // Turned a quarter anticlockwise, text runs upwards from its start.
  const Box up = text_box(10, 100, "abcd", "start", -90, 12, 0);
  CHECK(up.cy == Approx(100 - 2 * kCharEm * 12));
  CHECK(up.cx < 10);
}

TEST_CASE("overlaps separates oriented rectangles", "[plots]") {
  const Box a{0, 0, 10, 5, 0};
  CHECK(overlaps(a, Box{15, 0, 6, 5, 0}));
  CHECK_FALSE(overlaps(a, Box{16, 0, 6, 5, 0}));  // touching edges
  CHECK_FALSE(overlaps(a, Box{0, 20, 10, 5, 0}));
  // Their bounding boxes overlap, the rectangles do not: a thin diagonal past a corner.
  const Box diagonal = segment_box(8, 12, 20, 0, 0.5);
  CHECK_FALSE(overlaps(a, diagonal));
  CHECK(overlaps(a, segment_box(-20, -20, 20, 20, 0.5)));
}

TEST_CASE("inside checks every corner, rotation included", "[plots]") {
  CHECK(inside(Box{50, 50, 10, 5, 0}, 0, 0, 100, 100));
  CHECK_FALSE(inside(Box{95, 50, 10, 5, 0}, 0, 0, 100, 100));
  CHECK(inside(Box{100, 20, 60, 2, 0}, 0, 0, 200, 40));
  CHECK_FALSE(inside(Box{100, 20, 60, 2, 90}, 0, 0, 200, 40));
}

TEST_CASE("LabelPlacer takes the first free candidate inside the area", "[plots]") {
  LabelPlacer placer(0, 0, 100, 100);
  placer.block(Box{50, 50, 10, 10, 0}, Obstacle::mark);
  const std::vector<Box> candidates = {{150, 50, 5, 5, 0}, {50, 50, 5, 5, 0}, {80, 50, 5, 5, 0}, {20, 50, 5, 5, 0}};
  CHECK(placer.place(candidates) == 2);  // outside, then on the block, then free
  // The placed label now blocks the next one.
  CHECK(placer.place({{80, 52, 5, 5, 0}, {20, 50, 5, 5, 0}}) == 1);
  CHECK(placer.blocked_count() == 3);
}

TEST_CASE("LabelPlacer falls back to the fewest collisions", "[plots]") {
  LabelPlacer placer(0, 0, 100, 100);
  placer.block(Box{30, 50, 5, 5, 0}, Obstacle::mark);
  placer.block(Box{40, 50, 5, 5, 0}, Obstacle::mark);
  placer.block(Box{70, 50, 5, 5, 0}, Obstacle::mark);
  CHECK(placer.place({{35, 50, 6, 6, 0}, {70, 50, 6, 6, 0}, {300, 50, 1, 1, 0}}) == 1);
  // Nothing inside at all: the first candidate, still drawn.
  CHECK(placer.place({{300, 50, 1, 1, 0}, {-300, 50, 1, 1, 0}}) == 0);
}

TEST_CASE("LabelPlacer covers lines before marks, and marks before labels", "[plots]") {
  LabelPlacer placer(0, 0, 100, 100);
  placer.block(segment_box(0, 50, 100, 50), Obstacle::line);
  placer.block(segment_box(0, 55, 100, 55), Obstacle::line);
  placer.block(Box{20, 20, 5, 5, 0}, Obstacle::mark);
  // Over a mark, over two lines, over one line: the last wins.
  CHECK(placer.place({{20, 20, 4, 4, 0}, {50, 52, 4, 4, 0}, {50, 48, 4, 4, 0}}) == 2);
  // The placed label, though it sits on a line, now costs more to cover than the mark.
  CHECK(placer.place({{50, 48, 4, 4, 0}, {20, 20, 4, 4, 0}}) == 1);
}

TEST_CASE("svg_util offers the project's XML escaping", "[plots]") {
  CHECK(xml_escape("L1 <load> & \"copy\"") == "L1 &lt;load&gt; &amp; &quot;copy&quot;");
}

TEST_CASE("the XML check used by the plot tests catches what it claims to", "[plots]") {
  using peakprobe::test::xml_problem;
  CHECK(xml_problem("<?xml version=\"1.0\"?>\n<svg><g><text x=\"1\">a &amp; b</text></g></svg>\n").empty());
  CHECK_FALSE(xml_problem("<svg><g></svg>").empty());
  CHECK_FALSE(xml_problem("<svg><text>a & b</text></svg>").empty());
  CHECK_FALSE(xml_problem("<svg><text>a > b</text></svg>").empty());
  CHECK_FALSE(xml_problem("<svg><text x=1>a</text></svg>").empty());
  CHECK_FALSE(xml_problem("<svg>").empty());
}
