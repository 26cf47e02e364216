// AArch64 instruction texts: canonical spellings, numbered registers read as kinds, the general
// or vector variant picked by the operands, immediates that must take a value the encoder accepts,
// the features a form needs, and clear errors.
#include <catch2/catch.hpp>

#include "asm/a64/inst_form.hpp"

using namespace peakprobe;

TEST_CASE("a64 inst form: texts resolve to canonical spellings", "[a64][inst_form]") {
  auto f = a64::resolve_inst("FMLA V0.4S, V1.4S, V2.4S");
  REQUIRE(f.ok());
  CHECK(f->display == "fmla v.4s, v.4s, v.4s");
  CHECK(f->mnemonic == "fmla");
  auto numbered = a64::resolve_inst("add x3, x4, x5");
  REQUIRE(numbered.ok());
  CHECK(numbered->display == "add x, x, x");
  auto el = a64::resolve_inst("fmla v.4s, v.4s, v.s[1]");
  REQUIRE(el.ok());
  CHECK(el->display == "fmla v.4s, v.4s, v.s[1]");
  auto list = a64::resolve_inst("tbl v.16b, {v0.16b, v1.16b}, v.16b");
  REQUIRE(list.ok());
  CHECK(list->display == "tbl v.16b, {v.16b, v.16b}, v.16b");
  auto mem = a64::resolve_inst("ldp q, q, [x, #imm]");
  REQUIRE(mem.ok());
  CHECK(mem->display == "ldp q, q, [x, #imm]");
}

TEST_CASE("a64 inst form: the operands pick the general or the vector instruction", "[a64][inst_form]") {
  auto gp = a64::resolve_inst("add x, x, x");
  auto vec = a64::resolve_inst("add v.4s, v.4s, v.4s");
  REQUIRE(gp.ok());
  REQUIRE(vec.ok());
  CHECK(gp->inst_id != vec->inst_id);
  auto mul = a64::resolve_inst("mul w, w, w");
  auto vmul = a64::resolve_inst("mul v.8h, v.8h, v.8h");
  REQUIRE(mul.ok());
  REQUIRE(vmul.ok());
  CHECK(mul->inst_id != vmul->inst_id);
}

TEST_CASE("a64 inst form: reads and writes come from the instruction database", "[a64][inst_form]") {
  auto fmla = a64::resolve_inst("fmla v.4s, v.4s, v.4s");
  REQUIRE(fmla.ok());
  CHECK(fmla->writes[0]);
  CHECK(fmla->reads[0]);  // the accumulator
  CHECK_FALSE(fmla->writes[1]);
  auto add = a64::resolve_inst("add x, x, x");
  REQUIRE(add.ok());
  CHECK(add->writes[0]);
  CHECK_FALSE(add->reads[0]);
  auto str = a64::resolve_inst("str q, [x]");
  REQUIRE(str.ok());
  CHECK_FALSE(str->writes[0]);
  auto ldp = a64::resolve_inst("ldp x, x, [x]");
  REQUIRE(ldp.ok());
  CHECK(ldp->writes[0]);
  CHECK(ldp->writes[1]);
}

TEST_CASE("a64 inst form: open immediates and shifts take a value the encoder accepts", "[a64][inst_form]") {
  auto shifted = a64::resolve_inst("ldr x, [x, x, lsl #imm]");
  REQUIRE(shifted.ok());
  CHECK(shifted->ops[1].mem_shift == 3);  // an 8-byte load scales its index by 8
  auto q = a64::resolve_inst("ldr q, [x, x, lsl #imm]");
  REQUIRE(q.ok());
  CHECK(q->ops[1].mem_shift == 4);
  auto rot = a64::resolve_inst("fcadd v.4s, v.4s, v.4s, #imm");
  REQUIRE(rot.ok());
  CHECK(rot->imms[3] == 90);  // a rotation of 90 or 270 only
  auto lsl = a64::resolve_inst("lsl x, x, #imm");
  REQUIRE(lsl.ok());
  CHECK(lsl->imms[2] == 1);
}

TEST_CASE("a64 inst form: features from the mnemonic and the lanes", "[a64][inst_form]") {
  auto has = [](const std::string& text, const std::string& feature) {
    auto f = a64::resolve_inst(text);
    REQUIRE(f.ok());
    return std::find(f->features.begin(), f->features.end(), feature) != f->features.end();
  };
  CHECK(has("sdot v.4s, v.16b, v.16b", "asimddp"));
  CHECK(has("smmla v.4s, v.16b, v.16b", "i8mm"));
  CHECK(has("bfmmla v.4s, v.8h, v.8h", "bf16"));
  CHECK(has("fadd v.8h, v.8h, v.8h", "asimdhp"));
  CHECK(has("fadd h, h, h", "fphp"));
  CHECK(has("fadd s, s, s", "fp"));
  CHECK(has("ldadd x, x, [x]", "atomics"));
  auto add = a64::resolve_inst("add x, x, x");
  REQUIRE(add.ok());
  CHECK(add->features.empty());
  CHECK(a64::infer_dtype(*a64::resolve_inst("fmla v.2d, v.2d, v.2d")) == "f64");
  CHECK(a64::infer_dtype(*a64::resolve_inst("add v.8h, v.8h, v.8h")) == "i16");
  CHECK(a64::infer_dtype(*a64::resolve_inst("sdot v.4s, v.16b, v.16b")) == "i8");
  CHECK(a64::infer_dtype(*a64::resolve_inst("madd w, w, w, w")) == "i32");
}

TEST_CASE("a64 inst form: wrong texts are errors that say why", "[a64][inst_form]") {
  auto unknown = a64::resolve_inst("fmlaa v.4s, v.4s, v.4s");
  REQUIRE_FALSE(unknown.ok());
  CHECK_THAT(unknown.error(), Catch::Contains("fmla"));
  CHECK_THAT(a64::resolve_inst("fmla v.4s, v.4s, v.5s").error(), Catch::Contains("arrangements"));
  CHECK_THAT(a64::resolve_inst("mul v.2d, v.2d, v.2d").error(), Catch::Contains("no mul"));
  CHECK_THAT(a64::resolve_inst("add sp, sp, #imm").error(), Catch::Contains("stack pointer"));
  CHECK_FALSE(a64::resolve_inst("b.ne").ok());
  CHECK_FALSE(a64::resolve_inst("").ok());
  CHECK_FALSE(a64::resolve_inst("ldr x, [w]").ok());
  CHECK_FALSE(a64::resolve_inst("tbl v.16b, {v.16b, v.8b}, v.16b").ok());
  auto br = a64::resolve_inst("br x");
  REQUIRE(br.ok());
  CHECK_THAT(a64::refusal_reason(*br), Catch::Contains("branches"));
  auto svc = a64::resolve_inst("svc #imm");
  REQUIRE(svc.ok());
  CHECK_FALSE(a64::refusal_reason(*svc).empty());
}

TEST_CASE("a64 inst form: hostile numbers are errors, never exceptions or silent wrap-arounds", "[a64][inst_form]") {
  for (const char* text : {"add x99999999999, x, x", "fmla v.4s, v.4s, v.s[99999999999]", "fmla v.4s, v.4s, v.s[4]",
                           "fmla v.8h, v.8h, v.h[8]", "add x, x, #0xg", "add x, x, #0x1234567890abcdef1",
                           "add x, x, x, lsl #4294967297", "ldr x, [x, #4294967304]", "ldr x, [x, #-8]",
                           "ldr x, [x, x, lsl #9]", "add x, x, 0x10", "dup v.4s, v.s[]"}) {
    INFO(text);
    CHECK_FALSE(a64::resolve_inst(text).ok());
  }
  CHECK(a64::resolve_inst("fmla v.4s, v.4s, v.s[3]").ok());
  CHECK(a64::resolve_inst("add x, x, #0xff").ok());
}

TEST_CASE("a64 inst form: one spelling per condition, and the extensions of less common forms", "[a64][inst_form]") {
  CHECK(a64::resolve_inst("csel x, x, x, hs")->display == "csel x, x, x, cs");
  CHECK(a64::resolve_inst("csel x, x, x, lo")->display == "csel x, x, x, cc");
  auto features = [](const std::string& text) {
    auto f = a64::resolve_inst(text);
    REQUIRE(f.ok());
    return f->features;
  };
  CHECK(features("stadd x, [x]") == std::vector<std::string>{"atomics"});
  CHECK(features("fcvtzs w, h") == std::vector<std::string>{"fp", "fphp"});
  CHECK(features("fcvt s, h") == std::vector<std::string>{"fp"});
  CHECK(features("autda x, x") == std::vector<std::string>{"paca"});
  CHECK_FALSE(a64::refusal_reason(*a64::resolve_inst("autda x, x")).empty());
  CHECK_FALSE(a64::refusal_reason(*a64::resolve_inst("ldraa x, [x]")).empty());
}
