#include "asm/x86/stream_emitter.hpp"

#include <algorithm>
#include <cstring>
#include <iterator>
#include <new>
#include <string>

#include "asm/x86/operand_factory.hpp"

namespace peakprobe::x86 {
using namespace asmjit;
namespace ax = asmjit::x86;

namespace {

int form_vec_bits(const StreamPlan& plan) {
  int bits = 128;
  for (const auto& p : plan.copy)
    for (const auto& op : p.ops) {
      if (op.isReg() && op.as<BaseReg>().isVec()) bits = std::max(bits, int(op.as<ax::Vec>().size() * 8));
      if (op.isMem() && op.as<ax::Mem>().hasIndexReg() && op.as<ax::Mem>().indexType() == RegType::kX86_Zmm)
        bits = 512;
      if (op.isMem() && op.as<ax::Mem>().hasIndexReg() && op.as<ax::Mem>().indexType() == RegType::kX86_Ymm)
        bits = std::max(bits, 256);
    }
  return bits;
}

ax::Vec vec_of(int bits, uint32_t id) {
  return bits == 512 ? ax::Vec(ax::zmm(id)) : bits == 256 ? ax::Vec(ax::ymm(id)) : ax::Vec(ax::xmm(id));
}

asmjit::Error emit_vec_init(ax::Emitter& e, const RegInit& r, int bits, const HostIsa& isa) {
  int32_t off = r.kind == InitKind::index ? (r.elem_bits == 64 ? offsetof(ConstantsLayout, index64)
                                                                : offsetof(ConstantsLayout, index32))
              : r.kind == InitKind::ones ? int32_t(offsetof(ConstantsLayout, ones))
                                         : int32_t(offsetof(ConstantsLayout, data));
  ax::Vec v = vec_of(bits, r.id);
  ax::Mem m = ax::ptr(ax::r11, off);
  if (r.id >= 16 || bits == 512) return e.emit(ax::Inst::kIdVmovdqu64, v, m);
  // 128-bit forms are set up with legacy SSE so no upper-half state is dirtied: on Intel cores
  // dirty upper halves make later SSE instructions merge (and depend) on them.
  if (bits == 128 || !isa.avx) return e.emit(ax::Inst::kIdMovdqu, ax::xmm(r.id), m);
  return e.emit(ax::Inst::kIdVmovdqu, v, m);
}

// Mnemonics with only general-purpose operands that still load or change the floating-point or
// vector state (MXCSR, the x87 control word and stack, the MMX tags, the upper vector halves, tiles).
bool changes_fp_state(const std::string& mnemonic) {
  static const char* const kNames[] = {"ldmxcsr", "vldmxcsr", "stmxcsr", "vstmxcsr", "emms",        "femms",
                                       "wait",    "fwait",    "xrstor",  "xrstor64", "xrstors",     "xrstors64",
                                       "xsave",   "xsave64",  "xsavec",  "xsavec64", "xsaveopt",    "xsaveopt64",
                                       "xsaves",  "xsaves64", "vzeroupper", "vzeroall", "ldtilecfg", "sttilecfg",
                                       "tilerelease"};
  return std::any_of(std::begin(kNames), std::end(kNames), [&](const char* n) { return mnemonic == n; });
}

// What of the caller's state a stream's function must save and restore, from one look at its
// instructions.
struct StateTouched {
  // Floating-point state: any instruction that is x87 (asmjit's database leaves its flag off most of
  // them: an `f` mnemonic tells), MMX or vector, that has an operand other than general-purpose
  // registers, memory with a general-purpose index, immediates and labels, or that is one of the
  // general-purpose-operand instructions that load or change that state; or a stream that uses
  // tiles, starts from an x87 value or loads MXCSR from its buffer. Without it no vector or mask
  // register is read, and their set-up is left out too.
  bool fp_state = false;
  // The direction flag: asmjit's database says which instructions write it (std, the flags loads);
  // the names cover what it may leave out.
  bool direction_flag = false;
};

StateTouched state_touched(const StreamPlan& plan) {
  StateTouched t;
  t.fp_state = plan.uses_tiles || plan.x87_top_one || plan.buffer_holds_mxcsr;
  for (const auto& p : plan.copy) {
    const InstId id = p.inst.id();
    String name;
    if (!ax::Inst::isDefinedId(id) || InstAPI::instIdToString(Arch::kX64, id, name) != kErrorOk) return {true, true};
    const std::string m(name.data());
    const ax::InstDB::CommonInfo& info = ax::InstDB::infoById(id).commonInfo();
    if (info.isFpu() || info.isMmx() || info.isVec() || changes_fp_state(m) || (!m.empty() && m[0] == 'f') ||
        p.inst.hasExtraReg())
      t.fp_state = true;
    for (const auto& op : p.ops) {
      if (op.isReg() && !op.as<BaseReg>().isGp()) t.fp_state = true;
      if (op.isMem() && op.as<ax::Mem>().hasIndexReg() && op.as<ax::Mem>().indexType() != RegType::kX86_Gpq &&
          op.as<ax::Mem>().indexType() != RegType::kX86_Gpd)
        t.fp_state = true;
    }
    InstRWInfo rw;
    if (InstAPI::queryRWInfo(Arch::kX64, p.inst, p.ops.data(), p.ops.size(), &rw) != kErrorOk ||
        Support::test(rw.writeFlags(), CpuRWFlags::kX86_DF) || m == "std" || m.rfind("popf", 0) == 0 ||
        m.rfind("iret", 0) == 0 || m.rfind("sysret", 0) == 0 || m == "uiret")
      t.direction_flag = true;
  }
  return t;
}

}  // namespace

// A general register set to `value` as an ordinary register for every instruction that reads it. On
// Golden Cove-family cores (Alder Lake's P-cores, Sapphire and Emerald Rapids) the renamer keeps a
// register written by a 64-bit move of a sign-extended 32-bit immediate (REX.W C7, what `mov r64, 1`
// assembles to) as a folded constant, and an instruction reading it runs slower. On the Emerald
// Rapids VM, with rcx set so: `shl r64, cl` 3.0 cycles of latency and 1.65 of throughput, `shlx r64,
// r64, r64` 3.0 and 1.0; with `mov ecx, 1`: 1.0 and 1.0, 1.0 and 1.0 (its throughput stream read r11,
// set the old way, too). Intel gives 1 cycle; uops.info's 3 for shlx on Alder Lake-P is this effect
// (tavianator.com, "The Alder Lake SHLX anomaly", 2025). A 32-bit move (zero-extending) and a 64-bit
// immediate (movabs) leave an ordinary register; a negative 32-bit value is sign-extended by movsxd.
void set_gp(ax::Emitter& e, uint32_t id, uint64_t value) {
  if (value <= 0xffffffffu) {
    e.mov(ax::gpd(id), Imm(uint32_t(value)));
  } else if (int64_t(value) < 0 && int64_t(value) >= int64_t(INT32_MIN)) {
    e.mov(ax::gpd(id), Imm(uint32_t(value)));
    e.movsxd(ax::gpq(id), ax::gpd(id));
  } else {
    e.mov(ax::gpq(id), Imm(int64_t(value)));  // no 32-bit immediate holds it: movabs
  }
}

ConstantsLayout& fill_constants(isa::ProbeConstants& storage, const std::string& dtype) {
  std::memset(storage.bytes, 0, sizeof(storage.bytes));
  ConstantsLayout& c = *new (storage.bytes) ConstantsLayout;
  isa::fill_data_pattern(c.data, dtype);
  for (uint32_t i = 0; i < 16; ++i) std::memcpy(c.index32 + 4 * i, &i, 4);
  for (uint64_t i = 0; i < 8; ++i) std::memcpy(c.index64 + 8 * i, &i, 8);
  std::memset(c.ones, 0xFF, sizeof(c.ones));
  c.tilecfg[0] = 1;  // palette 1
  for (int t = 0; t < 8; ++t) {
    uint16_t colsb = 64;
    std::memcpy(c.tilecfg + 16 + 2 * t, &colsb, 2);
    c.tilecfg[48 + t] = 16;
  }
  c.mxcsr = 0x1F80 | 0x8000 | 0x0040;  // masked exceptions | FTZ | DAZ
  return c;
}

asmjit::Error emit_stream_function(ax::Emitter& e, const StreamPlan& plan, int copies, const HostIsa& isa) {
  const ax::Gp saved[] = {ax::rbx, ax::rbp, ax::r12, ax::r13, ax::r14, ax::r15};
  for (const auto& r : saved) e.push(r);
  // A stream of general-purpose instructions only touches no floating-point state, and neither
  // saves nor restores it: what those microcoded instructions cost moved with the code that ran
  // before. A pair cancels a constant call cost, not one that moves with what came before; and the
  // clock's reference chain, a single call less its cost measured elsewhere, read up to 1.4% fast or
  // slow with it (on the Zen 4 VM one call took 8528-8684 ticks by the code before it; without the
  // save and restore, 8606 after any). See docs/method.md, "The reference calls carry no
  // floating-point state".
  const StateTouched touched = state_touched(plan);
  const bool fp_state = touched.fp_state;
  e.sub(ax::rsp, 8);
  if (fp_state) {
    // The caller's MXCSR at [rsp] and x87 control word at [rsp + 4]: a probe of ldmxcsr, fldcw or
    // fninit changes them, and the rest of the process (libm included) must not inherit that.
    e.stmxcsr(ax::dword_ptr(ax::rsp));
    e.fnstcw(ax::word_ptr(ax::rsp, 4));
    // No x87 exception flag left set: an `fldcw` probe loads a control word from the buffer that
    // unmasks exceptions, and a flag another stream set (precision, from fsin on 1.0) then traps at
    // the next x87 instruction (SIGFPE; seen on the Zen 3 VM in `table`).
    e.fnclex();
    e.ldmxcsr(ax::dword_ptr(ax::rdx, int32_t(offsetof(ConstantsLayout, mxcsr))));
  }
  e.mov(ax::r11, ax::rdx);

  const int vbits = form_vec_bits(plan);
  const Label stub = e.newLabel(), stub_pointer = e.newLabel();
  for (const auto& r : plan.inits) {
    if (!fp_state) break;  // no instruction reads a vector or mask register (StateTouched)
    if (r.cls == OpClass::vec) {
      // Only registers the form can address are set up: with 16-register forms, ids stay below 16.
      if (int(r.id) >= plan.vec_regs) continue;
      if (asmjit::Error err = emit_vec_init(e, r, vbits, isa)) return err;
    } else if (r.cls == OpClass::mask) {
      ax::KReg k = ax::k(r.id);
      e.emit(isa.avx512bw ? ax::Inst::kIdKxnorq : ax::Inst::kIdKxnorw, k, k, k);
    }
  }
  if (plan.uses_tiles) {
    e.ldtilecfg(ax::ptr(ax::r11, int32_t(offsetof(ConstantsLayout, tilecfg))));
    for (uint32_t t = 0; t < 8; ++t) e.tilezero(ax::tmm(t));
  }
  // General registers last: r11 still points at the constants until here.
  for (const auto& r : plan.inits) {
    if (r.cls != OpClass::gp || r.id == ax::Gp::kIdR11) continue;
    if (r.kind == InitKind::buffer) e.mov(ax::gpq(r.id), ax::rsi);
    else if (r.kind == InitKind::constant_one)  // qword 1 of the index table: 1 as m8, m16, m32 and m64
      e.lea(ax::gpq(r.id), ax::ptr(ax::r11, int32_t(offsetof(ConstantsLayout, index64) + 8)));
    else if (r.kind == InitKind::return_stub) e.lea(ax::gpq(r.id), ax::ptr(stub));
    else if (r.kind == InitKind::return_stub_pointer) e.lea(ax::gpq(r.id), ax::ptr(stub_pointer));
    else set_gp(e, r.id, r.value);
  }
  for (const auto& r : plan.inits)
    if (r.cls == OpClass::gp && r.id == ax::Gp::kIdR11) set_gp(e, r.id, r.value);

  // Flags every branch of the stream sees: those of rdi > 0 (ZF, SF, OF, CF clear); the loop's
  // dec keeps them so (and leaves CF alone).
  if (plan.branch_to_next) e.cmp(ax::rdi, 0);
  if (plan.x87_top_one) e.fld1();  // emptied again by the epilogue's emms
  Label loop = e.newLabel();
  e.align(AlignMode::kCode, 64);
  e.bind(loop);
  Label fallback;  // transactions: the fallback of the last xbegin, bound after the next instruction
  for (int c = 0; c < copies; ++c)
    for (const auto& p : plan.copy) {
      if (plan.transactions && p.ops.size() == 1 && p.ops[0].isLabel()) {
        if (fallback.isValid()) e.bind(fallback);  // an xbegin without its xend (not planned so)
        fallback = e.newLabel();
        const Operand target = fallback;
        if (asmjit::Error err = e.emitInst(p.inst, &target, 1)) return err;
        continue;
      }
      if (plan.transactions && fallback.isValid()) {
        if (asmjit::Error err = e.emitInst(p.inst, p.ops.data(), p.ops.size())) return err;
        e.bind(fallback);
        fallback = Label();
        continue;
      }
      if (plan.return_stub && p.ops.size() == 1 && p.ops[0].isLabel()) {
        if (asmjit::Error err = e.emit(p.inst.id(), stub)) return err;
        continue;
      }
      if (plan.branch_to_next && p.ops.size() == 1 && p.ops[0].isLabel()) {
        const Label next = e.newLabel();
        const Operand target = next;
        if (asmjit::Error err = e.emitInst(p.inst, &target, 1)) return err;
        if (plan.branch_target_align > 0) e.align(AlignMode::kZero, uint32_t(plan.branch_target_align));
        e.bind(next);
        continue;
      }
      if ((plan.memory_stride_per_copy == 0 && p.line_step == 0) || c == 0) {
        if (asmjit::Error err = e.emitInst(p.inst, p.ops.data(), p.ops.size())) return err;
        continue;
      }
      // This copy's own lines: buffer-relative operands move on by the plan's stride; loads that take
      // turns over the places of their line go on to this copy's places.
      const int64_t place = line_place(p.line_step, p.line_slot + c * p.line_period) - line_place(p.line_step, p.line_slot);
      std::vector<Operand> ops = p.ops;
      for (auto& op : ops)
        if (op.isMem()) {
          auto& m = op.as<ax::Mem>();
          if (m.hasBaseReg() && m.baseId() == ax::Gp::kIdSi && !m.hasIndex()) {
            // The copy's lines wrap inside the spread (a read-modify-write plan's); a load's place
            // moves inside its line, which the wrap keeps (both are multiples of 64).
            int64_t at = m.offset();
            if (plan.memory_stride_per_copy > 0) at = (at + int64_t(c) * plan.memory_stride_per_copy) % kMemorySpreadBytes;
            m.setOffset(at + place);
          }
        }
      if (asmjit::Error err = e.emitInst(p.inst, ops.data(), ops.size())) return err;
    }
  if (fallback.isValid()) e.bind(fallback);  // an xbegin last in the copy (not planned so): falls through
  e.dec(ax::rdi);
  e.jnz(loop);

  if (plan.uses_tiles) e.tilerelease();
  // The ABI wants the direction flag clear on return, whatever the stream did to it (a stream
  // without std or a flags load leaves it as the caller had it: clear). Not free either: with only
  // the floating-point save and restore gone, the reference chain's call still moved with the code
  // before it (8346-8632 ticks on the Zen 4 VM); without this cld too it did not.
  if (touched.direction_flag) e.cld();
  if (fp_state) {
    if (isa.avx) e.vzeroupper();
    e.emms();  // and the x87 stack empty: fld1 streams or MMX leave its registers tagged in use
    e.fnclex();  // and no x87 exception flag the stream raised left for the caller's control word
    e.fldcw(ax::word_ptr(ax::rsp, 4));
    e.ldmxcsr(ax::dword_ptr(ax::rsp));
  }
  e.add(ax::rsp, 8);
  for (int i = 5; i >= 0; --i) e.pop(saved[i]);
  e.ret();
  if (plan.return_stub) {
    // Where call forms go: straight back. Its address as data, for call m64 (code is readable).
    e.align(AlignMode::kCode, 64);
    e.bind(stub);
    e.ret();
    e.align(AlignMode::kData, 8);
    e.bind(stub_pointer);
    e.embedLabel(stub);
  }
  return kErrorOk;
}

Expected<JitFunction> compile_stream(const StreamPlan& plan, int copies, const HostIsa& isa, std::string* listing) {
  isa::HostCode code(listing);  // an instruction asmjit cannot encode fails the compile
  ax::Assembler a(code.holder());
  if (asmjit::Error err = emit_stream_function(*a.as<ax::Emitter>(), plan, copies, isa))
    return make_error(std::string("code generation failed: ") + DebugUtils::errorAsString(err));
  return code.finish();
}

}  // namespace peakprobe::x86
