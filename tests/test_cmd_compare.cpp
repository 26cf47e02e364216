// `peakprobe compare` as the executable runs it (src/cli/cmd_compare.cpp): its inputs (files or
// standard input) named in every refusal, what goes to stdout and to stderr, its exit codes. The
// comparison itself, and the command run in-process, are tested in tests/test_compare.cpp.
#include <catch2/catch.hpp>

#include <string>

#include <nlohmann/json.hpp>

#include "cli_run.hpp"
#include "scratch_dir.hpp"

namespace {

using peakprobe::test::check_refused;
using peakprobe::test::quoted;
using peakprobe::test::Run;
using peakprobe::test::run_peakprobe;

// A document of one row on a host named `brand`, its time `cycles`.
std::string document(const std::string& brand, double cycles) {
  return nlohmann::json{{"schema", "peakprobe/1"},
                        {"host", {{"brand", brand}, {"family", 1}, {"model", 1}}},
                        {"results", {{{"instruction", "op one"}, {"status", "ok"}, {"threads", 1},
                                      {"recip_throughput_cycles", cycles}}}}}
      .dump();
}

}  // namespace

TEST_CASE("cli: compare refuses JSON it cannot hold, naming the file", "[main]") {
  const peakprobe::test::ScratchDir dir;
  const std::string good = dir.write("good.json", R"({"schema":"peakprobe/1","results":[]})");
  for (const char* text : {R"({"schema":"peakprobe/1","results":[{"gflops":1e400}]})", "[[[[[[", "\xff\xfe",
                           R"({"schema":"peakprobe/1","results":[{"instruction":"a\ud800"}]})", R"({"schema":2})"}) {
    INFO(text);
    const std::string bad = dir.write("bad.json", text);
    Run r = run_peakprobe("compare " + quoted(good) + " " + quoted(bad));
    CHECK(r.rc == 2);
    CHECK_THAT(r.err, Catch::Contains("bad.json"));
  }
  // Bytes that are not UTF-8 in a path come back escaped, never raw.
  Run odd = run_peakprobe("compare " + quoted(good) + " " + quoted(dir.file("odd\xff\x1b[31m.json")));
  CHECK(odd.rc == 2);
  CHECK_THAT(odd.err, Catch::Contains("odd\\xFF\\x1B[31m.json"));
  CHECK(odd.err.find('\x1b') == std::string::npos);
}

TEST_CASE("compare: standard input is one of the two, named so in its errors", "[main]") {
  const peakprobe::test::ScratchDir dir;
  const std::string same = dir.write("same.json", document("host", 1.0));
  const std::string text = dir.write("text.json", "not json");
  Run piped = run_peakprobe("compare - " + quoted(same) + " < " + quoted(same));
  CHECK(piped.rc == 0);
  CHECK_THAT(piped.out, Catch::Contains("0 regressions"));
  Run bad = run_peakprobe("compare " + quoted(same) + " - < " + quoted(text));
  CHECK(bad.rc == 2);
  CHECK_THAT(bad.err, Catch::Contains("standard input: not valid JSON"));
  CHECK(bad.out.empty());
  check_refused({{"compare - -", "OLD and NEW cannot both be '-'"}});
}

TEST_CASE("compare: a regression exits 5, its warnings on stdout with the console text, on stderr beside a document",
          "[main]") {
  const peakprobe::test::ScratchDir dir;
  const std::string old_doc = dir.write("old.json", document("host A", 1.0));
  const std::string new_doc = dir.write("new.json", document("host B", 1.5));
  const std::string args = "compare " + quoted(old_doc) + " " + quoted(new_doc);
  Run console = run_peakprobe(args);
  CHECK(console.rc == 5);
  CHECK_THAT(console.out, Catch::Contains("different hosts") && Catch::Contains("1 regression,"));
  CHECK(console.err.empty());
  Run json = run_peakprobe(args + " --json -");
  CHECK(json.rc == 5);
  const auto report = nlohmann::json::parse(json.out);  // the document alone
  CHECK(report["regressions"] == 1);
  CHECK(report["old_file"] == old_doc);
  CHECK(report["new_file"] == new_doc);
  CHECK_THAT(json.err, Catch::Contains("different hosts"));
  Run markdown = run_peakprobe(args + " --markdown -");
  CHECK(markdown.rc == 5);
  CHECK_THAT(markdown.out, Catch::StartsWith("## peakprobe compare: 1 regression"));
  CHECK_THAT(markdown.err, Catch::Contains("different hosts"));
}

TEST_CASE("compare: thresholds out of their range are refused, the limits allowed, and --help says the exit codes",
          "[main]") {
  const peakprobe::test::ScratchDir dir;
  const std::string doc = quoted(dir.write("doc.json", document("host", 1.0)));
  check_refused({
      {"compare " + doc + " " + doc + " --time-threshold -1", "'-1'"},
      {"compare " + doc + " " + doc + " --throughput-threshold 101", "'101' is not a number from 0 to 100"},
      {"compare " + doc, "new is required"},
  });
  CHECK(run_peakprobe("compare " + doc + " " + doc + " --time-threshold 1000000 --throughput-threshold 100").rc == 0);
  Run help = run_peakprobe("compare --help");
  CHECK(help.rc == 0);
  for (const char* taught : {"--time-threshold", "--throughput-threshold", "--fixed-thresholds", "--all",
                             "0 no regression, 5 at least one regression, 2 unreadable or invalid input",
                             "3 output not writable"})
    CHECK_THAT(help.out, Catch::Contains(taught));
}
