#include <catch2/catch.hpp>

#include <algorithm>
#include <set>

#include "asm/x86/form_enumeration.hpp"
#include "asm/x86/inst_form.hpp"

using namespace peakprobe;

namespace {
const isa::ListedForm* find(const std::string& text) {
  for (const auto& f : x86::enumerate_forms())
    if (f.text == text) return &f;
  return nullptr;
}
}  // namespace

TEST_CASE("form list: thousands of forms, each spelled once, each measurable one resolving to itself", "[form_enumeration]") {
  const auto& forms = x86::enumerate_forms();
  CHECK(forms.size() >= 3000);
  std::set<std::string> texts;
  const auto families = x86::form_families();
  size_t resolved = 0;
  for (const auto& f : forms) {
    INFO(f.text);
    CHECK(texts.insert(f.text).second);
    CHECK(std::find(families.begin(), families.end(), f.family) != families.end());
    if (!f.refusal.empty()) continue;
    auto r = x86::resolve_inst(f.text);
    REQUIRE(r.ok());
    CHECK(r->display == f.text);  // the spelling `inst` takes and prints back
    CHECK(r->features == f.features);
    ++resolved;
  }
  CHECK(resolved >= 3000);
}

TEST_CASE("form list: register widths, memory sizes, immediates, broadcasts and both encodings are expanded", "[form_enumeration]") {
  for (const char* t : {"add r8, r8", "add r16, r16", "add r32, r32", "add r64, r64", "add r64, m64", "add m64, r64",
                        "add r64, imm8", "shl r64, cl", "shl r64, imm8", "vfmadd231ps zmm, zmm, zmm",
                        "vfmadd231ps zmm, zmm, m32bcst", "vfmadd231ps xmm, xmm, m128", "{evex} vaddps ymm, ymm, ymm",
                        "vpdpbusd zmm, zmm, zmm", "{vex} vpdpbusd ymm, ymm, ymm", "vgatherdps ymm, vm32y, ymm",
                        "mov r64, m64", "lea r64, m", "clflush m", "pop r64", "push r64", "kaddw k, k, k"}) {
    INFO(t);
    CHECK(find(t) != nullptr);
  }
  // An operand that takes any size is written `m` once, not once per size.
  CHECK(find("clflush m64") == nullptr);
  // `m` is not listed beside the sized form of the same operand.
  CHECK(find("add r64, m") == nullptr);
  CHECK(find("vaddps ymm, ymm, ymm")->family == "avx");
  CHECK(find("{evex} vaddps ymm, ymm, ymm")->family == "avx512");
  CHECK(find("addps xmm, xmm")->family == "sse");
  CHECK(find("add r64, r64")->family == "gp");
  CHECK(find("fadd m64")->family == "x87");
}

TEST_CASE("form list: forms that cannot run in user space are listed with the reason", "[form_enumeration]") {
  for (const char* t : {"syscall", "hlt", "jmp r64", "jp rel32", "rdmsr", "xlatb", "clac"}) {
    INFO(t);
    const auto* f = find(t);
    REQUIRE(f != nullptr);
    CHECK_FALSE(f->refusal.empty());
  }
  const auto* mmx = find("paddb mm, mm");
  REQUIRE(mmx != nullptr);
  CHECK(mmx->family == "mmx");
  CHECK_THAT(mmx->refusal, Catch::Contains("mm"));
  CHECK(find("add r64, r64")->refusal.empty());
  for (const char* t : {"call rel32", "call r64", "ret", "jmp rel32", "jz rel32"}) {  // a balanced pair; branches to the next instruction
    INFO(t);
    REQUIRE(find(t) != nullptr);
    CHECK(find(t)->refusal.empty());
    CHECK(find(t)->family == "gp");
  }
}

TEST_CASE("form list: grouped by mnemonic, an encoding prefix beside its unprefixed siblings", "[form_enumeration]") {
  const auto& forms = x86::enumerate_forms();
  auto mnemonic = [](const std::string& t) {
    const size_t start = t.front() == '{' ? t.find('}') + 2 : 0;
    return t.substr(start, t.find(' ', start) - start);
  };
  for (size_t i = 1; i < forms.size(); ++i) {
    INFO(forms[i - 1].text << " before " << forms[i].text);
    CHECK(mnemonic(forms[i - 1].text) <= mnemonic(forms[i].text));
  }
}
