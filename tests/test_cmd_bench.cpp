// `peakprobe bench matmul` (src/cli/cmd_bench.cpp): the bundled GEMM over a matrix of shapes, dtypes
// and batch sizes in one document, rows named for `peakprobe compare`; a combination over
// --max-gflop, or one this CPU cannot run, is a skipped row with the reason.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli_run.hpp"
#include "cpu/cpu_info.hpp"
#include "matmul/gemm.hpp"
#include "skip.hpp"

namespace {

using peakprobe::test::check_refused;
using peakprobe::test::Refusal;
using peakprobe::test::Run;
using peakprobe::test::run_peakprobe;

}  // namespace

TEST_CASE("bench: refusals name the list item or the value out of range, and the limits are allowed", "[main]") {
  const std::vector<Refusal> cases = {
      {"bench", "A subcommand is required"},
      {"bench matmul --shapes 8,x", "--shapes 'x': expected whole numbers from 1 to 65536"},
      {"bench matmul --shapes 65537", "--shapes '65537'"},
      {"bench matmul --shapes 0", "--shapes '0'"},
      {"bench matmul --shapes ''", "--shapes: empty list"},
      {"bench matmul --batches 4097", "--batches '4097': expected whole numbers from 1 to 4096"},
      {"bench matmul --dtypes f32,zz", "--dtypes: --dtype 'zz'"},
      {"bench matmul --max-gflop 0", "--max-gflop 0: expected a number above 0 and at most 10000"},
      {"bench matmul --max-gflop 10000.5", "--max-gflop 10000.5"},
      {"bench matmul --rounds 11", "--rounds"},
      {"bench matmul --widen sometimes", "--widen 'sometimes': expected auto, yes or no"},
      // At their limits the lists and --max-gflop are allowed: the --isa level checked after them is
      // what is refused.
      {"bench matmul --shapes 1,65536 --batches 1,4096 --dtypes f32,bf16,int8 --max-gflop 10000 --isa zz-level",
       "--isa 'zz-level'"},
  };
  check_refused(cases);
}

TEST_CASE("bench: --help teaches the matrix's options, their defaults and the rows' names", "[main]") {
  Run r = run_peakprobe("bench matmul --help");
  CHECK(r.rc == 0);
  for (const char* taught : {"--shapes", "--dtypes", "--batches", "--baseline", "--max-gflop", "--quick", "--model-gap",
                             "--rounds", "--isa", "--widen", "128,1024,4096,127,513", "f32,bf16", "1,4,16",
                             "\"matmul DTYPE MxNxK batch B, T thread(s)\"", "peakprobe compare"})
    CHECK_THAT(r.out, Catch::Contains(taught));
}

TEST_CASE("bench: a combination over --max-gflop is a skipped row beside the measured one, in one document", "[main][hw]") {
  // 8^3 is 1.0e-6 GFLOP a call, 16^3 8.2e-6.
  Run r = run_peakprobe("bench matmul --shapes 8,16 --dtypes f32 --batches 1 --baseline none --max-gflop 2e-6 --json - --quiet");
  REQUIRE(r.rc == 0);
  const auto doc = nlohmann::json::parse(r.out);
  CHECK(doc["schema"] == "peakprobe/1");
  CHECK(doc["host"].contains("brand"));
  const auto rows = doc["benchmarks"];
  REQUIRE(rows.size() == 2);
  CHECK(rows[0]["name"] == "matmul f32 8x8x8 batch 1, 1 thread");
  CHECK(rows[1]["name"] == "matmul f32 16x16x16 batch 1, 1 thread");
  const std::string missing = peakprobe::gemm_unsupported(peakprobe::detect_cpu_info(), peakprobe::MatmulDtype::f32);
  if (!missing.empty()) {  // every f32 row skipped for it, none measured
    for (const auto& row : rows) {
      CHECK(row["status"] == "skipped");
      CHECK_THAT(row["reason"].get<std::string>(), Catch::Contains(missing));
    }
    PP_SKIP("matmul f32: " << missing);
  }
  CHECK(rows[1]["status"] == "skipped");
  CHECK_THAT(rows[1]["reason"].get<std::string>(), Catch::Contains("GFLOP per call is over --max-gflop"));
  CHECK(rows[0]["status"] != "skipped");
  CHECK(rows[0]["max_rel_error"].get<double>() < 1e-5);
}

TEST_CASE("bench: a dtype that cannot follow --widen gets skipped rows that say why, --quick leaving out the same shapes", "[main]") {
  // --quick leaves out 4096 here too, as it does for a dtype that runs.
  Run r = run_peakprobe(
      "bench matmul --shapes 8,16,4096 --quick --dtypes f32 --batches 1 --baseline none --widen yes --json - --quiet");
  REQUIRE(r.rc == 0);
  const auto rows = nlohmann::json::parse(r.out)["benchmarks"];
  REQUIRE(rows.size() == 2);
  const std::string missing = peakprobe::gemm_unsupported(peakprobe::detect_cpu_info(), peakprobe::MatmulDtype::f32);
  for (const auto& row : rows) {
    CHECK(row["status"] == "skipped");
    CHECK_THAT(row["reason"].get<std::string>(), Catch::Contains(missing.empty() ? "--widen yes" : missing));
  }
}
