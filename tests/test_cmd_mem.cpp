// The memory commands (src/cli/cmd_mem.cpp): `mem` (bandwidth kernels by working set) and `latency`
// (pointer chase by working set). Kernels, widths and sizes are checked before anything runs.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "asm/mem_kernel.hpp"
#include "cli_run.hpp"
#include "cpu/cpu_info.hpp"
#include "target_fixture.hpp"

namespace {

using peakprobe::test::check_refused;
using peakprobe::test::Refusal;
using peakprobe::test::Run;
using peakprobe::test::run_peakprobe;
using peakprobe::test::target;

// The target's vector widths by name, narrowest first, as `mem --isa` lists them.
std::string width_names() {
  std::string out;
  for (int bits : target().vector_widths()) out += (out.empty() ? "" : ", ") + target().width_name(bits);
  return out;
}

}  // namespace

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

TEST_CASE("mem: refusals name the kernel, the width and the smallest working set, and the limits are allowed", "[main]") {
  const int chains = target().max_chase_chains();
  const std::vector<Refusal> cases = {
      {"mem --sizes 1MiB --sweep", "give --sizes or --sweep, not both"},
      {"latency --sizes 1MiB --sweep", "give --sizes or --sweep, not both"},
      {"mem --kernel stream", "'stream'"},
      {"mem -k load,zz-kernel", "'zz-kernel'"},
      // Every kernel ('all') is allowed: the width after it is what is refused.
      {"mem -k all --isa zz-width", "--isa 'zz-width': one of " + width_names() + ", all"},
      {"mem --isa ,", "--isa ',': no width named"},
      // The widest kernel's step, for each of up to three arrays, per thread.
      {"mem --sizes 1,16KiB", "(" + std::to_string(target().mem_max_step_bytes() * 3) + " B)"},
      // Two 64-byte lines per chain, at the most chains a chase runs.
      {"latency --chains " + std::to_string(chains) + " --sizes 64", "(" + std::to_string(128 * chains) + " B)"},
      {"latency --chains " + std::to_string(chains + 1), "--chains"},
      {"latency --mode zz-mode", "--mode"},
      {"mem --cpu 1000000", "--cpu 1000000: this process may not run there"},
      {"latency --cpu 1000000", "--cpu 1000000: this process may not run there"},
  };
  check_refused(cases);
}

TEST_CASE("mem: --help names every kernel and this ISA's widths, latency its most chains", "[main]") {
  Run mem = run_peakprobe("mem --help");
  CHECK(mem.rc == 0);
  for (const auto& k : peakprobe::isa::mem_kernels()) CHECK_THAT(mem.out, Catch::Contains(k.name));
  CHECK_THAT(mem.out, Catch::Contains("Vector width: " + width_names() + " or all"));
  CHECK_THAT(mem.out, Catch::Contains("--sizes") && Catch::Contains("--sweep"));
  Run latency = run_peakprobe("latency --help");
  CHECK(latency.rc == 0);
  CHECK_THAT(latency.out, Catch::Contains("--mode") && Catch::Contains("--pages") &&
                              Catch::Contains("1.." + std::to_string(target().max_chase_chains())));
}

TEST_CASE("mem: another kernel at another width, and a chase of several chains, give their rows", "[main][hw]") {
  const int narrowest = target().mem_widths(peakprobe::detect_cpu_info()).front();
  Run r = run_peakprobe("mem -k copy --isa " + target().width_name(narrowest) + " --sizes 32KiB --json - --quiet");
  REQUIRE(r.rc == 0);
  const auto bandwidth = nlohmann::json::parse(r.out)["bandwidth"];
  REQUIRE(bandwidth.size() == 1);
  CHECK(bandwidth[0]["kernel"] == "copy");
  CHECK(bandwidth[0]["isa"] == target().width_name(narrowest));
  CHECK(bandwidth[0]["size_bytes"] == 32768);
  CHECK(bandwidth[0]["gbps"].get<double>() > 0);
  Run chase = run_peakprobe("latency --sizes 32KiB --chains 2 --mode page-local --json - --quiet");
  REQUIRE(chase.rc == 0);
  const auto latency = nlohmann::json::parse(chase.out)["latency"];
  REQUIRE(latency.size() == 1);
  CHECK(latency[0]["chains"] == 2);
  CHECK(latency[0]["mode"] == "page-local");
  CHECK(latency[0]["size_bytes"] == 32768);
  CHECK(latency[0]["latency_ns"].get<double>() > 0);
}
