// End-to-end checks of the executable with x86 instruction texts: what the x86 parser and encoder
// refuse. The ISA-neutral command-line tests are in tests/test_main.cpp.
#include <catch2/catch.hpp>

#include <string>

#include "cli_run.hpp"

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
