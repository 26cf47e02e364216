// Operations per instruction for forms no catalog row describes (x86::arithmetic_of), checked
// against values worked out by hand from the catalog's convention (probes/x86.catalog header): an
// element add/sub/mul/div/sqrt/min/max, compare, shift, rotate or abs counts 1 per lane, an FMA lane
// 2, a dot product 2 per element product, the 52-bit multiply-adds 2 per lane, an AMX tile product
// 2 per product of the 16 x 16 result. Each width (xmm, ymm, zmm), scalar and packed, and each
// element size is listed, because the count comes from the operand width and the mnemonic's
// element letter: a wrong lane count would scale a roof by 2x or 4x without any other sign. Forms
// without arithmetic (logic, moves, shuffles, conversions, scalar integer) must give nothing, so
// `peakprobe table` does not invent a roof for them.
#include <catch2/catch.hpp>

#include <optional>
#include <string>

#include "arithmetic_check.hpp"
#include "asm/x86/arithmetic.hpp"

using namespace peakprobe;

namespace {

using Expect = test::ArithmeticExpect;

std::optional<x86::Arithmetic> arithmetic(const std::string& text) {
  return test::arithmetic_of_text(text, [](const std::string& t) { return x86::resolve_inst(t); },
                                  [](const x86::InstForm& f) { return x86::arithmetic_of(f); });
}

void check_all(std::initializer_list<Expect> cases) {
  test::check_arithmetic(cases, [](const std::string& t) { return x86::resolve_inst(t); },
                         [](const x86::InstForm& f) { return x86::arithmetic_of(f); });
}

}  // namespace

TEST_CASE("arithmetic: float element ops count 1 per lane, packed by width, scalar once", "[arithmetic]") {
  check_all({
      // Packed: the vector width over the element size.
      {"addps xmm, xmm", 4, "f32"},
      {"addpd xmm, xmm", 2, "f64"},
      {"vaddps ymm, ymm, ymm", 8, "f32"},
      {"vaddpd ymm, ymm, ymm", 4, "f64"},
      {"vaddps zmm, zmm, zmm", 16, "f32"},
      {"vaddpd zmm, zmm, zmm", 8, "f64"},
      {"vsubps ymm, ymm, m256", 8, "f32"},
      {"mulpd xmm, m128", 2, "f64"},
      {"vmulps zmm {k}, zmm, zmm", 16, "f32"},
      {"vdivpd zmm, zmm, zmm", 8, "f64"},
      {"vdivps xmm, xmm, xmm", 4, "f32"},
      {"vsqrtps ymm, ymm", 8, "f32"},
      {"vsqrtpd zmm, zmm", 8, "f64"},
      {"minps xmm, xmm", 4, "f32"},
      {"vmaxpd ymm, ymm, ymm", 4, "f64"},
      // A broadcast operand is one element from memory, the operation still spans the register.
      {"vaddps zmm, zmm, m32bcst", 16, "f32"},
      {"vmulpd ymm, ymm, m64bcst", 4, "f64"},
      // Scalar: one element whatever the register width, with or without VEX/EVEX.
      {"addss xmm, xmm", 1, "f32"},
      {"addsd xmm, m64", 1, "f64"},
      {"vaddss xmm, xmm, xmm", 1, "f32"},
      {"vmulsd xmm {k}, xmm, xmm", 1, "f64"},
      {"sqrtsd xmm, xmm", 1, "f64"},
      {"vdivss xmm, xmm, m32", 1, "f32"},
      {"maxss xmm, xmm", 1, "f32"},
      // Half precision (AVX512-FP16): 16-bit lanes.
      {"vaddph xmm, xmm, xmm", 8, "f16"},
      {"vaddph ymm, ymm, ymm", 16, "f16"},
      {"vmulph zmm, zmm, zmm", 32, "f16"},
      {"vsqrtph zmm, zmm", 32, "f16"},
      {"vaddph zmm, zmm, m16bcst", 32, "f16"},
      {"vmulsh xmm, xmm, xmm", 1, "f16"},
  });
}

TEST_CASE("arithmetic: an FMA lane counts 2, the fused add-sub forms too", "[arithmetic]") {
  check_all({
      {"vfmadd231ps xmm, xmm, xmm", 8, "f32"},
      {"vfmadd231ps ymm, ymm, ymm", 16, "f32"},  // the catalog header's own example
      {"vfmadd231ps zmm, zmm, zmm", 32, "f32"},
      {"vfmadd132pd xmm, xmm, xmm", 4, "f64"},
      {"vfmadd213pd ymm, ymm, m256", 8, "f64"},
      {"vfmadd231pd zmm, zmm, m64bcst", 16, "f64"},
      {"vfnmadd231ps ymm, ymm, ymm", 16, "f32"},
      {"vfmsub132pd zmm, zmm, zmm", 16, "f64"},
      {"vfnmsub213ps zmm {k}, zmm, zmm", 32, "f32"},
      {"vfmaddsub231ps ymm, ymm, ymm", 16, "f32"},
      {"vfmsubadd132pd zmm, zmm, zmm", 16, "f64"},
      // Scalar FMA: one lane.
      {"vfmadd231ss xmm, xmm, xmm", 2, "f32"},
      {"vfnmsub132sd xmm, xmm, m64", 2, "f64"},
      {"vfmadd213sh xmm, xmm, xmm", 2, "f16"},
      {"vfmadd231ph ymm, ymm, ymm", 32, "f16"},
      {"vfmadd231ph zmm, zmm, zmm", 64, "f16"},
  });
}

TEST_CASE("arithmetic: dot products count 2 per element product", "[arithmetic]") {
  check_all({
      // pmaddwd: one 16 x 16 product per word, pairs summed: xmm 8 products.
      {"pmaddwd xmm, xmm", 16, "i16"},
      {"vpmaddwd ymm, ymm, ymm", 32, "i16"},  // the catalog header's example
      {"vpmaddwd zmm, zmm, m512", 64, "i16"},
      // pmaddubsw: one u8 x s8 product per byte.
      {"pmaddubsw xmm, xmm", 32, "i8"},
      {"vpmaddubsw ymm, ymm, ymm", 64, "i8"},
      {"vpmaddubsw zmm, zmm, zmm", 128, "i8"},
      // vpdpbusd: four byte products per 32-bit lane.
      {"{vex} vpdpbusd xmm, xmm, xmm", 32, "i8"},
      {"{vex} vpdpbusd ymm, ymm, ymm", 64, "i8"},
      {"vpdpbusd ymm, ymm, ymm", 64, "i8"},
      {"vpdpbusd zmm, zmm, zmm", 128, "i8"},  // the catalog header's example
      {"vpdpbusds zmm, zmm, m32bcst", 128, "i8"},
      // vpdpwssd: two word products per 32-bit lane.
      {"{vex} vpdpwssd ymm, ymm, ymm", 32, "i16"},
      {"vpdpwssd xmm, xmm, xmm", 16, "i16"},
      {"vpdpwssd zmm, zmm, zmm", 64, "i16"},
      {"vpdpwssds zmm, zmm, zmm", 64, "i16"},
      // vdpbf16ps: two bf16 products per f32 lane.
      {"vdpbf16ps xmm, xmm, xmm", 16, "bf16"},
      {"vdpbf16ps ymm, ymm, ymm", 32, "bf16"},
      {"vdpbf16ps zmm, zmm, zmm", 64, "bf16"},  // the catalog header's example
      {"vdpbf16ps zmm, zmm, m32bcst", 64, "bf16"},
  });
}

TEST_CASE("arithmetic: AMX tile products count 2 per product of the 16 x 16 result", "[arithmetic]") {
  // 16 x 16 results, each a sum of 32 bf16 (or f16) pairs' or 64 byte quads' products.
  check_all({
      {"tdpbf16ps tmm, tmm, tmm", 2.0 * 16 * 16 * 32, "bf16"},
      {"tdpbssd tmm, tmm, tmm", 2.0 * 16 * 16 * 64, "i8"},
      {"tdpbsud tmm, tmm, tmm", 32768, "i8"},
      {"tdpbusd tmm, tmm, tmm", 32768, "i8"},
      {"tdpbuud tmm, tmm, tmm", 32768, "i8"},
  });
  // AMX-FP16 is newer than some asmjit builds: checked where the database knows it.
  if (auto f = x86::resolve_inst("tdpfp16ps tmm, tmm, tmm")) {
    const auto a = x86::arithmetic_of(*f);
    REQUIRE(a.has_value());
    CHECK(a->ops == 16384);
    CHECK(a->dtype == "f16");
  }
  // The other tile instructions are moves.
  CHECK_FALSE(arithmetic("tilezero tmm").has_value());
}

TEST_CASE("arithmetic: packed integer ops count 1 per lane of their element size", "[arithmetic]") {
  check_all({
      // add / subtract, saturating too
      {"paddb xmm, xmm", 16, "i8"},
      {"vpaddw ymm, ymm, ymm", 16, "i16"},
      {"vpaddd zmm, zmm, zmm", 16, "i32"},
      {"paddq xmm, xmm", 2, "i64"},
      {"vpsubq ymm, ymm, m256", 4, "i64"},
      {"psubusb xmm, xmm", 16, "i8"},
      {"vpaddsw zmm, zmm, zmm", 32, "i16"},
      {"vpaddusw ymm, ymm, ymm", 16, "i16"},
      // absolute value, min / max
      {"pabsd xmm, xmm", 4, "i32"},
      {"vpabsq zmm, zmm", 8, "i64"},
      {"vpabsb ymm, ymm", 32, "i8"},
      {"pminub xmm, xmm", 16, "i8"},
      {"vpmaxsd ymm, ymm, ymm", 8, "i32"},
      {"vpminuq zmm, zmm, zmm", 8, "i64"},
      {"pmaxsw xmm, xmm", 8, "i16"},
      // compare, into a vector or a mask
      {"pcmpeqb xmm, xmm", 16, "i8"},
      {"vpcmpgtq ymm, ymm, ymm", 4, "i64"},
      {"vpcmpeqd k, zmm, zmm", 16, "i32"},
      {"vpcmpd k, zmm, zmm, imm8", 16, "i32"},
      {"vpcmpuw k, zmm, zmm, imm8", 32, "i16"},
      {"vpcmpub k, ymm, ymm, imm8", 32, "i8"},
      // shifts (immediate, vector-count and per-lane) and rotates: the count operand's width
      // does not matter, the widest register does
      {"psllw xmm, imm8", 8, "i16"},
      {"psrlq xmm, xmm", 2, "i64"},
      {"vpsrad ymm, ymm, xmm", 8, "i32"},
      {"vpsllvq zmm, zmm, zmm", 8, "i64"},
      {"vpsravw zmm, zmm, zmm", 32, "i16"},
      {"vpsrlvd ymm, ymm, ymm", 8, "i32"},
      {"vprold zmm, zmm, imm8", 16, "i32"},
      {"vprorvq ymm, ymm, ymm", 4, "i64"},
      // multiplies, low and high halves
      {"pmulld xmm, xmm", 4, "i32"},
      {"vpmullw ymm, ymm, ymm", 16, "i16"},
      {"vpmullq zmm, zmm, zmm", 8, "i64"},
      {"pmulhw xmm, xmm", 8, "i16"},
      {"vpmulhuw ymm, ymm, ymm", 16, "i16"},
      {"vpmulhrsw zmm, zmm, zmm", 32, "i16"},
      // 32 x 32 -> 64-bit products: one per 64-bit lane, counted in the 32-bit inputs
      {"pmuludq xmm, xmm", 2, "i32"},
      {"vpmuludq ymm, ymm, ymm", 4, "i32"},
      {"vpmuldq zmm, zmm, zmm", 8, "i32"},
      // 52-bit multiply-adds: multiply + add per 64-bit lane
      {"vpmadd52luq xmm, xmm, xmm", 4, "i64"},
      {"vpmadd52luq zmm, zmm, zmm", 16, "i64"},
      {"vpmadd52huq ymm, ymm, m64bcst", 8, "i64"},
  });
}

TEST_CASE("arithmetic: logic, moves, shuffles, conversions and scalar integer give nothing", "[arithmetic]") {
  for (const char* text : {
           // bitwise logic, float and integer
           "vandps ymm, ymm, ymm", "andpd xmm, xmm", "vxorps zmm, zmm, zmm", "pxor xmm, xmm", "vpxor ymm, ymm, ymm",
           "vpandd zmm, zmm, zmm", "vpandn ymm, ymm, ymm", "vpternlogd zmm, zmm, zmm, imm8", "vpord zmm, zmm, zmm",
           // moves, loads, stores, broadcasts
           "vmovaps ymm, ymm", "movdqa xmm, xmm", "vmovups zmm, m512", "vmovdqu ymm, m256", "vmovups m256, ymm",
           "vbroadcastss ymm, xmm", "vpbroadcastd zmm, xmm",
           // shuffles and permutes; byte-wise whole-register shifts are shuffles, not lane shifts
           "vpshufb ymm, ymm, ymm", "shufps xmm, xmm, imm8", "vpermps ymm, ymm, ymm", "vpunpcklbw ymm, ymm, ymm",
           "vpalignr ymm, ymm, ymm, imm8", "pslldq xmm, imm8", "vpsrldq ymm, ymm, imm8", "vblendps ymm, ymm, ymm, imm8",
           // conversions and extensions
           "vcvtdq2ps ymm, ymm", "cvtps2pd xmm, xmm", "vpmovzxbw ymm, xmm", "vpmovsxwd zmm, ymm",
           // scalar integer: no vector operand (the catalog's rows count those)
           "add r64, r64", "imul r64, r64", "sub r32, imm8", "lea r64, m", "mov r64, r64",
           // mask registers
           "kandw k, k, k", "kmovw k, k"}) {
    INFO(text);
    CHECK_FALSE(arithmetic(text).has_value());
  }
}

// One op a lane, like an element add: compares (into a vector or a mask), reciprocal and square
// root estimates, rounding, horizontal adds (a result lane each), alternating add/subtract, and
// per-lane population and leading-zero counts. (That every catalog row the rule counts agrees with
// the catalog is checked in test_target.cpp, through the target.)
TEST_CASE("arithmetic: compares, estimates, rounding, horizontal adds and bit counts count 1 a lane", "[arithmetic]") {
  check_all({
      {"cmpps xmm, xmm, imm8", 4, "f32"},
      {"vcmpps ymm, ymm, ymm, imm8", 8, "f32"},
      {"vcmppd k, zmm, zmm, imm8", 8, "f64"},
      {"vcmpss xmm, xmm, xmm, imm8", 1, "f32"},
      {"rcpps xmm, xmm", 4, "f32"},
      {"vrsqrtss xmm, xmm, xmm", 1, "f32"},
      {"vrcp14ps zmm, zmm", 16, "f32"},
      {"vrsqrt14pd ymm, ymm", 4, "f64"},
      {"vroundpd ymm, ymm, imm8", 4, "f64"},
      {"vrndscaleps zmm, zmm, imm8", 16, "f32"},
      {"vhaddps ymm, ymm, ymm", 8, "f32"},
      {"hsubpd xmm, xmm", 2, "f64"},
      {"vaddsubps ymm, ymm, ymm", 8, "f32"},
      {"vpopcntb zmm, zmm", 64, "i8"},
      {"vpopcntq zmm, zmm", 8, "i64"},
      {"vplzcntd ymm, ymm", 8, "i32"},
  });
}
