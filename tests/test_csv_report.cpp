// Tests for src/report/csv_report.cpp: fixed header, RFC 4180 quoting, fixed decimals, empty fields.
#include <catch2/catch.hpp>

#include <sstream>
#include <string>
#include <vector>

#include "report/csv_report.hpp"
#include "report_fixture.hpp"

namespace {

std::string fixture_csv() {
  std::ostringstream out;
  peakprobe::write_csv(out, peakprobe::test::report_fixture().results);
  return out.str();
}

// Minimal RFC 4180 reader for one record without embedded newlines.
std::vector<std::string> split_record(const std::string& line) {
  std::vector<std::string> fields(1);
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted && c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
      fields.back() += '"';
      ++i;
    } else if (c == '"') {
      quoted = !quoted;
    } else if (c == ',' && !quoted) {
      fields.emplace_back();
    } else {
      fields.back() += c;
    }
  }
  return fields;
}

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

}  // namespace

TEST_CASE("CSV report matches the golden file", "[report]") {
  peakprobe::test::check_golden("report.csv", fixture_csv());
}

TEST_CASE("CSV header is the declared column list", "[report]") {
  const auto rows = lines(fixture_csv());
  REQUIRE(rows.size() == 6);
  const auto header = split_record(rows[0]);
  REQUIRE(header.size() == peakprobe::kCsvColumns.size());
  for (std::size_t i = 0; i < header.size(); ++i) CHECK(header[i] == peakprobe::kCsvColumns[i]);
  for (std::size_t i = 1; i < rows.size(); ++i) CHECK(split_record(rows[i]).size() == header.size());
}

TEST_CASE("CSV cells use fixed decimals and empty fields for missing values", "[report]") {
  const auto rows = lines(fixture_csv());
  auto cell = [&](std::size_t row, std::string_view column) {
    for (std::size_t i = 0; i < peakprobe::kCsvColumns.size(); ++i)
      if (peakprobe::kCsvColumns[i] == column) return split_record(rows[row])[i];
    FAIL("no column " << column);
    return std::string();
  };
  CHECK(cell(1, "latency_cycles") == "4.000");
  CHECK(cell(1, "gflops") == "233.60");
  CHECK(cell(1, "gops") == "");
  CHECK(cell(1, "clock_ghz") == "3.650");
  CHECK(cell(1, "ops_per_instruction") == "32");
  CHECK(cell(2, "recip_throughput_cycles") == "0.333");
  CHECK(cell(2, "total_gops") == "175.20");
  CHECK(cell(3, "latency_cycles") == "");
  CHECK(cell(3, "accumulators") == "");
  CHECK(cell(3, "tput_min") == "");
  CHECK(cell(3, "reason") == "needs avx512_fp16");
  CHECK(cell(4, "lat_spread") == "");  // NaN in the record
  CHECK(cell(4, "tput_spread") == "0.2485");
  CHECK(cell(5, "reason") == "probe crashed, SIGSEGV in \"vpgatherdd\" | operand 2");
}

TEST_CASE("CSV quoting follows RFC 4180", "[report]") {
  using peakprobe::csv_field;
  CHECK(csv_field("plain text") == "plain text");
  CHECK(csv_field("") == "");
  CHECK(csv_field("a,b") == "\"a,b\"");
  CHECK(csv_field("say \"hi\"") == "\"say \"\"hi\"\"\"");
  CHECK(csv_field("two\nlines") == "\"two\nlines\"");
  CHECK(csv_field("cr\r") == "\"cr\r\"");
  CHECK(csv_field("a|b") == "a|b");
}

TEST_CASE("CSV of a table with pipe groups: a summary and one column per basis member", "[report]") {
  auto results = peakprobe::test::report_fixture().results;
  peakprobe::PipeVerdict shared, none;
  shared.basis = "add r64, r64";
  shared.contention = peakprobe::Contention::shared;
  shared.same_port = 0.987;
  none.basis = "vmulps ymm, ymm, ymm";
  none.contention = peakprobe::Contention::none;
  none.same_port = 0.02;
  results[0].pipes = {shared, none};
  std::ostringstream out;
  peakprobe::write_csv(out, results);
  const auto rows = lines(out.str());
  const auto header = split_record(rows[0]);
  REQUIRE(header.size() == peakprobe::kCsvColumns.size() + 3);
  CHECK(header[header.size() - 3] == "pipes");
  CHECK(header[header.size() - 2] == "pipe:add r64, r64");
  CHECK(header.back() == "pipe:vmulps ymm, ymm, ymm");
  const auto first = split_record(rows[1]);
  REQUIRE(first.size() == header.size());
  CHECK(first[first.size() - 3] == "shares add r64, r64");
  CHECK(first[first.size() - 2] == "0.99");
  CHECK(first.back() == "0.02");
  // Rows without verdicts have the columns, empty.
  for (std::size_t i = 2; i < rows.size(); ++i) {
    const auto r = split_record(rows[i]);
    REQUIRE(r.size() == header.size());
    CHECK(r.back().empty());
  }
}
