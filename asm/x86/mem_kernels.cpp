#include "asm/x86/mem_kernels.hpp"

#include "asm/x86/stream_emitter.hpp"

namespace peakprobe::x86 {
using namespace asmjit;
namespace ax = asmjit::x86;

namespace {

// 1.0 as a double: triad (a = b + s*c) and update (a = s*a) keep every value finite and normal.
constexpr uint64_t kOneF64 = 0x3FF0000000000000ull;

struct Regs {
  ax::Gp passes = ax::rdi, iters = ax::rsi, a = ax::rdx, b = ax::rcx, c = ax::r8;
  ax::Gp pa = ax::r9, pb = ax::r10, pc = ax::r11, count = ax::rax;
};

ax::Vec vreg(int width, uint32_t id) {
  return width == 512 ? ax::Vec(ax::zmm(id)) : width == 256 ? ax::Vec(ax::ymm(id)) : ax::Vec(ax::xmm(id));
}

ax::Mem at(const ax::Gp& base, int32_t off, int width) {
  ax::Mem m = ax::ptr(base, off);
  m.setSize(uint32_t(width / 8));
  return m;
}

// Scalar kernels (width 64): general registers for load/store/copy, scalar SSE2 doubles for the
// arithmetic kernels. Accumulators use callee-saved registers, pushed in the prologue.
constexpr int kScalarAccs = 6;
const ax::Gp kScalarAcc[kScalarAccs] = {ax::rbx, ax::rbp, ax::r12, ax::r13, ax::r14, ax::r15};

void emit_scalar_body(ax::Assembler& e, const MemKernelInfo& k, const Regs& r, const ax::Xmm& s) {
  const ax::Gp* acc = kScalarAcc;
  for (int i = 0; i < kMemUnroll; ++i) {
    const int32_t off = 8 * i;
    switch (k.kernel) {
      case MemKernel::load: e.mov(acc[i % kScalarAccs], ax::qword_ptr(r.pa, off)); break;  // plain loads (below)
      case MemKernel::store: e.mov(ax::qword_ptr(r.pa, off), acc[i % kScalarAccs]); break;
      case MemKernel::store_nt: e.movnti(ax::qword_ptr(r.pa, off), acc[i % kScalarAccs]); break;
      case MemKernel::copy:
        e.mov(acc[i % kScalarAccs], ax::qword_ptr(r.pb, off));
        e.mov(ax::qword_ptr(r.pa, off), acc[i % kScalarAccs]);
        break;
      case MemKernel::copy_nt:
        e.mov(acc[i % kScalarAccs], ax::qword_ptr(r.pb, off));
        e.movnti(ax::qword_ptr(r.pa, off), acc[i % kScalarAccs]);
        break;
      case MemKernel::triad:
      case MemKernel::triad_nt: {
        ax::Xmm v = ax::xmm(uint32_t(1 + i));
        e.movsd(v, ax::qword_ptr(r.pc, off));
        e.mulsd(v, s);
        e.addsd(v, ax::qword_ptr(r.pb, off));
        if (k.kernel == MemKernel::triad) e.movsd(ax::qword_ptr(r.pa, off), v);
        else {
          e.movq(acc[i % kScalarAccs], v);
          e.movnti(ax::qword_ptr(r.pa, off), acc[i % kScalarAccs]);
        }
        break;
      }
      case MemKernel::update: {
        ax::Xmm v = ax::xmm(uint32_t(1 + i));
        e.movsd(v, ax::qword_ptr(r.pa, off));
        e.mulsd(v, s);
        e.movsd(ax::qword_ptr(r.pa, off), v);
        break;
      }
    }
  }
}

void emit_vector_body(ax::Assembler& e, const MemKernelInfo& k, const Regs& r, int w, const HostIsa& isa) {
  const bool vex = w >= 256 || isa.avx;
  const ax::Vec s = vreg(w, 0);
  for (int i = 0; i < kMemUnroll; ++i) {
    const int32_t off = (w / 8) * i;
    ax::Vec v = vreg(w, uint32_t(1 + i));
    auto load = [&](const ax::Vec& x, const ax::Mem& m) {
      vex ? e.emit(ax::Inst::kIdVmovupd, x, m) : e.emit(ax::Inst::kIdMovupd, x, m);
    };
    auto store = [&](const ax::Mem& m, const ax::Vec& x, bool nt) {
      if (nt) vex ? e.emit(ax::Inst::kIdVmovntpd, m, x) : e.emit(ax::Inst::kIdMovntpd, m, x);
      else vex ? e.emit(ax::Inst::kIdVmovupd, m, x) : e.emit(ax::Inst::kIdMovupd, m, x);
    };
    switch (k.kernel) {
      case MemKernel::load:
        // Plain loads into kMemUnroll registers: nothing but the loads' own ports and the caches
        // bound them. Not a reduction: an add per load needs a vector ALU port a load, and where the
        // ALU ports for the widest vector are as few as the load ports (Golden Cove: 512-bit adds on
        // ports 0 and 5, two 512-bit loads a cycle) a reduction ran at 1.5 loads a cycle, 97 B a
        // cycle from L1 against the 2 a cycle (128 B) `vmovups zmm, m512` shows alone (Emerald
        // Rapids VM). The loads execute whether or not their values are used.
        load(v, at(r.pa, off, w));
        break;
      case MemKernel::store:
      case MemKernel::store_nt: store(at(r.pa, off, w), v, k.nontemporal); break;
      case MemKernel::copy:
      case MemKernel::copy_nt:
        load(v, at(r.pb, off, w));
        store(at(r.pa, off, w), v, k.nontemporal);
        break;
      case MemKernel::triad:
      case MemKernel::triad_nt:
        load(v, at(r.pc, off, w));
        if (vex) {
          if (isa.fma) e.emit(ax::Inst::kIdVfmadd213pd, v, s, at(r.pb, off, w));  // v = v*s + b
          else {
            e.emit(ax::Inst::kIdVmulpd, v, v, s);
            e.emit(ax::Inst::kIdVaddpd, v, v, at(r.pb, off, w));
          }
        } else {
          e.emit(ax::Inst::kIdMulpd, v, s);
          e.emit(ax::Inst::kIdAddpd, v, at(r.pb, off, w));
        }
        store(at(r.pa, off, w), v, k.nontemporal);
        break;
      case MemKernel::update:
        if (vex) e.emit(ax::Inst::kIdVmulpd, v, s, at(r.pa, off, w));
        else {
          load(v, at(r.pa, off, w));
          e.emit(ax::Inst::kIdMulpd, v, s);
        }
        store(at(r.pa, off, w), v, false);
        break;
    }
  }
}

void emit_scale_constant(ax::Assembler& e, int w, const HostIsa& isa) {
  e.mov(ax::rax, Imm(int64_t(kOneF64)));
  e.movq(ax::xmm0, ax::rax);
  if (w == 512) e.vbroadcastsd(ax::zmm0, ax::xmm0);
  else if (w == 256) e.vbroadcastsd(ax::ymm0, ax::xmm0);
  else e.pshufd(ax::xmm0, ax::xmm0, Imm(0x44));  // both qwords = 1.0
  (void)isa;
}

}  // namespace

const char* isa_name(int width_bits) {
  switch (width_bits) {
    case 512: return "avx512";
    case 256: return "avx2";
    case 128: return "sse";
    default: return "scalar";
  }
}

std::vector<int> mem_widths(const HostIsa& isa) {
  std::vector<int> w = {64, 128};
  if (isa.avx2) w.push_back(256);
  if (isa.avx512f) w.push_back(512);
  return w;
}

Expected<MemKernelCode> compile_mem_kernel(MemKernel kernel, int w, const HostIsa& isa, std::string* listing) {
  if (w == 256 && !isa.avx2) return make_error("256-bit kernels need AVX2");
  if (w == 512 && !isa.avx512f) return make_error("512-bit kernels need AVX-512F");
  if (w != 64 && w != 128 && w != 256 && w != 512) return make_error("width must be 64, 128, 256 or 512 bits");
  MemKernelCode out;
  for (const auto& k : mem_kernels())
    if (k.kernel == kernel) out.info = k;
  out.width_bits = w;
  out.array_step = uint64_t(w / 8) * kMemUnroll;
  out.bytes_per_iteration = out.array_step * uint64_t(out.info.loads + out.info.stores);

  isa::HostCode code(listing);  // an instruction asmjit cannot encode fails the compile
  ax::Assembler e(code.holder());
  const Regs r;
  const ax::Gp saved[] = {ax::rbx, ax::rbp, ax::r12, ax::r13, ax::r14, ax::r15};
  for (const auto& g : saved) e.push(g);
  emit_scale_constant(e, w, isa);
  // Start values for accumulators and stored registers: finite doubles / small integers.
  // By set_gp: a Golden Cove renamer keeps `mov r64, imm32` as a folded constant, which slows its
  // readers (stream_emitter.cpp).
  for (const auto& g : kScalarAcc) set_gp(*e.as<ax::Emitter>(), g.id(), 1);
  for (uint32_t i = 1; i <= kMemUnroll; ++i) {
    if (w == 512) e.vmovapd(ax::zmm(i), ax::zmm0);
    else if (w == 256) e.vmovapd(ax::ymm(i), ax::ymm0);
    else e.movapd(ax::xmm(i), ax::xmm0);
  }
  Label outer = e.newLabel(), inner = e.newLabel();
  e.bind(outer);
  e.mov(r.pa, r.a);
  e.mov(r.pb, r.b);
  e.mov(r.pc, r.c);
  e.mov(r.count, r.iters);
  e.align(AlignMode::kCode, 64);
  e.bind(inner);
  if (w == 64) emit_scalar_body(e, out.info, r, ax::xmm0);
  else emit_vector_body(e, out.info, r, w, isa);
  e.add(r.pa, Imm(int64_t(out.array_step)));
  if (out.info.arrays >= 2) e.add(r.pb, Imm(int64_t(out.array_step)));
  if (out.info.arrays >= 3) e.add(r.pc, Imm(int64_t(out.array_step)));
  e.dec(r.count);
  e.jnz(inner);
  e.dec(r.passes);
  e.jnz(outer);
  if (out.info.nontemporal) e.sfence();  // non-temporal stores are weakly ordered: drain them
  if (isa.avx) e.vzeroupper();
  for (int i = 5; i >= 0; --i) e.pop(saved[i]);
  e.ret();
  auto fn = code.finish();
  if (!fn) return make_error(fn.error());
  out.fn = std::move(fn.value());
  return out;
}

Expected<JitFunction> compile_chase(int chains, std::string* listing) {
  if (chains < 1 || chains > kMaxChains)
    return make_error("chains must be between 1 and " + std::to_string(kMaxChains));
  isa::HostCode code(listing);  // an instruction asmjit cannot encode fails the compile
  ax::Assembler e(code.holder());
  // rdi = iterations, rsi = starts; chains live in rax, rdx, rcx, r8..r11, rbx, rbp, r12.
  const ax::Gp regs[kMaxChains] = {ax::rax, ax::rdx, ax::rcx, ax::r8, ax::r9, ax::r10, ax::r11, ax::rbx, ax::rbp, ax::r12};
  const ax::Gp saved[] = {ax::rbx, ax::rbp, ax::r12};
  for (const auto& g : saved) e.push(g);
  for (int c = 0; c < chains; ++c) e.mov(regs[c], ax::qword_ptr(ax::rsi, 8 * c));
  Label loop = e.newLabel();
  e.align(AlignMode::kCode, 64);
  e.bind(loop);
  // Each load's address is the previous load's value: a read-after-write chain through memory.
  for (int u = 0; u < kChaseUnroll; ++u)
    for (int c = 0; c < chains; ++c) e.mov(regs[c], ax::qword_ptr(regs[c]));
  e.dec(ax::rdi);
  e.jnz(loop);
  for (int c = 0; c < chains; ++c) e.mov(ax::qword_ptr(ax::rsi, 8 * c), regs[c]);
  for (int i = 2; i >= 0; --i) e.pop(saved[i]);
  e.ret();
  return code.finish();
}

}  // namespace peakprobe::x86
