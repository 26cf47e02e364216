// Tests for asm/x86/host_cpu.cpp: feature names as asmjit spells them, gating by XCR0, and on this
// machine the detected features against XCR0.
#include <catch2/catch.hpp>

#include <algorithm>
#include <set>
#include <string>

#include "asm/x86/host_cpu.hpp"
#include "cpu/cpu_info.hpp"
#include "hw_fixture.hpp"

namespace {

bool contains(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

const peakprobe::CpuInfo& host() { return peakprobe::test::this_cpu(); }

}  // namespace

TEST_CASE("feature names are normalised to asmjit spelling", "[host_cpu]") {
  using peakprobe::normalize_feature_name;
  CHECK(normalize_feature_name("AVX512F") == "avx512_f");
  CHECK(normalize_feature_name("avx512vl") == "avx512_vl");
  CHECK(normalize_feature_name("avx512_bw") == "avx512_bw");
  CHECK(normalize_feature_name("avx512vnni") == "avx512_vnni");
  CHECK(normalize_feature_name("avx512cd") == "avx512_cdi");
  CHECK(normalize_feature_name("AVXVNNI") == "avx_vnni");
  CHECK(normalize_feature_name("amxtile") == "amx_tile");
  CHECK(normalize_feature_name("SSE4.1") == "sse4_1");
  CHECK(normalize_feature_name("fma") == "fma");
}

TEST_CASE("feature names come from asmjit", "[host_cpu]") {
  using peakprobe::cpu_feature_known;
  CHECK(cpu_feature_known("fma"));
  CHECK(cpu_feature_known("AVX512F"));
  CHECK(cpu_feature_known("avx512cd"));
  CHECK(cpu_feature_known("avx_vnni"));
  CHECK(cpu_feature_known("amx_tile"));
  CHECK_FALSE(cpu_feature_known("avx513"));
  CHECK_FALSE(cpu_feature_known(""));

  const auto names = peakprobe::all_feature_names();
  CHECK(names.size() > 50);
  CHECK(std::set<std::string>(names.begin(), names.end()).size() == names.size());
  for (const auto& n : names) {
    INFO(n);
    CHECK(n == peakprobe::normalize_feature_name(n));  // canonical names are fixed points
  }
}

TEST_CASE("CpuInfo::has accepts aliases", "[host_cpu]") {
  peakprobe::CpuInfo info;
  info.features = {"sse2", "avx512_f", "avx512_cdi"};
  CHECK(info.has("sse2"));
  CHECK(info.has("AVX512F"));
  CHECK(info.has("avx512_f"));
  CHECK(info.has("avx512cd"));
  CHECK_FALSE(info.has("avx2"));
}

TEST_CASE("OS state in XCR0 gates AVX, AVX-512 and AMX", "[host_cpu]") {
  const std::vector<std::string> reported = {"sse2",        "fma",      "avx",      "avx2",
                                             "f16c",        "avx_vnni", "vaes",     "avx512_f",
                                             "avx512_vl",   "amx_tile", "amx_int8", "gfni"};
  peakprobe::CpuInfo info;

  SECTION("everything enabled") {
    peakprobe::x86::apply_os_state(info, reported, 0x600E7, true);
    CHECK(info.isa_state_text == "0x600e7 (AVX state on, AVX-512 state on, AMX state on)");
    REQUIRE(info.isa_state.size() == 4);
    CHECK(info.isa_state[0].key == "xcr0");
    CHECK_FALSE(info.isa_state[0].is_flag);
    CHECK(info.isa_state[1].is_flag);
    CHECK(info.features == reported);
    CHECK(info.os_disabled.empty());
    CHECK((info.isa_state_value("os_avx") && info.isa_state_value("os_avx512") && info.isa_state_value("os_amx")));
  }
  SECTION("SSE only: every VEX/EVEX/AMX feature is OS-disabled") {
    peakprobe::x86::apply_os_state(info, reported, 0x3, false);
    CHECK(info.features == std::vector<std::string>{"sse2", "gfni"});
    CHECK(info.os_disabled.size() == reported.size() - 2);
    CHECK_FALSE((info.isa_state_value("os_avx") || info.isa_state_value("os_avx512") || info.isa_state_value("os_amx")));
  }
  SECTION("AVX without ZMM state") {
    peakprobe::x86::apply_os_state(info, reported, 0x7, false);
    CHECK(info.has("avx2"));
    CHECK(info.has("fma"));
    CHECK(info.has("avx_vnni"));
    CHECK_FALSE(info.has("avx512f"));
    CHECK(contains(info.os_disabled, "avx512_vl"));
    CHECK(contains(info.os_disabled, "amx_tile"));
  }
  SECTION("AMX state in XCR0 but the kernel refused the grant") {
    peakprobe::x86::apply_os_state(info, reported, 0x600E7, false);
    CHECK(info.has("avx512_f"));
    CHECK_FALSE(info.has("amx_tile"));
    CHECK(info.os_disabled == std::vector<std::string>{"amx_tile", "amx_int8"});
    CHECK_FALSE(info.isa_state_value("os_amx"));
  }
  SECTION("opmask without upper ZMM is not AVX-512") {
    peakprobe::x86::apply_os_state(info, reported, 0x27, false);
    CHECK_FALSE(info.isa_state_value("os_avx512"));
    CHECK(contains(info.os_disabled, "avx512_f"));
  }
}

TEST_CASE("features are gated by XCR0", "[host_cpu][hw]") {
  const auto& cpu = host();
  CHECK(cpu.has("sse2"));  // part of x86-64
  CHECK((peakprobe::x86::read_xcr0() & 3) == 3);  // x87 and SSE state are always enabled
  CHECK(cpu.isa_state_value("xcr0") == peakprobe::x86::read_xcr0());
  if (cpu.has("avx")) CHECK((cpu.isa_state_value("xcr0") & 0x6) == 0x6);
  if (cpu.has("avx512_f")) CHECK((cpu.isa_state_value("xcr0") & 0xE6) == 0xE6);
  if (cpu.has("amx_tile")) CHECK((cpu.isa_state_value("xcr0") & 0x60000) == 0x60000);
  CHECK(cpu.isa_state_value("os_avx") == ((cpu.isa_state_value("xcr0") & 0x6) == 0x6));
  CHECK(cpu.isa_state_label == "XCR0");
  for (const auto& f : cpu.features) {
    INFO(f);
    CHECK(peakprobe::cpu_feature_known(f));
    CHECK_FALSE(contains(cpu.os_disabled, f));
  }
}

