// `peakprobe matmul` (src/cli/cmd_matmul.cpp): the bundled GEMM planned, checked, timed and scored.
// Its options are refused before anything is allocated or measured; a dtype or --isa level this
// CPU lacks is refused before the --config is read.
#include <catch2/catch.hpp>

#include <sched.h>

#include <algorithm>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "asm/target.hpp"
#include "cli_run.hpp"
#include "cpu/cpu_info.hpp"
#include "matmul/gemm.hpp"
#include "skip.hpp"
#include "target_fixture.hpp"

namespace {

using peakprobe::test::check_refused;
using peakprobe::test::Refusal;
using peakprobe::test::Run;
using peakprobe::test::run_peakprobe;
using peakprobe::test::target;

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
  CHECK_THAT(r.out, !Catch::Contains("--config:"));
  // With --config, the model's view of the configuration asked too.
  Run asked = run_peakprobe("matmul --shape 64,64,64 --explain --baseline none --quiet --config mr=4,nv=1,mc=32,kc=64,nc=64");
  REQUIRE(asked.rc == 0);
  CHECK_THAT(asked.out, Catch::Contains("--config placement:"));
  CHECK_THAT(asked.out, Catch::Contains("--config split:"));
  CHECK_THAT(asked.out, Catch::Contains("--config: 4x"));
}

TEST_CASE("matmul: --explain with --json - keeps stdout one document and explains on stderr", "[main][hw]") {
  Run r = run_peakprobe("matmul --shape 8,8,8 --explain --baseline none --json -");
  if (const std::string missing = matmul_missing(peakprobe::MatmulDtype::f32); !missing.empty()) {
    check_refused(r, missing);
    PP_SKIP("matmul f32: " << missing);
  }
  REQUIRE(r.rc == 0);
  INFO(r.out.substr(0, 200));
  const auto doc = nlohmann::json::parse(r.out, nullptr, false);
  CHECK_FALSE(doc.is_discarded());
  CHECK_THAT(r.err, Catch::Contains("chosen:") && Catch::Contains("candidates"));
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
  // with the grid turned (B read in place or packed ahead as it was).
  const std::string heading = "checked on this problem:\n";
  const size_t listed = r.out.find(heading);
  REQUIRE(listed != std::string::npos);
  std::istringstream first_line(r.out.substr(listed + heading.size()));
  std::string first;
  first_line >> first;  // "mr=...,grid=RxC,..."
  INFO("first checked: " << first);
  auto turned = [](std::string c, const std::string& from, const std::string& to) {
    c.replace(c.find(from), from.size(), to);
    return c + " ";
  };
  if (first.find("grid=1x2") != std::string::npos)
    CHECK_THAT(r.out, Catch::Contains(turned(first, "grid=1x2", "grid=2x1")));
  else if (first.find("grid=2x1") != std::string::npos)
    CHECK_THAT(r.out, Catch::Contains(turned(first, "grid=2x1", "grid=1x2")));
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

TEST_CASE("matmul: refusals name the bad value before the CPU is looked at, and the limits are allowed", "[main]") {
  const std::vector<Refusal> cases = {
      {"matmul", "--shape is required"},
      {"matmul --shape 10,10", "--shape '10,10': expected M,N,K with whole numbers from 1 to 65536"},
      {"matmul --shape 65537,8,8", "--shape '65537,8,8'"},
      {"matmul --shape 8,8,8 --cold-cache all+zz", "--cold-cache 'all+zz': the only extension is +tlb"},
      {"matmul --shape 8,8,8 --batch 0", "--batch 0: expected 1 to 1048576"},
      {"matmul --shape 8,8,8 --batch 1048577", "--batch 1048577: expected 1 to 1048576"},
      {"matmul --shape 8,8,8 --rounds 0", "--rounds"},
      {"matmul --shape 8,8,8 --rounds 11", "--rounds"},
      {"matmul --shape 8,8,8 --widen maybe", "--widen 'maybe': expected auto, yes or no"},
      // At their limits the shape, the batch and a cold cache with +tlb are allowed: the --baseline
      // checked after them is what is refused.
      {"matmul --shape 65536,1,1 --batch 1048576 --cold-cache all+tlb --baseline zz-blas", "--baseline 'zz-blas'"},
  };
  check_refused(cases);
}

TEST_CASE("matmul: --help teaches the shape, the tiling keys, the cold-cache modes and this ISA's levels", "[main]") {
  Run r = run_peakprobe("matmul --help");
  CHECK(r.rc == 0);
  CHECK(r.err.empty());
  for (const char* taught : {"--shape", "M,N,K", "--batch", "--dtype", "--cold-cache", "+tlb", "--config", "grid=RxC",
                             "batch_threads=N", "k_threads=N", "pack_a=0|1", "--baseline", "--rounds", "--explain",
                             "--autotune", "--isa", "--widen", "auto measures both roofs"})
    CHECK_THAT(r.out, Catch::Contains(taught));
  for (const auto& level : target().isa_levels()) CHECK_THAT(r.out, Catch::Contains(level));
  CHECK_THAT(r.out, Catch::Contains("--isa " + target().isa_levels().front() + "   # the narrowest kernels"));
}

TEST_CASE("matmul: --autotune reports its search, on the console or in the JSON document alone", "[main][hw]") {
  Run r = run_peakprobe("matmul --shape 8,8,8 --autotune --baseline none --json - --quiet");
  if (const std::string missing = matmul_missing(peakprobe::MatmulDtype::f32); !missing.empty()) {
    check_refused(r, missing);
    PP_SKIP("matmul f32: " << missing);
  }
  REQUIRE(r.rc == 0);
  const auto doc = nlohmann::json::parse(r.out);  // the whole of stdout: no console text beside it
  const auto& at = doc["autotune"];
  REQUIRE(at.is_object());
  CHECK(at["measured"].get<int>() >= 1);
  CHECK(at["points"].size() == at["measured"].get<size_t>());
  CHECK(at["finalists"].get<int>() <= at["measured"].get<int>());
  CHECK(at["model_gap"].get<double>() >= 0);
  CHECK_FALSE(at["best"].get<std::string>().empty());
  CHECK(doc["matmul"][0]["config_source"] == "autotune");
  CHECK(doc["matmul"][0]["model_gap"] == at["model_gap"]);
  Run console = run_peakprobe("matmul --shape 8,8,8 --autotune --baseline none --quiet");
  REQUIRE(console.rc == 0);
  CHECK_THAT(console.out, Catch::Contains("autotune: ") && Catch::Contains("best measured: ") &&
                              Catch::Contains("cost model's pick: "));
}

TEST_CASE("matmul: --widen yes on f32 is refused: f32 has nothing to widen to", "[main]") {
  Run r = run_peakprobe("matmul --shape 8,8,8 --dtype f32 --widen yes --baseline none");
  if (!matmul_missing(peakprobe::MatmulDtype::f32).empty()) {
    check_refused(r, matmul_missing(peakprobe::MatmulDtype::f32));  // the dtype itself is refused first
    PP_SKIP("matmul f32: " << matmul_missing(peakprobe::MatmulDtype::f32));
  }
  CHECK(r.rc == 2);
  CHECK_THAT(r.err, Catch::Contains("--widen yes") && Catch::Contains("f32 is not widened"));
}

TEST_CASE("matmul: --widen takes one side of bf16's choice and reports the roof not taken", "[main][hw]") {
  const peakprobe::CpuInfo cpu = peakprobe::detect_cpu_info();
  if (!matmul_missing(peakprobe::MatmulDtype::bf16).empty()) PP_SKIP("matmul bf16: " << matmul_missing(peakprobe::MatmulDtype::bf16));
  if (!target().gemm_widened_alternative(cpu, peakprobe::MatmulDtype::bf16))
    PP_SKIP("bf16's kernels have no choice between a dot product and widening on this CPU");
  for (const char* side : {"yes", "no"}) {
    CAPTURE(side);
    Run r = run_peakprobe(std::string("matmul --shape 64,64,64 --dtype bf16 --baseline none --rounds 1 --json - --quiet "
                                      "--widen ") + side);
    REQUIRE(r.rc == 0);
    const auto row = nlohmann::json::parse(r.out)["matmul"][0];
    const bool widened = row["kernel"].get<std::string>().find(" as ") != std::string::npos;
    CHECK(widened == (std::string(side) == "yes"));
    // The roof not taken is named, and it is not the one that binds.
    REQUIRE(row["ceiling_alternative_source"].is_string());
    CHECK(row["ceiling_alternative_source"] != row["ceiling_source"]);
    CHECK(row["max_rel_error"].get<double>() < 1e-2);
  }
}

TEST_CASE("matmul: the OpenBLAS baseline never runs its generic fallback core where this CPU runs a better one",
          "[main][hw]") {
  if (const std::string missing = matmul_missing(peakprobe::MatmulDtype::f32); !missing.empty())
    PP_SKIP("matmul f32: " << missing);
  Run r = run_peakprobe("matmul --shape 64,64,64 --baseline openblas --rounds 1 --json - --quiet");
  REQUIRE(r.rc == 0);
  const auto row = nlohmann::json::parse(r.out)["matmul"][0];
  if (row["baselines"].empty()) PP_SKIP("OpenBLAS is not installed here");
  const auto& b = row["baselines"][0];
  REQUIRE(b["status"] != "error");
  const std::string version = b["version"].get<std::string>();
  const auto cores = target().openblas_cores(peakprobe::detect_cpu_info());
  if (cores.for_features.empty()) PP_SKIP("this CPU's features run no OpenBLAS core better than its fallback");
  // Its configuration string, word by word: the fallback core's name is not among them.
  std::istringstream words(version.substr(0, version.find(" (")));
  for (std::string w; words >> w;) CHECK(w != cores.fallback);
  // Where it was told a core, the version says so and names that core.
  if (version.find("OPENBLAS_CORETYPE=") != std::string::npos)
    CHECK_THAT(version, Catch::Contains(cores.for_features + " MAX_THREADS") ||
                            Catch::Contains(" " + cores.for_features + " "));
}
