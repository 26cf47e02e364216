// The full report's closing output step (cli::emit_report_outputs): the ceiling table reaches the
// console exactly once, whatever files are asked for, and never when an output goes to stdout.
#include <catch2/catch.hpp>

#include <fstream>
#include <iostream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "report_fixture.hpp"
#include "scratch_dir.hpp"

using namespace peakprobe;

namespace {

RunDocument ceiling_document() {
  RunDocument d = test::report_fixture();
  d.results.clear();
  CeilingTable t;
  t.compute = {{"f32", "512", 1, 177.3, false, 48.0, 3.694, "the widest multiply-add"}};
  t.memory = {{"L1", "load", 1, 224.3, 60.7, 16384}};
  t.ridges = {{"f32", "512", "L1", "load", 1, 177.3 / 224.3}};
  d.ceilings = t;
  return d;
}

struct Emitted {
  int rc;
  std::string out;
};

Emitted emit(const cli::OutputOptions& o, const RunDocument& doc = ceiling_document()) {
  std::ostringstream captured;
  auto* saved = std::cout.rdbuf(captured.rdbuf());
  const int rc = cli::emit_report_outputs(doc, o);
  std::cout.rdbuf(saved);
  return {rc, captured.str()};
}

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

}  // namespace

TEST_CASE("report: with no output file the ceiling table is printed once", "[report]") {
  const Emitted e = emit({});
  CHECK(e.rc == 0);
  CHECK(count(e.out, "compute ceilings") == 1);
}

TEST_CASE("report: with --json or --csv to a file the ceiling table is still printed once", "[report]") {
  test::ScratchDir dir;
  cli::OutputOptions o;
  o.json = dir.file("r.json");
  o.csv = dir.file("r.csv");
  const Emitted e = emit(o);
  CHECK(e.rc == 0);
  CHECK(count(e.out, "compute ceilings") == 1);  // was twice: once by the report, once by emit_outputs
  std::ifstream json(o.json);
  REQUIRE(json.good());
  CHECK(nlohmann::json::parse(json).contains("ceilings"));
  CHECK(count(std::string(std::istreambuf_iterator<char>(std::ifstream(o.csv).rdbuf()), {}), "the widest multiply-add") == 1);
}

TEST_CASE("report: with --json - stdout is the JSON document alone", "[report]") {
  cli::OutputOptions o;
  o.json = "-";
  const Emitted e = emit(o);
  CHECK(e.rc == 0);
  CHECK(count(e.out, "compute ceilings") == 0);
  CHECK(nlohmann::json::parse(e.out).contains("ceilings"));
}

TEST_CASE("report: a memory row in error gives the same exit code with or without output files", "[report]") {
  RunDocument d = ceiling_document();
  BandwidthResult bad;
  bad.kernel = "load";
  bad.status = Status::error;
  bad.reason = "the probe faulted";
  d.bandwidth.push_back(bad);
  test::ScratchDir dir;
  cli::OutputOptions to_file;
  to_file.json = dir.file("r.json");
  const int bare = emit({}, d).rc;
  const int with_json = emit(to_file, d).rc;
  CHECK(bare == cli::kExitResultErrors);  // was 0: only the file path looked past the results
  CHECK(with_json == cli::kExitResultErrors);
  CHECK(emit({}).rc == cli::kExitOk);
}
