#include <catch2/catch.hpp>

#include "asm/x86/inst_text.hpp"

using namespace peakprobe::x86;

TEST_CASE("instruction text: mnemonic and operand kinds", "[inst_text]") {
  auto t = parse_inst_text("  VFMADD231PS ymm, YMM,ymm ");
  REQUIRE(t.ok());
  CHECK(t->mnemonic == "vfmadd231ps");
  REQUIRE(t->operands.size() == 3);
  for (const auto& k : t->operands) {
    CHECK(k.cls == OpClass::vec);
    CHECK(k.bits == 256);
  }
  CHECK(t->canonical() == "vfmadd231ps ymm, ymm, ymm");
}

TEST_CASE("instruction text: every operand kind of the manuals", "[inst_text]") {
  struct Case { const char* text; OpClass cls; int bits; };
  const Case cases[] = {
      {"r8", OpClass::gp, 8},     {"r16", OpClass::gp, 16},   {"r32", OpClass::gp, 32},
      {"r64", OpClass::gp, 64},   {"xmm", OpClass::vec, 128}, {"zmm", OpClass::vec, 512},
      {"k", OpClass::mask, 64},   {"tmm", OpClass::tile, 8192}, {"imm8", OpClass::imm, 8},
      {"imm32", OpClass::imm, 32}, {"m32", OpClass::mem, 32}, {"m512", OpClass::mem, 512},
      {"m", OpClass::mem, 0},     {"cl", OpClass::fixed, 8},  {"rax", OpClass::fixed, 64},
  };
  for (const auto& c : cases) {
    INFO(c.text);
    auto k = parse_operand_kind(c.text);
    REQUIRE(k.ok());
    CHECK(k->cls == c.cls);
    CHECK(k->bits == c.bits);
  }
  auto b = parse_operand_kind("m32bcst");
  REQUIRE(b.ok());
  CHECK(b->cls == OpClass::mem);
  CHECK(b->bcst_bits == 32);
  auto v = parse_operand_kind("vm64z");
  REQUIRE(v.ok());
  CHECK(v->cls == OpClass::vmem);
  CHECK(v->index_bits == 512);
  CHECK(v->index_elem_bits == 64);
  for (const char* rel : {"rel8", "rel32"}) {  // a branch target: an immediate relative to the next instruction
    auto r = parse_operand_kind(rel);
    REQUIRE(r.ok());
    CHECK(r->cls == OpClass::imm);
    CHECK(r->relative);
    CHECK(r->text == rel);
  }
  CHECK_FALSE(parse_operand_kind("imm32")->relative);
  auto m = parse_operand_kind("zmm {k}");
  REQUIRE(m.ok());
  CHECK(m->merge_mask);
  CHECK(m->text == "zmm {k}");
}

TEST_CASE("instruction text: encoding prefix", "[inst_text]") {
  auto t = parse_inst_text("{vex} vpdpbusd ymm, ymm, ymm");
  REQUIRE(t.ok());
  CHECK(t->encoding == "vex");
  CHECK(t->canonical() == "{vex} vpdpbusd ymm, ymm, ymm");
  CHECK_FALSE(parse_inst_text("{xop} vpdpbusd ymm, ymm, ymm").ok());
  CHECK_FALSE(parse_inst_text("{vex vpdpbusd ymm").ok());
}

TEST_CASE("instruction text: malformed input is an error that names the operand", "[inst_text]") {
  auto bad = parse_inst_text("vaddps ymm, ymn, ymm");
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().find("operand 2") != std::string::npos);
  CHECK(bad.error().find("ymn") != std::string::npos);
  CHECK_FALSE(parse_inst_text("").ok());
  CHECK_FALSE(parse_inst_text("vaddps ymm,, ymm").ok());
  CHECK_FALSE(parse_inst_text("vadd-ps ymm").ok());
  CHECK_FALSE(parse_operand_kind("r12").ok());
  CHECK_FALSE(parse_operand_kind("m33").ok());
  CHECK_FALSE(parse_operand_kind("imm64").ok());
  CHECK_FALSE(parse_operand_kind("r64 {k}").ok());
}

TEST_CASE("instruction text: no operands is fine", "[inst_text]") {
  auto t = parse_inst_text("nop");
  REQUIRE(t.ok());
  CHECK(t->operands.empty());
}

TEST_CASE("instruction text: very long text is refused before it is looked at", "[inst_text]") {
  auto t = parse_inst_text(std::string(kMaxInstTextChars + 1, 'a'));
  REQUIRE_FALSE(t.ok());
  CHECK_THAT(t.error(), Catch::Contains("at most 256"));
  CHECK(t.error().size() < 100);
  CHECK(parse_inst_text("vfmadd231ps ymm, ymm, ymm" + std::string(200, ' ')).ok());
}

TEST_CASE("instruction text: the cap counts what the text says, so a canonical spelling parses again", "[inst_text]") {
  // Found by fuzz_inst_text: 256 characters with "a,b" operands became 257 once canonical ("a, b").
  const std::string text = std::string(kMaxInstTextChars - 12, 'b') + " vm32x,vm32x";
  REQUIRE(text.size() == kMaxInstTextChars);
  auto t = parse_inst_text(text);
  REQUIRE(t.ok());
  CHECK(t->canonical().size() > kMaxInstTextChars);
  auto again = parse_inst_text(t->canonical());
  REQUIRE(again.ok());
  CHECK(again->canonical() == t->canonical());
  // Spacing alone is still bounded.
  CHECK_FALSE(parse_inst_text("add" + std::string(4 * kMaxInstTextChars, ' ') + "r64, r64").ok());
}
