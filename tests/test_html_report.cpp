// Tests for src/report/html_report.cpp: one self-contained, well-formed page with the host, the
// ceilings, the plots inlined, and every table of the run, all text escaped.
#include <catch2/catch.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "report/html_report.hpp"
#include "roofline/ceilings.hpp"
#include "report/svg_util.hpp"
#include "gpu_fixture.hpp"
#include "report_fixture.hpp"

namespace peakprobe::test {
std::string xml_problem(const std::string& s);  // defined in test_svg_util.cpp
}

namespace {

using namespace peakprobe;

constexpr uint64_t KiB = 1024, MiB = 1024 * KiB;

CeilingTable ceilings() {
  CeilingTable t;
  t.compute = {{"f64", "512", 1, 59, false, 16, 3.7, "vfmadd231pd zmm, zmm, zmm"},
               {"f32", "512", 1, 177, false, 48, 3.7, "vfmadd231ps zmm + vaddps zmm <2:1>"},
               {"i8", "512", 1, 473, true, 128, 3.7, "vpdpbusd zmm, zmm, zmm"}};
  t.memory = {{"L1", "load", 1, 222, 60, 16 * KiB}, {"DRAM", "load", 1, 31, 8, 1024 * MiB}};
  t.ridges = {{"f32", "512", "L1", "load", 1, 177.0 / 222}, {"f32", "512", "DRAM", "load", 1, 177.0 / 31}};
  return t;
}

BandwidthResult bandwidth_row(uint64_t size, double gbps) {
  BandwidthResult r;
  r.kernel = "load";
  r.isa = "avx512";
  r.size_bytes = size;
  r.gbps = gbps;
  r.bytes_per_cycle = gbps / 3.7;
  r.gbps_stats = {gbps * 0.99, gbps, gbps * 1.01, 0.01, 5};
  return r;
}

LatencyResult latency_row(uint64_t size, double ns, const std::string& granted) {
  LatencyResult r;
  r.mode = "random";
  r.pages = "2m";
  r.pages_granted = granted;
  r.size_bytes = size;
  r.latency_ns = ns;
  r.latency_cycles = ns * 3.7;
  return r;
}

RunDocument memory_document() {
  RunDocument d = test::report_fixture();
  d.bandwidth = {bandwidth_row(16 * KiB, 222), bandwidth_row(256 * MiB, 31.2)};
  d.bandwidth[1].status = Status::mistrusted;
  d.bandwidth[1].reason = "spread 7% > limit 5%";
  d.latency = {latency_row(16 * KiB, 0.81, "2m"), latency_row(256 * MiB, 78.4, "mixed")};
  d.levels = {{"L1", 40 * KiB, 222, 48 * KiB, "edge below the reported size"},
              {"DRAM", std::nullopt, 31.2, std::nullopt, ""}};
  return d;
}

PairResult pair(const std::string& a, const std::string& b, double same_port, PairClass c) {
  PairResult p;
  p.mix.parts = {{a, 1, 16, "f32", 0.5}, {b, 1, 1, "-", 0.25}};
  p.mix.cycles_per_group = 0.52;
  p.same_port = same_port;
  p.classification = c;
  return p;
}

RunDocument pairs_document() {
  RunDocument d = test::report_fixture();
  d.results.clear();
  PairMatrix m;
  m.instructions = {"vaddps zmm, zmm, zmm", "vmulps zmm, zmm, zmm", "cmp <r64>, r64"};
  m.groups = {{"vaddps zmm, zmm, zmm", "vmulps zmm, zmm, zmm"}, {"cmp <r64>, r64"}};
  m.pairs = {pair("vaddps zmm, zmm, zmm", "cmp <r64>, r64", 0.03, PairClass::co_issue),
             pair("vaddps zmm, zmm, zmm", "vmulps zmm, zmm, zmm", 0.97, PairClass::shared)};
  d.matrix = m;
  return d;
}

const std::string kSvg =
    "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"10\" "
    "height=\"10\"><text x=\"1\" y=\"9\">plot &amp; text</text></svg>\n";

std::string page(const RunDocument& d) {
  return html_report(d, ceilings(), {{"Roofline <1 thread>", kSvg}, {"Bandwidth", kSvg}});
}

// An HTML page the XML check can read: everything after the doctype.
std::string body_of(const std::string& html) {
  const std::string doctype = "<!DOCTYPE html>\n";
  REQUIRE(html.rfind(doctype, 0) == 0);
  return html.substr(doctype.size());
}

int count(const std::string& haystack, const std::string& needle) {
  int n = 0;
  for (std::size_t at = haystack.find(needle); at != std::string::npos; at = haystack.find(needle, at + 1)) ++n;
  return n;
}

bool has_cell(const std::string& html, const std::string& text) {
  return html.find(">" + xml_escape(text) + "</td>") != std::string::npos ||
         html.find("><code>" + xml_escape(text) + "</code></td>") != std::string::npos;
}

}  // namespace

TEST_CASE("HTML report is one well-formed, self-contained page", "[plots]") {
  const std::string html = page(memory_document());
  const std::string problem = peakprobe::test::xml_problem(body_of(html));
  INFO(problem);
  CHECK(problem.empty());
  CHECK(html.find("<meta charset=\"utf-8\"/>") != std::string::npos);
  CHECK(html.find("<style>") != std::string::npos);
  for (const char* banned : {"<script", "<link", "<img", "<iframe", "@import", "url(", "src=", "href="}) {
    INFO(banned);
    CHECK(html.find(banned) == std::string::npos);
  }
  // The one address on the page is the SVG namespace, which names and never loads.
  CHECK(count(html, "http") == count(html, "http://www.w3.org/2000/svg"));
  CHECK(html.substr(html.size() - 8) == "</html>\n");
}

TEST_CASE("HTML report describes the host", "[plots]") {
  const std::string html = page(memory_document());
  CHECK(html.find("<title>peakprobe: Intel(R) Xeon(R) Platinum 8480+</title>") != std::string::npos);
  for (const char* text : {"Intel(R) Xeon(R) Platinum 8480+", "Intel", "family 6, model 143 (0x8f), stepping 8",
                           "4 physical cores, 8 logical CPUs, 1 package, 2-way SMT",
                           "48 KiB, 12-way, 64 B lines, shared by 2 logical CPUs, 4 instances",
                           "105 MiB, 15-way, 64 B lines, shared by 8 logical CPUs, 1 instance", "2.00 GHz, invariant",
                           "3.65 GHz (tsc + add-chain calibration)", "sse2, avx, avx2, fma, avx512_f, avx512_vl",
                           "amx_tile"}) {
    INFO(text);
    CHECK(has_cell(html, text));
  }
  CHECK(html.find("<th>L1 data</th>") != std::string::npos);
  CHECK(html.find("<th>L3 unified</th>") != std::string::npos);
}

TEST_CASE("HTML report lists the ceilings and ridge points", "[plots]") {
  const std::string html = page(memory_document());
  CHECK(has_cell(html, "vfmadd231ps zmm + vaddps zmm <2:1>"));
  CHECK(html.find("vaddps zmm &lt;2:1&gt;") != std::string::npos);
  CHECK(html.find("<td class=\"num\">177.0</td><td>GFLOP/s</td>") != std::string::npos);
  CHECK(html.find("<td class=\"num\">473.0</td><td>GOP/s</td>") != std::string::npos);
  CHECK(html.find("<td>DRAM</td><td>load</td><td class=\"num\">1</td><td class=\"num\">31.0</td>") != std::string::npos);
  CHECK(has_cell(html, "1 GiB"));
  CHECK(html.find("<td class=\"num\">5.71</td></tr>") != std::string::npos);  // 177 / 31
  CHECK(html.find("<td class=\"num\">0.797</td></tr>") != std::string::npos);
}

TEST_CASE("HTML report inlines the plots under their titles", "[plots]") {
  const std::string html = page(memory_document());
  CHECK(count(html, "<svg xmlns=\"http://www.w3.org/2000/svg\"") == 2);
  CHECK(html.find("<?xml") == std::string::npos);
  CHECK(html.find("<figcaption>Roofline &lt;1 thread&gt;</figcaption>") != std::string::npos);
  CHECK(count(html, "plot &amp; text") == 2);
  CHECK(html_report(memory_document(), ceilings(), {}).find("id=\"plots\"") == std::string::npos);
}

TEST_CASE("HTML report says why a row's run on every core gave no total", "[plots]") {
  RunDocument d = memory_document();
  for (auto& r : d.results)
    if (r.threads > 1) {
      r.threads_status = Status::mistrusted;
      r.threads_reason = "cores disagree";
      r.total_gops.reset();
    }
  const std::string html = page(d);
  CHECK(html.find("<td class=\"num\">87.60 GOP/s (2 threads: mistrusted)</td>") != std::string::npos);
  CHECK(html.find("<td class=\"mistrusted\">ok; 2 threads mistrusted: cores disagree</td>") != std::string::npos);
}

TEST_CASE("HTML report has every instruction and says why rows are not ok", "[plots]") {
  const RunDocument d = memory_document();
  const std::string html = page(d);
  for (const auto& r : d.results) {
    INFO(r.instruction);
    CHECK(has_cell(html, r.instruction));
  }
  CHECK(html.find("<td class=\"num\">233.60 GFLOP/s</td>") != std::string::npos);
  CHECK(html.find("<td class=\"num\">87.60 GOP/s (2 threads: 175.20)</td>") != std::string::npos);
  CHECK(html.find("<td class=\"skipped\">skipped: needs avx512_fp16</td>") != std::string::npos);
  CHECK(html.find("<td class=\"mistrusted\">mistrusted: spread 24.9% over 7 runs (limit 5%)</td>") != std::string::npos);
  CHECK(html.find("<td class=\"error\">error: probe crashed, SIGSEGV in &quot;vpgatherdd&quot; | operand 2</td>") !=
        std::string::npos);
  CHECK(count(html, "<td>ok</td>") == 2 + 1 + 2);  // instructions, bandwidth, latency
  // No scan of the cores, no row for it; with one, the host section gives each core's share.
  CHECK(html.find("wall time the cores gave a thread") == std::string::npos);
  RunDocument scanned = d;
  scanned.availability = {{1, 0.951, 25.0, 31, 40.2, 80.0, 1.0}};
  CHECK(page(scanned).find("<td>CPU 1 95.1% of 25 ms (31 interruptions, median 40.2 us, longest 80.0 us)</td>") !=
        std::string::npos);
  // Non-finite numbers print as "-", never "nan" or "inf".
  CHECK(html.find("nan") == std::string::npos);
  CHECK(html.find(">inf") == std::string::npos);
}

TEST_CASE("HTML report has the memory tables", "[plots]") {
  const std::string html = page(memory_document());
  CHECK(html.find("<section id=\"memory\">") != std::string::npos);
  CHECK(html.find("<td>load</td><td>avx512</td><td class=\"num\">16 KiB</td><td class=\"num\">1</td>"
                  "<td class=\"num\">222.0</td><td class=\"num\">60.00</td>") != std::string::npos);
  CHECK(has_cell(html, "mistrusted: spread 7% > limit 5%"));
  CHECK(has_cell(html, "2m (granted mixed)"));
  CHECK(html.find("<td>2m</td>") != std::string::npos);
  CHECK(html.find("<td class=\"num\">78.40</td><td class=\"num\">290.1</td>") != std::string::npos);
  CHECK(has_cell(html, "edge below the reported size"));
  CHECK(html.find("<td class=\"num\">40 KiB</td>") != std::string::npos);
}

TEST_CASE("HTML report shows pairs and pipe groups where present", "[plots]") {
  const std::string without = page(memory_document());
  CHECK(without.find("id=\"pairs\"") == std::string::npos);

  const std::string html = page(pairs_document());
  CHECK(peakprobe::test::xml_problem(body_of(html)).empty());
  CHECK(html.find("id=\"pairs\"") != std::string::npos);
  CHECK(html.find("id=\"instructions\"") == std::string::npos);
  CHECK(html.find("id=\"memory\"") == std::string::npos);
  CHECK(html.find("<td class=\"num\">0.03</td><td>co-issue</td>") != std::string::npos);
  CHECK(html.find("<td class=\"num\">0.97</td><td>shared</td>") != std::string::npos);
  CHECK(html.find("<li><code>vaddps zmm, zmm, zmm</code>; <code>vmulps zmm, zmm, zmm</code></li>") !=
        std::string::npos);
  CHECK(html.find("<li><code>cmp &lt;r64&gt;, r64</code></li>") != std::string::npos);
}

TEST_CASE("HTML report shows a penalty pair as one, left out of the groups", "[plots]") {
  RunDocument d = pairs_document();
  PairResult paid = pair("mul.legacy", "add.wide", 1.0, PairClass::shared);
  paid.mix.cycles_per_group = 340;
  paid.penalty = true;
  d.matrix->pairs.push_back(paid);
  const std::string html = page(d);
  CHECK(peakprobe::test::xml_problem(body_of(html)).empty());
  CHECK(html.find("<td class=\"num\">1.00</td><td>penalty</td>") != std::string::npos);
  CHECK(html.find("<td>shared</td>") != std::string::npos);  // the other pair keeps its class
  CHECK(html.find("Left out of the groups, far slower than their two parts one after the other") != std::string::npos);
  CHECK(html.find("<code>mul.legacy</code> + <code>add.wide</code>") != std::string::npos);
  // Without a penalty pair, no such paragraph.
  CHECK(page(pairs_document()).find("Left out of the groups") == std::string::npos);
}

TEST_CASE("HTML report says which FLOP-mix search sets a ceiling", "[plots]") {
  RunDocument d = pairs_document();
  for (const char* name : {"wide", "narrow"}) {
    FlopMixSearch s;
    s.a = std::string("madd.") + name, s.b = std::string("add.") + name;
    s.best_a = 2, s.best_b = 1;
    s.best_flops_per_cycle = 48;
    d.flop_mixes.push_back(s);
  }
  CeilingTable t = ceilings();
  t.compute.push_back({"f32", "256", 1, 100, false, 27, 3.7, mix_source(d.flop_mixes[1])});
  const std::string html = html_report(d, t, {});
  CHECK(count(html, "Best FLOP mix of ") == 2);
  CHECK(count(html, " It sets the ") == 1);
  CHECK(html.find("Best FLOP mix of madd.narrow and add.narrow: 2:1, 48.00 FLOP/cycle") != std::string::npos);
  CHECK(html.find("ratios tried). It sets the f32 256 ceiling.</p>") != std::string::npos);
}

TEST_CASE("HTML report links the whole table's page, with its counts and pipe basis", "[plots]") {
  RunDocument table = test::report_fixture();
  table.results.resize(3);
  table.results[0].status = Status::ok;
  table.results[1].status = Status::skipped;
  table.results[2].status = Status::mistrusted;
  const RunDocument d = memory_document();
  const std::string without = page(d);
  CHECK(without.find("id=\"table\"") == std::string::npos);

  TablePage link{&table, "table <1>.html"};
  std::string html = html_report(d, ceilings(), {}, &link);
  CHECK(peakprobe::test::xml_problem(body_of(html)).empty());
  CHECK(html.find("id=\"table\"") != std::string::npos);
  // The one link of the page goes to the table's page, escaped; the page loads nothing.
  CHECK(count(html, "href=") == 1);
  CHECK(html.find("<a href=\"table &lt;1&gt;.html\">") != std::string::npos);
  CHECK(html.find("3: 1 ok, 1 mistrusted, 0 error, 1 skipped<") != std::string::npos);
  CHECK(html.find("pipe basis") == std::string::npos);

  // An `ok` form whose run on every core was doubted is counted apart, not hidden among the ok ones.
  table.results[0].threads = 2;
  table.results[0].threads_status = Status::mistrusted;
  html = html_report(d, ceilings(), {}, &link);
  CHECK(html.find("3: 1 ok, 1 mistrusted, 0 error, 1 skipped; 1 multi-core run not ok<") != std::string::npos);
  table.results[0].threads = 1;
  table.results[0].threads_status = Status::ok;

  PipeGroups groups;
  groups.basis = {{"add r64, r64", {"add r64, r64"}, 0.25}, {"vaddps ymm, ymm, ymm", {"vaddps ymm, ymm, ymm"}, 0.5}};
  groups.issue_width = 6.01;
  table.pipe_groups = groups;
  html = html_report(d, ceilings(), {}, &link);
  CHECK(peakprobe::test::xml_problem(body_of(html)).empty());
  CHECK(html.find("2 members: add r64, r64; vaddps ymm, ymm, ymm") != std::string::npos);
  CHECK(html.find("6.01 instructions/cycle") != std::string::npos);
  CHECK(html.find("pipe groups as columns") != std::string::npos);
  CHECK(html_report(d, ceilings(), {}, nullptr) == html_report(d, ceilings(), {}));
}

TEST_CASE("HTML report escapes text from the run", "[plots]") {
  RunDocument d = memory_document();
  d.host.brand = "CPU <script>alert(\"x\")</script> & co";
  d.command = "peakprobe run --label '<b>'";
  const std::string html = page(d);
  CHECK(peakprobe::test::xml_problem(body_of(html)).empty());
  CHECK(html.find("<script") == std::string::npos);
  CHECK(html.find("<b>") == std::string::npos);
  CHECK(html.find("CPU &lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; co") != std::string::npos);
  CHECK(html.find("--label &apos;&lt;b&gt;&apos;") != std::string::npos);
}

TEST_CASE("HTML report of an empty run still has its host section", "[plots]") {
  const std::string html = html_report(RunDocument{}, CeilingTable{}, {});
  CHECK(peakprobe::test::xml_problem(body_of(html)).empty());
  CHECK(html.find("<section id=\"host\">") != std::string::npos);
  CHECK(html.find("unknown CPU") != std::string::npos);
  for (const char* section : {"ceilings", "gpus", "plots", "instructions", "memory", "pairs"}) {
    INFO(section);
    CHECK(html.find("id=\"" + std::string(section) + "\"") == std::string::npos);
  }
}

TEST_CASE("HTML report has a section per OpenCL GPU with its roofline tables", "[plots]") {
  RunDocument d = test::report_fixture();
  d.gpus.push_back(test::sample_gpu_report());
  GpuReport failed;
  failed.device.index = 3;
  failed.device.name = "Broken <GPU>";
  failed.status = Status::error;
  failed.reason = "the driver's worker process was killed by SIGSEGV";
  d.gpus.push_back(failed);
  const std::string html = html_report(d, ceilings(), {});
  CHECK(peakprobe::test::xml_problem(body_of(html)).empty());
  const size_t at = html.find("<section id=\"gpus\">");
  REQUIRE(at != std::string::npos);
  const std::string gpus = html.substr(at, html.find("</section>", at) - at);
  CHECK(gpus.find("Device 1: Example GPU, rev &quot;2&quot;") != std::string::npos);
  CHECK(gpus.find("1000 MHz") != std::string::npos);
  // The device's ceilings, under the device: f32 x4 compute, global memory read as DRAM load.
  CHECK(gpus.find("<h4>Compute ceilings</h4>") != std::string::npos);
  CHECK(gpus.find("1234.5") != std::string::npos);
  CHECK(gpus.find("x4") != std::string::npos);
  CHECK(gpus.find("<h4>Memory ceilings</h4>") != std::string::npos);
  CHECK(gpus.find("512.2") != std::string::npos);
  // A device that failed says why, and has no tables.
  const size_t broken = gpus.find("Device 3: Broken &lt;GPU&gt;");
  REQUIRE(broken != std::string::npos);
  CHECK(gpus.find("error: the driver&apos;s worker process was killed by SIGSEGV", broken) != std::string::npos);
  CHECK(gpus.find("Compute ceilings", broken) == std::string::npos);
  // After the CPU's ceilings, before the plots.
  CHECK(html.find("id=\"ceilings\"") < at);
}

TEST_CASE("html report: scored kernels get their own section with efficiency and share of the dtype's peak", "[report]") {
  RunDocument d;
  CHECK(html_report(d, {}, {}, nullptr).find("Kernels on the roofline") == std::string::npos);
  KernelScore k;
  k.name = "matmul f32 1024x1024x1024, 1 thread";
  k.ai = 171;
  k.achieved_gflops = 211.4;
  k.attainable_gflops = 233.3;
  k.efficiency = 211.4 / 233.3;
  k.bound_by = "compute f32 512 the multiply-add";
  k.peak_gflops = 347.3;
  d.scores = {k};
  const std::string html = html_report(d, {}, {}, nullptr);
  CHECK(html.find("Kernels on the roofline") != std::string::npos);
  CHECK(html.find("matmul f32 1024x1024x1024, 1 thread") != std::string::npos);
  CHECK(html.find("90.6%") != std::string::npos);  // of the roof that binds
  CHECK(html.find("60.9%") != std::string::npos);  // of the dtype's peak
  k.peak_gflops = 0;  // no peak: a dash, never a share
  d.scores = {k};
  CHECK(html_report(d, {}, {}, nullptr).find("60.9%") == std::string::npos);
}
