// Tests for src/report/svg_plots.cpp: well-formed, self-contained SVG; every roof, edge and cache
// labelled and escaped; labels inside the plot and clear of each other; the plotted values in
// <metadata>; one polyline point per usable row; and a golden file per plot.
#include <catch2/catch.hpp>

#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <regex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "report/svg_plots.hpp"
#include "report/svg_util.hpp"
#include "report_fixture.hpp"

namespace peakprobe::test {
std::string xml_problem(const std::string& s);  // defined in test_svg_util.cpp
}

namespace {

using namespace peakprobe;
using nlohmann::json;

constexpr uint64_t KiB = 1024, MiB = 1024 * KiB, GiB = 1024 * MiB;
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

// ---- fixtures: a one-socket desktop core with AVX-512 ----

CeilingTable ceilings() {
  CeilingTable t;
  t.compute = {{"f64", "512", 1, 59, false, 16, 3.7, "vfmadd231pd zmm, zmm, zmm"},
               {"f64", "scalar", 1, 7.4, false, 2, 3.7, "vfmadd231sd xmm, xmm, xmm"},
               {"f32", "512", 1, 118, false, 32, 3.7, "vfmadd231ps zmm, zmm, zmm"},
               {"f32", "512", 1, 177, false, 48, 3.7, "vfmadd231ps zmm + vaddps zmm (2:1)"},
               {"bf16", "512", 1, 236, false, 64, 3.7, "vdpbf16ps zmm, zmm, zmm"},
               {"i8", "512", 1, 473, true, 128, 3.7, "vpdpbusd zmm, zmm, zmm"},
               {"f32", "512", 4, 700, false, 48, 3.6, "vfmadd231ps zmm, zmm, zmm"},
               {"f16", "512", 1, kNaN, false, 0, 3.7, "vfmadd231ph zmm, zmm, zmm"}};
  t.memory = {{"L1", "copy", 1, 150, 40, 16 * KiB}, {"L1", "load", 1, 222, 60, 16 * KiB},
              {"L2", "load", 1, 118, 32, 512 * KiB}, {"L3", "triad", 1, 99, 27, 8 * MiB},
              {"DRAM", "load", 1, 31, 8, 1 * GiB},   {"L1", "load", 4, 888, 60, 16 * KiB},
              {"L4", "load", 1, kInf, 0, 256 * MiB}};
  t.ridges = {{"bf16", "512", "L1", "load", 1, 236.0 / 222}, {"bf16", "512", "DRAM", "load", 1, 236.0 / 31}};
  return t;
}

KernelScore kernel(const std::string& name, double ai, double gflops, int threads = 1) {
  KernelScore k;
  k.name = name;
  k.ai = ai;
  k.achieved_gflops = gflops;
  k.threads = threads;
  k.bound_by = "memory DRAM load";
  k.efficiency = 0.8;
  return k;
}

std::vector<KernelScore> kernels() {
  return {kernel("stream triad", 2.0 / 24, 2.4), kernel("dgemm 512", 40, 48), kernel("stencil <7pt> & \"halo\"", 0.5, 11),
          kernel("not run with 1 thread", 1, 5, 4), kernel("broken", kNaN, 3)};
}

// The plateau each level reaches, in GB/s, for a kernel at full speed.
double plateau(uint64_t size) { return size <= 32 * KiB ? 222 : size <= MiB ? 118 : size <= 32 * MiB ? 99 : 31; }

std::vector<uint64_t> sweep() {
  std::vector<uint64_t> sizes;
  for (uint64_t s = 4 * KiB; s <= GiB; s *= 2) sizes.push_back(s);
  return sizes;
}

std::vector<BandwidthResult> bandwidth_rows() {
  std::vector<BandwidthResult> rows;
  for (const auto& [kernel, isa, scale] : {std::tuple{"load", "avx512", 1.0}, std::tuple{"copy", "avx512", 0.7},
                                            std::tuple{"triad", "avx2", 0.6}}) {
    for (const uint64_t size : sweep()) {
      BandwidthResult r;
      r.kernel = kernel;
      r.isa = isa;
      r.size_bytes = size;
      r.gbps = plateau(size) * scale;
      rows.push_back(r);
    }
  }
  // Rows without a usable rate are left out of the lines.
  BandwidthResult failed = rows.front();
  failed.size_bytes = 3 * GiB;
  failed.gbps.reset();
  failed.status = Status::error;
  failed.reason = "out of memory";
  rows.push_back(failed);
  failed.gbps = kNaN;
  rows.push_back(failed);
  return rows;
}

std::vector<CacheLevelEdge> levels() {
  return {{"L1", 40 * KiB, 222, 32 * KiB, ""},
          {"L2", 800 * KiB, 118, MiB, ""},
          {"L3", 24 * MiB, 99, 32 * MiB, "edge below the reported size"},
          {"DRAM", std::nullopt, 31, std::nullopt, ""}};
}

std::vector<CacheLevel> caches() {
  return {{1, "data", 32 * KiB, 64, 8, 2, 16},
          {1, "instruction", 32 * KiB, 64, 8, 2, 16},
          {2, "unified", MiB, 64, 8, 2, 16},
          {3, "unified", 32 * MiB, 64, 16, 16, 2}};
}

std::vector<LatencyResult> latency_rows() {
  std::vector<LatencyResult> rows;
  for (const int chains : {1, 4}) {
    for (const char* pages : {"4k", "2m"}) {
      for (const uint64_t size : sweep()) {
        LatencyResult r;
        r.mode = "random";
        r.pages = pages;
        r.pages_granted = pages;
        r.chains = chains;
        r.size_bytes = size;
        const double ns = size <= 32 * KiB ? 0.8 : size <= MiB ? 3.5 : size <= 32 * MiB ? 11 : pages[0] == '4' ? 95 : 78;
        r.latency_ns = ns / (chains == 4 ? 2.5 : 1);
        r.latency_cycles = *r.latency_ns * 3.7;
        rows.push_back(r);
      }
    }
  }
  LatencyResult skipped = rows.front();
  skipped.latency_ns.reset();
  skipped.status = Status::skipped;
  rows.push_back(skipped);
  return rows;
}

std::string roofline() { return roofline_svg(ceilings(), kernels(), 1, "Roofline: Ryzen <test> & co, 1 thread"); }
std::string bandwidth() { return bandwidth_svg(bandwidth_rows(), levels(), caches(), "Bandwidth by working set"); }
std::string latency() { return latency_svg(latency_rows(), caches(), "Load-to-use latency"); }

// ---- reading the SVG back ----

std::string unescape(std::string s) {
  const std::vector<std::pair<std::string, std::string>> entities = {
      {"&lt;", "<"}, {"&gt;", ">"}, {"&quot;", "\""}, {"&apos;", "'"}, {"&amp;", "&"}};
  for (const auto& [entity, ch] : entities) {
    for (std::size_t at = s.find(entity); at != std::string::npos; at = s.find(entity, at + ch.size()))
      s.replace(at, entity.size(), ch);
  }
  return s;
}

json metadata(const std::string& svg, const std::string& id) {
  const std::string open = "<metadata id=\"" + id + "\">";
  const std::size_t begin = svg.find(open);
  REQUIRE(begin != std::string::npos);
  const std::size_t end = svg.find("</metadata>", begin);
  REQUIRE(end != std::string::npos);
  return json::parse(unescape(svg.substr(begin + open.size(), end - begin - open.size())));
}

int count(const std::string& haystack, const std::string& needle) {
  int n = 0;
  for (std::size_t at = haystack.find(needle); at != std::string::npos; at = haystack.find(needle, at + 1)) ++n;
  return n;
}

bool has_text(const std::string& svg, const std::string& text) {
  return svg.find(">" + xml_escape(text) + "</text>") != std::string::npos;
}

struct Rect {
  double left, top, right, bottom;
};

// The plot area: the one unfilled rectangle with the axis colour.
Rect plot_area(const std::string& svg) {
  std::smatch m;
  static const std::regex frame(
      R"re(<rect x="([-\d.]+)" y="([-\d.]+)" width="([-\d.]+)" height="([-\d.]+)" fill="none" stroke="#808080"/>)re");
  REQUIRE(std::regex_search(svg, m, frame));
  const double x = std::stod(m[1]), y = std::stod(m[2]);
  return {x, y, x + std::stod(m[3]), y + std::stod(m[4])};
}

// The labels inside the plot: the <text> elements of the white-halo group(s).
std::vector<Box> plot_labels(const std::string& svg, std::vector<std::string>* texts = nullptr) {
  static const std::regex text(
      R"re(<text x="([-\d.]+)" y="([-\d.]+)"(?: text-anchor="(\w+)")?(?: transform="rotate\(([-\d.]+) [-\d.]+ [-\d.]+\)")?(?: font-size="([\d.]+)")? fill="[^"]*">([^<]*)</text>)re");
  std::vector<Box> boxes;
  const std::string group_open = "paint-order=\"stroke\">\n";
  for (std::size_t at = svg.find(group_open); at != std::string::npos; at = svg.find(group_open, at + 1)) {
    const std::size_t end = svg.find("</g>", at);
    const std::string group = svg.substr(at, end - at);
    for (auto it = std::sregex_iterator(group.begin(), group.end(), text); it != std::sregex_iterator(); ++it) {
      const auto& m = *it;
      const std::string label = unescape(m[6]);
      if (texts) texts->push_back(label);
      // No padding: the drawing keeps 1.5 px between labels, so any overlap here is a real one.
      boxes.push_back(text_box(std::stod(m[1]), std::stod(m[2]), label, m[3].matched ? m[3].str() : "start",
                               m[4].matched ? std::stod(m[4]) : 0, m[5].matched ? std::stod(m[5]) : 12, 0));
    }
  }
  return boxes;
}

void check_labels_clear(const std::string& svg, std::size_t expected) {
  std::vector<std::string> texts;
  const auto boxes = plot_labels(svg, &texts);
  CHECK(boxes.size() == expected);
  const Rect area = plot_area(svg);
  for (std::size_t i = 0; i < boxes.size(); ++i) {
    INFO("label " << texts[i]);
    CHECK(inside(boxes[i], area.left, area.top, area.right, area.bottom));
    for (std::size_t j = i + 1; j < boxes.size(); ++j) {
      INFO("and label " << texts[j]);
      CHECK_FALSE(overlaps(boxes[i], boxes[j]));
    }
  }
}

// Point counts of each <polyline>, in document order.
std::vector<std::size_t> polyline_points(const std::string& svg) {
  static const std::regex polyline(R"re(<polyline points="([^"]*)")re");
  std::vector<std::size_t> counts;
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), polyline); it != std::sregex_iterator(); ++it) {
    const std::string points = (*it)[1];
    counts.push_back(points.empty() ? 0 : static_cast<std::size_t>(count(points, " ")) + 1);
  }
  return counts;
}

void check_document(const std::string& svg) {
  INFO(peakprobe::test::xml_problem(svg));
  CHECK(peakprobe::test::xml_problem(svg).empty());
  CHECK(svg.rfind("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\"", 0) == 0);
  CHECK(svg.substr(svg.size() - 7) == "</svg>\n");
  CHECK(svg.find("font-family=\"sans-serif\"") != std::string::npos);
  for (const char* banned : {"<script", "href", "@import", "@font-face", "<image", "<foreignObject"}) {
    INFO(banned);
    CHECK(svg.find(banned) == std::string::npos);
  }
  // NaN and infinities never reach the output, in the drawing or in the metadata.
  static const std::regex non_finite(R"re(\b(nan|inf|infinity)\b)re", std::regex::icase);
  CHECK_FALSE(std::regex_search(svg, non_finite));
}

}  // namespace

// ---- roofline ----

TEST_CASE("Roofline matches the golden file", "[plots]") { peakprobe::test::check_golden("roofline.svg", roofline()); }

TEST_CASE("Roofline is a well-formed, self-contained SVG", "[plots]") {
  const std::string svg = roofline();
  check_document(svg);
  CHECK(svg.find("<title>Roofline: Ryzen &lt;test&gt; &amp; co, 1 thread</title>") != std::string::npos);
  CHECK(has_text(svg, "arithmetic intensity (FLOP/byte)"));
  CHECK(has_text(svg, "performance (GFLOP/s)"));
  for (const char* tick : {"1/64", "1/16", "1/4", "1", "4", "16", "64", "256", "10", "100", "1000"}) {
    INFO(tick);
    CHECK(has_text(svg, tick));
  }
}

TEST_CASE("Roofline labels the best roof of each dtype with its value", "[plots]") {
  const std::string svg = roofline();
  for (const char* label : {"f64 512-bit 59 GFLOP/s", "f32 512-bit 177 GFLOP/s", "bf16 512-bit 236 GFLOP/s",
                            "i8 512-bit 473 GOP/s", "L1 222 GB/s", "L2 118 GB/s", "L3 99 GB/s (triad)",
                            "DRAM 31 GB/s"}) {
    INFO(label);
    CHECK(count(svg, ">" + xml_escape(label) + "</text>") == 1);
  }
  // Beaten by a better ceiling of the same dtype, measured with other threads, or not a number.
  CHECK(svg.find("f64 scalar") == std::string::npos);
  CHECK(svg.find("f32 512-bit 118") == std::string::npos);
  CHECK(svg.find("700 GFLOP/s") == std::string::npos);
  CHECK(svg.find("888 GB/s") == std::string::npos);
  CHECK(svg.find(">f16 ") == std::string::npos);
  CHECK(svg.find("\"f16\"") == std::string::npos);
  CHECK(svg.find("L4") == std::string::npos);
  CHECK(svg.find("L1 150 GB/s") == std::string::npos);  // the copy roof loses to load
  // Integer roofs are dashed; the legend says their unit.
  CHECK(has_text(svg, "i8 512-bit (GOP/s)"));
  CHECK(svg.find("stroke=\"#6B6B6B\" stroke-width=\"1.5\" fill=\"none\" stroke-dasharray=\"6 4\"") != std::string::npos);
}

TEST_CASE("Roofline marks each ridge on the highest roof with its intensity", "[plots]") {
  const std::string svg = roofline();
  for (const double gbps : {222.0, 118.0, 99.0, 31.0}) {
    INFO(gbps);
    CHECK(has_text(svg, fmt_si(236 / gbps)));
  }
  // Four ridge circles, plus the legend's.
  CHECK(count(svg, "r=\"4.0\" stroke=\"#222222\" stroke-width=\"1.5\" fill=\"#ffffff\"") == 5);
}

TEST_CASE("Roofline draws the kernels run with its thread count", "[plots]") {
  const std::string svg = roofline();
  CHECK(has_text(svg, "stream triad"));
  CHECK(has_text(svg, "dgemm 512"));
  CHECK(svg.find(">stencil &lt;7pt&gt; &amp; &quot;halo&quot;</text>") != std::string::npos);
  CHECK(svg.find("not run with 1 thread") == std::string::npos);
  CHECK(svg.find("broken") == std::string::npos);
  // Three kernel dots; the legend draws a smaller one.
  CHECK(count(svg, "r=\"4.0\" stroke=\"#ffffff\" stroke-width=\"1.5\" fill=\"#222222\"") == 3);
}

// A GEMM of multiply-adds scored against the FMA alone (118), below its dtype's FMA:add roof (177).
KernelScore own_roof_kernel(const std::string& name, double roof, double ai, double gflops) {
  KernelScore k = kernel(name, ai, gflops);
  k.dtype = "f32";
  k.bound_by = "compute f32 512 vfmadd231ps zmm, zmm, zmm";
  k.attainable_gflops = roof;
  k.efficiency = gflops / roof;
  return k;
}

TEST_CASE("Roofline draws a kernel's own compute roof when none of its roofs is it", "[plots]") {
  std::vector<KernelScore> ks = kernels();
  ks.push_back(own_roof_kernel("sgemm", 118, 40, 100));
  ks.push_back(own_roof_kernel("sgemm again", 118.2, 128, 90));  // the same roof: drawn once
  KernelScore on_table = own_roof_kernel("on the table's roof", 177, 2, 30);
  on_table.bound_by = "compute f32 512";
  ks.push_back(on_table);
  const std::string svg = roofline_svg(ceilings(), ks, 1, "own roof");
  check_document(svg);
  CHECK(count(svg, ">vfmadd231ps 118 GFLOP/s</text>") == 1);
  CHECK(has_text(svg, "a kernel's own roof"));
  // One dotted roof in the f32 colour (the legend's swatch is ink).
  CHECK(count(svg, "stroke=\"#882255\" stroke-width=\"1.5\" fill=\"none\" stroke-dasharray=\"2 3\"") == 1);
  const json doc = metadata(svg, "peakprobe-roofline");
  REQUIRE(doc["kernel_roofs"].size() == 1);
  CHECK(doc["kernel_roofs"][0]["gops"] == 118);
  CHECK(doc["kernel_roofs"][0]["name"] == "f32 512 vfmadd231ps zmm, zmm, zmm");
  CHECK(doc["kernel_roofs"][0]["kernel"] == "sgemm");
  CHECK(doc["kernel_roofs"][0]["label"] == "vfmadd231ps 118 GFLOP/s");
  // 4 compute roofs, the kernel's, 4 memory roofs, 4 ridges, 6 kernels.
  check_labels_clear(svg, 19);
}

TEST_CASE("Roofline gives an integer kernel's own roof in GOP/s", "[plots]") {
  KernelScore k = own_roof_kernel("igemm", 300, 64, 280);
  k.dtype = "i8";
  k.bound_by = "compute i8 256 {vex} vpdpbusd ymm, ymm, ymm";  // an encoding prefix is not the name
  const std::string svg = roofline_svg(ceilings(), {k}, 1, "integer");
  CHECK(count(svg, ">vpdpbusd 300 GOP/s</text>") == 1);
  CHECK(metadata(svg, "peakprobe-roofline")["kernel_roofs"][0]["dtype"] == "i8");
}

TEST_CASE("Roofline draws a kernel's own roof that lies on another dtype's roof", "[plots]") {
  // An f32 kernel's own roof at the i8 roof's 473: not the f32 roof, so it is drawn.
  const std::string svg = roofline_svg(ceilings(), {own_roof_kernel("sgemm", 473, 64, 400)}, 1, "on another dtype's roof");
  CHECK(count(svg, ">vfmadd231ps 473 GFLOP/s</text>") == 1);
}

TEST_CASE("Roofline draws no own roof for kernels on the table's roofs or memory-bound", "[plots]") {
  const std::string svg = roofline();
  CHECK_FALSE(has_text(svg, "a kernel's own roof"));
  CHECK(metadata(svg, "peakprobe-roofline")["kernel_roofs"].empty());
}

TEST_CASE("Roofline labels stay inside the plot and clear of each other", "[plots]") {
  // 4 compute roofs, 4 memory roofs, 4 ridges, 3 kernels.
  check_labels_clear(roofline(), 15);
}

TEST_CASE("Roofline embeds what it draws as JSON", "[plots]") {
  const json doc = metadata(roofline(), "peakprobe-roofline");
  CHECK(doc["plot"] == "roofline");
  CHECK(doc["schema"] == kCeilingSchema);
  CHECK(doc["threads"] == 1);
  CHECK(doc["title"] == "Roofline: Ryzen <test> & co, 1 thread");
  REQUIRE(doc["compute"].size() == 4);
  CHECK(doc["compute"][0]["dtype"] == "bf16");
  CHECK(doc["compute"][0]["gops"] == 236);
  CHECK(doc["compute"][1]["gops"] == 177);
  CHECK(doc["compute"][1]["source"] == "vfmadd231ps zmm + vaddps zmm (2:1)");
  CHECK(doc["compute"][3]["dtype"] == "i8");
  CHECK(doc["compute"][3]["unit"] == "GOP/s");
  REQUIRE(doc["memory"].size() == 4);
  CHECK(doc["memory"][0]["level"] == "L1");
  CHECK(doc["memory"][0]["kernel"] == "load");
  CHECK(doc["memory"][0]["gbps"] == 222);
  CHECK(doc["memory"][2]["kernel"] == "triad");
  CHECK(doc["memory"][3]["level"] == "DRAM");
  REQUIRE(doc["ridges"].size() == 4);
  CHECK(doc["ridges"][3]["level"] == "DRAM");
  CHECK(doc["ridges"][3]["dtype"] == "bf16");
  CHECK(doc["ridges"][3]["ai"].get<double>() == Approx(236.0 / 31));
  REQUIRE(doc["kernels"].size() == 3);
  CHECK(doc["kernels"][2]["name"] == "stencil <7pt> & \"halo\"");
  CHECK(doc["x"]["min"].get<double>() <= 1.0 / 64);
  CHECK(doc["x"]["max"].get<double>() >= 256);
  CHECK(doc["y"]["max"].get<double>() > 473);
}

TEST_CASE("Roofline for another thread count shows only its own ceilings", "[plots]") {
  const std::string svg = roofline_svg(ceilings(), kernels(), 4, "4 threads");
  check_document(svg);
  CHECK(has_text(svg, "f32 512-bit 700 GFLOP/s"));
  CHECK(has_text(svg, "L1 888 GB/s"));
  CHECK(has_text(svg, "not run with 1 thread"));
  CHECK(svg.find("bf16") == std::string::npos);
  CHECK(metadata(svg, "peakprobe-roofline")["ridges"][0]["ai"].get<double>() == Approx(700.0 / 888));
}

TEST_CASE("Roofline without ceilings is still a valid document", "[plots]") {
  const std::string svg = roofline_svg(CeilingTable{}, {}, 1, "nothing");
  check_document(svg);
  CHECK(has_text(svg, "no ceilings measured with 1 thread"));
  CHECK(metadata(svg, "peakprobe-roofline")["compute"].empty());

  CeilingTable memory_only;
  memory_only.memory = {{"DRAM", "load", 1, 31, 8, GiB}};
  const std::string diagonal = roofline_svg(memory_only, {}, 1, "memory only");
  check_document(diagonal);
  CHECK(has_text(diagonal, "DRAM 31 GB/s"));
  CHECK(metadata(diagonal, "peakprobe-roofline")["ridges"].empty());
}

// ---- bandwidth ----

TEST_CASE("Bandwidth plot matches the golden file", "[plots]") {
  peakprobe::test::check_golden("bandwidth.svg", bandwidth());
}

TEST_CASE("Bandwidth plot is a well-formed, self-contained SVG", "[plots]") {
  const std::string svg = bandwidth();
  check_document(svg);
  CHECK(has_text(svg, "working set"));
  CHECK(has_text(svg, "bandwidth (GB/s)"));
  for (const char* tick : {"4 KiB", "64 KiB", "1 MiB", "16 MiB", "1 GiB"}) {
    INFO(tick);
    CHECK(has_text(svg, tick));
  }
}

TEST_CASE("Bandwidth plot draws one line per kernel, isa and thread count", "[plots]") {
  const std::string svg = bandwidth();
  // 19 sizes each; the failed rows (3 GiB) have no rate and stay out.
  CHECK(polyline_points(svg) == std::vector<std::size_t>{19, 19, 19});
  CHECK(count(svg, "r=\"2.5\"") == 3 * 19 + 3);  // one dot per point, one per legend entry
  for (const char* name : {"load avx512, 1 thread", "copy avx512, 1 thread", "triad avx2, 1 thread"}) {
    INFO(name);
    CHECK(has_text(svg, name));
  }
  const json doc = metadata(svg, "peakprobe-bandwidth");
  REQUIRE(doc["series"].size() == 3);
  CHECK(doc["series"][1]["kernel"] == "copy");
  CHECK(doc["series"][1]["points"].size() == 19);
  CHECK(doc["series"][1]["points"][0][0] == 4 * KiB);
  CHECK(doc["series"][1]["points"][0][1].get<double>() == Approx(222 * 0.7));
  CHECK(doc["y"]["log"] == false);
  CHECK(doc["y"]["unit"] == "GB/s");
}

TEST_CASE("Bandwidth plot marks detected edges and reported sizes", "[plots]") {
  const std::string svg = bandwidth();
  for (const char* label : {"L1 edge 40 KiB", "L2 edge 800 KiB", "L3 edge 24 MiB", "L1 32 KiB (reported)",
                            "L2 1 MiB (reported)", "L3 32 MiB (reported)"}) {
    INFO(label);
    CHECK(count(svg, ">" + std::string(label) + "</text>") == 1);
  }
  CHECK(svg.find("DRAM edge") == std::string::npos);
  CHECK(count(svg, "stroke-dasharray=\"6 4\"") == 3 + 1);  // edges and the legend's
  CHECK(count(svg, "stroke-dasharray=\"2 3\"") == 3 + 1);  // one per data cache level, not the L1 instruction cache
  CHECK(metadata(svg, "peakprobe-bandwidth")["marks"].size() == 6);
  check_labels_clear(svg, 6);
}

TEST_CASE("Bandwidth plot turns logarithmic when rates span more than 20x", "[plots]") {
  auto rows = bandwidth_rows();
  for (const uint64_t size : sweep()) {
    BandwidthResult r;
    r.kernel = "load";
    r.isa = "avx512";
    r.threads = 16;
    r.size_bytes = size;
    r.gbps = plateau(size) * 16;
    rows.push_back(r);
  }
  const std::string svg = bandwidth_svg(rows, levels(), caches(), "16 threads");
  check_document(svg);
  CHECK(has_text(svg, "load avx512, 16 threads"));
  CHECK(polyline_points(svg).size() == 4);
  CHECK(metadata(svg, "peakprobe-bandwidth")["y"]["log"] == true);
}

TEST_CASE("Bandwidth plot without rows is still a valid document", "[plots]") {
  const std::string svg = bandwidth_svg({}, {}, {}, "empty <plot>");
  check_document(svg);
  CHECK(has_text(svg, "no bandwidth measured"));
  CHECK(polyline_points(svg).empty());
}

// ---- latency ----

TEST_CASE("Latency plot matches the golden file", "[plots]") { peakprobe::test::check_golden("latency.svg", latency()); }

TEST_CASE("Latency plot draws one line per mode, pages and chains", "[plots]") {
  const std::string svg = latency();
  check_document(svg);
  CHECK(polyline_points(svg) == std::vector<std::size_t>{19, 19, 19, 19});
  for (const char* name : {"random, 4k pages, 1 chain", "random, 2m pages, 1 chain", "random, 4k pages, 4 chains",
                           "random, 2m pages, 4 chains", "L1 32 KiB (reported)", "L3 32 MiB (reported)"}) {
    INFO(name);
    CHECK(has_text(svg, name));
  }
  CHECK(has_text(svg, "latency (ns)"));
  const json doc = metadata(svg, "peakprobe-latency");
  CHECK(doc["y"]["log"] == true);
  CHECK(doc["y"]["unit"] == "ns");
  REQUIRE(doc["series"].size() == 4);
  CHECK(doc["series"][3]["chains"] == 4);
  CHECK(doc["series"][3]["pages"] == "2m");
  CHECK(doc["series"][0]["points"].back()[1].get<double>() == Approx(95));
  check_labels_clear(svg, 3);
}

TEST_CASE("Plots escape every name they draw", "[plots]") {
  std::vector<LatencyResult> rows = latency_rows();
  rows[0].mode = "chase <&> \"q\"";
  const std::string svg = latency_svg(rows, caches(), "A & B <test>");
  check_document(svg);
  CHECK(svg.find("<&>") == std::string::npos);
  CHECK(svg.find("A & B") == std::string::npos);
  CHECK(svg.find(">chase &lt;&amp;&gt; &quot;q&quot;, 4k pages, 1 chain</text>") != std::string::npos);
  CHECK(metadata(svg, "peakprobe-latency")["series"][0]["mode"] == "chase <&> \"q\"");
}
