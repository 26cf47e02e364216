// End-to-end checks of the peakprobe executable: bad input gets a clear message and a stable exit
// code, never a crash; JSON on stdout is one parseable document.
#include <catch2/catch.hpp>

#include <sched.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#include <nlohmann/json.hpp>

#include "cpu/cpu_info.hpp"
#include "asm/target.hpp"
#include "matmul/gemm.hpp"
#include "cli_run.hpp"
#include "scratch_dir.hpp"
#include "skip.hpp"
#include "target_fixture.hpp"

namespace {

using peakprobe::test::Run;
using peakprobe::test::quoted;
using peakprobe::test::check_refused;
using peakprobe::test::Refusal;
using peakprobe::test::run_peakprobe;
using peakprobe::test::run_peakprobe_env;
using peakprobe::test::slurp;
using peakprobe::test::target;

// The target's one-cycle add and its multiply (the clock's ruler), as `inst` takes them.
std::string add_form() { return target().ruler_forms().one_cycle; }
std::string mul_form() { return target().ruler_forms().multi_cycle; }

// One instruction text as a double-quoted shell word (the target's forms hold no '"', '$' or '\').
std::string arg(const std::string& text) { return "\"" + text + "\""; }

// This CPU's f32 matmul roof: a catalog row (Target::matmul_roof spells it as the catalog does).
std::string roof_form() {
  static const peakprobe::CpuInfo cpu = peakprobe::detect_cpu_info();
  return target().matmul_roof(cpu, peakprobe::MatmulDtype::f32).instruction;
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
  const std::string form = target().help_texts().example_form, typo = peakprobe::test::misspelled(form);
  const auto unknown = target().resolve(typo);
  REQUIRE_FALSE(unknown.ok());
  Run r = run_peakprobe("inst " + arg(typo));
  CHECK(r.rc == 2);
  CHECK_THAT(r.err, Catch::Contains(unknown.error()));
  CHECK_THAT(r.err, Catch::Contains(peakprobe::test::mnemonic_of(form)));  // among the nearest names
}

TEST_CASE("cli: malformed catalog names file and line", "[main]") {
  const peakprobe::test::ScratchDir dir;
  // Four fields where five are needed.
  const std::string row = target().help_texts().example_form + " | 8 | f32 | -";
  const std::string path = dir.write("test_main_bad.catalog", "# comment\n" + row + "\n");
  Run r = run_peakprobe("run --catalog " + quoted(path));
  CHECK(r.rc == 2);
  CHECK(r.err.find("test_main_bad.catalog:2:") != std::string::npos);
}

TEST_CASE("cli: an unwritable output path fails before measuring and leaves nothing", "[main]") {
  Run r = run_peakprobe("inst " + arg(add_form()) + " --json /nonexistent-dir/out.json");
  CHECK(r.rc == 3);
  CHECK(r.err.find("/nonexistent-dir") != std::string::npos);
}

TEST_CASE("cli: report --pipes without --table is refused before measuring", "[main]") {
  Run r = run_peakprobe("report --pipes --out /nonexistent-dir/folder");
  CHECK(r.rc == 2);
  CHECK_THAT(r.err, Catch::Contains("--table"));
}

TEST_CASE("cli: impossible placement is refused", "[main]") {
  CHECK(run_peakprobe("inst " + arg(add_form()) + " --threads 0").rc == 2);
  CHECK(run_peakprobe("inst " + arg(add_form()) + " --threads 100000").rc == 2);
  CHECK(run_peakprobe("inst " + arg(add_form()) + " --cpu 100000").rc == 2);
  CHECK(run_peakprobe("run --filter no-such-row-anywhere").rc == 2);
  CHECK(run_peakprobe("frobnicate").rc == 2);
}

TEST_CASE("cli: --json - writes one document to stdout", "[main][hw]") {
  Run r = run_peakprobe("inst " + arg(add_form()) + " " + arg(mul_form()) + " --json - --quiet");
  REQUIRE(r.rc == 0);
  auto doc = nlohmann::json::parse(r.out);
  CHECK(doc["schema"] == "peakprobe/1");
  REQUIRE(doc["results"].size() == 2);
  CHECK(doc["results"][0]["instruction"] == target().resolve(add_form())->display);
  CHECK(doc["results"][1]["instruction"] == target().resolve(mul_form())->display);
  CHECK(doc["host"].contains("caches"));
  CHECK(doc["clock"]["ghz"].get<double>() > 0);
}

TEST_CASE("cli: inst --listing prints, after the results, the code each form was timed with", "[main][hw]") {
  const peakprobe::test::ScratchDir dir;
  const std::string json = dir.file("listed.json");
  Run r = run_peakprobe("inst " + arg(add_form()) + " --listing --quiet --json " + peakprobe::test::quoted(json));
  REQUIRE(r.rc == 0);
  auto doc = nlohmann::json::parse(peakprobe::test::slurp(json));
  REQUIRE(doc["results"].size() == 1);
  const std::string display = doc["results"][0]["instruction"];
  const int chains = doc["results"][0]["accumulators"];
  CHECK_THAT(r.out, Catch::Contains("# " + display + "\n"));
  CHECK_THAT(r.out, Catch::Contains("## latency chain"));
  // The stream at the chains the row reports, after the row (the console table comes first).
  const size_t stream = r.out.find("## throughput stream, " + std::to_string(chains) + " chain");
  REQUIRE(stream != std::string::npos);
  CHECK(r.out.find(display) < r.out.find("# " + display + "\n"));  // the row of the table first
  CHECK_THAT(r.out.substr(stream), Catch::Contains(peakprobe::test::mnemonic_of(add_form()) + " "));
}

TEST_CASE("cli: info --json - says how much of the wall time the probes' core gives a thread", "[main][hw]") {
  Run r = run_peakprobe("info --json - --quiet");
  REQUIRE(r.rc == 0);
  auto doc = nlohmann::json::parse(r.out);
  if (doc["host"].contains("emulator")) {
    CHECK(doc["core_availability"].is_null());  // the timestamp says nothing of an emulated core
    return;
  }
  const auto& a = doc["core_availability"];
  REQUIRE(a.is_object());
  CHECK(a["cpu"] == doc["cpu"]);
  CHECK(a["scanned_ms"].get<double>() >= 49.5);
  CHECK(a["share"].get<double>() > 0.0);
  CHECK(a["share"].get<double>() <= 1.0);
  CHECK(a["threshold_us"].get<double>() > 0.0);
}

TEST_CASE("cli: list shows support on this CPU", "[main]") {
  Run r = run_peakprobe("list --filter " + arg(peakprobe::test::mnemonic_of(roof_form())));
  CHECK(r.rc == 0);
  CHECK(r.out.find(roof_form()) != std::string::npos);
  CHECK(r.out.find("supported on this CPU") != std::string::npos);
}

TEST_CASE("cli: dual-issue commands refuse bad input with exit 2", "[main]") {
  const std::string add = arg(add_form()), mul = arg(mul_form());
  CHECK(run_peakprobe("pair " + add + " " + mul + " --ratio 2-1").rc == 2);
  CHECK(run_peakprobe("pair " + add + " " + mul + " --ratio 0:1").rc == 2);
  CHECK(run_peakprobe("mix " + arg(add_form() + ":x")).rc == 2);
  CHECK(run_peakprobe("mix " + arg(add_form() + ":99")).rc == 2);
  CHECK(run_peakprobe("pairs --set no-such-set").rc == 2);
  CHECK(run_peakprobe("pairs " + add).rc == 2);
  // Integer forms have no FLOP count.
  Run f = run_peakprobe("flopmix " + add + " " + mul + " --catalog /dev/null");
  CHECK(f.rc == 2);
  const std::string form = target().help_texts().example_form;
  Run u = run_peakprobe("pair " + arg(peakprobe::test::misspelled(form)) + " " + add);
  CHECK(u.rc == 2);
  CHECK(u.err.find(peakprobe::test::mnemonic_of(form)) != std::string::npos);
}

TEST_CASE("cli: pair --json - gives the classification", "[main][hw]") {
  Run r = run_peakprobe("pair " + arg(add_form()) + " " + arg(mul_form()) + " --json - --quiet");
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
  CHECK(r.out.find(target().help_texts().pairs_set) != std::string::npos);
  CHECK(r.out.find(target().report_pair_set(peakprobe::detect_cpu_info())) != std::string::npos);
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
  // Below what a kernel can use: refused up front, not measured into error rows.
  Run tiny = run_peakprobe("mem --sizes 1,16KiB");
  CHECK(tiny.rc == 2);
  CHECK_THAT(tiny.err, Catch::Contains("1 B is below the smallest working set"));
  Run short_chase = run_peakprobe("latency --sizes 64");
  CHECK(short_chase.rc == 2);
  CHECK_THAT(short_chase.err, Catch::Contains("two 64-byte lines per chain"));
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
  CHECK_THAT(huge.err, Catch::Contains("FLOP a call"));  // by work before memory: the same on every machine

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
  Run groups = run_peakprobe("--threads 2 matmul --shape 8,8,8 --batch 1 --config batch_threads=2 --baseline none");
  CHECK(groups.rc == 2);  // a second group would have no item
  CHECK_THAT(groups.err, Catch::Contains("more than the 1 batch item"));
  Run parts = run_peakprobe("--threads 2 matmul --shape 8,8,1 --config k_threads=2 --baseline none");
  CHECK(parts.rc == 2);  // K = 1 has one k value to share
  CHECK_THAT(parts.err, Catch::Contains("k_threads 2 is more than the 1 k group"));

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
  // The caller's core scanned beside the timed calls, except where the timestamp means nothing.
  if (!doc["host"].contains("emulator")) {
    REQUIRE(mm["core_availability"].is_object());
    CHECK(mm["core_availability"]["scanned_ms"].get<double>() >= 9.9);
    CHECK(mm["core_availability"]["share"].get<double>() > 0.0);
    CHECK(mm["core_availability"]["share"].get<double>() <= 1.0);
    // One thread under a measured compute roof is judged over the time its core ran it too.
    if (mm["efficiency_while_running"].is_number())
      CHECK(mm["efficiency_while_running"].get<double>() > mm["efficiency"].get<double>());
  } else {
    CHECK(mm["core_availability"].is_null());
  }
  // The ceiling of the kernel's own instructions: measured together with the step it ran, never
  // without the kernel alone, and its multiply-adds one per accumulator of the plan's block.
  CHECK(mm["kernel_mix_gflops"].is_null() == mm["kernel_mix_step"].is_null());
  CHECK(mm["kernel_mix_gflops"].is_null() == mm["kernel_mix_share"].is_null());
  if (mm["kernel_mix_gflops"].is_number()) {
    CHECK_FALSE(mm["kernel_l1_gflops"].is_null());
    CHECK(mm["kernel_mix_share"].get<double>() > 0);
    CHECK(mm["kernel_mix_gflops"].get<double>() ==
          Approx(mm["ceiling_gflops"].get<double>() * mm["kernel_mix_share"].get<double>()));
    int largest = 0;
    for (const auto& part : mm["kernel_mix_step"]) largest = std::max(largest, part["per_step"].get<int>());
    CHECK(largest == mm["config"]["mr"].get<int>() * mm["config"]["nv"].get<int>());
  }
}

TEST_CASE("cli: matmul --isa holds the kernels to a narrower level, or refuses", "[main][hw]") {
  Run bad = run_peakprobe("matmul --shape 8,8,8 --isa mmx-plus");
  CHECK(bad.rc == 2);
  CHECK_THAT(bad.err, Catch::Contains("--isa 'mmx-plus'"));
  const auto& target = peakprobe::isa::host_target();
  const std::string level = target.isa_levels().front();
  Run r = run_peakprobe("matmul --shape 37,41,43 --isa " + level + " --baseline none --json - --quiet");
  auto held = target.limit_isa(peakprobe::detect_cpu_info(), level);
  if (!held) {
    CHECK(r.rc == 4);
    CHECK_THAT(r.err, Catch::Contains(held.error()));
    PP_SKIP("--isa " << level << ": " << held.error());
  }
  if (const std::string missing = target.gemm_unsupported(*held, peakprobe::MatmulDtype::f32); !missing.empty()) {
    check_refused(r, missing);
    PP_SKIP("matmul f32 under --isa " << level << ": " << missing);
  }
  REQUIRE(r.rc == 0);
  const auto doc = nlohmann::json::parse(r.out);
  const auto& mm = doc["matmul"][0];
  CHECK(mm["isa_level"] == level);
  CHECK_THAT(mm["name"].get<std::string>(), Catch::EndsWith(", isa " + level));
  // The kernels are the held CPU's width, whatever this CPU's widest is.
  CHECK_THAT(mm["kernel"].get<std::string>(), Catch::StartsWith(target.width_name(target.gemm_vector_bits(*held))));
  // (No ceiling when the roof probe was mistrusted on a busy machine; when there is one, it is the held width's.)
  if (!mm["ceiling_source"].get<std::string>().empty() && mm["bound_by"].get<std::string>().rfind("compute", 0) == 0)
    CHECK(mm["ceiling_source"] == target.matmul_roof(*held, peakprobe::MatmulDtype::f32).instruction);
  CHECK(mm["max_rel_error"].get<double>() < 1e-5);
  // The document's host is the CPU as it is, not as it was held.
  CHECK(doc["host"]["features"].size() == peakprobe::detect_cpu_info().features.size());
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

TEST_CASE("cli: matmul on two threads checks a plan on one, and a grid of fewer threads says so", "[main][hw]") {
  if (const std::string missing = matmul_missing(peakprobe::MatmulDtype::f32); !missing.empty())
    PP_SKIP("matmul f32: " << missing);
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  if (sched_getaffinity(0, sizeof(allowed), &allowed) != 0 || CPU_COUNT(&allowed) < 2)
    PP_SKIP("this process may run on one CPU only");
  Run r = run_peakprobe("--threads 2 matmul --shape 64,64,64 --explain --baseline none --quiet");
  REQUIRE(r.rc == 0);
  // The team's cost is measured for the model, and a one-thread plan is timed beside the others.
  CHECK_THAT(r.out, Catch::Contains("team wake-up and join measured: 2 threads"));
  CHECK_THAT(r.out, Catch::Contains("checked on this problem:"));
  CHECK_THAT(r.out, Catch::Contains("grid=1x1"));
  // A first choice on both threads is also timed on the other grid of two: the same configuration
  // with the grid turned (B then packed ahead if it was read in place, which needs one row).
  const std::string heading = "checked on this problem:\n";
  const size_t listed = r.out.find(heading);
  REQUIRE(listed != std::string::npos);
  std::istringstream first_line(r.out.substr(listed + heading.size()));
  std::string first;
  first_line >> first;  // "mr=...,grid=RxC,..."
  INFO("first checked: " << first);
  auto turned = [](std::string c, const std::string& from, const std::string& to, bool packs_b) {
    c.replace(c.find(from), from.size(), to);
    if (packs_b && c.find(",pack_b=0") != std::string::npos) c.erase(c.find(",pack_b=0"), 9);
    return c + " ";
  };
  if (first.find("grid=1x2") != std::string::npos)
    CHECK_THAT(r.out, Catch::Contains(turned(first, "grid=1x2", "grid=2x1", true)));
  else if (first.find("grid=2x1") != std::string::npos)
    CHECK_THAT(r.out, Catch::Contains(turned(first, "grid=2x1", "grid=1x2", false)));
  // A --config grid of fewer threads than --threads runs, and the row says it used fewer.
  Run fewer = run_peakprobe("--threads 2 --json - matmul --shape 64,64,64 --config grid=1x1 --baseline none --quiet");
  REQUIRE(fewer.rc == 0);
  const auto row = nlohmann::json::parse(fewer.out)["matmul"][0];
  CHECK(row["threads"] == 2);
  CHECK(row["config"]["threads"] == 1);
  Run more = run_peakprobe("--threads 2 matmul --shape 64,64,64 --config grid=2x2 --baseline none --quiet");
  CHECK(more.rc == 2);
  CHECK_THAT(more.err, Catch::Contains("makes 4 threads"));
}

TEST_CASE("cli: hostile option values are refused with exit 2 before anything runs", "[main]") {
  // (Instruction texts the ISA's encoder refuses are in tests/<isa>/test_main.cpp.)
  const std::string inst = "inst " + arg(add_form());
  const std::vector<Refusal> cases = {
      {inst + " --dtype garbage", "--dtype 'garbage'"},
      {inst + " --ops nan", "--ops"},
      {inst + " --ops inf", "--ops"},
      {inst + " --ops -1", "--ops"},
      {inst + " --cpu -5", "--cpu"},
      {inst + " --threads 99999999999", "--threads"},
      {inst + " --listing --json -", "--listing prints to stdout"},
      {"matmul --shape 8,8,8 --baseline garbage", "--baseline 'garbage'"},
      {"matmul --shape 8,8,8 --baseline ''", "--baseline ''"},
      {"matmul --shape 65536,65536,65536", "FLOP a call"},
      {"matmul --shape 8,8,8 --batch -1", "--batch"},
      {"bench matmul --max-gflop nan", "--max-gflop"},
      {"bench matmul --max-gflop 1e308", "--max-gflop"},
      {"bench matmul --baseline mkl", "--baseline 'mkl'"},
      {"bench matmul --dtypes ''", "--dtypes"},
      {"mem -k ,", "--kernel"},
      {"mem --isa ,", "--isa"},
      {"run --json ''", "empty"},
      {"run --catalog ''", "empty"},
      {"run --out here", "--out"},
      {"--quick run", "--quick"},
      {"info --csv info.csv", "info writes no CSV"},
      {"info --markdown -", "info writes no Markdown"},
      {"compare a.json b.json --csv -", "compare writes no CSV"},
      {"score --flops -5 --bytes 1 --seconds 1", "positive"},  // no --table: refused before measuring one
      {"score --flops 1 --bytes 1 --seconds 1e10", "--seconds"},
  };
  check_refused(cases);
}

TEST_CASE("cli: input files must be regular files of a sane size", "[main]") {
  const peakprobe::test::ScratchDir dir;
  const std::string fifo = dir.file("fifo");
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  // A directory was read as an empty catalog, a FIFO blocked forever, /dev/zero never ended.
  for (const std::string& path : {dir.path.string(), fifo, std::string("/dev/zero")}) {
    INFO(path);
    Run cat = run_peakprobe("list --catalog " + quoted(path));
    CHECK(cat.rc == 2);
    CHECK_THAT(cat.err, Catch::Contains("not a regular file"));
    Run cmp = run_peakprobe("compare " + quoted(path) + " " + quoted(path));
    CHECK(cmp.rc == 2);
    CHECK_THAT(cmp.err, Catch::Contains("not a regular file"));
    Run table = run_peakprobe("score --flops 1 --bytes 1 --seconds 1 --table " + quoted(path));
    CHECK(table.rc == 2);
    CHECK_THAT(table.err, Catch::Contains("not a regular file"));
  }
}

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

TEST_CASE("cli: the set of outputs is checked whole before anything is measured", "[main]") {
  const peakprobe::test::ScratchDir dir;
  const std::string fifo = dir.file("fifo");
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  const std::string good = quoted(dir.file("good.json"));
  // Two documents on stdout, one file twice: usage errors.
  for (const std::string& args : {std::string("run --json - --csv -"), std::string("list --json - --markdown /dev/stdout"),
                                  "inst " + arg(add_form()) + " --json " + good + " --csv " + good}) {
    INFO(args);
    Run r = run_peakprobe(args);
    CHECK(r.rc == 2);
    CHECK(r.out.empty());
  }
  // A later target that cannot be written fails every command before it measures, and the earlier
  // target is not written either.
  const std::vector<std::string> commands = {
      "run --filter " + arg(target().help_texts().run_filter), "inst " + arg(add_form()),
      "pair " + arg(add_form()) + " " + arg(mul_form()), "mix " + arg(add_form()), "flopmix",
      "pairs --set " + target().help_texts().pairs_set + " --svg " + quoted(dir.file("p.svg")),
      "mem --sizes 32KiB", "latency --sizes 32KiB", "roofline", "matmul --shape 8,8,8 --baseline none",
      "bench matmul --shapes 8 --dtypes f32", "info", "list", "report --out " + quoted(dir.file("folder")),
      "report --table --pipes --out " + quoted(dir.file("folder")), "score --flops 1 --bytes 1 --seconds 1"};
  for (const auto& bad : {quoted(fifo), quoted(dir.file("missing/x.md")), std::string("/dev/null"), quoted(dir.path.string())}) {
    for (const auto& cmd : commands) {
      const std::string args = cmd + " --json " + good + " --markdown " + bad;
      INFO(args);
      Run r = run_peakprobe(args);
      CHECK((r.rc == 3 || (r.rc == 2 && cmd.rfind("info", 0) == 0)));  // info writes no Markdown at all
      CHECK(r.out.empty());
      CHECK_FALSE(std::filesystem::exists(dir.file("good.json")));
      CHECK_FALSE(std::filesystem::exists(dir.file("folder")));  // made for the report, removed again
    }
  }
  Run folder = run_peakprobe("report --out " + quoted(fifo));
  CHECK(folder.rc == 3);
  CHECK_THAT(folder.err, Catch::Contains("not a directory"));
}

TEST_CASE("cli: /dev/stdout is written in place, list honours --csv", "[main]") {
  const std::string filter = arg(peakprobe::test::mnemonic_of(roof_form()));
  Run r = run_peakprobe("list --filter " + filter + " --json /dev/stdout");
  REQUIRE(r.rc == 0);
  CHECK(nlohmann::json::parse(r.out)["catalog"].size() > 0);  // one document, no console table after it
  Run csv = run_peakprobe("list --filter " + filter + " --csv -");
  REQUIRE(csv.rc == 0);
  CHECK_THAT(csv.out, Catch::StartsWith("instruction,group,dtype,ops_per_instruction,supported,missing,origin\n"));
  CHECK_THAT(csv.out, Catch::Contains(roof_form()));
}

TEST_CASE("cli: very long and non-UTF-8 arguments get a short escaped message", "[main]") {
  const std::string long_text(100000, 'a');
  Run inst = run_peakprobe("inst " + quoted(long_text));
  CHECK(inst.rc == 2);
  CHECK_THAT(inst.err, Catch::Contains("at most 256"));
  CHECK(inst.err.size() < 3000);
  Run filter = run_peakprobe("run --filter " + quoted("\xff\x1b[2J" + long_text));
  CHECK(filter.rc == 2);
  CHECK_THAT(filter.err, Catch::Contains("\\xFF\\x1B[2J"));
  CHECK(filter.err.find('\x1b') == std::string::npos);
  CHECK(filter.err.size() < 3000);
  Run cpu = run_peakprobe("inst " + arg(add_form()) + " --cpu " + quoted("\xff"));
  CHECK(cpu.rc == 2);
  CHECK(cpu.err.find('\xff') == std::string::npos);
}

TEST_CASE("cli: gpu without an OpenCL runtime is a skipped report, exit 0", "[main]") {
  const Run none = run_peakprobe_env("PEAKPROBE_OPENCL_LIBRARY=/nonexistent/libOpenCL.so.1", "gpu --quick");
  INFO(none.out << none.err);
  CHECK(none.rc == 0);
  CHECK(none.out.find("skipped") != std::string::npos);
  CHECK(none.out.find("no OpenCL runtime") != std::string::npos);
  const Run listed = run_peakprobe_env("PEAKPROBE_OPENCL_LIBRARY=/nonexistent/libOpenCL.so.1", "gpu list");
  CHECK(listed.rc == 0);
  CHECK(listed.out.find("no OpenCL device") != std::string::npos);
}

TEST_CASE("cli: gpu --svg plots one device's roofline, or writes nothing when there is none", "[main][gpu]") {
  const peakprobe::test::ScratchDir dir;
  const std::string none = dir.file("none.svg");
  const Run skipped = run_peakprobe_env("PEAKPROBE_OPENCL_LIBRARY=/nonexistent/libOpenCL.so.1",
                                        "gpu --quick --svg " + quoted(none));
  CHECK(skipped.rc == 1);
  CHECK_THAT(skipped.err, Catch::Contains("no device has figures to plot"));
  CHECK_FALSE(std::filesystem::exists(none));
  CHECK(run_peakprobe("gpu --svg " + quoted(dir.file("l.svg")) + " list").rc == 2);
  // On a real device (PoCL in CI): the transfer figures alone make a roofline with host memory roofs.
  const Run listed = run_peakprobe("gpu list --json -");
  REQUIRE(listed.rc == 0);
  if (nlohmann::json::parse(listed.out)["devices"].empty()) PP_SKIP("no OpenCL device here");
  const std::string plot = dir.file("device.svg");
  const Run drawn = run_peakprobe("gpu --device 0 --only transfer --quick --svg " + quoted(plot));
  INFO(drawn.err);
  REQUIRE(drawn.rc == 0);
  const std::string svg = slurp(plot);
  CHECK(svg.rfind("<?xml", 0) == 0);
  CHECK_THAT(svg, Catch::Contains("Roofline, OpenCL device 0"));
  CHECK(svg.substr(svg.size() - 7) == "</svg>\n");
}

TEST_CASE("cli: gpu refuses unknown types, widths and parts with exit 2", "[main]") {
  CHECK(run_peakprobe("gpu --dtypes f32,bf17").rc == 2);
  CHECK(run_peakprobe("gpu --widths 3").rc == 2);
  CHECK(run_peakprobe("gpu --only compute,flops").rc == 2);
  CHECK(run_peakprobe("gpu --markdown -").rc == 2);
}
