// Tests for asm/x86/state_forms.cpp: which forms are balanced with a companion, which are refused.
#include <catch2/catch.hpp>

#include "asm/x86/state_forms.hpp"

using namespace peakprobe;

namespace {

x86::InstForm form(const char* text) {
  auto f = x86::resolve_inst(text);
  INFO(text << ": " << (f ? "" : f.error()));
  REQUIRE(f.ok());
  return f.value();
}

}  // namespace

TEST_CASE("state forms: stack and flag forms get a companion that undoes them", "[state_forms]") {
  struct Case {
    const char* text;
    const char* companion;
    bool first;
  };
  for (const Case& c : {Case{"push r64", "pop r64", false}, Case{"push imm8", "pop r64", false},
                        Case{"push r16", "pop r16", false}, Case{"pop r64", "push r64", true},
                        Case{"pop r16", "push r16", true}, Case{"pop m64", "push r64", true},
                        Case{"pushf", "popf", false}, Case{"popf", "pushf", true}, Case{"std", "cld", false},
                        Case{"enter imm16, imm8", "leave", false}, Case{"leave", "enter imm16, imm8", true},
                        Case{"call rel32", "ret", false}, Case{"call r64", "ret", false},
                        Case{"call m64", "ret", false}, Case{"ret", "call rel32", true},
                        Case{"xbegin rel32", "xend", false}, Case{"xend", "xbegin rel32", true},
                        Case{"fld m32", "fstp m64", false}, Case{"fld m80", "fstp m64", false},
                        Case{"fild m16", "fstp m64", false}, Case{"fld1", "fstp m64", false},
                        Case{"fbld m80", "fstp m64", false}}) {
    INFO(c.text);
    auto comp = x86::balancing_companion(form(c.text));
    REQUIRE(comp);
    CHECK(comp->text == c.companion);
    CHECK(comp->first == c.first);
    // The companion itself is a form the tool can build, and is not refused.
    auto other = x86::resolve_inst(comp->text);
    REQUIRE(other.ok());
    CHECK_FALSE(x86::refusal_reason(other.value()));
  }
  for (const char* text : {"add r64, r64", "cld", "vfmadd231ps ymm, ymm, ymm", "mov r64, m64", "fstp m64", "fadd m32"})
    CHECK_FALSE(x86::balancing_companion(form(text)));
}

TEST_CASE("state forms: forms that leave the process or move reserved registers are refused", "[state_forms]") {
  for (const char* text : {"syscall", "int3", "hlt", "ud2", "wrfsbase r64", "add rdi, imm8", "xor rdi, rdi",
                           "mov rsi, r64", "maskmovdqu xmm, xmm", "movsb", "stosq", "rdmsr", "ret imm16",
                           "call imm32", "jp rel8", "jmp r64", "jz imm32", "loop rel8", "ldtilecfg m512",
                           "movdir64b m512, m512"}) {
    auto f = x86::resolve_inst(text);
    if (!f) continue;  // asmjit cannot spell it: refused earlier, by the parser
    INFO(text);
    auto why = x86::refusal_reason(f.value());
    REQUIRE(why);
    CHECK_FALSE(why->empty());
  }
  for (const char* text : {"add r64, r64", "push r64", "pop r64", "std", "imul r64, r64", "mov r64, m64",
                           "vaddps ymm, ymm, ymm", "add rax, imm8", "shl r64, cl", "jmp rel32", "jnz rel8",
                           "jg rel32"})
    CHECK_FALSE(x86::refusal_reason(form(text)));
}
