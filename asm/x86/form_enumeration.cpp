#include "asm/x86/form_enumeration.hpp"

#include <algorithm>
#include <map>
#include <set>

#include <asmjit/x86.h>

#include "asm/x86/inst_form.hpp"
#include "asm/x86/state_forms.hpp"

namespace peakprobe::x86 {
namespace {
using namespace asmjit;
using asmjit::x86::InstDB::OpFlags;
using asmjit::x86::InstDB::OpSignature;

// One way to write one operand: the token `inst` parses, or a token it cannot generate streams for
// (then `why` says so and the form is listed as refused).
struct Alt {
  std::string token;
  std::string why;
};

bool has(OpFlags flags, OpFlags f) { return (uint64_t(flags) & uint64_t(f)) != 0; }

// A register fixed by the encoding (the cl of a shift count, the xmm0 of blendv, the al of a short
// immediate form): named, when the text notation has a name for it.
std::vector<Alt> fixed_register(OpFlags f, uint32_t id) {
  static const char* kGp[4][8] = {{"al", "cl", "dl", "bl", nullptr, nullptr, nullptr, nullptr},
                                  {"ax", "cx", "dx", "bx", nullptr, nullptr, nullptr, nullptr},
                                  {"eax", "ecx", "edx", "ebx", nullptr, nullptr, "esi", "edi"},
                                  {"rax", "rcx", "rdx", "rbx", nullptr, nullptr, "rsi", "rdi"}};
  std::vector<Alt> out;
  const std::pair<OpFlags, int> gp[] = {{OpFlags::kRegGpbLo, 0}, {OpFlags::kRegGpw, 1}, {OpFlags::kRegGpd, 2},
                                        {OpFlags::kRegGpq, 3}};
  for (const auto& [flag, row] : gp)
    if (has(f, flag)) {
      if (id < 8 && kGp[row][id]) out.push_back({kGp[row][id], ""});
      else out.push_back({"gp" + std::to_string(id), "a fixed register the text notation has no name for"});
    }
  if (has(f, OpFlags::kRegXmm)) {
    if (id == 0) out.push_back({"xmm0", ""});
    else out.push_back({"xmm" + std::to_string(id), "a fixed register the text notation has no name for"});
  }
  if (has(f, OpFlags::kRegKReg) && id == 0) out.push_back({"k0", ""});
  if (out.empty()) out.push_back({"reg" + std::to_string(id), "a fixed register the text notation has no name for"});
  return out;
}

// Every way to write an operand of this signature.
std::vector<Alt> alternatives(const OpSignature& op) {
  const OpFlags f = op.flags();
  std::vector<Alt> out;
  // A fixed register may share the operand with an immediate (a shift count in cl or imm8).
  const bool fixed = op.hasReg() && op.regMask() != 0 && Support::popcnt(op.regMask()) == 1;
  if (fixed) out = fixed_register(f, Support::ctz(op.regMask()));
  const std::pair<OpFlags, Alt> regs[] = {
      {OpFlags::kRegGpbLo, {"r8", ""}},
      {OpFlags::kRegGpw, {"r16", ""}},
      {OpFlags::kRegGpd, {"r32", ""}},
      {OpFlags::kRegGpq, {"r64", ""}},
      {OpFlags::kRegXmm, {"xmm", ""}},
      {OpFlags::kRegYmm, {"ymm", ""}},
      {OpFlags::kRegZmm, {"zmm", ""}},
      {OpFlags::kRegKReg, {"k", ""}},
      {OpFlags::kRegTmm, {"tmm", ""}},
      {OpFlags::kRegMm, {"mm", "MMX registers (mm) are not generated in streams"}},
      {OpFlags::kRegSt, {"st", "x87 stack registers (st) are not generated in streams"}},
      {OpFlags::kRegSReg, {"sreg", "segment registers hold the process's addressing and thread-local storage"}},
      {OpFlags::kRegCReg, {"creg", "control registers are privileged"}},
      {OpFlags::kRegDReg, {"dreg", "debug registers are privileged"}},
      {OpFlags::kRegBnd, {"bnd", "MPX bound registers: MPX is gone from current CPUs and kernels"}},
  };
  for (const auto& [flag, alt] : regs)
    if (!fixed && has(f, flag)) out.push_back(alt);
  const std::pair<OpFlags, Alt> mems[] = {
      {OpFlags::kMemUnspecified, {"m", ""}},
      {OpFlags::kMem8, {"m8", ""}},
      {OpFlags::kMem16, {"m16", ""}},
      {OpFlags::kMem32, {"m32", ""}},
      {OpFlags::kMem48, {"m48", "far pointers (m48) are not generated in streams"}},
      {OpFlags::kMem64, {"m64", ""}},
      {OpFlags::kMem80, {"m80", ""}},
      {OpFlags::kMem128, {"m128", ""}},
      {OpFlags::kMem256, {"m256", ""}},
      {OpFlags::kMem512, {"m512", ""}},
      {OpFlags::kMem1024, {"m1024", "1024-bit memory operands are not generated in streams"}},
      {OpFlags::kVm32x, {"vm32x", ""}},
      {OpFlags::kVm32y, {"vm32y", ""}},
      {OpFlags::kVm32z, {"vm32z", ""}},
      {OpFlags::kVm64x, {"vm64x", ""}},
      {OpFlags::kVm64y, {"vm64y", ""}},
      {OpFlags::kVm64z, {"vm64z", ""}},
  };
  // An operand of any size (clflush, prefetch, fxsave: every size flag set) is written `m`; one of a
  // few sizes (shl m8..m64, add r64, m64) is written once per size, never also as `m`.
  int sized = 0;
  for (const auto& [flag, alt] : mems)
    if (has(f, flag) && alt.token != "m" && alt.token[0] == 'm') ++sized;
  const bool any_size = has(f, OpFlags::kMemUnspecified) && (sized == 0 || sized > 4);
  for (const auto& [flag, alt] : mems) {
    if (!has(f, flag)) continue;
    const bool scalar_mem = alt.token[0] == 'm';
    if (scalar_mem && any_size && alt.token != "m") continue;
    if (scalar_mem && !any_size && alt.token == "m") continue;
    out.push_back(alt);
  }
  // The smallest immediate the signature takes: a larger one encodes the same instruction with a
  // longer field, and the probe's small values would pick the short encoding anyway.
  if (op.hasImm()) {
    if (has(f, OpFlags::kImmI4) || has(f, OpFlags::kImmU4) || has(f, OpFlags::kImmI8) || has(f, OpFlags::kImmU8))
      out.push_back({"imm8", ""});
    else if (has(f, OpFlags::kImmI16) || has(f, OpFlags::kImmU16))
      out.push_back({"imm16", ""});
    else
      out.push_back({"imm32", ""});
  }
  // Branch targets: `inst` measures call (with its ret) and refuses the other branches by mnemonic.
  if (has(f, OpFlags::kRel32)) out.push_back({"rel32", ""});
  else if (has(f, OpFlags::kRel8)) out.push_back({"rel8", ""});
  return out;
}

bool starts_with(const std::string& s, const char* p) { return s.rfind(p, 0) == 0; }

// asmjit's database (2022-12) leaves its FPU flag off most x87 instructions: their mnemonics tell.
bool is_x87(const std::string& mnemonic, const asmjit::x86::InstDB::CommonInfo& info) {
  return info.isFpu() || (!mnemonic.empty() && mnemonic[0] == 'f' && !info.isVec() && mnemonic != "femms");
}

std::string family_of(const InstForm& f, const asmjit::x86::InstDB::CommonInfo& info) {
  for (const auto& k : f.text.operands)
    if (k.cls == OpClass::tile) return "amx";
  if (is_x87(f.text.mnemonic, info)) return "x87";
  if (info.isMmx()) return "mmx";
  bool vec = false;
  for (const auto& k : f.text.operands)
    if (k.cls == OpClass::vec || k.cls == OpClass::mask || k.cls == OpClass::vmem) vec = true;
  if (vec || info.isVec()) return f.evex_native ? "avx512" : info.isVexOrEvex() ? "avx" : "sse";
  for (const auto& feat : f.features)
    if (starts_with(feat, "avx512") || feat == "avx10") return "avx512";
  return "gp";
}

// The Cartesian product of the operands' alternatives, each a full text; `why` set when any
// operand is of a kind streams cannot hold. Capped: no real signature comes near the cap.
void expand(const std::string& mnemonic, const std::vector<std::vector<Alt>>& ops,
            std::vector<std::pair<std::string, std::string>>& out) {
  std::vector<size_t> at(ops.size(), 0);
  for (const auto& o : ops)
    if (o.empty()) return;
  for (int guard = 0; guard < 4096; ++guard) {
    std::string text = mnemonic, why;
    for (size_t i = 0; i < ops.size(); ++i) {
      const Alt& a = ops[i][at[i]];
      text += (i ? ", " : " ") + a.token;
      if (why.empty() && !a.why.empty()) why = "operand " + std::to_string(i + 1) + " (" + a.token + "): " + a.why;
    }
    out.emplace_back(text, why);
    size_t i = 0;
    for (; i < ops.size(); ++i) {
      if (++at[i] < ops[i].size()) break;
      at[i] = 0;
    }
    if (i == ops.size()) return;
  }
}

// A vector memory operand that the instruction can also take as an element broadcast (EVEX {1toN}).
std::string broadcast_variant(const std::string& text, const asmjit::x86::InstDB::CommonInfo& info) {
  const char* bcst = info.hasAvx512B64() ? "m64bcst" : info.hasAvx512B32() ? "m32bcst" : info.hasAvx512B16() ? "m16bcst" : nullptr;
  if (!bcst) return "";
  for (const char* m : {"m512", "m256", "m128"}) {
    const size_t p = text.find(m);
    if (p != std::string::npos && (p + std::char_traits<char>::length(m) == text.size() ||
                                   text[p + std::char_traits<char>::length(m)] == ','))
      return text.substr(0, p) + bcst + text.substr(p + std::char_traits<char>::length(m));
  }
  return "";
}

std::vector<isa::ListedForm> build() {
  std::map<std::string, isa::ListedForm> forms;
  auto add_resolved = [&](const InstForm& f, const asmjit::x86::InstDB::CommonInfo& info) {
    if (forms.count(f.display)) return;
    isa::ListedForm e;
    e.text = f.display;
    e.family = family_of(f, info);
    e.features = f.features;
    if (auto why = refusal_reason(f)) e.refusal = *why;
    forms.emplace(e.text, std::move(e));
  };
  for (uint32_t id = 1; id < asmjit::x86::Inst::_kIdCount; ++id) {
    String name;
    if (InstAPI::instIdToString(Arch::kX64, id, name) != kErrorOk) continue;
    const std::string mnemonic = name.data();
    const asmjit::x86::InstDB::InstInfo& inst = asmjit::x86::InstDB::infoById(id);
    const asmjit::x86::InstDB::CommonInfo& info = inst.commonInfo();
    std::vector<std::pair<std::string, std::string>> texts;
    for (const asmjit::x86::InstDB::InstSignature* sig = info.signatureData(); sig != info.signatureEnd(); ++sig) {
      if (!sig->supportsMode(asmjit::x86::InstDB::Mode::kX64)) continue;
      std::vector<std::vector<Alt>> ops;
      for (uint32_t i = 0; i < sig->opCount(); ++i) {
        const OpSignature& op = sig->opSignature(i);
        if (op.isImplicit()) continue;
        ops.push_back(alternatives(op));
      }
      expand(mnemonic, ops, texts);
    }
    if (info.signatureCount() == 0) texts.emplace_back(mnemonic, "");
    for (const auto& [text, why] : texts) {
      if (!why.empty()) {
        const std::string family = is_x87(mnemonic, info) ? "x87" : info.isMmx() ? "mmx" : "system";
        if (!forms.count(text)) forms.emplace(text, isa::ListedForm{text, family, {}, why});
        continue;
      }
      auto f = resolve_inst(text);
      if (!f) continue;  // a combination of alternatives no encoding takes (r8 with m64, ...)
      add_resolved(*f, info);
      // The other encoding of forms that have both: uops.info lists VEX and EVEX rows apart.
      if (info.isVex() && info.isEvex()) {
        auto other = resolve_inst((f->evex_native ? "{vex} " : "{evex} ") + text);
        if (other) add_resolved(*other, info);
      }
      if (const std::string b = broadcast_variant(text, info); !b.empty())
        if (auto fb = resolve_inst(b)) add_resolved(*fb, info);
    }
  }
  std::vector<isa::ListedForm> out;
  out.reserve(forms.size());
  for (auto& [text, e] : forms) out.push_back(std::move(e));
  // By mnemonic first, so that an encoding prefix does not move a form away from its siblings.
  auto mnemonic_of = [](const std::string& t) {
    const size_t start = t.front() == '{' ? t.find('}') + 2 : 0;
    return t.substr(start, t.find(' ', start) - start);
  };
  std::stable_sort(out.begin(), out.end(), [&](const isa::ListedForm& a, const isa::ListedForm& b) {
    return mnemonic_of(a.text) < mnemonic_of(b.text);
  });
  return out;
}

}  // namespace

const std::vector<isa::ListedForm>& enumerate_forms() {
  static const std::vector<isa::ListedForm> forms = build();
  return forms;
}

std::vector<std::string> form_families() { return {"gp", "x87", "mmx", "sse", "avx", "avx512", "amx", "system"}; }

}  // namespace peakprobe::x86
