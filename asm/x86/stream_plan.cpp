#include "asm/x86/stream_plan.hpp"

#include <algorithm>
#include <set>
#include <utility>
#include <map>
#include <cstring>

#include "asm/x86/operand_factory.hpp"

namespace peakprobe::x86 {
using namespace asmjit;
using asmjit::x86::Gp;
namespace ax = asmjit::x86;

namespace {

// Loads whose general-register result is the memory value itself (extended, or byte-swapped for
// movbe, whose chase stores swapped pointers): only these can follow a pointer from one copy to the next.
bool result_is_loaded_value(const std::string& m) {
  return m == "mov" || m == "movbe" || m == "movzx" || m == "movsx" || m == "movsxd";
}

// Vector loads whose lowest element is the memory value at the address (moved, or broadcast from
// it): a bridge back to a general register then holds the next pointer. aesimc, vpmovzx*, vmovshdup
// and the like put something else there.
bool vector_result_is_loaded_value(const std::string& m) {
  static const std::set<std::string> kLoads = {
      "movd", "movq", "vmovd", "vmovq", "movss", "movsd", "vmovss", "vmovsd", "movaps", "movups", "movapd",
      "movupd", "movdqa", "movdqu", "vmovaps", "vmovups", "vmovapd", "vmovupd", "vmovdqa", "vmovdqu",
      "vmovdqa32", "vmovdqa64", "vmovdqu8", "vmovdqu16", "vmovdqu32", "vmovdqu64", "lddqu", "vlddqu",
      "movntdqa", "vmovntdqa", "movddup", "vmovddup", "vbroadcastss", "vbroadcastsd", "vpbroadcastd",
      "vpbroadcastq", "vbroadcasti128", "vbroadcastf128", "vbroadcasti32x2", "vbroadcasti32x4",
      "vbroadcasti64x2", "vbroadcastf32x2", "vbroadcastf32x4", "vbroadcastf64x2", "vbroadcasti32x8",
      "vbroadcasti64x4", "vbroadcastf32x8", "vbroadcastf64x4"};
  return kLoads.count(m) != 0;
}

constexpr uint32_t kBufferReg = Gp::kIdSi;
// The value r11 holds while the loop runs: re-loaded into implicit operands (a dividend for div) by
// the reset instructions of throughput streams. Large enough that a divide has a wide quotient, and
// positive in both its 64-bit and low 32-bit halves so a signed idiv by 1 cannot overflow (#DE).
constexpr uint64_t kResetValue = 0x0123456712345678ull;

enum class SlotKind { dest, clobbered, source, fixed_read, fixed_written, mem, vmem, lea_mem, imm };

struct Slot {
  SlotKind kind;
  const OperandKind* op = nullptr;
};

struct Pools {
  std::vector<uint32_t> gp, vec, mask, tile;
  std::vector<uint32_t>& of(OpClass c) {
    switch (c) {
      case OpClass::vec: return vec;
      case OpClass::mask: return mask;
      case OpClass::tile: return tile;
      default: return gp;
    }
  }
  // Sources come from the back of a pool, destinations from the front: they never meet.
  bool take_back(OpClass c, uint32_t& id) {
    auto& p = of(c);
    if (p.empty()) return false;
    id = p.back();
    p.pop_back();
    return true;
  }
};

uint32_t fixed_id(const OperandKind& k) { return make_fixed(k).as<BaseReg>().id(); }

bool is_register(OpClass c) {
  return c == OpClass::gp || c == OpClass::vec || c == OpClass::mask || c == OpClass::tile;
}

Pools make_pools(const InstForm& f, int vec_regs) {
  Pools p;
  for (uint32_t id : {Gp::kIdAx, Gp::kIdBx, Gp::kIdCx, Gp::kIdDx, Gp::kIdBp, Gp::kIdR8, Gp::kIdR9, Gp::kIdR10,
                      Gp::kIdR12, Gp::kIdR13, Gp::kIdR14, Gp::kIdR15})
    p.gp.push_back(id);
  for (int i = 0; i < vec_regs; ++i) p.vec.push_back(uint32_t(i));
  for (uint32_t i = 1; i < 8; ++i) p.mask.push_back(i);
  for (uint32_t i = 0; i < 8; ++i) p.tile.push_back(i);
  // Registers the form names literally (cl, rax, xmm0) or uses without naming them (xgetbv's ecx)
  // are never handed out.
  for (uint32_t id : f.implicit_gp) p.gp.erase(std::remove(p.gp.begin(), p.gp.end(), id), p.gp.end());
  for (const auto& k : f.text.operands) {
    if (k.cls != OpClass::fixed) continue;
    Operand r = make_fixed(k);
    auto& pool = r.as<BaseReg>().isGp() ? p.gp : r.as<BaseReg>().isVec() ? p.vec : p.mask;
    pool.erase(std::remove(pool.begin(), pool.end(), fixed_id(k)), pool.end());
  }
  return p;
}

std::vector<Slot> classify(const InstForm& f) {
  std::vector<Slot> slots;
  bool have_dest = false;
  for (size_t i = 0; i < f.text.operands.size(); ++i) {
    const OperandKind& k = f.text.operands[i];
    const OperandRole& r = f.roles[i];
    Slot s{SlotKind::imm, &k};
    if (is_register(k.cls)) {
      if (r.write && !have_dest) {
        s.kind = SlotKind::dest;
        have_dest = true;
      } else {
        s.kind = r.write ? SlotKind::clobbered : SlotKind::source;
      }
    } else if (k.cls == OpClass::fixed) {
      s.kind = r.write ? SlotKind::fixed_written : SlotKind::fixed_read;
    } else if (k.cls == OpClass::mem) {
      s.kind = f.is_lea ? SlotKind::lea_mem : SlotKind::mem;
    } else if (k.cls == OpClass::vmem) {
      s.kind = SlotKind::vmem;
    }
    slots.push_back(s);
  }
  return slots;
}

int widest_vector(const InstForm& f) {
  int bits = 0;
  for (const auto& k : f.text.operands) {
    if (k.cls == OpClass::vec) bits = std::max(bits, k.bits);
    if (k.cls == OpClass::vmem) bits = std::max(bits, k.index_bits);
  }
  return bits;
}

bool has_merge_mask(const InstForm& f) {
  return std::any_of(f.text.operands.begin(), f.text.operands.end(),
                     [](const OperandKind& k) { return k.merge_mask; });
}

// Whether the form's one written operand is a register destination it does not read and writes
// whole (a 32- or 64-bit general-purpose register, or a vector register of a VEX or EVEX form
// without a merge mask, which zero what lies above), so that an instance waits for no earlier one
// through it. An 8- or 16-bit write merges into the old register, and a legacy SSE write keeps the
// upper lanes: both wait for the register's last writer.
bool writes_whole_destination_of(const InstForm& f, const std::vector<Slot>& slots) {
  int dest = -1;
  for (size_t i = 0; i < slots.size(); ++i) {
    const bool written = f.roles[i].write;
    if (slots[i].kind == SlotKind::dest) dest = int(i);
    else if (written) return false;  // a second result (clobbered or fixed register, memory)
  }
  if (dest < 0 || f.roles[size_t(dest)].read) return false;
  const OperandKind& k = *slots[size_t(dest)].op;
  if (k.cls == OpClass::gp) return k.bits >= 32;
  // A merge mask keeps the old destination's masked elements, except in the masked blends, whose
  // {k} selects between their sources (InstForm::mask_selects).
  if (k.cls == OpClass::vec)
    return !f.text.mnemonic.empty() && f.text.mnemonic[0] == 'v' && (!has_merge_mask(f) || f.mask_selects);
  return false;
}

PlannedInst make_inst(InstId id, std::vector<Operand> ops, PlannedInst::Role role) {
  PlannedInst p;
  p.inst = BaseInst(id);
  p.ops = std::move(ops);
  p.role = role;
  return p;
}

// Sets a clobbered register back to what the probed instruction expects before each instance.
PlannedInst reset_inst(const OperandKind& k, uint32_t id, const HostIsa& isa) {
  using R = PlannedInst::Role;
  if (k.cls == OpClass::mask) {
    Operand m = ax::k(id);
    return make_inst(ax::Inst::kIdKxnorw, {m, m, m}, R::reset);
  }
  if (k.cls == OpClass::vec) {
    Operand v = make_reg(k, id);
    if (isa.avx) return make_inst(ax::Inst::kIdVpcmpeqd, {v, v, v}, R::reset);
    return make_inst(ax::Inst::kIdPcmpeqd, {v, v}, R::reset);
  }
  return make_inst(ax::Inst::kIdMov, {ax::gpq(id), ax::r11}, R::reset);
}

// div/idiv of an 8-bit divisor: ax is the dividend and al takes the quotient, which must fit in
// a signed byte or the divide overflows (#DE). Every other implicit dividend starts at kResetValue.
bool byte_divide(const InstForm& f) {
  const auto& m = f.text.mnemonic;
  return (m == "div" || m == "idiv") && f.text.operands.size() == 2 && f.text.operands[0].cls == OpClass::fixed &&
         f.text.operands[0].fixed == "ax";
}
constexpr uint64_t kByteDividend = 0x78;  // 120: a 7-bit quotient by the divisor 1

// div/idiv with a memory divisor: it reads a constant 1 (see InitKind::constant_one), so a chain
// through rdx:rax never overflows and the buffer's pointer words (whose low bits may be 0) are
// never a divisor.
bool divides_by_memory(const InstForm& f) {
  const auto& m = f.text.mnemonic;
  if (m != "div" && m != "idiv") return false;
  return std::any_of(f.text.operands.begin(), f.text.operands.end(), [](const OperandKind& k) { return k.cls == OpClass::mem; });
}

PlannedInst reset_fixed(const OperandKind& k, bool byte_dividend = false) {
  using R = PlannedInst::Role;
  Operand r = make_fixed(k);
  // The high half of an implicit rdx:rax dividend must be zero or the divide overflows (#DE);
  // xor of a register with itself is a dependency-breaking zero idiom.
  if (r.as<Gp>().id() == Gp::kIdDx) return make_inst(ax::Inst::kIdXor, {ax::edx, ax::edx}, R::reset);
  if (byte_dividend && r.as<Gp>().id() == Gp::kIdAx)
    return make_inst(ax::Inst::kIdMov, {ax::eax, Imm(int64_t(kByteDividend))}, R::reset);
  return make_inst(ax::Inst::kIdMov, {ax::gpq(r.as<Gp>().id()), ax::r11}, R::reset);
}

void set_init(StreamPlan& plan, OpClass cls, uint32_t id, InitKind kind, uint64_t value = 0, int elem_bits = 32) {
  for (auto& r : plan.inits)
    if (r.cls == cls && r.id == id) {
      r.kind = kind;
      r.value = value;
      r.elem_bits = elem_bits;
      return;
    }
  plan.inits.push_back({cls, id, kind, value, elem_bits});
}

// A register's start value unless the plan already gives it one. Each form of a mix adds its
// defaults; a later form must not overwrite what an earlier one set on purpose (a memory divisor's
// base pointing at a constant 1 reset to 1 was a pointer to address 1: SIGSEGV in every mix with a
// `div m32`).
void default_init(StreamPlan& plan, OpClass cls, uint32_t id, InitKind kind, uint64_t value = 0) {
  for (const auto& r : plan.inits)
    if (r.cls == cls && r.id == id) return;
  plan.inits.push_back({cls, id, kind, value});
}

void init_common(StreamPlan& plan, const InstForm& f, const Pools& all) {
  // Every register the stream may touch starts with a sane value: data for vectors, all-ones masks,
  // small non-zero integers (1 is a harmless divisor, shift count and multiplier).
  for (uint32_t id : all.gp) default_init(plan, OpClass::gp, id, InitKind::gp_value, 1);
  for (uint32_t id : all.vec) default_init(plan, OpClass::vec, id, InitKind::data, 0);
  bool masks = has_merge_mask(f) || std::any_of(f.text.operands.begin(), f.text.operands.end(),
                                                 [](const OperandKind& k) { return k.cls == OpClass::mask; });
  if (masks)
    for (uint32_t id : all.mask) default_init(plan, OpClass::mask, id, InitKind::ones, 0);
  if (std::find(all.gp.begin(), all.gp.end(), uint32_t(Gp::kIdR11)) == all.gp.end())
    default_init(plan, OpClass::gp, Gp::kIdR11, InitKind::gp_value, kResetValue);
  // Registers the form uses without naming them start like the others (they are not in the pools).
  for (uint32_t id : f.implicit_gp) default_init(plan, OpClass::gp, id, InitKind::gp_value, 1);
  // rdpkru and xgetbv read the implicit ecx as a register index: 0 is the one every CPU with them
  // knows (PKRU; XCR0); another faults (#GP).
  if (f.text.mnemonic == "rdpkru" || f.text.mnemonic == "xgetbv")
    set_init(plan, OpClass::gp, Gp::kIdCx, InitKind::gp_value, 0);
  for (const auto& k : f.text.operands) {
    if (k.cls != OpClass::fixed) continue;
    Operand r = make_fixed(k);
    if (!r.as<BaseReg>().isGp()) continue;
    uint32_t id = r.as<Gp>().id();
    const uint64_t ax_value = byte_divide(f) ? kByteDividend : kResetValue;
    set_init(plan, OpClass::gp, id, InitKind::gp_value, id == Gp::kIdDx ? 0 : id == Gp::kIdAx ? ax_value : 1);
  }
  plan.uses_tiles = plan.uses_tiles || std::any_of(f.text.operands.begin(), f.text.operands.end(),
                                                   [](const OperandKind& k) { return k.cls == OpClass::tile; });
}

// Operand values shared by all instances of one form: one fixed register per source operand.
struct SharedOperands {
  std::vector<uint32_t> source_id;    // per operand index
  uint32_t lea_base = 0, lea_index = 0, gather_index = 0, merge_mask = 0;
  uint32_t divisor_base = 0;  // points at a constant 1 (divides_by_memory forms only)
};

// Read-only registers are shared by every form of a plan: the k-th source of a class is the same
// register for all forms. Nothing writes them, so sharing adds no dependency and leaves more
// registers for independent destinations.
class SourceRegs {
 public:
  enum Key { kGatherIndex = 100, kMergeMask = 101, kDivisorBase = 102 };
  bool get(Pools& pools, OpClass cls, int key, int ordinal, uint32_t& id) {
    auto it = regs_.find({key, ordinal});
    if (it != regs_.end()) {
      id = it->second;
      return true;
    }
    if (!pools.take_back(cls, id)) return false;
    regs_[{key, ordinal}] = id;
    return true;
  }

 private:
  std::map<std::pair<int, int>, uint32_t> regs_;
};

bool allocate_sources(const InstForm& f, const std::vector<Slot>& slots, Pools& pools, StreamPlan& plan,
                      SharedOperands& sh, SourceRegs& shared) {
  sh.source_id.assign(slots.size(), 0);
  std::map<int, int> ordinal;  // per class: sources of that class seen so far in this form
  auto next = [&](OpClass c, int key, uint32_t& id) { return shared.get(pools, c, key, ordinal[key]++, id); };
  for (size_t i = 0; i < slots.size(); ++i) {
    const OperandKind& k = *slots[i].op;
    switch (slots[i].kind) {
      case SlotKind::source:
        if (!next(k.cls, int(k.cls), sh.source_id[i])) return false;
        break;
      case SlotKind::lea_mem:
        if (!next(OpClass::gp, int(OpClass::gp), sh.lea_base) || !next(OpClass::gp, int(OpClass::gp), sh.lea_index))
          return false;
        break;
      case SlotKind::vmem:
        if (!next(OpClass::vec, SourceRegs::kGatherIndex, sh.gather_index)) return false;
        set_init(plan, OpClass::vec, sh.gather_index, InitKind::index, 0, k.index_elem_bits);
        break;
      default: break;
    }
  }
  if (has_merge_mask(f) && !f.is_gather && !next(OpClass::mask, SourceRegs::kMergeMask, sh.merge_mask)) return false;
  if (divides_by_memory(f)) {
    if (!next(OpClass::gp, SourceRegs::kDivisorBase, sh.divisor_base)) return false;
    set_init(plan, OpClass::gp, sh.divisor_base, InitKind::constant_one);
  }
  return true;
}

bool allocate_sources(const InstForm& f, const std::vector<Slot>& slots, Pools& pools, StreamPlan& plan,
                      SharedOperands& sh) {
  SourceRegs own;
  return allocate_sources(f, slots, pools, plan, sh, own);
}

struct InstanceRegs {
  uint32_t dest = 0;
  std::vector<uint32_t> clobbered;  // per operand index (0 where not clobbered)
  uint32_t gather_mask = 0;         // AVX-512 gather's merge mask for this instance
  int32_t disp = 0;
  uint32_t mem_base = kBufferReg;
};

PlannedInst build_instance(const InstForm& f, const std::vector<Slot>& slots, const SharedOperands& sh,
                           const InstanceRegs& r) {
  PlannedInst p;
  p.inst = BaseInst(f.id, f.options);
  p.role = PlannedInst::Role::measured;
  const int vec_bits = widest_vector(f);
  for (size_t i = 0; i < slots.size(); ++i) {
    const OperandKind& k = *slots[i].op;
    switch (slots[i].kind) {
      case SlotKind::dest: p.ops.push_back(make_reg(k, r.dest)); break;
      case SlotKind::clobbered: p.ops.push_back(make_reg(k, r.clobbered[i])); break;
      case SlotKind::source: p.ops.push_back(make_reg(k, sh.source_id[i])); break;
      case SlotKind::fixed_read:
      case SlotKind::fixed_written: p.ops.push_back(make_fixed(k)); break;
      case SlotKind::mem:
        if (divides_by_memory(f)) p.ops.push_back(make_mem(k, sh.divisor_base, BaseReg::kIdBad, 0, vec_bits));
        else p.ops.push_back(make_mem(k, r.mem_base, BaseReg::kIdBad, r.disp, vec_bits));
        break;
      case SlotKind::lea_mem: p.ops.push_back(make_mem(k, sh.lea_base, sh.lea_index, 8, vec_bits)); break;
      case SlotKind::vmem: p.ops.push_back(make_mem(k, kBufferReg, sh.gather_index, 0, vec_bits)); break;
      case SlotKind::imm: p.ops.push_back(probe_imm(i < f.imms.size() ? f.imms[i] : 1)); break;
    }
  }
  if (has_merge_mask(f)) p.inst.setExtraReg(ax::k(f.is_gather ? r.gather_mask : sh.merge_mask));
  return p;
}

int dest_slot(const std::vector<Slot>& slots) {
  for (size_t i = 0; i < slots.size(); ++i)
    if (slots[i].kind == SlotKind::dest) return int(i);
  return -1;
}

int vec_regs_for(const InstForm& f) { return f.evex_native ? 32 : 16; }


}  // namespace

std::string infer_dtype(const std::string& m) {
  auto ends = [&](const char* s) { return m.size() >= strlen(s) && m.compare(m.size() - strlen(s), strlen(s), s) == 0; };
  if (m.find("bf16") != std::string::npos) return "bf16";
  if (ends("ph") || ends("sh") || ends("phx")) return "f16";
  if (ends("pd") || ends("sd")) return "f64";
  if (ends("ps") || ends("ss")) return "f32";
  return "-";
}

std::string infer_dtype(const InstForm& f) {
  // x87 arithmetic with memory: the buffer holds 1.0 of the float's width, or integer 1 of the
  // integer's (fiadd and the like): the common case. The default pattern's bytes of 1 read as a tiny
  // float, or as 257, which send st(0) to zero or infinity within a few thousand instructions.
  const auto& ops = f.text.operands;
  if (works_on_x87_stack_top(f) && ops.size() == 1) {
    if (f.text.mnemonic[1] == 'i') return ops[0].bits == 16 ? "i16" : "i32";
    return ops[0].bits == 64 ? "f64" : "f32";
  }
  return infer_dtype(f.text.mnemonic);
}

namespace {

// Resets and instance of one chain of form `f`, appended to `copy`.
struct MixForm {
  const InstForm* form = nullptr;
  int weight = 1;
  std::vector<Slot> slots;
  SharedOperands sh;
  std::vector<InstanceRegs> chains;
  size_t next_chain = 0;
  int32_t line_step = 0;  // see line_step below
  int line_period = 0;    // its instances in one copy
};

// How many cache lines the chains of a form read and write (at `64 * (chain % lines)` past the form's
// base). A form whose memory operands have a definite size, and that reads or writes them but not
// both, uses one line from every chain:
// - loads: nothing orders loads from one line, and the fewer lines a stream touches, the less the
//   other hardware thread of the core slows it. On the Zen 4 VM 12 FMA chains from memory, each on a
//   line of its own, ran 2-5% or more slow in half of their 20-sample windows, slowed for milliseconds
//   at a time while the add references ran within 1.5%; from one line, in 0-4% of the windows in 6
//   runs of 8 and 28-29% in the other two.
// - stores: a core commits stores at its full rate only while they rotate among a few lines. On the
//   Zen 5 VM 8-byte stores ran two a cycle over 1-12 lines taken in turn and one a cycle over 13-32
//   (and two a cycle walking 32 lines in order, 8 stores to a line); a line per chain had every
//   32-chain mix of `mov m64, r64` read 1.04 cycles where `inst` reads 0.50.
// A read-modify-write keeps a line per chain (a store-to-load chain the register latency does not
// include), and so does a form on memory of no definite size (clflush, prefetch, fxsave: a line
// flushed or fetched again is another measurement), and a store that bypasses the caches (movnt*,
// movdiri): on the Zen 5 VM a full-line non-temporal store to one line again and again waited for
// the last to reach memory, 490-550 cycles against 20-22 over a line per chain.
bool bypasses_caches(const InstForm& f) {
  const std::string& m = f.text.mnemonic;
  return m.rfind("movnt", 0) == 0 || m.rfind("vmovnt", 0) == 0 || m.rfind("movdir", 0) == 0;
}

// Cache control names a line, whatever size its text spells (`clflush m8` as well as `clflush m`).
bool controls_cache(const InstForm& f) {
  const std::string& m = f.text.mnemonic;
  return m.rfind("clflush", 0) == 0 || m == "clwb" || m == "cldemote" || m.rfind("prefetch", 0) == 0;
}

int lines_for_chains(const MixForm& m, int chains) {
  bool reads = false, writes = false, definite = !controls_cache(*m.form), any = false;
  for (size_t s = 0; s < m.slots.size(); ++s) {
    if (m.slots[s].kind != SlotKind::mem) continue;
    any = true;
    const OperandKind& k = *m.slots[s].op;
    reads = reads || m.form->roles[s].read;
    writes = writes || m.form->roles[s].write;
    if (k.bits == 0 && k.bcst_bits == 0) definite = false;
  }
  if (!any) return 0;
  return definite && !(reads && writes) && !(writes && bypasses_caches(*m.form)) ? 1 : std::min(32, chains);
}

// The bytes between the places a form's loads take turns over inside its one line (0: every load
// reads the same place). A core may read one address no faster than it reads a line: on the
// Sapphire Rapids-class VM `mov r64, m64`, `vmovups xmm, m128` and `vmovups ymm, m256` all ran 0.503
// cycles from one address and 0.333 from two naturally aligned places of a line (three load pipes;
// the published rate), `vaddps ymm, ymm, m256` 0.537 against 0.500. Naturally aligned places (never
// a line split: a 64-byte load at 32 bytes ran 0.78) at least 8 bytes apart, which all hold the same
// data (the buffer repeats a pattern of at most 8-byte elements). Stores stay at one address: there
// 256-bit stores ran 0.50 from one place and 1.13 over eight.
int32_t line_step(const MixForm& m, int lines) {
  if (lines != 1 || controls_cache(*m.form) || divides_by_memory(*m.form)) return 0;
  int bytes = 0;
  for (size_t s = 0; s < m.slots.size(); ++s) {
    if (m.slots[s].kind != SlotKind::mem) continue;
    if (m.form->roles[s].write) return 0;
    const OperandKind& k = *m.slots[s].op;
    bytes = std::max(bytes, (k.bcst_bits ? k.bcst_bits : k.bits) / 8);
  }
  if (bytes == 0) return 0;
  int32_t step = 8;
  while (step < bytes) step *= 2;
  return step >= 64 ? 0 : step;
}

// `base`: where the form's lines start. Each form of a mix has lines of its own, right after the
// previous form's: a store part and a load part touching the same lines made every load wait for a
// store to forward (on the Zen 4 VM, `mov m32, r32` beside any load read "shared", 1.00).
bool allocate_chain(MixForm& m, Pools& pools, StreamPlan& plan, int32_t base, int j, int lines) {
  const InstForm& f = *m.form;
  InstanceRegs r;
  r.clobbered.assign(m.slots.size(), 0);
  r.disp = base + 64 * (j % lines);  // lines_for_chains: one line, or a line per chain inside L1
  auto take_front = [&](OpClass c, uint32_t& id) {
    auto& p = pools.of(c);
    if (p.empty()) return false;
    id = p.front();
    p.erase(p.begin());
    return true;
  };
  const int d = dest_slot(m.slots);
  if (d >= 0) {
    if (!take_front(m.slots[size_t(d)].op->cls, r.dest)) return false;
    plan.dest_ids.push_back(r.dest);
  }
  for (size_t i = 0; i < m.slots.size(); ++i) {
    if (m.slots[i].kind != SlotKind::clobbered) continue;
    if (!take_front(m.slots[i].op->cls, r.clobbered[i])) return false;
    if (m.slots[i].op->cls == OpClass::vec) set_init(plan, OpClass::vec, r.clobbered[i], InitKind::ones);
  }
  if (f.is_gather && has_merge_mask(f) && !take_front(OpClass::mask, r.gather_mask)) return false;
  m.chains.push_back(r);
  return true;
}

void emit_chain(MixForm& m, const HostIsa& isa, StreamPlan& plan) {
  const int instance = int(m.next_chain++);
  InstanceRegs r = m.chains[size_t(instance) % m.chains.size()];
  r.disp += line_place(m.line_step, instance);
  for (size_t i = 0; i < m.slots.size(); ++i)
    if (m.slots[i].kind == SlotKind::clobbered) plan.copy.push_back(reset_inst(*m.slots[i].op, r.clobbered[i], isa));
  if (m.form->is_gather && has_merge_mask(*m.form)) {
    OperandKind mk;
    mk.cls = OpClass::mask;
    plan.copy.push_back(reset_inst(mk, r.gather_mask, isa));
  }
  for (const auto& s : m.slots)
    if (s.kind == SlotKind::fixed_written) plan.copy.push_back(reset_fixed(*s.op, byte_divide(*m.form)));
  PlannedInst p = build_instance(*m.form, m.slots, m.sh, r);
  if (m.line_step > 0) {
    p.line_step = m.line_step;
    p.line_slot = instance;
    p.line_period = m.line_period;
  }
  plan.copy.push_back(std::move(p));
}

// Smooth weighted round-robin: for weights 2:1 the order is A B A, spreading each form evenly.
std::vector<size_t> interleave(const std::vector<MixForm>& forms) {
  std::vector<int> current(forms.size(), 0);
  int total = 0;
  for (const auto& m : forms) total += m.weight;
  std::vector<size_t> order;
  for (int step = 0; step < total; ++step) {
    size_t best = 0;
    for (size_t i = 0; i < forms.size(); ++i) {
      current[i] += forms[i].weight;
      if (current[i] > current[best]) best = i;
    }
    current[best] -= total;
    order.push_back(best);
  }
  return order;
}

}  // namespace

namespace {

bool is_call(const InstForm& f) { return f.text.mnemonic == "call"; }

// A throughput plan for a control-transfer form (branch, call): every register it may touch set up,
// 16 vector registers, and the pools the form may draw from.
std::pair<StreamPlan, Pools> control_plan(const InstForm& f, const std::string& dtype) {
  StreamPlan plan;
  plan.kind = StreamKind::throughput;
  plan.dtype = dtype;
  plan.vec_regs = 16;
  Pools pools = make_pools(f, plan.vec_regs);
  init_common(plan, f, pools);
  return {std::move(plan), std::move(pools)};
}

// Each branch goes to the next instruction, taken or not, so the stream's path is the same either
// way and only the direction (held by the flags, see branch_taken) decides what the core does.
Expected<StreamPlan> plan_branches(const InstForm& jump, int count, const std::string& dtype) {
  auto [plan, pools] = control_plan(jump, dtype);
  plan.branch_to_next = true;
  PlannedInst p;
  // rel8 and rel32 are the short and long encodings of one mnemonic: asmjit picks by option.
  const bool short_form = jump.text.operands[0].bits == 8;
  p.inst = BaseInst(jump.id, jump.options | (short_form ? asmjit::InstOptions::kShortForm : asmjit::InstOptions::kLongForm));
  p.role = PlannedInst::Role::measured;
  p.ops.push_back(asmjit::Label());  // the emitter binds the next instruction's label here
  for (int i = 0; i < count; ++i) plan.copy.push_back(p);
  plan.chains = count;
  plan.measured_per_copy = count;
  plan.measured_per_form = {count};
  // A taken branch's target starts the next 32 bytes (see StreamPlan::branch_target_align); a branch
  // not taken runs on into the next one, so nothing may lie between them.
  if (branch_taken(jump)) plan.branch_target_align = 32;
  plan.method = std::string("independent: each branch goes to the next instruction, ") +
                (branch_taken(jump) ? "taken, one per 32 bytes" : "not taken");
  return plan;
}

bool is_ret(const InstForm& f) { return f.text.mnemonic == "ret" && f.text.operands.empty(); }

// call and ret as uops.info measures them: each call goes to a `ret` the emitter places after the
// function (StreamPlan::return_stub) and comes straight back, so a copy of `rounds` calls runs
// `rounds` calls and `rounds` rets. The target is the stub: as a label (rel32), in a register, or in
// memory (a qword next to the stub, read through a register).
Expected<StreamPlan> plan_call_return(const InstForm& call, int rounds, const std::string& dtype) {
  auto [plan, pools] = control_plan(call, dtype);
  plan.return_stub = true;
  if (call.text.operands.size() != 1) return make_error("call takes one target operand");
  const OperandKind& k = call.text.operands[0];
  const uint32_t target = pools.gp.front();
  PlannedInst p;
  p.inst = BaseInst(call.id, call.options);
  p.role = PlannedInst::Role::measured;
  if (k.cls == OpClass::imm && k.relative) {
    p.ops.push_back(asmjit::Label());  // the emitter puts the stub's label here
  } else if (k.cls == OpClass::gp && k.bits == 64) {
    p.ops.push_back(ax::gpq(target));
    set_init(plan, OpClass::gp, target, InitKind::return_stub);
  } else if (k.cls == OpClass::mem && (k.bits == 64 || k.bits == 0)) {
    p.ops.push_back(ax::qword_ptr(ax::gpq(target)));
    set_init(plan, OpClass::gp, target, InitKind::return_stub_pointer);
  } else {
    return make_error("no call form with operand '" + k.text + "' is measured");
  }
  for (int i = 0; i < rounds; ++i) plan.copy.push_back(p);
  plan.chains = rounds;
  plan.measured_per_copy = 2 * rounds;
  plan.measured_per_form = {rounds, rounds};
  plan.method = "independent";
  return plan;
}

bool is_xbegin(const InstForm& f) { return f.text.mnemonic == "xbegin"; }
bool is_xend(const InstForm& f) { return f.text.mnemonic == "xend"; }

// Empty transactions, each `xbegin` straight followed by its `xend` (StreamPlan::transactions): the
// cost of starting and committing one, as code that elides a lock pays it.
Expected<StreamPlan> plan_transactions(const InstForm& xbegin, const InstForm& xend, int rounds,
                                       const std::string& dtype) {
  if (xbegin.text.operands.size() != 1 || xbegin.text.operands[0].cls != OpClass::imm ||
      !xbegin.text.operands[0].relative)
    return make_error("xbegin is measured with a relative fallback ('xbegin rel32')");
  auto [plan, pools] = control_plan(xbegin, dtype);
  plan.transactions = true;
  PlannedInst begin;
  begin.inst = BaseInst(xbegin.id, xbegin.options);
  begin.ops.push_back(asmjit::Label());  // the emitter binds the fallback after the xend
  PlannedInst end;
  end.inst = BaseInst(xend.id, xend.options);
  for (int i = 0; i < rounds; ++i) {
    plan.copy.push_back(begin);
    plan.copy.push_back(end);
  }
  plan.chains = rounds;
  plan.measured_per_copy = 2 * rounds;
  plan.measured_per_form = {rounds, rounds};
  plan.method = "independent: empty transactions, each xbegin with its xend";
  return plan;
}

}  // namespace

Expected<StreamPlan> plan_mix(const std::vector<MixEntry>& entries, int rounds, const HostIsa& isa,
                              const std::string& dtype) {
  if (entries.empty()) return make_error("an empty mix");
  if (rounds < 1) return make_error("a mix needs at least one round");
  for (const auto& e : entries)
    if (!e.form) return make_error("mix weights must be positive");
  if (std::any_of(entries.begin(), entries.end(), [](const MixEntry& e) { return is_direct_branch(*e.form); })) {
    if (entries.size() != 1) return make_error("branches are measured alone, not in mixes");
    return plan_branches(*entries[0].form, rounds * entries[0].weight, dtype);
  }
  // call and ret only as a pair: neither can run without the other.
  const auto calls = std::count_if(entries.begin(), entries.end(), [](const MixEntry& e) { return is_call(*e.form); });
  const auto rets = std::count_if(entries.begin(), entries.end(), [](const MixEntry& e) { return is_ret(*e.form); });
  if (calls || rets) {
    if (entries.size() != 2 || calls != 1 || rets != 1 || entries[0].weight != entries[1].weight)
      return make_error("call and ret run only as a pair, one ret per call ('peakprobe inst \"call rel32\"' measures it)");
    return plan_call_return(is_call(*entries[0].form) ? *entries[0].form : *entries[1].form, rounds * entries[0].weight,
                            dtype);
  }
  // xbegin and xend only as a pair: an xend outside a transaction faults, an xbegin needs its end.
  const auto begins = std::count_if(entries.begin(), entries.end(), [](const MixEntry& e) { return is_xbegin(*e.form); });
  const auto ends = std::count_if(entries.begin(), entries.end(), [](const MixEntry& e) { return is_xend(*e.form); });
  if (begins || ends) {
    if (entries.size() != 2 || begins != 1 || ends != 1 || entries[0].weight != entries[1].weight)
      return make_error("xbegin and xend run only as a pair, one xend per xbegin ('peakprobe inst \"xbegin rel32\"' "
                        "measures it)");
    const bool begin_first = is_xbegin(*entries[0].form);
    return plan_transactions(begin_first ? *entries[0].form : *entries[1].form,
                             begin_first ? *entries[1].form : *entries[0].form, rounds * entries[0].weight, dtype);
  }
  StreamPlan plan;
  plan.kind = StreamKind::throughput;
  plan.dtype = dtype;
  plan.vec_regs = 32;
  for (const auto& e : entries) {
    if (!e.form || e.weight < 1) return make_error("mix weights must be positive");
    plan.vec_regs = std::min(plan.vec_regs, vec_regs_for(*e.form));
  }
  // One register pool for the whole plan: forms never share a written register.
  Pools pools = make_pools(*entries.front().form, plan.vec_regs);
  for (const auto& e : entries) {
    Pools p = make_pools(*e.form, plan.vec_regs);
    for (OpClass c : {OpClass::gp, OpClass::vec, OpClass::mask}) {
      auto& keep = pools.of(c);
      const auto& other = p.of(c);
      keep.erase(std::remove_if(keep.begin(), keep.end(),
                                [&](uint32_t id) { return std::find(other.begin(), other.end(), id) == other.end(); }),
                 keep.end());
    }
  }
  // r11 holds the reset value only for forms whose resets need it; otherwise it is one more
  // register for independent chains (wide cores need 12 or more general-purpose chains).
  const bool needs_reset_value = std::any_of(entries.begin(), entries.end(), [](const MixEntry& e) {
    const auto slots = classify(*e.form);
    return std::any_of(slots.begin(), slots.end(), [](const Slot& s) {
      return (s.kind == SlotKind::clobbered && s.op->cls == OpClass::gp) || s.kind == SlotKind::fixed_written ||
             s.kind == SlotKind::fixed_read;  // a form naming r11 itself keeps it out of the pool
    });
  });
  if (!needs_reset_value) pools.gp.push_back(Gp::kIdR11);
  for (const auto& e : entries) init_common(plan, *e.form, pools);
  std::vector<MixForm> forms;
  SourceRegs shared;
  for (const auto& e : entries) {
    MixForm m;
    m.form = e.form;
    m.weight = e.weight;
    m.slots = classify(*e.form);
    if (!allocate_sources(*e.form, m.slots, pools, plan, m.sh, shared))
      return make_error("not enough registers for the source operands of '" + e.form->display + "'");
    forms.push_back(std::move(m));
  }
  // Where the next form with a memory operand starts its lines: past the first two lines when a form
  // gathers or scatters, whose lanes address [buffer + lane x 8 bytes at most] (a load chain on a line
  // a scatter writes would wait for its stores).
  const bool gathers = std::any_of(forms.begin(), forms.end(), [](const MixForm& m) {
    return std::any_of(m.slots.begin(), m.slots.end(), [](const Slot& s) { return s.kind == SlotKind::vmem; });
  });
  int32_t base = gathers ? 128 : 0;
  for (size_t i = 0; i < forms.size(); ++i) {
    MixForm& m = forms[i];
    const int instances = m.weight * rounds;
    // A form that writes memory keeps an instance per chain: where it also reads that memory (or
    // bypasses the caches) each chain has a line of its own (lines_for_chains), and instances sharing
    // a chain would share its line, a store-to-load chain the register latency does not include.
    bool writes_memory = false;
    for (size_t s = 0; s < m.slots.size(); ++s)
      if (m.slots[s].kind == SlotKind::mem && m.form->roles[s].write) writes_memory = true;
    int chains = entries[i].chains > 0 && !writes_memory ? std::min(entries[i].chains, instances) : instances;
    // A part that only writes its destination, whole, carries no chain: its instances need no
    // registers of their own, and the registers go to the parts that chain (see writes_whole_destination).
    if (entries[i].chains == 0 && entries.size() > 1 && writes_whole_destination_of(*m.form, m.slots))
      chains = std::min(chains, kWholeWriteChains);
    const int lines = lines_for_chains(m, chains);
    m.line_step = line_step(m, lines);
    m.line_period = instances;
    for (int j = 0; j < chains; ++j)
      if (!allocate_chain(m, pools, plan, base, j, std::max(1, lines)))
        return make_error("not enough registers for " + std::to_string(rounds) + " round(s) of this mix");
    base += 64 * lines;
  }
  const std::vector<size_t> order = interleave(forms);
  for (int g = 0; g < rounds; ++g)
    for (size_t f : order) emit_chain(forms[f], isa, plan);
  plan.chains = 0;
  plan.measured_per_copy = 0;
  for (const auto& m : forms) {
    plan.chains += int(m.chains.size());
    plan.measured_per_form.push_back(m.weight * rounds);
    plan.measured_per_copy += m.weight * rounds;
  }
  plan.method = "independent";
  // A read-modify-write of memory chains through the line it writes: the same instance in the next
  // copy would wait for this one's store to forward (`add m64, r64` measured 1.80 cycles on Zen 3,
  // published 0.32-0.67). Each copy moves on to the lines right after the previous copy's, past every
  // form's lines (so no form reads in one copy what another form wrote in the copy before):
  // consecutive lines, not lines 4 KiB apart, which a store and a later load would alias in the
  // memory disambiguation of several cores.
  bool rmw = false;
  for (const auto& m : forms)
    for (size_t i = 0; i < m.slots.size(); ++i)
      if (m.slots[i].kind == SlotKind::mem && m.form->roles[i].read && m.form->roles[i].write) rmw = true;
  plan.memory_stride_per_copy = rmw ? base : 0;
  // ldmxcsr faults (#GP) on reserved bits: it loads the harness's own MXCSR value, which the
  // function's epilogue replaces with the caller's anyway. fxrstor faults the same way on the MXCSR
  // field of its 512-byte image (offset 24): with every dword of the buffer the harness's MXCSR, each
  // image the stream restores is valid (its x87 control word too; the epilogue restores the caller's).
  for (const auto& e : entries) {
    const std::string& m = e.form->text.mnemonic;
    if (m == "ldmxcsr" || m == "vldmxcsr" || m == "fxrstor" || m == "fxrstor64") plan.buffer_holds_mxcsr = true;
    // The common case for st(0): a number, not the empty register's underflow (a NaN from the first
    // instruction on, which fsin and the like skip through on a fast path).
    if (works_on_x87_stack_top(*e.form)) plan.x87_top_one = true;
  }
  return plan;
}

int max_rounds(const std::vector<MixEntry>& entries) {
  // More rounds only ever need more registers, so the largest that plans is found by bisection
  // (`table --pipes` asks this for every pair of tens of thousands).
  HostIsa any;
  auto fits = [&](int r) { return plan_mix(entries, r, any, "-").ok(); };
  if (!fits(1)) return 0;
  int lo = 1, hi = 32;  // fits(lo); the answer is in [lo, hi]
  if (fits(hi)) return hi;
  while (hi - lo > 1) {
    const int mid = (lo + hi) / 2;
    (fits(mid) ? lo : hi) = mid;
  }
  return lo;
}

bool writes_whole_destination(const InstForm& f) { return writes_whole_destination_of(f, classify(f)); }

int max_chains(const InstForm& f) { return works_on_x87_stack_top(f) ? 1 : max_rounds({{&f, 1}}); }

bool works_on_x87_stack_top(const InstForm& f) {
  // Arithmetic with a memory operand: st(0) = st(0) op m. (The forms that pop, faddp and the like,
  // and those that push, fptan and fxtract, move the stack itself: not these.)
  static const std::set<std::string> kWithMemory = {"fadd", "fsub", "fsubr", "fmul", "fdiv", "fdivr",
                                                    "fiadd", "fisub", "fisubr", "fimul", "fidiv", "fidivr"};
  // No operand at all: st(0) = op st(0). (fscale, fprem and fprem1 also read st(1), which the stream
  // does not set up: not these.)
  static const std::set<std::string> kAlone = {"fchs", "fabs", "fsqrt", "frndint", "f2xm1", "fsin", "fcos"};
  const auto& ops = f.text.operands;
  if (kAlone.count(f.text.mnemonic)) return ops.empty();
  return kWithMemory.count(f.text.mnemonic) && ops.size() == 1 && ops[0].cls == OpClass::mem;
}

bool is_direct_branch(const InstForm& f) {
  const std::string& m = f.text.mnemonic;
  return m.size() >= 2 && m[0] == 'j' && f.text.operands.size() == 1 && f.text.operands[0].cls == OpClass::imm &&
         f.text.operands[0].relative;
}

bool branch_taken(const InstForm& f) {
  static const std::set<std::string> kTaken = {"jmp", "jne", "jnz", "jae", "jnb", "jnc", "ja", "jnbe",
                                               "jns", "jno", "jge", "jnl", "jg",  "jnle"};
  return kTaken.count(f.text.mnemonic) != 0;
}

Expected<StreamPlan> plan_throughput(const InstForm& f, int chains, const HostIsa& isa, const std::string& dtype) {
  if (chains < 1 || chains > max_chains(f))
    return make_error("cannot build " + std::to_string(chains) + " independent chains of '" + f.display +
                      "' (at most " + std::to_string(max_chains(f)) + ")");
  return plan_mix({{&f, 1}}, chains, isa, dtype);
}

namespace {

struct Bridge {
  InstId id = 0;
  std::string text;
  bool available = false;
};

// An instruction that carries a value from register class `from` (the form's result) back to class
// `to` (the operand the chain continues through). Its own latency is included in the measurement.
Bridge bridge_for(OpClass from, OpClass to, const HostIsa& isa, bool to_address) {
  Bridge b;
  if (from == OpClass::vec && to == OpClass::gp) {
    b.id = isa.avx ? (to_address ? ax::Inst::kIdVmovd : ax::Inst::kIdVmovq) : (to_address ? ax::Inst::kIdMovd : ax::Inst::kIdMovq);
    b.text = std::string(isa.avx ? "vmov" : "mov") + (to_address ? "d r32, xmm" : "q r64, xmm");
    b.available = true;
  } else if (from == OpClass::gp && to == OpClass::vec) {
    b.id = isa.avx ? ax::Inst::kIdVmovq : ax::Inst::kIdMovq;
    b.text = isa.avx ? "vmovq xmm, r64" : "movq xmm, r64";
    b.available = true;
  } else if (from == OpClass::mask && to == OpClass::vec) {
    b.id = ax::Inst::kIdVpmovm2d, b.text = "vpmovm2d zmm, k", b.available = isa.avx512dq;
  } else if (from == OpClass::vec && to == OpClass::mask) {
    b.id = ax::Inst::kIdVpmovd2m, b.text = "vpmovd2m k, zmm", b.available = isa.avx512dq;
  } else if (from == OpClass::mask && to == OpClass::gp) {
    b.id = ax::Inst::kIdKmovw, b.text = "kmovw r32, k", b.available = isa.avx512f;
  } else if (from == OpClass::gp && to == OpClass::mask) {
    b.id = ax::Inst::kIdKmovw, b.text = "kmovw k, r32", b.available = isa.avx512f;
  }
  return b;
}

Operand bridge_operand(OpClass cls, uint32_t id, OpClass other, bool to_address) {
  if (cls == OpClass::gp) return (to_address || other == OpClass::mask) ? Operand(ax::gpd(id)) : Operand(ax::gpq(id));
  if (cls == OpClass::vec) return other == OpClass::mask ? Operand(ax::zmm(id)) : Operand(ax::xmm(id));
  return ax::k(id);
}

}  // namespace

Expected<StreamPlan> plan_latency(const InstForm& f, const HostIsa& isa, const std::string& dtype) {
  if (is_direct_branch(f))
    return make_error(std::string("a branch writes no register to chain: throughput only, each branch to the next "
                                  "instruction, ") +
                      (branch_taken(f) ? "taken" : "not taken"));
  StreamPlan plan;
  plan.kind = StreamKind::latency;
  plan.dtype = dtype;
  plan.chains = 1;
  plan.vec_regs = vec_regs_for(f);
  std::vector<Slot> slots = classify(f);
  Pools pools = make_pools(f, plan.vec_regs);
  init_common(plan, f, pools);
  const int d = dest_slot(slots);

  if (d < 0 && works_on_x87_stack_top(f)) {
    // The throughput stream of one chain is the chain: st(0) carries every result to the next.
    auto top = plan_mix({{&f, 1}}, 1, isa, dtype);
    if (!top) return top;
    top->kind = StreamKind::latency;
    top->method = "chain through st(0), the x87 stack top, which the form reads and writes (starting at 1.0)";
    return top;
  }
  if (d < 0) {
    bool fixed_rw = false;
    for (size_t i = 0; i < slots.size(); ++i)
      if (slots[i].kind == SlotKind::fixed_written && f.roles[i].read) fixed_rw = true;
    if (!fixed_rw) {
      bool store = false;
      for (size_t i = 0; i < slots.size(); ++i)
        if ((slots[i].kind == SlotKind::mem || slots[i].kind == SlotKind::vmem) && f.roles[i].write) store = true;
      return make_error(store ? "a store writes memory, not a register: throughput only"
                              : "writes no register result (flags only): throughput only");
    }
    SharedOperands sh;
    if (!allocate_sources(f, slots, pools, plan, sh)) return make_error("not enough registers");
    InstanceRegs r;
    r.clobbered.assign(slots.size(), 0);
    plan.copy.push_back(build_instance(f, slots, sh, r));
    plan.measured_per_copy = 1;
    std::string regs;
    for (const auto& k : f.text.operands)
      if (k.cls == OpClass::fixed) regs += (regs.empty() ? "" : ":") + k.fixed;
    plan.method = "chain through the implicit registers (" + regs + ")";
    if (divides_by_memory(f)) plan.method += ", divisor 1 in memory";
    return plan;
  }

  const OperandKind& dk = *slots[size_t(d)].op;
  const uint32_t chain = pools.of(dk.cls).front();
  pools.of(dk.cls).erase(pools.of(dk.cls).begin());
  plan.dest_ids.push_back(chain);

  // Which operand does the chain come back through?
  int same_class_src = -1, other_class_src = -1, load = -1;
  for (size_t i = 0; i < slots.size(); ++i) {
    if (int(i) == d) continue;
    // Only an operand the form reads can carry the chain: mulx's second destination (lo) is a
    // register slot too, but write-only, and a "chain" through it measured throughput (1 cycle).
    if ((slots[i].kind == SlotKind::source || slots[i].kind == SlotKind::clobbered) && f.roles[i].read) {
      if (slots[i].op->cls == dk.cls && same_class_src < 0) same_class_src = int(i);
      if (slots[i].op->cls != dk.cls && other_class_src < 0) other_class_src = int(i);
    }
    if (slots[i].kind == SlotKind::mem && f.roles[i].read && load < 0) load = int(i);
    if (slots[i].kind == SlotKind::lea_mem) load = int(i);
  }

  SharedOperands sh;
  InstanceRegs r;
  r.dest = chain;
  r.clobbered.assign(slots.size(), 0);
  const bool dest_rw = f.roles[size_t(d)].read;

  if (dest_rw || same_class_src >= 0 || f.is_lea) {
    // Read-after-write through one register: the result feeds the next instance directly.
    if (!dest_rw && same_class_src >= 0) slots[size_t(same_class_src)].kind = SlotKind::dest;
    if (!allocate_sources(f, slots, pools, plan, sh)) return make_error("not enough registers");
    for (size_t i = 0; i < slots.size(); ++i)
      if (slots[i].kind == SlotKind::clobbered) {
        r.clobbered[i] = pools.of(slots[i].op->cls).front();
        pools.of(slots[i].op->cls).erase(pools.of(slots[i].op->cls).begin());
        plan.copy.push_back(reset_inst(*slots[i].op, r.clobbered[i], isa));
      }
    if (f.is_gather && has_merge_mask(f)) {
      r.gather_mask = pools.mask.front();
      OperandKind mk;
      mk.cls = OpClass::mask;
      plan.copy.push_back(reset_inst(mk, r.gather_mask, isa));
    }
    if (f.is_lea) {
      // lea computes from its address registers: chain through the base.
      plan.copy.push_back(build_instance(f, slots, sh, r));
      plan.copy.back().ops[size_t(load)] = make_mem(*slots[size_t(load)].op, chain, sh.lea_index, 8, 0);
      plan.method = "chain through the base register";
    } else {
      plan.copy.push_back(build_instance(f, slots, sh, r));
      plan.method = dest_rw ? "chain through the destination" : "chain through source operand " + std::to_string(same_class_src + 1);
    }
    plan.measured_per_copy = 1;
    return plan;
  }

  if (load >= 0 && dk.cls == OpClass::gp && !f.is_lea) {
    // A chase needs the result to be the loaded value (byte-swapped for movbe): popcnt, lzcnt, bsf,
    // blsr, rorx and the like turn the address into a number that points nowhere.
    if (!result_is_loaded_value(f.text.mnemonic))
      return make_error("the result is computed from the loaded value, not the value itself, so no pointer chase is "
                        "possible: throughput only");
    const int mem_bits = slots[size_t(load)].op->bits;
    if ((mem_bits == 64 && dk.bits == 64) || (mem_bits == 32 && dk.bits >= 32)) {
      // Pointer chase: the loaded value is the next address (buffer words hold their own address).
      if (!allocate_sources(f, slots, pools, plan, sh)) return make_error("not enough registers");
      r.mem_base = chain;
      plan.copy.push_back(build_instance(f, slots, sh, r));
      plan.chase_bits = mem_bits;
      plan.chase_byteswap = f.text.mnemonic == "movbe";
      set_init(plan, OpClass::gp, chain, InitKind::buffer);
      plan.measured_per_copy = 1;
      plan.method = "pointer chase (load-to-use)";
      return plan;
    }
    return make_error("the load is narrower than an address, so no pointer chase is possible: throughput only");
  }

  // Cross-class forms: chain back through a bridge instruction, whose latency is included.
  const bool via_address = other_class_src < 0 && load >= 0 && !f.is_lea;
  const OpClass back_cls = via_address ? OpClass::gp : other_class_src >= 0 ? slots[size_t(other_class_src)].op->cls : dk.cls;
  if (!via_address && other_class_src < 0) return make_error("no operand to chain the result through: throughput only");
  if (via_address) {
    if (!vector_result_is_loaded_value(f.text.mnemonic))
      return make_error("the result is computed from the loaded value, not the value itself, so no pointer chase is "
                        "possible: throughput only");
    const OperandKind& mk = *slots[size_t(load)].op;
    const int elem = mk.bcst_bits ? mk.bcst_bits : mk.bits;
    if (dk.cls != OpClass::vec || elem < 32)
      return make_error("the load is narrower than an address, so no pointer chase is possible: throughput only");
  }
  Bridge b = bridge_for(dk.cls, back_cls, isa, via_address);
  if (!b.available) return make_error("no bridge instruction from this result back to its input on this CPU: throughput only");
  uint32_t back_id = 0;
  if (!pools.take_back(back_cls, back_id)) return make_error("not enough registers");
  if (!via_address) {
    slots[size_t(other_class_src)].kind = SlotKind::source;
  }
  if (!allocate_sources(f, slots, pools, plan, sh)) return make_error("not enough registers");
  if (!via_address) sh.source_id[size_t(other_class_src)] = back_id;
  if (via_address) {
    r.mem_base = back_id;
    set_init(plan, OpClass::gp, back_id, InitKind::buffer);
    plan.chase_bits = 32;
  }
  plan.copy.push_back(build_instance(f, slots, sh, r));
  Operand from = bridge_operand(dk.cls, chain, back_cls, via_address);
  Operand to = bridge_operand(back_cls, back_id, dk.cls, via_address);
  plan.copy.push_back(make_inst(b.id, {to, from}, PlannedInst::Role::bridge));
  plan.measured_per_copy = 1;
  plan.method = std::string(via_address ? "pointer chase" : "round trip") + " through bridge '" + b.text +
                "' (upper bound: includes the bridge)";
  return plan;
}

std::vector<int> latency_operands(const InstForm& f) {
  std::vector<int> out;
  const std::vector<Slot> slots = classify(f);
  const int d = dest_slot(slots);
  if (d < 0 || f.is_lea || f.is_gather) return out;
  const OpClass dc = slots[size_t(d)].op->cls;
  for (size_t i = 0; i < slots.size(); ++i) {
    const bool read = f.roles[i].read;
    if (int(i) == d) {
      if (read) out.push_back(int(i));
    } else if ((slots[i].kind == SlotKind::source || slots[i].kind == SlotKind::clobbered) && read &&
               slots[i].op->cls == dc) {
      out.push_back(int(i));
    } else if (slots[i].kind == SlotKind::mem && read && dc == OpClass::gp) {
      out.push_back(int(i));
    }
  }
  return out;
}

Expected<StreamPlan> plan_latency_through(const InstForm& f, int operand, const HostIsa& isa,
                                          const std::string& dtype) {
  std::vector<Slot> slots = classify(f);
  const int d = dest_slot(slots);
  const std::vector<int> ops = latency_operands(f);
  if (d < 0 || std::find(ops.begin(), ops.end(), operand) == ops.end())
    return make_error("no latency chain through operand " + std::to_string(operand + 1));
  if (operand == d) {
    auto plan = plan_latency(f, isa, dtype);
    if (plan) plan->method = "chain through the destination";
    return plan;
  }
  StreamPlan plan;
  plan.kind = StreamKind::latency;
  plan.dtype = dtype;
  plan.chains = 1;
  plan.vec_regs = vec_regs_for(f);
  Pools pools = make_pools(f, plan.vec_regs);
  init_common(plan, f, pools);
  const OperandKind& dk = *slots[size_t(d)].op;
  auto take = [&](OpClass c, uint32_t& id) {
    auto& p = pools.of(c);
    if (p.empty()) return false;
    id = p.front();
    p.erase(p.begin());
    return true;
  };
  uint32_t chain = 0, other = 0, zero = 0;
  if (!take(dk.cls, chain)) return make_error("not enough registers");
  plan.dest_ids.push_back(chain);
  const bool mem = slots[size_t(operand)].kind == SlotKind::mem;
  const bool alternate = !mem && f.roles[size_t(d)].read;
  if (alternate && !take(dk.cls, other)) return make_error("not enough registers");
  if (mem) {
    if (!take(OpClass::gp, zero)) return make_error("not enough registers");
    set_init(plan, OpClass::gp, zero, InitKind::gp_value, 0);
  } else {
    slots[size_t(operand)].kind = SlotKind::source;  // filled in per instance below
  }
  SharedOperands sh;
  if (!allocate_sources(f, slots, pools, plan, sh)) return make_error("not enough registers");
  InstanceRegs r;
  r.clobbered.assign(slots.size(), 0);
  for (size_t i = 0; i < slots.size(); ++i)
    if (slots[i].kind == SlotKind::clobbered && int(i) != operand && !take(slots[i].op->cls, r.clobbered[i]))
      return make_error("not enough registers");
  auto instance = [&](uint32_t dest, uint32_t from) {
    for (size_t i = 0; i < slots.size(); ++i)
      if (slots[i].kind == SlotKind::clobbered && int(i) != operand)
        plan.copy.push_back(reset_inst(*slots[i].op, r.clobbered[i], isa));
    for (const auto& sl : slots)
      if (sl.kind == SlotKind::fixed_written) plan.copy.push_back(reset_fixed(*sl.op, byte_divide(f)));
    InstanceRegs ir = r;
    ir.dest = dest;
    PlannedInst p = build_instance(f, slots, sh, ir);
    const OperandKind& k = *slots[size_t(operand)].op;
    if (mem) p.ops[size_t(operand)] = make_mem(k, kBufferReg, zero, 0, widest_vector(f));
    else p.ops[size_t(operand)] = make_reg(k, from);
    plan.copy.push_back(p);
  };
  const std::string n = std::to_string(operand + 1);
  if (mem) {
    instance(chain, 0);
    // zero &= result: still 0, but only once the result exists; the next load's address waits.
    plan.copy.push_back(make_inst(ax::Inst::kIdAnd, {ax::gpq(zero), ax::gpq(chain)}, PlannedInst::Role::bridge));
    plan.bridge_cycles = 1;
    plan.measured_per_copy = 1;
    plan.method = "chain through the address of operand " + n + " (via 'and r64, r64', 1 cycle, subtracted)";
  } else if (alternate) {
    instance(other, chain);
    instance(chain, other);
    plan.measured_per_copy = 2;
    plan.method = "chain through operand " + n + " (two registers alternate; the destination's own chain runs "
                  "beside it, exact while it is at most twice as long)";
  } else {
    instance(chain, chain);
    plan.measured_per_copy = 1;
    plan.method = "chain through operand " + n;
  }
  return plan;
}

}  // namespace peakprobe::x86
