// The AArch64 host description: feature names as Linux spells them, their aliases, and an identity
// that says when the process runs under an emulator.
#include <catch2/catch.hpp>

#include "asm/host_cpu.hpp"

using namespace peakprobe;

TEST_CASE("a64 host cpu: feature names and aliases", "[a64][host_cpu]") {
  CHECK(isa::normalize_feature_name("NEON") == "asimd");
  CHECK(isa::normalize_feature_name("dotprod") == "asimddp");
  CHECK(isa::normalize_feature_name("I8MM") == "i8mm");
  CHECK(isa::feature_known("bf16"));
  CHECK(isa::feature_known("sve2"));
  CHECK_FALSE(isa::feature_known("avx"));
  const auto all = isa::all_feature_names();
  CHECK(std::find(all.begin(), all.end(), "asimd") != all.end());
}

TEST_CASE("a64 host cpu: features come from the kernel and name the base ISA", "[a64][host_cpu]") {
  CpuInfo info;
  isa::detect_features(info);
  isa::detect_identity(info);
  // Every AArch64 Linux system has floating point and Advanced SIMD.
  CHECK(std::find(info.features.begin(), info.features.end(), "fp") != info.features.end());
  CHECK(std::find(info.features.begin(), info.features.end(), "asimd") != info.features.end());
  CHECK_FALSE(info.vendor.empty());
  CHECK(info.tsc_invariant);
  // qemu's CPU model has MIDR implementer 0: such a machine must call itself emulated.
  if (info.family == 0) CHECK_FALSE(info.emulator.empty());
}
