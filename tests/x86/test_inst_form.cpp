#include <catch2/catch.hpp>

#include "asm/x86/inst_form.hpp"

using namespace peakprobe::x86;

TEST_CASE("resolve: roles and features come from asmjit's database", "[inst_form]") {
  auto f = resolve_inst("vfmadd231ps ymm, ymm, ymm");
  REQUIRE(f.ok());
  REQUIRE(f->roles.size() == 3);
  CHECK(f->roles[0].read);
  CHECK(f->roles[0].write);
  CHECK(f->roles[1].read);
  CHECK_FALSE(f->roles[1].write);
  CHECK(std::find(f->features.begin(), f->features.end(), "fma") != f->features.end());
  CHECK_FALSE(f->evex_native);

  auto z = resolve_inst("vfmadd231ps zmm, zmm, zmm");
  REQUIRE(z.ok());
  CHECK(z->evex_native);
  CHECK(std::find(z->features.begin(), z->features.end(), "avx512_f") != z->features.end());

  auto p = resolve_inst("popcnt r64, r64");
  REQUIRE(p.ok());
  CHECK_FALSE(p->roles[0].read);  // popcnt's destination is not a source: latency chains through the input
  CHECK(p->roles[0].write);
}

TEST_CASE("resolve: encoding prefix selects VEX or EVEX and so the feature", "[inst_form]") {
  auto vex = resolve_inst("{vex} vpdpbusd ymm, ymm, ymm");
  REQUIRE(vex.ok());
  CHECK(std::find(vex->features.begin(), vex->features.end(), "avx_vnni") != vex->features.end());
  auto evex = resolve_inst("vpdpbusd ymm, ymm, ymm");
  REQUIRE(evex.ok());
  CHECK(std::find(evex->features.begin(), evex->features.end(), "avx512_vnni") != evex->features.end());
}

TEST_CASE("resolve: implicit rdx:rax of div become explicit operands", "[inst_form]") {
  auto d = resolve_inst("div r64");
  REQUIRE(d.ok());
  REQUIRE(d->text.operands.size() == 3);
  CHECK(d->text.operands[0].fixed == "rdx");
  CHECK(d->text.operands[1].fixed == "rax");
  CHECK(d->roles[0].read);
  CHECK(d->roles[0].write);
  CHECK(d->display == "div r64");
}

TEST_CASE("resolve: accumulating forms asmjit marks write-only are read too", "[inst_form]") {
  auto f = resolve_inst("vdpbf16ps zmm, zmm, zmm");
  REQUIRE(f.ok());
  CHECK(f->roles[0].read);
}

TEST_CASE("resolve: unknown mnemonic suggests the nearest names", "[inst_form]") {
  auto f = resolve_inst("vfmad231ps ymm, ymm, ymm");
  REQUIRE_FALSE(f.ok());
  CHECK(f.error().find("unknown instruction 'vfmad231ps'") != std::string::npos);
  CHECK(f.error().find("vfmadd231ps") != std::string::npos);
  auto near = nearest_mnemonics("imull");
  REQUIRE_FALSE(near.empty());
  CHECK(near.front() == "imul");
}

TEST_CASE("resolve: impossible operand forms are refused", "[inst_form]") {
  auto f = resolve_inst("vaddps ymm, xmm, zmm");
  REQUIRE_FALSE(f.ok());
  CHECK(f.error().find("impossible operand form") != std::string::npos);
  CHECK_FALSE(resolve_inst("add r64, r32").ok());
  CHECK_FALSE(resolve_inst("vperm2f128 zmm, zmm, zmm, imm8").ok());
}

TEST_CASE("resolve: a {vex} or {evex} prefix the form cannot take is refused, not ignored", "[inst_form]") {
  // asmjit treats the prefix as a preference: addps has only a legacy SSE encoding, add only a
  // legacy one, and the row's label would name an encoding that never ran.
  for (const char* text : {"{vex} addps xmm, xmm", "{vex} add r64, r64", "{evex} add r64, r64", "{evex} addps xmm, xmm"}) {
    INFO(text);
    auto f = resolve_inst(text);
    REQUIRE_FALSE(f.ok());
    CHECK_THAT(f.error(), Catch::Contains("impossible operand form") && Catch::Contains("encoding"));
  }
  auto v = resolve_inst("{vex} vaddps ymm, ymm, ymm");
  REQUIRE(v.ok());
  CHECK_FALSE(v->evex_native);
  auto e = resolve_inst("{evex} vaddps ymm, ymm, ymm");
  REQUIRE(e.ok());
  CHECK(e->evex_native);
  CHECK_FALSE(resolve_inst("{vex} vaddps zmm, zmm, zmm").ok());  // 512 bits exist only as EVEX
}
