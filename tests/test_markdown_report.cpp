// Tests for src/report/markdown_report.cpp: heading, GitHub table shape, escaping, reasons list.
#include <catch2/catch.hpp>

#include <sstream>
#include <string>

#include "report/markdown_report.hpp"
#include "report_fixture.hpp"

namespace {

std::string fixture_markdown(const peakprobe::RunDocument& doc = peakprobe::test::report_fixture()) {
  std::ostringstream out;
  peakprobe::write_markdown(out, doc);
  return out.str();
}

// Cell separators as GitHub sees them: '|' not preceded by a backslash.
int unescaped_pipes(const std::string& line) {
  int n = 0;
  for (std::size_t i = 0; i < line.size(); ++i)
    if (line[i] == '|' && (i == 0 || line[i - 1] != '\\')) ++n;
  return n;
}

}  // namespace

TEST_CASE("Markdown report matches the golden file", "[report]") {
  peakprobe::test::check_golden("report.md", fixture_markdown());
}

TEST_CASE("Markdown heading names the CPU, clock and clock source", "[report]") {
  const std::string md = fixture_markdown();
  const std::string first = md.substr(0, md.find('\n'));
  CHECK(first.rfind("## ", 0) == 0);
  CHECK(first.find("Intel(R) Xeon(R) Platinum 8480+") != std::string::npos);
  CHECK(first.find("3.65 GHz") != std::string::npos);
  CHECK(first.find("tsc + add-chain calibration") != std::string::npos);
}

TEST_CASE("Markdown table rows all have seven cells", "[report]") {
  std::istringstream in(fixture_markdown());
  int table_lines = 0;
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] != '|') continue;
    ++table_lines;
    INFO(line);
    CHECK(unescaped_pipes(line) == 8);
  }
  CHECK(table_lines == 2 + 5);
}

TEST_CASE("Markdown lists the reason of every row that is not ok", "[report]") {
  const std::string md = fixture_markdown();
  CHECK(md.find("needs avx512_fp16") != std::string::npos);
  CHECK(md.find("spread 24.9% over 7 runs") != std::string::npos);
  CHECK(md.find("probe crashed, SIGSEGV in \"vpgatherdd\" \\| operand 2") != std::string::npos);
}

TEST_CASE("Markdown names a doubted threaded run apart from its row's one-core figures", "[report]") {
  peakprobe::RunDocument doc = peakprobe::test::report_fixture();
  doc.results = {peakprobe::test::int_ok_row()};
  doc.results[0].threads_status = peakprobe::Status::mistrusted;
  doc.results[0].threads_reason = "the 2-thread run fell 26.0% short";
  doc.results[0].total_gops.reset();
  const std::string md = fixture_markdown(doc);
  CHECK(md.find("(2 threads: mistrusted)") != std::string::npos);
  CHECK(md.find("`vpaddd ymm, ymm, ymm` on 2 threads (mistrusted): the 2-thread run fell 26.0% short") !=
        std::string::npos);
  CHECK(md.find("`vpaddd ymm, ymm, ymm` (") == std::string::npos);  // the row itself is ok
}

TEST_CASE("Markdown has no reasons section when every row is ok", "[report]") {
  peakprobe::RunDocument doc = peakprobe::test::report_fixture();
  doc.results = {peakprobe::test::fp_ok_row()};
  CHECK(fixture_markdown(doc).find("Not ok") == std::string::npos);
}
