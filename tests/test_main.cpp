// End-to-end checks of the peakprobe executable: bad input gets a clear message and a stable exit
// code, never a crash; JSON on stdout is one parseable document.
#include <catch2/catch.hpp>

#include <sys/wait.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "cpu/cpu_info.hpp"
#include "matmul/gemm.hpp"
#include "scratch_dir.hpp"
#include "skip.hpp"

namespace {

struct Run {
  int rc = -1;
  std::string out, err;
};

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// A path as one single-quoted shell word.
std::string quoted(const std::string& path) {
  std::string q = "'";
  for (char c : path) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

// Runs the executable with `args`; its output goes through files in a directory of this call's own
// (tests run in parallel).
Run run_peakprobe(const std::string& args) {
  const peakprobe::test::ScratchDir dir;
  const std::string out = dir.file("stdout.txt"), err = dir.file("stderr.txt");
  std::string cmd = std::string(PEAKPROBE_BINARY) + " " + args + " >" + quoted(out) + " 2>" + quoted(err);
  int status = std::system(cmd.c_str());
  Run r;
  r.rc = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.out = slurp(out);
  r.err = slurp(err);
  return r;
}

// Why this CPU cannot run the matmul kernels of `dtype` ("" when it can), as the CLI decides it.
std::string matmul_missing(peakprobe::MatmulDtype dtype) {
  static const peakprobe::CpuInfo cpu = peakprobe::detect_cpu_info();
  return peakprobe::gemm_unsupported(cpu, dtype);
}

// A matmul the CPU cannot run is refused before anything executes: exit 4, naming what is missing.
void check_refused(const Run& r, const std::string& missing) {
  CHECK(r.rc == 4);
  CHECK_THAT(r.err, Catch::Contains("need") && Catch::Contains("not available on this CPU"));
  CHECK_THAT(r.err, Catch::Contains(missing));
}

}  // namespace

TEST_CASE("cli: --help teaches the subcommands", "[main]") {
  Run r = run_peakprobe("--help");
  CHECK(r.rc == 0);
  for (const char* sub : {"info", "list", "run", "inst", "--json", "Exit codes"})
    CHECK(r.out.find(sub) != std::string::npos);
  Run i = run_peakprobe("inst --help");
  CHECK(i.rc == 0);
  CHECK(i.out.find("Operand kinds") != std::string::npos);
}

TEST_CASE("cli: unknown instruction suggests names and exits 2", "[main]") {
  Run r = run_peakprobe("inst \"vfmad231ps ymm, ymm, ymm\"");
  CHECK(r.rc == 2);
  CHECK(r.err.find("unknown instruction 'vfmad231ps'") != std::string::npos);
  CHECK(r.err.find("vfmadd231ps") != std::string::npos);
}

TEST_CASE("cli: impossible operand form exits 2", "[main]") {
  Run r = run_peakprobe("inst \"vaddps ymm, xmm, zmm\"");
  CHECK(r.rc == 2);
  CHECK(r.err.find("impossible operand form") != std::string::npos);
}

TEST_CASE("cli: malformed catalog names file and line", "[main]") {
  const peakprobe::test::ScratchDir dir;
  const std::string path = dir.write("test_main_bad.catalog", "# comment\nvaddps ymm, ymm, ymm | 8 | f32 | avx\n");
  Run r = run_peakprobe("run --catalog " + quoted(path));
  CHECK(r.rc == 2);
  CHECK(r.err.find("test_main_bad.catalog:2:") != std::string::npos);
}

TEST_CASE("cli: an unwritable output path fails before measuring and leaves nothing", "[main]") {
  Run r = run_peakprobe("inst \"add r64, r64\" --json /nonexistent-dir/out.json");
  CHECK(r.rc == 3);
  CHECK(r.err.find("/nonexistent-dir") != std::string::npos);
}

TEST_CASE("cli: impossible placement is refused", "[main]") {
  CHECK(run_peakprobe("inst \"add r64, r64\" --threads 0").rc == 2);
  CHECK(run_peakprobe("inst \"add r64, r64\" --threads 100000").rc == 2);
  CHECK(run_peakprobe("inst \"add r64, r64\" --cpu 100000").rc == 2);
  CHECK(run_peakprobe("run --filter no-such-row-anywhere").rc == 2);
  CHECK(run_peakprobe("frobnicate").rc == 2);
}

TEST_CASE("cli: --json - writes one document to stdout", "[main][hw]") {
  Run r = run_peakprobe("inst \"add r64, r64\" \"vmovups m256, ymm\" --json - --quiet");
  REQUIRE(r.rc == 0);
  auto doc = nlohmann::json::parse(r.out);
  CHECK(doc["schema"] == "peakprobe/1");
  REQUIRE(doc["results"].size() == 2);
  CHECK(doc["results"][0]["instruction"] == "add r64, r64");
  CHECK(doc["host"].contains("caches"));
  CHECK(doc["clock"]["ghz"].get<double>() > 0);
}

TEST_CASE("cli: list shows support on this CPU", "[main]") {
  Run r = run_peakprobe("list --filter vfmadd231ps");
  CHECK(r.rc == 0);
  CHECK(r.out.find("vfmadd231ps ymm, ymm, ymm") != std::string::npos);
  CHECK(r.out.find("supported on this CPU") != std::string::npos);
}

TEST_CASE("cli: dual-issue commands refuse bad input with exit 2", "[main]") {
  CHECK(run_peakprobe("pair \"add r64, r64\" \"imul r64, r64\" --ratio 2-1").rc == 2);
  CHECK(run_peakprobe("pair \"add r64, r64\" \"imul r64, r64\" --ratio 0:1").rc == 2);
  CHECK(run_peakprobe("mix \"add r64, r64:x\"").rc == 2);
  CHECK(run_peakprobe("mix \"add r64, r64:99\"").rc == 2);
  CHECK(run_peakprobe("pairs --set no-such-set").rc == 2);
  CHECK(run_peakprobe("pairs \"add r64, r64\"").rc == 2);
  Run f = run_peakprobe("flopmix \"add r64, r64\" \"sub r64, r64\" --catalog /dev/null");
  CHECK(f.rc == 2);
  Run u = run_peakprobe("pair \"vfmad231ps ymm, ymm, ymm\" \"add r64, r64\"");
  CHECK(u.rc == 2);
  CHECK(u.err.find("vfmadd231ps") != std::string::npos);
}

TEST_CASE("cli: pair --json - gives the classification", "[main][hw]") {
  Run r = run_peakprobe("pair \"add r64, r64\" \"imul r64, r64\" --json - --quiet");
  REQUIRE(r.rc == 0);
  auto doc = nlohmann::json::parse(r.out);
  REQUIRE(doc["pairs"].size() == 1);
  const auto& p = doc["pairs"][0];
  CHECK(p["parts"].size() == 2);
  CHECK(p["cycles_per_group"].get<double>() > 0);
  CHECK(p.contains("same_port"));
  CHECK(p.contains("classification"));
  CHECK(p["repro"].get<std::string>().rfind("peakprobe mix ", 0) == 0);
}

TEST_CASE("cli: pairs --list-sets names the shipped sets", "[main]") {
  Run r = run_peakprobe("pairs --list-sets");
  CHECK(r.rc == 0);
  CHECK(r.out.find("fp.ymm") != std::string::npos);
}

TEST_CASE("cli: memory commands refuse bad sizes before running", "[main]") {
  Run big = run_peakprobe("mem --sizes 64TiB");
  CHECK(big.rc == 2);
  Run huge = run_peakprobe("mem --sizes 100000GiB");
  CHECK(huge.rc == 2);
  CHECK(huge.err.find("available") != std::string::npos);
  CHECK(run_peakprobe("mem --sizes 0").rc == 2);
  CHECK(run_peakprobe("mem --sizes 16QiB").rc == 2);
  CHECK(run_peakprobe("mem --kernel stream").rc == 2);
  CHECK(run_peakprobe("mem --isa avx1024").rc == 2);
  CHECK(run_peakprobe("mem --sizes 1MiB --sweep").rc == 2);
  CHECK(run_peakprobe("latency --chains 0").rc == 2);
  CHECK(run_peakprobe("latency --pages 1g").rc == 2);
}

TEST_CASE("cli: mem --json - gives bandwidth rows", "[main][hw]") {
  Run r = run_peakprobe("mem --sizes 32KiB --json - --quiet");
  REQUIRE(r.rc == 0);
  auto doc = nlohmann::json::parse(r.out);
  REQUIRE(doc["bandwidth"].size() == 1);
  CHECK(doc["bandwidth"][0]["gbps"].get<double>() > 0);
  CHECK(doc["bandwidth"][0]["kernel"] == "load");
}

TEST_CASE("cli: matmul checks its result and refuses bad input", "[main][hw]") {
  CHECK(run_peakprobe("matmul --shape 10,10").rc == 2);
  CHECK(run_peakprobe("matmul --shape 0,4,4").rc == 2);
  CHECK(run_peakprobe("matmul --shape a,b,c").rc == 2);
  Run dtype = run_peakprobe("matmul --shape 8,8,8 --dtype f16");
  CHECK(dtype.rc == 2);
  CHECK_THAT(dtype.err, Catch::Contains("f32, bf16 or int8"));
  Run cold = run_peakprobe("matmul --shape 8,8,8 --cold-cache lukewarm");
  CHECK(cold.rc == 2);
  CHECK_THAT(cold.err, Catch::Contains("lukewarm"));
  Run huge = run_peakprobe("matmul --shape 65536,65536,65536 --batch 64");
  CHECK(huge.rc == 2);
  CHECK_THAT(huge.err, Catch::Contains("free memory"));

  Run r = run_peakprobe("matmul --shape 37,41,43 --baseline none --json - --quiet");
  if (const std::string missing = matmul_missing(peakprobe::MatmulDtype::f32); !missing.empty()) {
    // The CPU is checked before --config is read, so the --config refusals below need these kernels.
    check_refused(r, missing);
    PP_SKIP("matmul f32: " << missing);
  }
  Run config = run_peakprobe("matmul --shape 8,8,8 --config mr=6,kc=banana");
  CHECK(config.rc == 2);
  CHECK_THAT(config.err, Catch::Contains("kc"));
  Run key = run_peakprobe("matmul --shape 8,8,8 --config foo=1");
  CHECK(key.rc == 2);
  CHECK_THAT(key.err, Catch::Contains("unknown key 'foo'"));
  Run grid = run_peakprobe("matmul --shape 8,8,8 --config grid=2x1");
  CHECK(grid.rc == 2);  // 2 threads in the grid, --threads 1
  CHECK_THAT(grid.err, Catch::Contains("--threads"));

  REQUIRE(r.rc == 0);
  auto doc = nlohmann::json::parse(r.out);
  REQUIRE(doc["matmul"].is_array());
  const auto& mm = doc["matmul"][0];
  CHECK(mm["max_rel_error"].get<double>() < 1e-5);
  CHECK(mm["gflops"].get<double>() > 0);
  CHECK(mm["repetitions"].get<int>() >= 5);
  CHECK(mm["min_ms"].get<double>() <= mm["mean_ms"].get<double>());
  CHECK(mm["shape"] == nlohmann::json({{"k", 43}, {"m", 37}, {"n", 41}}));
  CHECK_THAT(mm["config_source"].get<std::string>(), Catch::StartsWith("cost model"));
}

TEST_CASE("cli: matmul int8 with batch and a cold cache is exact", "[main][hw]") {
  Run r = run_peakprobe("matmul --shape 29,70,33 --dtype int8 --batch 3 --cold-cache all+tlb --json - --quiet");
  if (const std::string missing = matmul_missing(peakprobe::MatmulDtype::i8); !missing.empty()) {
    check_refused(r, missing);
    PP_SKIP("matmul int8: " << missing);
  }
  REQUIRE(r.rc == 0);
  const auto mm = nlohmann::json::parse(r.out)["matmul"][0];
  CHECK(mm["max_rel_error"].get<double>() == 0.0);
  CHECK(mm["batch"] == 3);
  CHECK(mm["cold_cache"] == "all+tlb");
  CHECK(mm["name"] == "matmul int8 29x70x33 batch 3, 1 thread, cold all");
}

TEST_CASE("cli: matmul --explain prints the candidates and the choice", "[main][hw]") {
  Run r = run_peakprobe("matmul --shape 64,64,64 --explain --baseline none --quiet");
  if (const std::string missing = matmul_missing(peakprobe::MatmulDtype::f32); !missing.empty()) {
    check_refused(r, missing);
    PP_SKIP("matmul f32: " << missing);
  }
  REQUIRE(r.rc == 0);
  CHECK_THAT(r.out, Catch::Contains("chosen:"));
  CHECK_THAT(r.out, Catch::Contains("candidates"));
}
