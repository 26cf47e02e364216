#include "asm/x86/matmul_kernel.hpp"

namespace peakprobe::x86 {
using namespace asmjit;
namespace ax = asmjit::x86;

namespace {

ax::Vec vec(int bits, uint32_t id) { return bits == 512 ? ax::Vec(ax::zmm(id)) : ax::Vec(ax::ymm(id)); }

// Registers: accumulators 0 .. rows*nv-1, B vectors next, one broadcast register last.
Error emit_kernel(ax::Assembler& e, const MicroKernelShape& s, int rows, int cols) {
  const int lanes = s.vec_bits / 32;
  const int nv = s.nr / lanes;                   // vectors per row of the block
  const int used = (cols + lanes - 1) / lanes;   // vectors holding valid columns
  const int tail = cols - (used - 1) * lanes;    // valid lanes of the last one
  const ax::Gp kc = ax::rdi, a = ax::rsi, b = ax::rdx, c = ax::rcx, ldc = ax::r8;
  const uint32_t b0 = uint32_t(rows * used), bc = b0 + uint32_t(used);
  for (int i = 0; i < rows * used; ++i) {
    ax::Vec v = vec(s.vec_bits, uint32_t(i));
    e.emit(ax::Inst::kIdVxorps, v, v, v);
  }
  Label loop = e.newLabel(), done = e.newLabel();
  e.test(kc, kc);
  e.jz(done);
  e.align(AlignMode::kCode, 64);
  e.bind(loop);
  for (int j = 0; j < used; ++j)
    e.emit(ax::Inst::kIdVmovups, vec(s.vec_bits, b0 + uint32_t(j)), ax::ptr(b, j * s.vec_bits / 8));
  for (int i = 0; i < rows; ++i) {
    e.emit(ax::Inst::kIdVbroadcastss, vec(s.vec_bits, bc), ax::dword_ptr(a, 4 * i));
    for (int j = 0; j < used; ++j)
      e.emit(ax::Inst::kIdVfmadd231ps, vec(s.vec_bits, uint32_t(i * used + j)), vec(s.vec_bits, b0 + uint32_t(j)),
             vec(s.vec_bits, bc));
  }
  e.add(a, Imm(4 * s.mr));  // packed A keeps MR floats per step even for edge rows (zero padded)
  e.add(b, Imm(4 * s.nr));
  e.dec(kc);
  e.jnz(loop);
  e.bind(done);
  // C += accumulators; the last vector of a row is masked when the tile is narrower than NR.
  if (tail < lanes) {
    if (s.vec_bits == 512) {
      e.mov(ax::eax, Imm(int32_t((1u << tail) - 1)));
      e.kmovw(ax::k1, ax::eax);
    } else {
      // AVX2: a lane mask with the sign bit set in the valid lanes, for vmaskmovps.
      e.sub(ax::rsp, 32);
      for (int l = 0; l < 8; ++l) e.mov(ax::dword_ptr(ax::rsp, 4 * l), Imm(l < tail ? -1 : 0));
      e.vmovups(ax::ymm(15), ax::ptr(ax::rsp));
      e.add(ax::rsp, 32);
    }
  }
  for (int i = 0; i < rows; ++i) {
    for (int j = 0; j < used; ++j) {
      ax::Vec acc = vec(s.vec_bits, uint32_t(i * used + j));
      ax::Mem m = ax::ptr(c, j * s.vec_bits / 8);
      const bool masked = j == used - 1 && tail < lanes;
      if (!masked) {
        e.emit(ax::Inst::kIdVaddps, acc, acc, m);
        e.emit(ax::Inst::kIdVmovups, m, acc);
      } else if (s.vec_bits == 512) {
        // Masked load and store: columns past n are never read or written (they may not exist).
        ax::Vec tmp = vec(512, bc);
        e.k(ax::k1).z().vmovups(tmp.as<ax::Zmm>(), m);
        e.vaddps(acc.as<ax::Zmm>(), acc.as<ax::Zmm>(), tmp.as<ax::Zmm>());
        e.k(ax::k1).vmovups(m, acc.as<ax::Zmm>());
      } else {
        ax::Ymm tmp = ax::ymm(bc);
        e.vmaskmovps(tmp, ax::ymm(15), m);
        e.vaddps(acc.as<ax::Ymm>(), acc.as<ax::Ymm>(), tmp);
        e.vmaskmovps(m, ax::ymm(15), acc.as<ax::Ymm>());
      }
    }
    e.add(c, ldc);
  }
  e.vzeroupper();
  e.ret();
  return kErrorOk;
}

Expected<JitFunction> compile(const MicroKernelShape& s, int rows, int cols, std::string* listing) {
  if (s.mr == 0) return make_error("the f32 GEMM kernels need AVX-512F or AVX2 with FMA");
  if (rows < 1 || rows > s.mr || cols < 1 || cols > s.nr) return make_error("micro-tile out of range");
  CodeHolder code;
  code.init(jit_environment());
  StringLogger logger;
  if (listing) code.setLogger(&logger);
  ax::Assembler e(&code);
  if (Error err = emit_kernel(e, s, rows, cols))
    return make_error(std::string("micro-kernel: ") + DebugUtils::errorAsString(err));
  auto fn = add_to_runtime(code);
  if (fn && listing) *listing = logger.data();
  return fn;
}

}  // namespace

MicroKernelShape micro_kernel_shape(const HostIsa& isa) {
  if (isa.avx512f) return {6, 64, 512};
  if (isa.avx2) return {6, 16, 256};
  return {0, 0, 0};
}

MicroKernels::MicroKernels(const HostIsa& isa) : isa_(isa), shape_(micro_kernel_shape(isa)) {}

Expected<MicroKernelFn> MicroKernels::get(int rows, int cols) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto key = std::make_pair(rows, cols);
  auto it = kernels_.find(key);
  if (it == kernels_.end()) {
    auto fn = compile(shape_, rows, cols, nullptr);
    if (!fn) return make_error(fn.error());
    it = kernels_.emplace(key, std::move(fn.value())).first;
  }
  return it->second.as<MicroKernelFn>();
}

Expected<std::string> micro_kernel_listing(const HostIsa& isa, int rows, int cols) {
  std::string text;
  auto fn = compile(micro_kernel_shape(isa), rows, cols, &text);
  if (!fn) return make_error(fn.error());
  return text;
}

}  // namespace peakprobe::x86
