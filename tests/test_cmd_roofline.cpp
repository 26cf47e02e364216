// `peakprobe roofline` and `peakprobe score` (src/cli/cmd_roofline.cpp): the ceiling table measured
// into files or a folder, and kernels placed on a saved table (or one measured first). Everything a
// command will write is checked before it measures.
#include <catch2/catch.hpp>

#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "cli_run.hpp"
#include "scratch_dir.hpp"

namespace {

using peakprobe::test::check_refused;
using peakprobe::test::quoted;
using peakprobe::test::Run;
using peakprobe::test::run_peakprobe;

// One compute and one memory ceiling on one thread: a ridge of 5 FLOP per byte.
const char* const kTable = R"({"schema":"peakprobe-roofline/1",
  "compute":[{"dtype":"f32","isa":"256","threads":1,"gflops":100}],
  "memory":[{"level":"DRAM","kernel":"load","threads":1,"gbps":20}]})";

}  // namespace

TEST_CASE("cli: score places a kernel on an OpenCL device's roofline from a gpu document", "[main][gpu]") {
  const peakprobe::test::ScratchDir dir;
  // As `peakprobe gpu --json` writes it: one device, its ceilings in the CPU table's format.
  const std::string one = dir.write("gpu.json", R"({"schema":"peakprobe-gpu/1","devices":[{"name":"G",
    "ceilings":{"schema":"peakprobe-roofline/1",
      "compute":[{"dtype":"f32","isa":"x4","threads":1,"gflops":60000}],
      "memory":[{"level":"DRAM","kernel":"load","threads":1,"gbps":4000},
                {"level":"local","kernel":"load","threads":1,"gbps":30000}]}}]})");
  Run ok = run_peakprobe("score --table " + quoted(one) + " --flops 4e12 --bytes 8e9 --seconds 0.1 --json -");
  REQUIRE(ok.rc == 0);
  const auto s = nlohmann::json::parse(ok.out)["scores"][0];
  // 500 FLOP per byte is beyond the ridge (60000 / 4000 = 15): the compute roof binds.
  CHECK(s["bound_by"] == "compute f32 x4");
  CHECK(s["attainable_gflops"].get<double>() == Approx(60000));
  CHECK(s["ridge_ai"].get<double>() == Approx(15));
  Run local = run_peakprobe("score --table " + quoted(one) + " --flops 1e9 --bytes 1e9 --seconds 1 --level local --json -");
  REQUIRE(local.rc == 0);
  CHECK(nlohmann::json::parse(local.out)["scores"][0]["attainable_gflops"].get<double>() == Approx(30000));
  const std::string two = dir.write("two.json", R"({"schema":"peakprobe-gpu/1","devices":[{"name":"a"},{"name":"b"}]})");
  Run many = run_peakprobe("score --table " + quoted(two) + " --flops 1 --bytes 1 --seconds 1");
  CHECK(many.rc == 2);
  CHECK_THAT(many.err, Catch::Contains("2 OpenCL devices"));
  const std::string none = dir.write("none.json", R"({"schema":"peakprobe-gpu/1","devices":[{"name":"a","reason":"no device"}]})");
  Run skipped = run_peakprobe("score --table " + quoted(none) + " --flops 1 --bytes 1 --seconds 1");
  CHECK(skipped.rc == 2);
  CHECK_THAT(skipped.err, Catch::Contains("no ceiling table"));
}

TEST_CASE("cli: score validates the table and the kernels by type and value", "[main]") {
  const peakprobe::test::ScratchDir dir;
  const std::string table = dir.write("table.json", R"({"schema":"peakprobe-roofline/1",
    "compute":[{"dtype":"f32","isa":"256","threads":1,"gflops":100}],
    "memory":[{"level":"DRAM","kernel":"load","threads":1,"gbps":20}]})");
  Run ok = run_peakprobe("score --table " + quoted(table) + " --flops 2e9 --bytes 1e8 --seconds 0.05 --json -");
  REQUIRE(ok.rc == 0);
  CHECK(nlohmann::json::parse(ok.out)["scores"].size() == 1);
  struct Case {
    std::string args;
    const char* says;
  };
  const std::string negative = dir.write("negative.json", R"({"schema":"peakprobe-roofline/1",
    "compute":[{"dtype":"f32","isa":"256","threads":1,"gflops":-5}],
    "memory":[{"level":"DRAM","kernel":"load","threads":1,"gbps":20}]})");
  const std::string zero_bw = dir.write("zero.json", R"({"schema":"peakprobe-roofline/1",
    "compute":[{"dtype":"f32","isa":"256","threads":1,"gflops":100}],
    "memory":[{"level":"DRAM","kernel":"load","threads":1,"gbps":0}]})");
  const std::string kernels = dir.write("kernels.json", R"([{"name":"k","flops":"many","bytes":1,"seconds":1}])");
  const std::string not_array = dir.write("object.json", R"({"name":"k"})");
  const std::string bad_threads = dir.write("threads.json", R"([{"name":"k","flops":1,"bytes":1,"seconds":1,"threads":1e300}])");
  const std::string flops = " --flops 2e9 --bytes 1e8 --seconds 0.05";
  const Case cases[] = {
      {"score --table " + quoted(dir.write("schema.json", R"({"schema":1})")) + flops, "not a ceiling table"},
      {"score --table " + quoted(negative) + flops, "positive"},
      {"score --table " + quoted(zero_bw) + flops, "positive"},
      {"score --table " + quoted(table) + " --kernels " + quoted(kernels), "kernel 1"},
      {"score --table " + quoted(table) + " --kernels " + quoted(not_array), "array"},
      {"score --table " + quoted(table) + " --kernels " + quoted(bad_threads), "threads"},
      {"score --table " + quoted(table) + " --flops 1.7976931348623157e308 --bytes 1 --seconds 1", "at most"},
      {"score --table " + quoted(table) + " --flops 1 --bytes 1 --seconds 1e-300", "--seconds"},
      {"score --table " + quoted(table) + " --flops nan --bytes 1 --seconds 1", "positive"},
      {"score --table " + quoted(table) + " --flops -1 --bytes 1 --seconds 1", "positive"},
  };
  for (const auto& c : cases) {
    INFO(c.args);
    Run r = run_peakprobe(c.args);
    CHECK(r.rc == 2);
    CHECK_THAT(r.err, Catch::Contains(c.says));
    CHECK(r.err.size() < 2000);  // no number printed as 309 digits
  }
}

TEST_CASE("roofline: --help names the files --out writes, score --help every figure of a kernel", "[main]") {
  Run roofline = run_peakprobe("roofline --help");
  CHECK(roofline.rc == 0);
  CHECK_THAT(roofline.out, Catch::Contains("--out DIR") && Catch::Contains("roofline.json, ceilings.csv and ceilings.md") &&
                               Catch::Contains("--quick"));
  Run score = run_peakprobe("score --help");
  CHECK(score.rc == 0);
  for (const char* taught : {"--flops", "--bytes", "--seconds", "--name", "--dtype", "--level", "--table", "--kernels"})
    CHECK_THAT(score.out, Catch::Contains(taught));
}

TEST_CASE("roofline: --out's files are checked with the other outputs before measuring, a folder made for them removed again",
          "[main]") {
  const peakprobe::test::ScratchDir dir;
  // Each file --out plans is checked: here one already a directory.
  for (const std::string& file : {std::string("roofline.json"), std::string("ceilings.csv"), std::string("ceilings.md")}) {
    INFO(file);
    const std::string folder = dir.file("taken-" + file);
    std::filesystem::create_directories(folder + "/" + file);
    Run r = run_peakprobe("roofline --out " + quoted(folder));
    CHECK(r.rc == 3);
    CHECK_THAT(r.err, Catch::Contains(folder + "/" + file));
    CHECK(r.out.empty());
  }
  const std::string made = dir.file("made");
  Run bad = run_peakprobe("roofline --out " + quoted(made) + " --markdown " + quoted(dir.file("missing/x.md")));
  CHECK(bad.rc == 3);
  CHECK_THAT(bad.err, Catch::Contains("--markdown"));
  CHECK_FALSE(std::filesystem::exists(made));
  Run file = run_peakprobe("roofline --out " + quoted(dir.write("file", "")));
  CHECK(file.rc == 3);
  CHECK_THAT(file.err, Catch::Contains("not a directory"));
  // The placement is checked before the folder is made.
  Run placed = run_peakprobe("roofline --cpu 1000000 --out " + quoted(made));
  CHECK(placed.rc == 2);
  CHECK_THAT(placed.err, Catch::Contains("--cpu 1000000"));
  CHECK_FALSE(std::filesystem::exists(made));
  check_refused({{"roofline --out ''", "--out: an empty path names no file"}});
}

TEST_CASE("score: the console shows the table and the verdict, --json - the document alone", "[main]") {
  const peakprobe::test::ScratchDir dir;
  const std::string table = quoted(dir.write("table.json", kTable));
  // 2e9 FLOP over 1e8 bytes in 0.05 s: 20 FLOP per byte, beyond the ridge, 40 of 100 GFLOP/s.
  const std::string kernel = " --flops 2e9 --bytes 1e8 --seconds 0.05 --name \"my kernel\"";
  Run console = run_peakprobe("score --table " + table + kernel);
  REQUIRE(console.rc == 0);
  CHECK_THAT(console.out, Catch::Contains("compute ceilings") && Catch::Contains("memory ceilings"));
  CHECK_THAT(console.out, Catch::Contains("my kernel: AI 20 FLOP/byte") && Catch::Contains("bound by compute f32 256"));
  CHECK(console.err.empty());
  Run json = run_peakprobe("score --table " + table + kernel + " --json -");
  REQUIRE(json.rc == 0);
  const auto doc = nlohmann::json::parse(json.out);
  REQUIRE(doc["scores"].size() == 1);
  CHECK(doc["scores"][0]["name"] == "my kernel");
  CHECK(doc["scores"][0]["bound_by"] == "compute f32 256");
  CHECK(doc["scores"][0]["attainable_gflops"].get<double>() == Approx(100));
  CHECK(doc["ceilings"]["compute"].size() == 1);
}

TEST_CASE("score: a kernel list is scored row by row, and a roof the table lacks is refused, naming it", "[main]") {
  const peakprobe::test::ScratchDir dir;
  const std::string table = " --table " + quoted(dir.write("table.json", kTable));
  const std::string kernels = quoted(dir.write("kernels.json", R"([{"name":"first","flops":1e9,"bytes":1e9,"seconds":1},
    {"name":"second","flops":4e9,"bytes":1e8,"seconds":1}])"));
  Run r = run_peakprobe("score" + table + " --kernels " + kernels + " --json -");
  REQUIRE(r.rc == 0);
  const auto scores = nlohmann::json::parse(r.out)["scores"];
  REQUIRE(scores.size() == 2);
  CHECK(scores[0]["name"] == "first");
  CHECK_THAT(scores[0]["bound_by"].get<std::string>(), Catch::StartsWith("memory DRAM"));  // 1 FLOP per byte
  CHECK(scores[1]["name"] == "second");
  CHECK_THAT(scores[1]["bound_by"].get<std::string>(), Catch::StartsWith("compute f32"));  // 40 FLOP per byte
  const std::string kernel = " --flops 2e9 --bytes 1e8 --seconds 0.05";
  check_refused({
      {"score" + table + kernel + " --level L2", "no L2 memory ceiling for 1 thread(s) in the table"},
      {"score" + table + kernel + " --dtype f64", "no f64 compute ceiling for 1 thread(s) in the table"},
      {"--threads 2 score" + table + kernel, "for 2 thread(s) in the table"},
      {"score" + table, "--flops, --bytes and --seconds must be positive numbers"},
      {"score" + table + " --kernels " + quoted(dir.write("text.json", "not json")), "not JSON"},
  });
}
