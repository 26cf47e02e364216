#include "asm/x86/matmul_kernel.hpp"

#include <array>

#include <fmt/format.h>

#include "asm/x86/tile_kernel.hpp"

namespace peakprobe::x86 {
using namespace asmjit;
namespace ax = asmjit::x86;

namespace {

ax::Vec vec(int bits, uint32_t id) { return bits == 512 ? ax::Vec(ax::zmm(id)) : ax::Vec(ax::ymm(id)); }

// The multiply-accumulate of the dtype: acc += b (x) broadcast A (bf16 widened is f32 by then).
void emit_dot(ax::Assembler& e, MatmulDtype dtype, const ax::Vec& acc, const ax::Vec& b, const ax::Vec& a) {
  switch (dtype) {
    case MatmulDtype::f32: e.emit(ax::Inst::kIdVfmadd231ps, acc, b, a); break;
    case MatmulDtype::bf16: e.emit(ax::Inst::kIdVdpbf16ps, acc, b, a); break;
    // vpdpbusd multiplies the unsigned bytes of its second operand by the signed bytes of its third.
    // On ymm it is AVX-VNNI's VEX form: the EVEX one would need AVX-512 (VNNI and VL).
    case MatmulDtype::i8:
      if (acc.isYmm()) e.vex();
      e.emit(ax::Inst::kIdVpdpbusd, acc, a, b);
      break;
  }
}

// The accumulators hold f32 (f32, bf16) or s32 (int8); C is added with the matching add.
InstId add_id(MatmulDtype dtype) { return dtype == MatmulDtype::i8 ? ax::Inst::kIdVpaddd : ax::Inst::kIdVaddps; }

// In-place A's row pointers, three rows each: a (rsi, the 2nd argument), then registers the kernel
// leaves free (r10; r12, saved and restored).
const std::array<ax::Gp, kAInPlaceRows / 3> a_bases{ax::rsi, ax::r10, ax::r12};

// Writes the accumulators to C, adding what C holds when `add`. The last vector of a row is masked
// when the tile is narrower than nr: columns past the tile are never read or written (they may not
// exist). Free registers after the loop: the B vectors (mask on AVX2) and the broadcast (temporary).
void emit_update(ax::Assembler& e, const MicroKernelShape& s, int rows, int used, int tail, bool add) {
  const ax::Gp c = ax::rcx, ldc = ax::r8;
  const uint32_t b0 = uint32_t(rows * used), bc = b0 + uint32_t(used);
  const bool masked_tail = tail < s.lanes();
  if (masked_tail) {
    if (s.vec_bits == 512) {
      e.mov(ax::eax, Imm(int32_t((1u << tail) - 1)));
      e.kmovw(ax::k1, ax::eax);
    } else {
      // AVX2: a lane mask with the sign bit set in the valid lanes, for vmaskmovps.
      e.sub(ax::rsp, 32);
      for (int l = 0; l < 8; ++l) e.mov(ax::dword_ptr(ax::rsp, 4 * l), Imm(l < tail ? -1 : 0));
      e.vmovups(ax::ymm(b0), ax::ptr(ax::rsp));
      e.add(ax::rsp, 32);
    }
  }
  for (int i = 0; i < rows; ++i) {
    for (int j = 0; j < used; ++j) {
      ax::Vec acc = vec(s.vec_bits, uint32_t(i * used + j));
      ax::Mem m = ax::ptr(c, j * s.vec_bits / 8);
      const bool masked = j == used - 1 && masked_tail;
      if (!masked) {
        if (add) e.emit(add_id(s.dtype), acc, acc, m);
        e.emit(ax::Inst::kIdVmovups, m, acc);
      } else if (s.vec_bits == 512) {
        if (add) {
          ax::Zmm tmp = ax::zmm(bc);
          e.k(ax::k1).z().vmovups(tmp, m);
          e.emit(add_id(s.dtype), acc, acc, tmp);
        }
        e.k(ax::k1).vmovups(m, acc.as<ax::Zmm>());
      } else {
        if (add) {
          ax::Ymm tmp = ax::ymm(bc);
          e.vmaskmovps(tmp, ax::ymm(b0), m);
          e.emit(add_id(s.dtype), acc, acc, tmp);
        }
        e.vmaskmovps(m, ax::ymm(b0), acc.as<ax::Ymm>());
      }
    }
    e.add(c, ldc);
  }
}

Error emit_kernel(ax::Assembler& e, const MicroKernelShape& s, int rows, int cols) {
  const int lanes = s.lanes();
  const int used = (cols + lanes - 1) / lanes;  // vectors holding valid columns
  const int tail = cols - (used - 1) * lanes;   // valid lanes of the last one
  const ax::Gp steps = ax::rdi, a = ax::rsi, b = ax::rdx, c = ax::rcx, ldc = ax::r8, accumulate = ax::r9;
  // Widened int8's multiply-add writes a temporary (a row's last one the broadcast register), added
  // to the accumulator after it.
  const uint32_t b0 = uint32_t(rows * used), bc = b0 + uint32_t(used), tmp = bc + 1;
  // In-place A reads three rows through each row pointer (p, p + lda, p + 2 lda): rows 0-2 from a,
  // then a pointer every three rows, 3 lda further each (a_bases). In-place B keeps the packed panel
  // it writes in rbx, and in-place A past six rows its third pointer in r12: callee-saved, pushed,
  // and the stack arguments move by 8 for each.
  const int a_pointers = s.a_direct ? (rows + 2) / 3 : 0;
  const int a_saved = std::max(0, a_pointers - 2);
  if (s.b_direct) e.push(ax::rbx);
  for (int p = 0; p < a_saved; ++p) e.push(a_bases[size_t(2 + p)]);
  const int32_t args = 8 * ((s.b_direct ? 1 : 0) + a_saved);
  // Ask for the C tile now: its lines arrive while the k loop runs instead of stalling the update.
  e.mov(ax::rax, c);
  const int row_bytes = cols * 4;
  for (int i = 0; i < rows; ++i) {
    for (int off = 0; off < row_bytes; off += 64) e.prefetcht0(ax::ptr(ax::rax, off));
    e.prefetcht0(ax::ptr(ax::rax, row_bytes - 1));
    e.add(ax::rax, ldc);
  }
  // In-place B: the step from one k row of B to the next, the 8th argument (rax is free from here
  // on to the update, which uses eax for a mask only after the loop), and the packed panel the
  // vectors read are stored to, the 9th.
  const ax::Gp ldb = ax::rax, b_out = ax::rbx;
  // In-place B narrower than the panel (b_in_place_edges): k2 holds the last vector's columns.
  const bool b_masked = b_in_place_edges(s) && tail < lanes;
  if (b_masked) {
    e.mov(ax::eax, Imm(int32_t((1u << tail) - 1)));
    e.kmovw(ax::k2, ax::eax);
  }
  if (s.b_direct) {
    e.mov(ldb, ax::qword_ptr(ax::rsp, 16 + args));
    e.mov(b_out, ax::qword_ptr(ax::rsp, 24 + args));
  }
  // In-place A: row pointer p at a + 3p lda.
  const ax::Gp lda = ax::r11;
  if (s.a_direct) {
    e.mov(lda, ax::qword_ptr(ax::rsp, 8 + args));  // the 7th argument, on the stack
    for (int p = 1; p < a_pointers; ++p) {
      e.lea(a_bases[size_t(p)], ax::ptr(a_bases[size_t(p - 1)], lda, 1));
      e.add(a_bases[size_t(p)], lda);
    }
  }
  // Row i of A at k step u of an unrolled loop iteration: packed A holds mr words a step, in-place A
  // one word a step along each row. A word is one k group of the dtype (an f32, a bf16 pair, an int8
  // quad), which A's row holds in the same bytes: even for bf16 and int8 the kernel reads A's own rows.
  auto a_row = [&](int i, int u) -> ax::Mem {
    if (!s.a_direct) return ax::dword_ptr(a, 4 * i + 4 * s.mr * u);
    const ax::Gp base = a_bases[size_t(i / 3)];
    const int r = i % 3;
    return r == 0 ? ax::dword_ptr(base, 4 * u) : ax::dword_ptr(base, lda, r == 1 ? 0u : 1u, 4 * u);
  };
  for (int i = 0; i < rows * used; ++i) {
    ax::Vec v = vec(s.vec_bits, uint32_t(i));
    // vpxord is AVX-512F (vxorps on zmm would need DQ); the AVX2 kernels use VEX vxorps.
    e.emit(s.vec_bits == 512 ? ax::Inst::kIdVpxord : ax::Inst::kIdVxorps, v, v, v);
  }
  // A's k group of row i at step u where the row ends inside it (s.a_tail values): those bytes
  // zero-extended into eax (edi helps for three; both are free after the loop), then spread like a
  // whole group. A whole dword would read past the row: past A itself on its last row.
  auto broadcast_tail = [&](int i, int u) {
    const ax::Mem m = a_row(i, u);
    const int bytes = s.a_tail * (s.dtype == MatmulDtype::bf16 ? 2 : 1);
    ax::Mem low = m, high = m;
    low.setSize(bytes == 1 ? 1 : 2);
    e.movzx(ax::eax, low);
    if (bytes == 3) {
      high.setSize(1);
      high.addOffset(2);
      e.movzx(ax::edi, high);
      e.shl(ax::edi, 16);
      e.or_(ax::eax, ax::edi);
    }
    e.vmovd(ax::xmm(bc), ax::eax);
    e.emit(ax::Inst::kIdVpbroadcastd, vec(s.vec_bits, bc), ax::xmm(bc));
  };
  // One k step, u steps past the pointers (their displacement: the pointers move once an iteration);
  // `last_group`: A's last, partial k group (s.a_tail).
  auto emit_step = [&](int u, bool last_group = false) {
    const int b_step = u * 4 * s.nr();
    for (int j = 0; j < used; ++j) {
      if (b_masked && j == used - 1)
        e.k(ax::k2).z().vmovups(ax::zmm(b0 + uint32_t(j)), ax::ptr(b, b_step + j * s.vec_bits / 8));
      else
        e.emit(ax::Inst::kIdVmovups, vec(s.vec_bits, b0 + uint32_t(j)), ax::ptr(b, b_step + j * s.vec_bits / 8));
      if (s.b_direct)
        e.emit(ax::Inst::kIdVmovups, ax::ptr(b_out, b_step + j * s.vec_bits / 8), vec(s.vec_bits, b0 + uint32_t(j)));
    }
    for (int i = 0; i < rows; ++i) {
      if (last_group) broadcast_tail(i, u);
      else e.emit(ax::Inst::kIdVpbroadcastd, vec(s.vec_bits, bc), a_row(i, u));
      const ax::Vec a_pair = vec(s.vec_bits, bc);
      auto acc = [&](int j) { return vec(s.vec_bits, uint32_t(i * used + j)); };
      auto b_vec = [&](int j) { return vec(s.vec_bits, b0 + uint32_t(j)); };
      if (s.widened && s.dtype == MatmulDtype::i8) {
        // int16 pairs: a0 b0 + a1 b1 in each int32 lane (exact: 255 x 128 x 2 < 2^31), then added.
        // The row's last product goes into the broadcast register (A is not read after it), the
        // others into the temporary, and the last two multiplies go ahead of their adds: an add that
        // waits on the multiply just before it took a vector pipe a multiply needed. On the Zen 4
        // VM the 6x16 block's k loop alone ran at 191-192 GOP/s this way against 183-186 with
        // each add right after its multiply (the step's instructions as a stream: 235).
        auto product = [&](int j) { return vec(s.vec_bits, j == used - 1 ? bc : tmp); };
        auto multiply = [&](int j) { e.emit(ax::Inst::kIdVpmaddwd, product(j), b_vec(j), a_pair); };
        auto add = [&](int j) { e.emit(ax::Inst::kIdVpaddd, acc(j), acc(j), product(j)); };
        const int pair = std::max(0, used - 2);  // the first of the last two
        for (int j = 0; j < pair; ++j) {
          multiply(j);
          add(j);
        }
        for (int j = pair; j < used; ++j) multiply(j);
        for (int j = pair; j < used; ++j) add(j);
        continue;
      }
      for (int j = 0; j < used; ++j) emit_dot(e, s.widened ? MatmulDtype::f32 : s.dtype, acc(j), b_vec(j), a_pair);
    }
  };
  // The pointers past `steps` k steps.
  auto advance = [&](int steps_done) {
    if (s.a_direct) {
      for (int p = 0; p < a_pointers; ++p) e.add(a_bases[size_t(p)], Imm(4 * steps_done));
    } else {
      e.add(a, Imm(4 * s.mr * steps_done));  // packed A keeps mr words per step even for edge rows (zero padded)
    }
    if (s.b_direct) {
      e.add(b, ldb);  // in-place B moves by a register: never unrolled
      e.add(b_out, Imm(4 * s.nr() * steps_done));
    } else {
      e.add(b, Imm(4 * s.nr() * steps_done));
    }
  };
  Label done = e.newLabel(), store = e.newLabel(), out = e.newLabel();
  // With a partial last k group the loops run the steps before it, and that step follows them.
  const bool a_tail = s.a_direct && s.a_tail > 0;
  const Label loops_done = a_tail ? e.newLabel() : done;
  e.test(steps, steps);
  e.jz(done);
  if (a_tail) e.dec(steps);
  // kKernelUnroll k steps an iteration. Scalar adds can issue on the vector pipes' ports and take
  // an FMA's slot there: on the Sapphire Rapids-class VM the 6x64 block's k step took 14.1 cycles
  // (at the clock between calls) one step an iteration and 13.8 four steps an iteration, and 1024^3
  // ran at 154 GFLOP/s before and 162 after (oneDNN 163); eight steps an iteration were no faster.
  const int unroll = s.b_direct ? 1 : kKernelUnroll;
  const ax::Gp rest = ax::rax;  // free in the loop when B is packed (ldb lives there otherwise)
  if (unroll > 1) {
    Label tail = e.newLabel(), tail_loop = e.newLabel(), big = e.newLabel();
    e.mov(rest, steps);
    e.and_(rest, Imm(unroll - 1));
    e.shr(steps, Imm(kKernelUnrollShift));
    e.jz(tail);
    e.align(AlignMode::kCode, 64);
    e.bind(big);
    for (int u = 0; u < unroll; ++u) emit_step(u);
    advance(unroll);
    e.dec(steps);
    e.jnz(big);
    e.bind(tail);
    e.test(rest, rest);
    e.jz(loops_done);
    e.bind(tail_loop);
    emit_step(0);
    advance(1);
    e.dec(rest);
    e.jnz(tail_loop);
  } else {
    Label loop = e.newLabel();
    e.test(steps, steps);  // after a_tail's dec: no whole step before the last
    e.jz(loops_done);
    e.align(AlignMode::kCode, 64);
    e.bind(loop);
    emit_step(0);
    advance(1);
    e.dec(steps);
    e.jnz(loop);
  }
  if (a_tail) {
    e.bind(loops_done);
    emit_step(0, true);
  }
  e.bind(done);
  e.test(accumulate, accumulate);
  e.jz(store);
  emit_update(e, s, rows, used, tail, true);
  e.jmp(out);
  e.bind(store);
  emit_update(e, s, rows, used, tail, false);
  e.bind(out);
  for (int p = a_saved - 1; p >= 0; --p) e.pop(a_bases[size_t(2 + p)]);
  if (s.b_direct) e.pop(ax::rbx);
  e.vzeroupper();
  e.ret();
  return kErrorOk;
}

Expected<JitFunction> compile(const MicroKernelShape& s, int rows, int cols, std::string* listing) {
  if (std::string why = check_shape(s, s.vec_bits == 512 ? 32 : 16); !why.empty()) return make_error(why);
  if (rows < 1 || rows > s.mr || cols < 1 || cols > s.nr())
    return make_error(fmt::format("micro-tile {}x{} outside the {}x{} block", rows, cols, s.mr, s.nr()));
  if (std::string why = isa::b_direct_tile_refusal(s, rows, cols, b_in_place_edges(s)); !why.empty()) return make_error(why);
  isa::HostCode code(listing);  // an instruction asmjit cannot encode fails the compile
  ax::Assembler e(code.holder());
  if (Error err = s.tiles ? emit_tile_kernel(e, s, rows, cols) : emit_kernel(e, s, rows, cols))
    return make_error(std::string("micro-kernel: ") + DebugUtils::errorAsString(err));
  return code.finish();
}

}  // namespace

// What the step of compile() above emits (emit_dot for its multiply-adds), spelled as the catalog
// spells it.
std::vector<isa::StepInstruction> kernel_step_instructions(const MicroKernelShape& s) {
  if (s.tiles) return {};
  const std::string w = s.vec_bits == 512 ? "zmm" : "ymm", m = s.vec_bits == 512 ? "m512" : "m256";
  std::vector<isa::StepInstruction> step{{"vmovups " + w + ", " + m, s.nv}};
  if (s.b_direct) step.push_back({"vmovups " + m + ", " + w, s.nv});
  step.push_back({"vpbroadcastd " + w + ", m32", s.mr});
  const int dots = s.mr * s.nv;
  const auto three = [&](const std::string& mnemonic) { return mnemonic + " " + w + ", " + w + ", " + w; };
  if (s.widened && s.dtype == MatmulDtype::i8) {
    step.push_back({three("vpmaddwd"), dots, true});
    step.push_back({three("vpaddd"), dots});
  } else if (s.widened || s.dtype == MatmulDtype::f32) {
    step.push_back({three("vfmadd231ps"), dots, true});
  } else if (s.dtype == MatmulDtype::bf16) {
    step.push_back({three("vdpbf16ps"), dots, true});
  } else {
    step.push_back({(s.vec_bits == 512 ? "" : "{vex} ") + three("vpdpbusd"), dots, true});
  }
  return step;
}

std::string check_shape(const MicroKernelShape& s, int vector_registers) {
  if (s.tiles) return check_tile_shape(s);
  if (s.vec_bits != 512 && s.vec_bits != 256) return fmt::format("vector width {} bits: only 256 and 512", s.vec_bits);
  if (s.dtype == MatmulDtype::bf16 && s.vec_bits != 512 && !s.widened)
    return "bf16 dot-product kernels need AVX-512 (vdpbf16ps on zmm); 256-bit ones widen";
  if (s.widened && s.dtype == MatmulDtype::f32) return "widened f32: f32 is as wide as it gets";
  if (s.signed_a) return "A shifted by 128 (signed_a): the x86 int8 kernels multiply unsigned A by signed B as they are";
  if (std::string why = isa::a_direct_refusal(s, kAInPlaceRows); !why.empty()) return why;
  if (std::string why = isa::b_direct_dtype_refusal(s); !why.empty()) return why;
  if (s.mr < 1 || s.nv < 1 || s.nv > 4)
    return fmt::format("register block {}x{} vectors: rows must be >= 1 and vectors 1..4", s.mr, s.nv);
  if (registers_needed(s) > vector_registers)
    return fmt::format("register block {}x{} needs {} vector registers, the CPU has {}", s.mr, s.nv,
                       registers_needed(s), vector_registers);
  return "";
}

Expected<JitFunction> MicroKernels::compile(int rows, int cols) const {
  return x86::compile(shape(), rows, cols, nullptr);
}

Expected<std::string> micro_kernel_listing(const MicroKernelShape& shape, int rows, int cols) {
  std::string text;
  auto fn = compile(shape, rows, cols, &text);
  if (!fn) return make_error(fn.error());
  return text;
}

}  // namespace peakprobe::x86
