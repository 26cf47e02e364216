// Tests of src/cli/common.cpp (named test_cli_common, not test_common: the pieces every subcommand
// shares): the outputs checked as a set, formats a command refuses, exit codes from the rows, the
// document's command line, logging levels, and where emit_outputs writes.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "cli/common.hpp"
#include "log_capture.hpp"
#include "scratch_dir.hpp"

using namespace peakprobe;

namespace {

using test::LogCapture;
using Targets = std::vector<cli::OutputTarget>;

// A document of one instruction row, labelled only (nothing resolves it).
RunDocument one_row_document(Status status = Status::ok) {
  RunDocument d;
  d.command = "peakprobe inst";
  d.host.brand = "Test CPU";
  ProbeResult r;
  r.instruction = "op one";
  r.group = "test";
  r.status = status;
  d.results.push_back(r);
  return d;
}

struct Emitted {
  int rc;
  std::string out;
};

Emitted emit(const RunDocument& doc, const cli::OutputOptions& o) {
  std::ostringstream captured;
  auto* saved = std::cout.rdbuf(captured.rdbuf());
  const int rc = cli::emit_outputs(doc, o);
  std::cout.rdbuf(saved);
  return {rc, captured.str()};
}

}  // namespace

TEST_CASE("cli common: check_outputs refuses two documents on stdout and one file named twice, naming the options",
          "[cli_common]") {
  const test::ScratchDir dir;
  {
    const LogCapture log;
    CHECK(cli::check_outputs(Targets{{"--json", "-"}, {"--csv", "/dev/stdout"}}) == cli::kExitUsage);
    CHECK_THAT(log.str(), Catch::Contains("--json - and --csv /dev/stdout both write to standard output"));
  }
  {
    // The same file however it is spelled.
    const LogCapture log;
    CHECK(cli::check_outputs(Targets{{"--json", dir.file("a.json")}, {"--markdown", dir.path.string() + "/./a.json"}}) ==
          cli::kExitUsage);
    CHECK_THAT(log.str(), Catch::Contains("--json and --markdown both name"));
  }
  {
    const LogCapture log;
    CHECK(cli::check_outputs(Targets{{"--csv", "-"}, {"--svg", dir.file("missing/x.svg")}}) == cli::kExitOutput);
    CHECK_THAT(log.str(), Catch::Contains("--svg: ") && Catch::Contains(dir.file("missing")));
  }
  const LogCapture log;
  CHECK(cli::check_outputs(Targets{{"--json", dir.file("a.json")}, {"--csv", "-"}, {"--markdown", dir.file("b.md")}}) ==
        cli::kExitOk);
  CHECK(log.str().empty());
  CHECK_FALSE(std::filesystem::exists(dir.file("a.json")));  // checked, not written
}

TEST_CASE("cli common: output_targets and writes_stdout see every output, --svg included", "[cli_common]") {
  cli::OutputOptions o;
  CHECK(cli::output_targets(o).empty());
  CHECK_FALSE(o.writes_stdout());
  o.svg = "-";
  CHECK(o.writes_stdout());
  o.svg = "plot.svg";
  o.json = "/dev/stdout";
  CHECK(o.writes_stdout());
  o.json = "doc.json";
  o.csv = "rows.csv";
  o.markdown = "rows.md";
  CHECK_FALSE(o.writes_stdout());
  const auto targets = cli::output_targets(o);
  REQUIRE(targets.size() == 4);
  CHECK(targets[0].option == "--json");
  CHECK(targets[0].path == "doc.json");
  CHECK(targets[1].option == "--csv");
  CHECK(targets[2].option == "--markdown");
  CHECK(targets[3].option == "--svg");
  CHECK(targets[3].path == "plot.svg");
}

TEST_CASE("cli common: refuse_outputs names the format refused and those the command writes", "[cli_common]") {
  cli::OutputOptions o;
  o.csv = "rows.csv";
  {
    const LogCapture log;
    CHECK(cli::refuse_outputs(o, "info", true, false, false) == cli::kExitUsage);
    CHECK(log.str() == "error: info writes no CSV (--csv); use --json\n");
  }
  {
    const LogCapture log;
    CHECK(cli::refuse_outputs(o, "zz", false, false, false) == cli::kExitUsage);
    CHECK(log.str() == "error: zz writes no CSV (--csv); it writes no file\n");
  }
  {
    const LogCapture log;
    o.csv.clear();
    o.markdown = "-";
    CHECK(cli::refuse_outputs(o, "zz", true, true, false) == cli::kExitUsage);
    CHECK(log.str() == "error: zz writes no Markdown (--markdown); use --json or --csv\n");
  }
  const LogCapture log;
  CHECK(cli::refuse_outputs(o, "zz", false, false, true) == cli::kExitOk);
  CHECK(log.str().empty());
}

TEST_CASE("cli common: escape_lines escapes every line and keeps the line breaks", "[cli_common]") {
  CHECK(cli::escape_lines("plain\n") == "plain\n");
  CHECK(cli::escape_lines("a\x1b[31m\nb\xff\tc") == "a\\x1B[31m\nb\\xFF\\tc");
  CHECK(cli::escape_lines("\n\n") == "\n\n");
  CHECK(cli::escape_lines("") == "");
}

TEST_CASE("cli common: document_exit_code is 1 for a row in error of any kind, 0 otherwise", "[cli_common]") {
  CHECK(cli::document_exit_code(one_row_document()) == cli::kExitOk);
  CHECK(cli::document_exit_code(one_row_document(Status::skipped)) == cli::kExitOk);
  CHECK(cli::document_exit_code(one_row_document(Status::mistrusted)) == cli::kExitOk);
  CHECK(cli::document_exit_code(one_row_document(Status::error)) == cli::kExitResultErrors);
  RunDocument d;
  SECTION("the multi-core run of a row") {
    d = one_row_document();
    d.results[0].threads_status = Status::error;
  }
  SECTION("bandwidth") {
    d.bandwidth.emplace_back();
    d.bandwidth.back().status = Status::error;
  }
  SECTION("latency") {
    d.latency.emplace_back();
    d.latency.back().status = Status::error;
  }
  SECTION("a mix") {
    d.mixes.emplace_back();
    d.mixes.back().status = Status::error;
  }
  SECTION("a pair") {
    d.pairs.emplace_back();
    d.pairs.back().mix.status = Status::error;
  }
  SECTION("a matmul") {
    d.matmuls.emplace_back();
    d.matmuls.back().status = Status::error;
  }
  CHECK(cli::document_exit_code(d) == cli::kExitResultErrors);
}

TEST_CASE("cli common: new_document records the command as typed, escaped and quoted, with the version and the time",
          "[cli_common]") {
  std::string exe = "/opt/bin/peakprobe-built", sub = "inst", spaced = "a b", odd = "x\xff\x1b";
  char* argv[] = {exe.data(), sub.data(), spaced.data(), odd.data()};
  CpuInfo host;
  host.brand = "Test CPU";
  const RunDocument d = cli::new_document(host, 4, argv);
  CHECK(d.command == "peakprobe inst \"a b\" x\\xFF\\x1B");
  CHECK(d.host.brand == "Test CPU");
  CHECK_FALSE(d.version.empty());
  CHECK(std::regex_match(d.started_utc, std::regex(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)")));
}

TEST_CASE("cli common: emit_outputs prints the console text only when no output takes stdout", "[cli_common]") {
  const test::ScratchDir dir;
  cli::OutputOptions to_stdout;
  to_stdout.json = "-";
  const Emitted piped = emit(one_row_document(), to_stdout);
  CHECK(piped.rc == cli::kExitOk);
  const auto doc = nlohmann::json::parse(piped.out);  // the document alone
  REQUIRE(doc["results"].size() == 1);
  CHECK(doc["results"][0]["instruction"] == "op one");
  cli::OutputOptions to_file;
  to_file.json = dir.file("doc.json");
  const Emitted console = emit(one_row_document(Status::error), to_file);
  CHECK(console.rc == cli::kExitResultErrors);
  CHECK_THAT(console.out, Catch::Contains("op one"));
  CHECK(nlohmann::json::parse(std::ifstream(to_file.json))["results"].size() == 1);
  // A memory document's CSV is the memory table, not the instruction rows'.
  RunDocument memory = one_row_document();
  memory.results.clear();
  memory.bandwidth.emplace_back();
  memory.bandwidth.back().kernel = "load";
  cli::OutputOptions csv;
  csv.csv = "-";
  CHECK_THAT(emit(memory, csv).out, Catch::StartsWith("kind,kernel,isa,size_bytes,"));
}

TEST_CASE("cli common: setup_logging sets the level from --quiet and -v", "[cli_common]") {
  const auto previous = spdlog::default_logger();
  const auto previous_level = spdlog::get_level();
  cli::OutputOptions o;
  cli::setup_logging(o);
  CHECK(spdlog::get_level() == spdlog::level::info);
  o.verbose = 1;
  cli::setup_logging(o);
  CHECK(spdlog::get_level() == spdlog::level::debug);
  o.verbose = 2;
  cli::setup_logging(o);
  CHECK(spdlog::get_level() == spdlog::level::trace);
  o.quiet = true;  // wins over -v
  cli::setup_logging(o);
  CHECK(spdlog::get_level() == spdlog::level::err);
  spdlog::set_default_logger(previous);
  spdlog::set_level(previous_level);
}

TEST_CASE("cli common: PartTimer logs each part at debug level under its prefix", "[cli_common]") {
  const LogCapture log;
  cli::PartTimer laps("roof");
  laps.lap("first part");
  laps.lap("second part");
  CHECK(std::regex_search(log.str(), std::regex(R"(^debug: roof: first part in \d+\.\d s\ndebug: roof: second part in \d+\.\d s\n$)")));
}
