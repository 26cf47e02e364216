#include "asm/x86/inst_form.hpp"

#include <algorithm>
#include <cctype>
#include <optional>

#include "asm/x86/operand_factory.hpp"

namespace peakprobe::x86 {
using namespace asmjit;

namespace {

const std::vector<std::string>& all_mnemonics() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> v;
    for (uint32_t id = 1; id < asmjit::x86::Inst::_kIdCount; ++id) {
      String s;
      if (InstAPI::instIdToString(Arch::kX64, id, s) == kErrorOk) v.emplace_back(s.data());
    }
    return v;
  }();
  return names;
}

size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= b.size(); ++j)
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

int widest_vector(const InstText& t) {
  int bits = 0;
  for (const auto& k : t.operands) {
    if (k.cls == OpClass::vec) bits = std::max(bits, k.bits);
    if (k.cls == OpClass::vmem) bits = std::max(bits, k.index_bits);
  }
  return bits;
}

// Registers chosen so that no two operands alias: asmjit then reports each operand's own role.
std::vector<Operand> representative_operands(const InstText& t) {
  std::vector<Operand> ops;
  const int vec_bits = widest_vector(t);
  for (size_t i = 0; i < t.operands.size(); ++i) {
    const OperandKind& k = t.operands[i];
    const uint32_t n = uint32_t(i);
    switch (k.cls) {
      case OpClass::gp: ops.push_back(make_reg(k, asmjit::x86::Gp::kIdR8 + n)); break;
      case OpClass::vec: ops.push_back(make_reg(k, 1 + n)); break;
      case OpClass::mask: ops.push_back(make_reg(k, 1 + n)); break;
      case OpClass::tile: ops.push_back(make_reg(k, n)); break;
      case OpClass::imm: ops.push_back(probe_imm()); break;
      case OpClass::mem: ops.push_back(make_mem(k, asmjit::x86::Gp::kIdSi, k.bits == 0 && !k.bcst_bits
                                                       ? uint32_t(asmjit::x86::Gp::kIdR14) : BaseReg::kIdBad,
                                                 0, vec_bits)); break;
      case OpClass::vmem: ops.push_back(make_mem(k, asmjit::x86::Gp::kIdSi, 7, 0, vec_bits)); break;
      case OpClass::fixed: ops.push_back(make_fixed(k)); break;
    }
  }
  return ops;
}

// Every general register an implicit operand may be, over the 64-bit signatures of the instruction
// with this many explicit operands (asmjit's signature table: one register-mask bit per fixed id).
std::vector<uint32_t> implicit_gp_registers(asmjit::InstId id, size_t explicit_operands) {
  using asmjit::x86::InstDB::OpFlags;
  constexpr OpFlags kGp = OpFlags::kRegGpbLo | OpFlags::kRegGpbHi | OpFlags::kRegGpw | OpFlags::kRegGpd |
                          OpFlags::kRegGpq;
  std::vector<uint32_t> ids;
  if (id == 0 || id >= asmjit::x86::Inst::_kIdCount) return ids;
  const auto& info = asmjit::x86::InstDB::infoById(id).commonInfo();
  for (const auto* sig = info.signatureData(); sig != info.signatureEnd(); ++sig) {
    if (!sig->supportsMode(asmjit::x86::InstDB::Mode::kX64)) continue;
    // Only the signatures of this spelling: imul r64, r64 has none of the one-operand imul's rdx:rax.
    if (sig->opCount() - sig->implicitOpCount() != explicit_operands) continue;
    for (uint32_t i = 0; i < sig->opCount(); ++i) {
      const auto& op = sig->opSignature(i);
      if (!op.isImplicit() || !op.hasFlag(kGp)) continue;
      for (uint32_t r = 0; r < 8; ++r)
        if ((op.regMask() >> r) & 1u)
          if (std::find(ids.begin(), ids.end(), r) == ids.end()) ids.push_back(r);
    }
  }
  return ids;
}

// div/idiv/mul/imul with one operand read and write rdx:rax implicitly; asmjit describes the roles
// only for the explicit three-operand spelling, so the implicit registers are made explicit here.
void make_implicit_operands_explicit(InstText& t) {
  static const char* kImplicit[] = {"div", "idiv", "mul", "imul"};
  if (t.operands.size() != 1) return;
  if (std::find_if(std::begin(kImplicit), std::end(kImplicit),
                   [&](const char* m) { return t.mnemonic == m; }) == std::end(kImplicit))
    return;
  const OperandKind& src = t.operands[0];
  const int bits = src.bits;
  if (src.cls != OpClass::gp && src.cls != OpClass::mem) return;
  // The 8-bit forms use ax alone (al times the source into ax; ax divided into al and ah).
  if (bits == 8) {
    t.operands.insert(t.operands.begin(), parse_operand_kind("ax").value());
    return;
  }
  const char* hi = bits == 64 ? "rdx" : bits == 32 ? "edx" : bits == 16 ? "dx" : nullptr;
  const char* lo = bits == 64 ? "rax" : bits == 32 ? "eax" : bits == 16 ? "ax" : nullptr;
  if (!hi) return;  // an operand of no width: asmjit's own error
  t.operands.insert(t.operands.begin(), {parse_operand_kind(hi).value(), parse_operand_kind(lo).value()});
}

// An AVX-512 gather or scatter names its index operand and one vector: it merges under a write
// mask and k0 (no mask) is undefined (#UD). A text without {k} gets one, shown in the display:
// "vgatherdpd xmm {k}, vm32x". AVX2 gathers carry a vector mask as a third operand instead.
void give_evex_gather_its_mask(InstText& t) {
  if (t.operands.size() != 2) return;
  const bool gather = t.operands[0].cls == OpClass::vec && t.operands[1].cls == OpClass::vmem;
  const bool scatter = t.operands[0].cls == OpClass::vmem && t.operands[1].cls == OpClass::vec;
  if (!gather && !scatter) return;
  OperandKind& masked = t.operands[0];
  if (masked.merge_mask) return;
  masked.merge_mask = true;
  masked.text += " {k}";
}

// Does any signature of the instruction write a mask register (k) as its first operand?
bool has_mask_destination_form(InstId id) {
  const auto& info = asmjit::x86::InstDB::infoById(id).commonInfo();
  for (const auto* sig = info.signatureData(); sig != info.signatureEnd(); ++sig) {
    if (sig->opCount() == 0) continue;
    const auto& op0 = sig->opSignature(0);
    if ((op0.flags() & asmjit::x86::InstDB::OpFlags::kRegKReg) != asmjit::x86::InstDB::OpFlags::kNone) return true;
  }
  return false;
}

// Forms asmjit validates and encodes that the ISA leaves undefined: the CPU raises #UD on them.
// Each rule names what the manuals define instead.
std::optional<std::string> undefined_form(const InstForm& f) {
  const InstText& t = f.text;
  const std::string& m = t.mnemonic;
  bool vmem = false, bcst = false;
  for (const auto& k : t.operands) {
    vmem |= k.cls == OpClass::vmem;
    bcst |= k.bcst_bits != 0;
  }
  // EVEX compares write a mask register; the vector-destination compare is VEX only.
  if (f.evex_native && !t.operands.empty() && t.operands[0].cls == OpClass::vec && has_mask_destination_form(f.id))
    return m + " with EVEX (or a broadcast) writes a mask register: 'k' as the destination; the vector "
           "destination is the VEX form";
  // The three-operand gather (vector mask) exists only as VEX; EVEX gathers take a {k} mask.
  if (f.evex_native && vmem && t.operands.size() == 3)
    return "the gather with a vector mask operand is VEX only; the EVEX gather is '" + m +
           " xmm {k}, vm..' with a mask register";
  // asmjit's database (2022-12) gives the word compares the quadword compares' broadcast flag
  // (they share one record); AVX-512BW word and byte instructions never broadcast.
  if (bcst && (m == "vpcmpw" || m == "vpcmpuw"))
    return m + " compares words, which have no embedded broadcast; use a full-width memory operand";
  // The shift count operand (xmm/m128: one count for every lane) is not a vector of elements.
  if (bcst && t.operands.size() == 3 && t.operands[1].cls == OpClass::vec &&
      (m == "vpslld" || m == "vpsllq" || m == "vpsrld" || m == "vpsrlq" || m == "vpsrad" || m == "vpsraq"))
    return m + "'s memory operand here is the shift count (m128), which takes no broadcast; the form with "
           "an immediate count takes 'm32bcst'/'m64bcst' as its source";
  return std::nullopt;
}

// asmjit's database (2022-12) marks the destination of these forms write-only, but the manuals
// define it as also read: vdpbf16ps accumulates into it, vpermi2* takes its indices from it.
// Latency chains and independence both depend on getting this right.
bool destination_also_read(const std::string& m) {
  // movhps/movlps/movhpd/movlpd load into one half and keep the other: the destination is merged.
  static const char* kForms[] = {"vdpbf16ps", "vpermi2b", "vpermi2w", "vpermi2d", "vpermi2q", "vpermi2ps",
                                 "vpermi2pd", "movhps",   "movlps",   "movhpd",   "movlpd"};
  return std::any_of(std::begin(kForms), std::end(kForms), [&](const char* f) { return m == f; });
}

// The masked blends take their {k} as a selector, not a write mask: an element the mask leaves out
// takes the first source, never the old destination (Intel SDM, VBLENDMPD/VPBLENDMD), so the
// destination is written only, whatever asmjit's merge-masking rule says. Read as merged, a "chain
// through the destination" of `vpblendmd zmm {k}, zmm, zmm` linked nothing and printed 0.50 cycles
// of latency, `ok`, on the Emerald Rapids VM.
bool mask_selects_sources(const std::string& m) {
  static const char* kForms[] = {"vblendmps", "vblendmpd", "vpblendmb", "vpblendmw", "vpblendmd", "vpblendmq"};
  return std::any_of(std::begin(kForms), std::end(kForms), [&](const char* f) { return m == f; });
}

}  // namespace

std::vector<int64_t> default_immediates(const InstText& t) {
  static const char* kCounted[] = {"shl", "shr", "sal", "sar", "rol", "ror", "rcl", "rcr", "shld", "shrd"};
  const bool counted = std::any_of(std::begin(kCounted), std::end(kCounted), [&](const char* m) { return t.mnemonic == m; });
  std::vector<int64_t> v(t.operands.size(), 1);
  for (size_t i = 0; i < t.operands.size(); ++i) {
    if (t.operands[i].cls != OpClass::imm) continue;
    if (counted) v[i] = 5;
    if (t.mnemonic == "enter" && i == 1) v[i] = 0;
  }
  return v;
}

std::string feature_name(uint32_t feature_id) {
  String s;
  Formatter::formatFeature(s, Arch::kX64, feature_id);
  std::string out(s.data());
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return std::tolower(c); });
  return out;
}

std::vector<std::string> nearest_mnemonics(const std::string& name, size_t count) {
  std::vector<std::pair<size_t, std::string>> scored;
  for (const auto& m : all_mnemonics()) {
    size_t d = edit_distance(name, m);
    // A shared prefix is a strong hint ("vfmadd" -> "vfmadd231ps"): rank it as a near miss.
    if (m.size() > name.size() && m.compare(0, name.size(), name) == 0) d = std::min<size_t>(d, 2);
    scored.emplace_back(d, m);
  }
  std::sort(scored.begin(), scored.end());
  std::vector<std::string> out;
  for (size_t i = 0; i < scored.size() && out.size() < count; ++i)
    if (scored[i].first <= std::max<size_t>(3, name.size() / 3)) out.push_back(scored[i].second);
  return out;
}

namespace {

// "vex", "evex" or "legacy" from the first bytes of an encoded instruction; segment and
// address-size prefixes may precede a VEX or EVEX escape, nothing else may.
std::string encoding_of(const uint8_t* code, size_t size) {
  size_t i = 0;
  while (i < size && (code[i] == 0x26 || code[i] == 0x2E || code[i] == 0x36 || code[i] == 0x3E || code[i] == 0x64 ||
                      code[i] == 0x65 || code[i] == 0x67))
    ++i;
  if (i < size && (code[i] == 0xC4 || code[i] == 0xC5)) return "vex";
  if (i < size && code[i] == 0x62) return "evex";
  return "legacy";
}

}  // namespace

Expected<InstForm> resolve_inst(const std::string& text) {
  auto parsed = parse_inst_text(text);
  if (!parsed) return make_error(parsed.error());
  InstForm f;
  give_evex_gather_its_mask(parsed.value());
  f.display = parsed->canonical();
  f.text = parsed.value();
  f.id = InstAPI::stringToInstId(Arch::kX64, f.text.mnemonic.c_str(), f.text.mnemonic.size());
  if (f.id == asmjit::x86::Inst::kIdNone) {
    std::string msg = "unknown instruction '" + f.text.mnemonic + "'";
    auto near = nearest_mnemonics(f.text.mnemonic);
    if (!near.empty()) {
      msg += "; did you mean ";
      for (size_t i = 0; i < near.size(); ++i) msg += (i ? ", " : "") + near[i];
      msg += "?";
    }
    return make_error(msg);
  }
  f.implicit_gp = implicit_gp_registers(f.id, f.text.operands.size());
  make_implicit_operands_explicit(f.text);
  f.imms = default_immediates(f.text);
  if (f.text.encoding == "vex") f.options |= InstOptions::kX86_Vex;
  if (f.text.encoding == "evex") f.options |= InstOptions::kX86_Evex;
  f.is_lea = f.text.mnemonic == "lea";

  std::vector<Operand> ops = representative_operands(f.text);
  BaseInst inst(f.id, f.options);
  for (const auto& k : f.text.operands) {
    if (k.merge_mask) inst.setExtraReg(asmjit::x86::k(1));
    if (k.cls == OpClass::vmem) f.is_gather = true;
  }
  asmjit::Error err = InstAPI::validate(Arch::kX64, inst, ops.data(), ops.size());
  if (err != kErrorOk) {
    return make_error("impossible operand form '" + f.display + "': no encoding of " + f.text.mnemonic +
                      " takes these operands (asmjit: " + DebugUtils::errorAsString(err) + ")");
  }
  // Encode once: validation accepts a few forms the encoder still refuses.
  {
    CodeHolder code;
    code.init(Environment(Arch::kX64));
    asmjit::x86::Assembler a(&code);
    err = a.emitInst(inst, ops.data(), ops.size());
    if (err != kErrorOk)
      return make_error("impossible operand form '" + f.display + "': asmjit cannot encode it (" +
                        DebugUtils::errorAsString(err) + ")");
    const CodeBuffer& buf = code.textSection()->buffer();
    // EVEX forms start with 0x62 (no legacy prefix precedes a VEX/EVEX escape).
    f.evex_native = buf.size() > 0 && buf.data()[0] == 0x62;
    // asmjit takes {vex}/{evex} as a preference and encodes another way when the form has no such
    // encoding; the label would then name an encoding that never ran.
    if (auto why = undefined_form(f)) return make_error("impossible operand form '" + f.display + "': " + *why);
    if (!f.text.encoding.empty()) {
      const std::string used = encoding_of(buf.data(), buf.size());
      if (used != f.text.encoding)
        return make_error("impossible operand form '" + f.display + "': " + f.text.mnemonic + " with these operands has no " +
                          (f.text.encoding == "vex" ? "VEX" : "EVEX") + " encoding (asmjit encodes it as " + used +
                          "); leave out the {" + f.text.encoding + "} prefix");
    }
  }
  InstRWInfo rw;
  InstAPI::queryRWInfo(Arch::kX64, inst, ops.data(), ops.size(), &rw);
  for (size_t i = 0; i < ops.size(); ++i) {
    OperandRole r;
    r.read = rw.operand(i).isRead() || (ops[i].isMem() && rw.operand(i).isMemBaseRead() && !rw.operand(i).isWrite());
    r.write = rw.operand(i).isWrite();
    if (ops[i].isImm()) r = OperandRole{true, false};
    f.roles.push_back(r);
  }
  // Only a register destination is merged: `movhps m64, xmm` stores its half and reads no memory.
  if (!f.roles.empty() && ops[0].isReg() && destination_also_read(f.text.mnemonic)) f.roles[0].read = true;
  f.mask_selects = mask_selects_sources(f.text.mnemonic);
  if (!f.roles.empty() && ops[0].isReg() && f.mask_selects) f.roles[0].read = false;
  CpuFeatures feats;
  InstAPI::queryFeatures(Arch::kX64, inst, ops.data(), ops.size(), &feats);
  for (auto it = feats.iterator(); it.hasNext();) f.features.push_back(feature_name(uint32_t(it.next())));
  return f;
}

}  // namespace peakprobe::x86
