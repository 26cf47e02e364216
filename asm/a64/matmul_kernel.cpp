#include "asm/a64/matmul_kernel.hpp"

#include <algorithm>

#include <asmjit/arm.h>
#include <asmjit/arm/a64assembler.h>
#include <fmt/format.h>

#include "asm/a64/stream_emitter.hpp"
#include "asm/jit_runtime.hpp"

namespace peakprobe::a64 {
using namespace asmjit;
namespace aj = asmjit::a64;

namespace {

struct Layout {
  uint32_t a0 = 0, b0 = 0, acc0 = 0;
  int groups = 0;  // registers holding A's words
};

Layout layout(const isa::MicroKernelShape& s, int rows, int used) {
  Layout l;
  l.groups = (s.mr + 3) / 4;
  l.b0 = uint32_t(l.groups);
  l.acc0 = l.b0 + uint32_t(s.nv);
  (void)rows;
  (void)used;
  return l;
}

void emit_dot(aj::Assembler& a, MatmulDtype dtype, bool signed_a, uint32_t acc, uint32_t b, uint32_t areg,
              uint32_t lane) {
  if (dtype == MatmulDtype::i8 && signed_a) {
    a.emit(aj::Inst::kIdSdot_v, aj::v(acc).s4(), aj::v(b).b16(), aj::v(areg).b4(lane));
    return;
  }
  switch (dtype) {
    case MatmulDtype::f32: a.emit(aj::Inst::kIdFmla_v, aj::v(acc).s4(), aj::v(b).s4(), aj::v(areg).s(lane)); break;
    case MatmulDtype::bf16: a.emit(aj::Inst::kIdBfdot_v, aj::v(acc).s4(), aj::v(b).h8(), aj::v(areg).h2(lane)); break;
    case MatmulDtype::i8: a.emit(aj::Inst::kIdSudot_v, aj::v(acc).s4(), aj::v(b).b16(), aj::v(areg).b4(lane)); break;
  }
}

void emit_add(aj::Assembler& a, MatmulDtype dtype, uint32_t d, uint32_t s) {
  if (dtype == MatmulDtype::i8) a.emit(aj::Inst::kIdAdd_v, aj::v(d).s4(), aj::v(d).s4(), aj::v(s).s4());
  else a.emit(aj::Inst::kIdFadd_v, aj::v(d).s4(), aj::v(d).s4(), aj::v(s).s4());
}

// Writes the accumulators to C (adding what C holds when `add`). The last vector of a row is
// written lane by lane when the tile is narrower than nr: columns past the tile are never touched.
void emit_update(aj::Assembler& a, const isa::MicroKernelShape& s, const Layout& l, int rows, int used, int tail,
                 bool add) {
  const arm::GpX c = aj::x3, ldc = aj::x4, row = aj::x9, lane_ptr = aj::x10;
  const uint32_t t = l.b0;  // the B registers are free after the loop
  a.mov(row, c);
  for (int i = 0; i < rows; ++i) {
    for (int j = 0; j < used; ++j) {
      const uint32_t acc = l.acc0 + uint32_t(i * s.nv + j);
      const int32_t off = 16 * j;
      if (j < used - 1 || tail == 4) {
        if (add) {
          a.ldr(aj::v(t).q(), arm::ptr(row, off));
          emit_add(a, s.dtype, acc, t);
        }
        a.str(aj::v(acc).q(), arm::ptr(row, off));
        continue;
      }
      if (add) {
        a.emit(aj::Inst::kIdEor_v, aj::v(t).b16(), aj::v(t).b16(), aj::v(t).b16());
        for (int k = 0; k < tail; ++k) {
          a.add(lane_ptr, row, Imm(off + 4 * k));
          a.emit(aj::Inst::kIdLd1_v, aj::v(t).s(uint32_t(k)), arm::ptr(lane_ptr));
        }
        emit_add(a, s.dtype, acc, t);
      }
      for (int k = 0; k < tail; ++k) {
        a.add(lane_ptr, row, Imm(off + 4 * k));
        a.emit(aj::Inst::kIdSt1_v, aj::v(acc).s(uint32_t(k)), arm::ptr(lane_ptr));
      }
    }
    a.add(row, row, ldc);
  }
}

Error emit_kernel(aj::Assembler& a, const isa::MicroKernelShape& s, int rows, int cols) {
  const int used = (cols + 3) / 4;
  const int tail = cols - (used - 1) * 4;
  const Layout l = layout(s, rows, used);
  // kernel(k_steps x0, a x1, b x2, c x3, ldc_bytes x4, accumulate x5, lda_bytes x6, ldb_bytes x7,
  // b_out [sp])
  const arm::GpX steps = aj::x0, pa = aj::x1, pb = aj::x2, accumulate = aj::x5, lda = aj::x6, ldb = aj::x7;
  const arm::GpX b_out = aj::x8;  // in-place B: the packed panel its vectors are stored to
  if (s.b_direct) a.ldr(b_out, arm::ptr(aj::sp));  // the 9th argument, before the frame moves sp
  emit_save_callee_saved(a);
  for (int i = 0; i < rows; ++i)
    for (int j = 0; j < used; ++j) {
      const uint32_t acc = l.acc0 + uint32_t(i * s.nv + j);
      a.emit(aj::Inst::kIdEor_v, aj::v(acc).b16(), aj::v(acc).b16(), aj::v(acc).b16());
    }
  // In-place A: one pointer per row (x11..x16), each advancing one word per step.
  if (s.a_direct) {
    a.mov(aj::x11, pa);
    for (int i = 1; i < rows; ++i) a.add(aj::x(11 + uint32_t(i)), aj::x(10 + uint32_t(i)), lda);
  }
  // One k step, u steps past the pointers: packed A and B are read at a displacement (the pointers
  // move once an iteration); in-place A by a post-indexed load per row (each moves its own pointer).
  auto emit_step = [&](int u) {
    if (s.a_direct) {
      // The first row of a group is a whole-register load (ldr s zeroes the rest), so a lane insert
      // never waits on the previous k step's register.
      for (int i = 0; i < rows; ++i) {
        const arm::Mem next = arm::ptr_post(aj::x(11 + uint32_t(i)), 4);
        if (i % 4 == 0) a.ldr(aj::v(l.a0 + uint32_t(i / 4)).s(), next);
        else a.emit(aj::Inst::kIdLd1_v, aj::v(l.a0 + uint32_t(i / 4)).s(uint32_t(i % 4)), next);
      }
    } else {
      // A's words of this step: four rows per register, a partial group by a narrower load. A load
      // encodes an offset that is a multiple of its size (scaled) or within -256..255 (unscaled):
      // blocks of many rows with a step not a multiple of 16 bytes (19 x 1 at step 3: 292) take
      // the address in x10 first.
      const auto a_at = [&](int32_t off, int32_t bytes) -> arm::Mem {
        if (off % bytes == 0 || off <= 255) return arm::ptr(pa, off);
        a.add(aj::x10, pa, Imm(off));
        return arm::ptr(aj::x10);
      };
      for (int g = 0; g < l.groups; ++g) {
        const int words = std::min(4, s.mr - 4 * g);
        const uint32_t r = l.a0 + uint32_t(g);
        const int32_t off = 16 * g + 4 * s.mr * u;
        if (words == 4) a.ldr(aj::v(r).q(), a_at(off, 16));
        else if (words == 2) a.ldr(aj::v(r).d(), a_at(off, 8));
        else if (words == 1) a.ldr(aj::v(r).s(), a_at(off, 4));
        else {
          a.ldr(aj::v(r).d(), a_at(off, 8));
          a.add(aj::x10, pa, Imm(off + 8));
          a.emit(aj::Inst::kIdLd1_v, aj::v(r).s(2), arm::ptr(aj::x10));
        }
      }
    }
    const int32_t b_step = 4 * s.nr() * u;  // 0 for in-place B, which keeps one step an iteration
    for (int j = 0; j + 1 < used; j += 2)
      a.ldp(aj::v(l.b0 + uint32_t(j)).q(), aj::v(l.b0 + uint32_t(j) + 1).q(), arm::ptr(pb, b_step + 16 * j));
    if (used % 2) a.ldr(aj::v(l.b0 + uint32_t(used - 1)).q(), arm::ptr(pb, b_step + 16 * (used - 1)));
    if (s.b_direct)
      for (int j = 0; j < used; ++j) a.str(aj::v(l.b0 + uint32_t(j)).q(), arm::ptr(b_out, 16 * j));
    for (int i = 0; i < rows; ++i)
      for (int j = 0; j < used; ++j)
        emit_dot(a, s.dtype, s.signed_a, l.acc0 + uint32_t(i * s.nv + j), l.b0 + uint32_t(j), l.a0 + uint32_t(i / 4),
                 uint32_t(i % 4));
  };
  // The pointers past `steps_done` k steps.
  auto advance = [&](int steps_done) {
    if (!s.a_direct) a.add(pa, pa, Imm(4 * s.mr * steps_done));  // packed A keeps mr words a step, edge rows zero-padded
    if (s.b_direct) {
      a.add(pb, pb, ldb);  // in-place B: the next k row of B itself
      a.add(b_out, b_out, Imm(4 * s.nr()));
    } else {
      a.add(pb, pb, Imm(4 * s.nr() * steps_done));
    }
  };
  Label done = a.newLabel(), store = a.newLabel(), out = a.newLabel();
  a.cbz(steps, done);
  // kKernelUnroll k steps an iteration where B is packed: the pointer adds and the loop's count and
  // branch run once for them all (for an 8x12 f32 block they are 4 of 32 instructions a step one
  // step an iteration); a tail loop takes the steps left over. In-place B moves by a register.
  const int unroll = s.b_direct ? 1 : kKernelUnroll;
  if (unroll > 1) {
    const arm::GpX rest = aj::x17;  // a scratch register no argument or row pointer uses
    Label big = a.newLabel(), tail = a.newLabel(), tail_loop = a.newLabel();
    a.and_(rest, steps, Imm(unroll - 1));
    a.lsr(steps, steps, Imm(kKernelUnrollShift));
    a.cbz(steps, tail);
    a.align(AlignMode::kCode, 64);
    a.bind(big);
    for (int u = 0; u < unroll; ++u) emit_step(u);
    advance(unroll);
    a.subs(steps, steps, Imm(1));
    a.b_ne(big);
    a.bind(tail);
    a.cbz(rest, done);
    a.bind(tail_loop);
    emit_step(0);
    advance(1);
    a.subs(rest, rest, Imm(1));
    a.b_ne(tail_loop);
  } else {
    Label loop = a.newLabel();
    a.align(AlignMode::kCode, 64);
    a.bind(loop);
    emit_step(0);
    advance(1);
    a.subs(steps, steps, Imm(1));
    a.b_ne(loop);
  }
  a.bind(done);
  if (s.signed_a) {
    // pb now points past the panel's k steps, at its row of 128 x column sums: added to every row.
    for (int j = 0; j < used; ++j) a.ldr(aj::v(l.b0 + uint32_t(j)).q(), arm::ptr(pb, 16 * j));
    for (int i = 0; i < rows; ++i)
      for (int j = 0; j < used; ++j)
        emit_add(a, s.dtype, l.acc0 + uint32_t(i * s.nv + j), l.b0 + uint32_t(j));
  }
  a.cbz(accumulate, store);
  emit_update(a, s, l, rows, used, tail, true);
  a.b(out);
  a.bind(store);
  emit_update(a, s, l, rows, used, tail, false);
  a.bind(out);
  emit_restore_callee_saved(a);
  a.ret(aj::x30);
  return kErrorOk;
}

Expected<isa::JitFunction> compile(const isa::MicroKernelShape& s, int rows, int cols, std::string* listing) {
  if (std::string why = check_shape(s, 32); !why.empty()) return make_error(why);
  if (rows < 1 || rows > s.mr || cols < 1 || cols > s.nr())
    return make_error(fmt::format("micro-tile {}x{} outside the {}x{} block", rows, cols, s.mr, s.nr()));
  if (std::string why = isa::b_direct_tile_refusal(s, rows, cols, b_in_place_edges(s)); !why.empty()) return make_error(why);
  isa::HostCode code(listing);  // an instruction asmjit cannot encode fails the compile
  aj::Assembler a(code.holder());
  if (Error err = emit_kernel(a, s, rows, cols))
    return make_error(std::string("micro-kernel: ") + DebugUtils::errorAsString(err));
  return code.finish();
}

}  // namespace

// What the step of compile() above emits (emit_dot for its multiply-adds), spelled as the catalog
// spells it. A one-word load into a lane (ld1 {v.s}[i]: the third row of a group, in-place A's rows
// after a group's first) has no catalog form: it is a load and a lane insert on the vector pipes,
// and stands here as the two. A post-indexed load (in-place A) also moves its pointer: an add.
std::vector<isa::StepInstruction> kernel_step_instructions(const isa::MicroKernelShape& s) {
  if (s.tiles) return {};
  std::vector<isa::StepInstruction> step;
  const auto add = [&](const std::string& text, int count) {
    if (count <= 0) return;
    for (auto& i : step)
      if (i.text == text) return void(i.count += count);
    step.push_back({text, count});
  };
  const char* lane_insert = "ins v.s[1], v.s[0]";
  if (s.a_direct) {
    add("ldr s, [x]", s.mr);
    add(lane_insert, s.mr - (s.mr + 3) / 4);
    add("add x, x, #imm", s.mr);
  } else {
    for (int g = 0; 4 * g < s.mr; ++g) {
      const int words = std::min(4, s.mr - 4 * g);
      add(words == 4 ? "ldr q, [x]" : words == 1 ? "ldr s, [x]" : "ldr d, [x]", 1);
      if (words == 3) {  // the third word at an address of its own
        add("add x, x, #imm", 1);
        add("ldr s, [x]", 1);
        add(lane_insert, 1);
      }
    }
  }
  add("ldp q, q, [x]", s.nv / 2);
  add("ldr q, [x]", s.nv % 2);
  if (s.b_direct) add("str q, [x]", s.nv);
  const char* dot = s.dtype == MatmulDtype::f32    ? "fmla v.4s, v.4s, v.s[1]"
                    : s.dtype == MatmulDtype::bf16 ? "bfdot v.4s, v.8h, v.2h[1]"
                    : s.signed_a                   ? "sdot v.4s, v.16b, v.4b[1]"
                                                   : "sudot v.4s, v.16b, v.4b[1]";
  add(dot, s.mr * s.nv);
  step.back().multiply_add = true;
  return step;
}

std::string check_shape(const isa::MicroKernelShape& s, int vector_registers) {
  if (s.vec_bits != 128) return fmt::format("vector width {} bits: the AArch64 kernels are 128-bit (NEON)", s.vec_bits);
  if (s.signed_a && s.dtype != MatmulDtype::i8) return "A shifted by 128 (signed_a) is for int8 only";
  if (s.widened) return "widened elements: every AArch64 kernel runs on the dtype's own dot product";
  if (std::string why = isa::a_direct_refusal(s, kAInPlaceRows); !why.empty()) return why;
  if (s.a_tail != 0) return "in-place A ending inside a k group: the AArch64 kernels read whole groups (A is packed)";
  if (std::string why = isa::b_direct_dtype_refusal(s); !why.empty()) return why;
  if (s.mr < 1 || s.nv < 1 || s.nv > 4)
    return fmt::format("register block {}x{} vectors: rows must be >= 1 and vectors 1..4", s.mr, s.nv);
  if (registers_needed(s.mr, s.nv) > vector_registers)
    return fmt::format("register block {}x{} needs {} vector registers, the CPU has {}", s.mr, s.nv,
                       registers_needed(s.mr, s.nv), vector_registers);
  return "";
}

Expected<isa::JitFunction> MicroKernels::compile(int rows, int cols) const {
  return a64::compile(shape(), rows, cols, nullptr);
}

Expected<std::string> micro_kernel_listing(const isa::MicroKernelShape& shape, int rows, int cols) {
  std::string text;
  auto fn = compile(shape, rows, cols, &text);
  if (!fn) return make_error(fn.error());
  return text;
}

}  // namespace peakprobe::a64
