// End-to-end checks of the executable with x86 instruction texts: what the x86 parser and encoder
// refuse. The ISA-neutral command-line tests are in tests/test_main.cpp and tests/test_cmd_*.cpp.
#include <catch2/catch.hpp>

#include <string>

#include <nlohmann/json.hpp>

#include "cli_run.hpp"
#include "cpu/cpu_info.hpp"
#include "skip.hpp"

namespace {

using peakprobe::test::Run;
using peakprobe::test::check_refused;
using peakprobe::test::Refusal;
using peakprobe::test::run_peakprobe;

}  // namespace

TEST_CASE("cli: impossible operand form exits 2", "[main]") {
  Run r = run_peakprobe("inst \"vaddps ymm, xmm, zmm\"");
  CHECK(r.rc == 2);
  CHECK(r.err.find("impossible operand form") != std::string::npos);
}

TEST_CASE("cli: x86 encoding prefixes and immediates the encoder cannot take exit 2 before anything runs", "[main]") {
  const std::vector<Refusal> cases = {
      {"inst \"{vex} addps xmm, xmm\"", "no VEX encoding"},
      {"inst \"shl r64, imm8\" --imm 1000", "imm8, from -128 to 255"},
      {"inst \"add r64, imm32\" --imm 4294967295", "imm32"},
      {"inst \"{evex} add r64, r64\"", "no EVEX encoding"},
  };
  check_refused(cases);
}

// 24 dot products, 8 broadcasts and 3 loads a step take more than the 32 vector registers as a
// stream of their own on the chains a stream usually gives them: the stream keeps the dot products'
// chains and runs the rest on fewer.
TEST_CASE("cli: matmul measures the instructions of a block that fills the register file", "[main][hw]") {
  if (!peakprobe::detect_cpu_info().has("avx512_vnni")) PP_SKIP("no 512-bit int8 dot product (avx512_vnni)");
  Run r = run_peakprobe("matmul --shape 96,96,96 --dtype int8 --isa avx512 --config mr=8,nv=3 --baseline none --json -");
  REQUIRE(r.rc == 0);
  CHECK(r.err.find("not enough registers") == std::string::npos);
  CHECK(r.err.find("registers left hold fewer") == std::string::npos);
  const auto mm = nlohmann::json::parse(r.out)["matmul"][0];
  CHECK(mm["config"]["mr"] == 8);
  if (mm["kernel_mix_step"].is_array()) {
    int dots = 0;
    for (const auto& part : mm["kernel_mix_step"])
      if (part["instruction"] == "vpdpbusd zmm, zmm, zmm") dots = part["per_step"].get<int>();
    CHECK(dots == 24);
  } else if (mm["kernel_l1_gflops"].is_number() && mm["ceiling_gflops"].is_number() &&
             mm["bound_by"].get<std::string>().rfind("compute", 0) == 0) {
    // Left out for a reason the log names, never for want of registers.
    CHECK((r.err.find("instruction mix was not measured") != std::string::npos ||
           r.err.find("instruction mix is not reported") != std::string::npos));
  }
}
