#include "asm/a64/mem_kernels.hpp"

#include <array>

#include <asmjit/arm.h>
#include <asmjit/arm/a64assembler.h>

#include "asm/a64/stream_emitter.hpp"
#include "asm/jit_runtime.hpp"

namespace peakprobe::a64 {
using namespace asmjit;
namespace aj = asmjit::a64;

namespace {

// The width's register view: d (64-bit scalar) or q (128-bit).
arm::Vec reg(int w, uint32_t id) { return w == 64 ? arm::Vec(aj::v(id).d()) : arm::Vec(aj::v(id).q()); }
// The same register as two f64 lanes (128) or one f64 scalar (64), for arithmetic.
arm::Vec lanes(int w, uint32_t id) { return w == 64 ? arm::Vec(aj::v(id).d()) : arm::Vec(aj::v(id).d2()); }

// v0 = 1.0 (scale), v1..v8 data, v16..v23 second operands and the load kernel's loads.
void emit_body(aj::Assembler& a, const isa::MemKernelInfo& k, int w, const arm::GpX& pa, const arm::GpX& pb,
               const arm::GpX& pc) {
  const int bytes = w / 8;
  for (int i = 0; i < kMemUnroll; i += 2) {
    const int32_t off = bytes * i;
    const uint32_t v = 1 + uint32_t(i), t = 16 + uint32_t(i);
    auto store = [&](uint32_t r) {
      if (k.nontemporal) a.stnp(reg(w, r), reg(w, r + 1), arm::ptr(pa, off));
      else a.stp(reg(w, r), reg(w, r + 1), arm::ptr(pa, off));
    };
    switch (k.kernel) {
      case isa::MemKernel::load:
        // Plain loads: an add per load would take a vector pipe a load (asm/x86/mem_kernels.cpp
        // says where that bound a reduction below the load ports' rate).
        a.ldp(reg(w, t), reg(w, t + 1), arm::ptr(pa, off));
        break;
      case isa::MemKernel::store:
      case isa::MemKernel::store_nt: store(v); break;
      case isa::MemKernel::copy:
      case isa::MemKernel::copy_nt:
        a.ldp(reg(w, v), reg(w, v + 1), arm::ptr(pb, off));
        store(v);
        break;
      case isa::MemKernel::triad:
      case isa::MemKernel::triad_nt:
        // a = b + s * c
        a.ldp(reg(w, v), reg(w, v + 1), arm::ptr(pc, off));
        a.ldp(reg(w, t), reg(w, t + 1), arm::ptr(pb, off));
        for (uint32_t j = 0; j < 2; ++j) {
          if (w == 64) a.fmadd(aj::v(v + j).d(), aj::v(v + j).d(), aj::v(0).d(), aj::v(t + j).d());
          else a.fmla(lanes(w, t + j), lanes(w, v + j), lanes(w, 0));
        }
        if (w == 64) store(v);
        else store(t);
        break;
      case isa::MemKernel::update:
        // a = a * s
        a.ldp(reg(w, v), reg(w, v + 1), arm::ptr(pa, off));
        a.fmul(lanes(w, v), lanes(w, v), lanes(w, 0));
        a.fmul(lanes(w, v + 1), lanes(w, v + 1), lanes(w, 0));
        a.stp(reg(w, v), reg(w, v + 1), arm::ptr(pa, off));
        break;
    }
  }
}

// Width 512: each element is four q registers moved by one ld1/st1 of four registers (post-indexed:
// the pointers advance by themselves), the form tuned Arm memcpy and BLAS code use beside ldp/stp.
// Non-temporal stores have no multi-register form: two stnp pairs, then the pointer advances.
// v0 = 1.0, v1..v8 data, v16..v23 second operands and the load kernel's loads (two elements of four).
void emit_body_x4(aj::Assembler& a, const isa::MemKernelInfo& k, const arm::GpX& pa, const arm::GpX& pb,
                  const arm::GpX& pc) {
  auto quad = [](uint32_t r) { return std::array<arm::Vec, 4>{aj::v(r).b16(), aj::v(r + 1).b16(), aj::v(r + 2).b16(), aj::v(r + 3).b16()}; };
  auto ld1 = [&](uint32_t r, const arm::GpX& p) {
    const auto q = quad(r);
    a.ld1(q[0], q[1], q[2], q[3], arm::ptr_post(p, 64));
  };
  auto store = [&](uint32_t r) {
    if (k.nontemporal) {
      a.stnp(aj::v(r).q(), aj::v(r + 1).q(), arm::ptr(pa, 0));
      a.stnp(aj::v(r + 2).q(), aj::v(r + 3).q(), arm::ptr(pa, 32));
      a.add(pa, pa, Imm(64));
    } else {
      const auto q = quad(r);
      a.st1(q[0], q[1], q[2], q[3], arm::ptr_post(pa, 64));
    }
  };
  for (int e = 0; e < kMemUnrollX4; ++e) {
    const uint32_t v = 1 + 4 * uint32_t(e), t = 16 + 4 * uint32_t(e);
    switch (k.kernel) {
      case isa::MemKernel::load:
        ld1(t, pa);  // plain loads, as above
        break;
      case isa::MemKernel::store:
      case isa::MemKernel::store_nt: store(v); break;
      case isa::MemKernel::copy:
      case isa::MemKernel::copy_nt:
        ld1(v, pb);
        store(v);
        break;
      case isa::MemKernel::triad:
      case isa::MemKernel::triad_nt:  // a = b + s * c
        ld1(v, pc);
        ld1(t, pb);
        for (uint32_t j = 0; j < 4; ++j) a.fmla(aj::v(t + j).d2(), aj::v(v + j).d2(), aj::v(0).d2());
        store(t);
        break;
      case isa::MemKernel::update: {  // a = a * s: read in place, write back with the advance
        const auto q = quad(v);
        a.ld1(q[0], q[1], q[2], q[3], arm::ptr(pa));
        for (uint32_t j = 0; j < 4; ++j) a.fmul(aj::v(v + j).d2(), aj::v(v + j).d2(), aj::v(0).d2());
        store(v);
        break;
      }
    }
  }
}

}  // namespace

Expected<MemKernelCode> compile_mem_kernel(isa::MemKernel kernel, int w, std::string* listing) {
  if (w != 64 && w != 128 && w != kWidthX4) return make_error("width must be 64, 128 or 512 (ld1/st1 of four q registers) bits");
  MemKernelCode out;
  for (const auto& k : isa::mem_kernels())
    if (k.kernel == kernel) out.info = k;
  out.width_bits = w;
  out.array_step = w == kWidthX4 ? uint64_t(64) * kMemUnrollX4 : uint64_t(w / 8) * kMemUnroll;
  out.bytes_per_iteration = out.array_step * uint64_t(out.info.loads + out.info.stores);

  isa::HostCode code(listing);  // an instruction asmjit cannot encode fails the compile
  aj::Assembler a(code.holder());
  // fn(passes x0, iterations x1, a x2, b x3, c x4); x5-x8 walk the arrays.
  const arm::GpX passes = aj::x0, iters = aj::x1, pa = aj::x5, pb = aj::x6, pc = aj::x7, count = aj::x8;
  emit_save_callee_saved(a);
  a.fmov(aj::v(0).d(), Imm(1.0));
  a.emit(aj::Inst::kIdDup_v, aj::v(0).d2(), aj::v(0).d(0));
  for (uint32_t i = 1; i <= 31; ++i) a.emit(aj::Inst::kIdMov_v, aj::v(i).b16(), aj::v(0).b16());
  Label outer = a.newLabel(), inner = a.newLabel();
  a.bind(outer);
  a.mov(pa, aj::x2);
  a.mov(pb, aj::x3);
  a.mov(pc, aj::x4);
  a.mov(count, iters);
  a.align(AlignMode::kCode, 64);
  a.bind(inner);
  if (w == kWidthX4) {
    emit_body_x4(a, out.info, pa, pb, pc);  // its loads and stores advance the pointers
  } else {
    emit_body(a, out.info, w, pa, pb, pc);
    a.add(pa, pa, Imm(int64_t(out.array_step)));
    if (out.info.arrays >= 2) a.add(pb, pb, Imm(int64_t(out.array_step)));
    if (out.info.arrays >= 3) a.add(pc, pc, Imm(int64_t(out.array_step)));
  }
  a.subs(count, count, Imm(1));
  a.b_ne(inner);
  a.subs(passes, passes, Imm(1));
  a.b_ne(outer);
  // Non-temporal stores are weakly ordered: drain them before the caller reads the clock.
  if (out.info.nontemporal) a.dmb(Imm(0xB));  // dmb ish
  emit_restore_callee_saved(a);
  a.ret(aj::x30);
  auto fn = code.finish();
  if (!fn) return make_error(fn.error());
  out.fn = std::move(fn.value());
  return out;
}

Expected<isa::JitFunction> compile_chase(int chains, std::string* listing) {
  if (chains < 1 || chains > kMaxChaseChains)
    return make_error("chains must be between 1 and " + std::to_string(kMaxChaseChains));
  isa::HostCode code(listing);  // an instruction asmjit cannot encode fails the compile
  aj::Assembler a(code.holder());
  // fn(iterations x0, starts x1); the chains live in x2..x17 (caller-saved).
  for (int c = 0; c < chains; ++c) a.ldr(aj::x(2 + uint32_t(c)), arm::ptr(aj::x1, 8 * c));
  Label loop = a.newLabel();
  a.align(AlignMode::kCode, 64);
  a.bind(loop);
  // Each load's address is the previous load's value: a read-after-write chain through memory.
  for (int u = 0; u < kChaseUnroll; ++u)
    for (int c = 0; c < chains; ++c) a.ldr(aj::x(2 + uint32_t(c)), arm::ptr(aj::x(2 + uint32_t(c))));
  a.subs(aj::x0, aj::x0, Imm(1));
  a.b_ne(loop);
  for (int c = 0; c < chains; ++c) a.str(aj::x(2 + uint32_t(c)), arm::ptr(aj::x1, 8 * c));
  a.ret(aj::x30);
  return code.finish();
}

}  // namespace peakprobe::a64
