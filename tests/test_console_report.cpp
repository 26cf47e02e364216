// Tests for src/report/console_report.cpp: layout, grouping, widths, colors only on request.
#include <catch2/catch.hpp>

#include <sstream>
#include <string>

#include "report/console_report.hpp"
#include "report_fixture.hpp"

namespace {

std::string console(const peakprobe::RunDocument& doc, bool color) {
  std::ostringstream out;
  peakprobe::write_console(out, doc, color);
  return out.str();
}

std::string strip_ansi(const std::string& text) {
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\x1b' && i + 1 < text.size() && text[i + 1] == '[') {
      i = text.find('m', i);
      continue;
    }
    out += text[i];
  }
  return out;
}

std::size_t widest_line(const std::string& text) {
  std::size_t widest = 0;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) widest = std::max(widest, line.size());
  return widest;
}

}  // namespace

TEST_CASE("Console report matches the golden file", "[report]") {
  peakprobe::test::check_golden("report_console.txt", console(peakprobe::test::report_fixture(), false));
}

TEST_CASE("Console without color writes no escape codes", "[report]") {
  CHECK(console(peakprobe::test::report_fixture(), false).find('\x1b') == std::string::npos);
}

TEST_CASE("Console color only paints, it does not move columns", "[report]") {
  const auto doc = peakprobe::test::report_fixture();
  const std::string colored = console(doc, true);
  CHECK(colored.find("\x1b[") != std::string::npos);
  CHECK(strip_ansi(colored) == console(doc, false));
}

TEST_CASE("Console groups rows by group in order of first appearance", "[report]") {
  const std::string text = console(peakprobe::test::report_fixture(), false);
  const auto fma = text.find("[fma]");
  const auto fp16 = text.find("vfmadd231ph");
  const auto simd = text.find("[int-simd]");
  REQUIRE(fma != std::string::npos);
  REQUIRE(simd != std::string::npos);
  CHECK(fma < fp16);
  CHECK(fp16 < simd);  // the skipped f16 row joins its group although it comes later in the run
  CHECK(text.find("[int-scalar]") > simd);
  CHECK(text.find("[gather]") > text.find("[int-scalar]"));
}

TEST_CASE("Console footer sums up clock and statuses", "[report]") {
  const std::string text = console(peakprobe::test::report_fixture(), false);
  CHECK(text.find("clock 3.65 GHz (tsc + add-chain calibration), 2 ok, 1 skipped, 1 mistrusted, 1 error\n") !=
        std::string::npos);
}

TEST_CASE("Console cuts long reasons and instructions to the console width", "[report]") {
  auto doc = peakprobe::test::report_fixture();
  doc.results[2].reason = std::string(300, 'r');
  doc.results[3].reason = std::string(300, 'm');
  doc.results[4].instruction = std::string(200, 'i');
  doc.results[4].reason = "line one\nline two\x1b[31m";
  const std::string text = console(doc, false);
  CHECK(widest_line(text) <= peakprobe::kConsoleWidth);
  CHECK(text.find("rrr...") != std::string::npos);
  CHECK(text.find("mmm...") != std::string::npos);
  CHECK(text.find("line one line two") != std::string::npos);
  CHECK(text.find('\x1b') == std::string::npos);
}

TEST_CASE("Console shows each row's pipe groups and the basis they refer to", "[report]") {
  auto doc = peakprobe::test::report_fixture();
  peakprobe::PipeGroups g;
  g.basis = {{"add r64, r64", {"add r64, r64", "popcnt r64, r64"}, 0.25}, {"vmulps ymm, ymm, ymm", {}, 0.5}};
  g.issue_width = 5.98;
  doc.pipe_groups = g;
  peakprobe::PipeVerdict v;
  v.basis = "vmulps ymm, ymm, ymm";
  v.contention = peakprobe::Contention::shared;
  v.same_port = 1.0;
  doc.results[0].pipes = {v};
  const std::string text = console(doc, false);
  CHECK(text.find("pipes: shares vmulps ymm, ymm, ymm\n") != std::string::npos);
  CHECK(text.find("pipe basis (2 members; issue width seen 5.98/cycle):\n") != std::string::npos);
  CHECK(text.find("  1: add r64, r64 (add r64, r64; popcnt r64, r64)\n") != std::string::npos);
  CHECK(widest_line(text) <= peakprobe::kConsoleWidth);
  CHECK(console(peakprobe::test::report_fixture(), false).find("pipe") == std::string::npos);
}

TEST_CASE("Console says why a threaded run gave no total", "[report]") {
  peakprobe::RunDocument doc = peakprobe::test::report_fixture();
  doc.results = {peakprobe::test::int_ok_row()};
  CHECK(console(doc, false).find("total 175.20 GOP/s on 2 threads") != std::string::npos);
  doc.results[0].threads_status = peakprobe::Status::mistrusted;
  doc.results[0].threads_reason = "cores disagree";
  doc.results[0].total_gops.reset();
  const std::string text = console(doc, false);
  CHECK(text.find("2 threads: mistrusted: cores disagree") != std::string::npos);
  CHECK(text.find("total ") == std::string::npos);
}
