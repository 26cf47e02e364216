// The one conversion from the CPU's features (as the OS enables them) to x86 emitter flags.
#include <catch2/catch.hpp>

#include "cpu_with.hpp"

#include "asm/x86/host_isa.hpp"

using namespace peakprobe;

TEST_CASE("host_isa: each flag follows its own feature, AVX2 and FMA apart", "[host_isa]") {
  auto none = x86::host_isa(test::cpu_with({}));
  CHECK_FALSE((none.avx || none.avx2 || none.fma || none.avx512f || none.avx512bw || none.avx512dq || none.amx));

  auto zen3 = x86::host_isa(test::cpu_with({"sse2", "avx", "avx2", "fma", "bmi2"}));
  CHECK(zen3.avx);
  CHECK(zen3.avx2);
  CHECK(zen3.fma);
  CHECK_FALSE(zen3.avx512f);

  // AVX2 without FMA (some low-power cores): 256-bit integer kernels yes, fused multiply-add no.
  auto no_fma = x86::host_isa(test::cpu_with({"avx", "avx2"}));
  CHECK(no_fma.avx2);
  CHECK_FALSE(no_fma.fma);

  auto spr = x86::host_isa(test::cpu_with({"avx", "avx2", "fma", "avx512_f", "avx512_bw", "avx512_dq", "amx_tile"}));
  CHECK(spr.avx512f);
  CHECK(spr.avx512bw);
  CHECK(spr.avx512dq);
  CHECK(spr.amx);
}
