#include <catch2/catch.hpp>

#include <algorithm>
#include <string>
#include <vector>

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

TEST_CASE("resolve: 8- and 16-bit multiplies and divides name their implicit ax and dx:ax", "[inst_form]") {
  // Without them the divisor could be ax or dx itself (div dx overflows: #DE) and a "throughput"
  // stream would be one chain through ax.
  struct Case { const char* text; std::vector<std::string> fixed; };
  const Case cases[] = {{"div r8", {"ax"}},       {"idiv m8", {"ax"}},        {"mul r8", {"ax"}},
                        {"imul m8", {"ax"}},      {"div r16", {"dx", "ax"}},  {"idiv m16", {"dx", "ax"}},
                        {"mul m16", {"dx", "ax"}}, {"imul r16", {"dx", "ax"}}, {"div m32", {"edx", "eax"}}};
  for (const auto& c : cases) {
    INFO(c.text);
    auto f = resolve_inst(c.text);
    REQUIRE(f.ok());
    REQUIRE(f->text.operands.size() == c.fixed.size() + 1);
    for (size_t i = 0; i < c.fixed.size(); ++i) {
      CHECK(f->text.operands[i].cls == OpClass::fixed);
      CHECK(f->text.operands[i].fixed == c.fixed[i]);
      CHECK(f->roles[i].write);
    }
    CHECK(f->display == c.text);
  }
  // The two-operand imul is not the implicit form.
  auto two = resolve_inst("imul r16, r16");
  REQUIRE(two.ok());
  CHECK(two->text.operands.size() == 2);
  CHECK(two->text.operands[0].cls == OpClass::gp);
}

TEST_CASE("resolve: AVX-512 gathers and scatters always run under a write mask", "[inst_form]") {
  // k0 means "no mask", which an EVEX gather or scatter does not allow (#UD).
  for (const char* text : {"vgatherdpd xmm, vm32x", "vpgatherqq zmm, vm64z", "vpscatterdd vm32z, zmm"}) {
    INFO(text);
    auto f = resolve_inst(text);
    REQUIRE(f.ok());
    CHECK(f->evex_native);
    CHECK(f->display.find("{k}") != std::string::npos);
    CHECK(std::any_of(f->text.operands.begin(), f->text.operands.end(), [](const OperandKind& k) { return k.merge_mask; }));
  }
  auto g = resolve_inst("vgatherdpd xmm, vm32x");
  CHECK(g->display == "vgatherdpd xmm {k}, vm32x");
  auto s = resolve_inst("vpscatterdd vm32x, xmm");
  CHECK(s->display == "vpscatterdd vm32x {k}, xmm");
  // Written with the mask, the text is the same form.
  auto written = resolve_inst("vgatherdpd xmm {k}, vm32x");
  REQUIRE(written.ok());
  CHECK(written->display == g->display);
  // The AVX2 gather carries its mask as a vector operand: no {k}.
  auto avx2 = resolve_inst("vgatherdpd xmm, vm32x, xmm");
  REQUIRE(avx2.ok());
  CHECK_FALSE(avx2->evex_native);
  CHECK(avx2->display == "vgatherdpd xmm, vm32x, xmm");
}

TEST_CASE("resolve: forms asmjit encodes but the ISA leaves undefined are refused with the reason", "[inst_form]") {
  // Each of these encoded, ran, and raised #UD (SIGILL) on a Zen 4 before the rule.
  struct Case { const char* text; const char* why; };
  const Case cases[] = {
      {"{evex} vcmpps xmm, xmm, xmm, imm8", "writes a mask register"},
      {"vcmppd ymm, ymm, m64bcst, imm8", "writes a mask register"},
      {"{evex} vpcmpeqd ymm, ymm, ymm", "writes a mask register"},
      {"vpcmpgtq xmm, xmm, m64bcst", "writes a mask register"},
      {"{evex} vgatherdps xmm, vm32x, xmm", "VEX only"},
      {"vpcmpuw k, zmm, m64bcst, imm8", "no embedded broadcast"},
      {"vpsraq xmm, xmm, m64bcst", "shift count"},
  };
  for (const auto& c : cases) {
    INFO(c.text);
    auto f = resolve_inst(c.text);
    REQUIRE_FALSE(f.ok());
    CHECK(f.error().find("impossible operand form") != std::string::npos);
    CHECK(f.error().find(c.why) != std::string::npos);
  }
  // Their defined neighbours still resolve.
  for (const char* text : {"vcmpps xmm, xmm, xmm, imm8", "vcmpps k, xmm, xmm, imm8", "vcmppd k, ymm, m64bcst, imm8",
                           "vpcmpeqd k, ymm, ymm", "vpcmpuw k, zmm, m512, imm8", "vpsraq xmm, m64bcst, imm8",
                           "vpsraq xmm, xmm, m128", "vgatherdps xmm, vm32x, xmm"}) {
    INFO(text);
    CHECK(resolve_inst(text).ok());
  }
}

TEST_CASE("resolve: accumulating forms asmjit marks write-only are read too", "[inst_form]") {
  auto f = resolve_inst("vdpbf16ps zmm, zmm, zmm");
  REQUIRE(f.ok());
  CHECK(f->roles[0].read);
}

TEST_CASE("resolve: a masked blend writes its destination without reading it, a merge-masked add reads it",
          "[inst_form]") {
  for (const char* text : {"vpblendmd zmm {k}, zmm, zmm", "vblendmps ymm {k}, ymm, ymm", "vpblendmb xmm {k}, xmm, m128",
                           "vblendmpd zmm {k}, zmm, m64bcst"}) {
    INFO(text);
    auto f = resolve_inst(text);
    REQUIRE(f.ok());
    CHECK_FALSE(f->roles[0].read);
    CHECK(f->roles[0].write);
    CHECK(f->roles[1].read);
    CHECK(f->mask_selects);
  }
  auto add = resolve_inst("vaddps zmm {k}, zmm, zmm");
  REQUIRE(add.ok());
  CHECK(add->roles[0].read);  // elements the mask leaves out keep the old destination
  CHECK_FALSE(add->mask_selects);
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
