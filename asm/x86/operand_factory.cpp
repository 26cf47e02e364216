#include "asm/x86/operand_factory.hpp"

namespace peakprobe::x86 {
using namespace asmjit;
namespace x86 = asmjit::x86;

Operand make_reg(OpClass cls, int bits, uint32_t id) {
  switch (cls) {
    case OpClass::gp:
      switch (bits) {
        case 8: return x86::gpb(id);
        case 16: return x86::gpw(id);
        case 32: return x86::gpd(id);
        default: return x86::gpq(id);
      }
    case OpClass::vec:
      return bits == 512 ? Operand(x86::zmm(id)) : bits == 256 ? Operand(x86::ymm(id)) : Operand(x86::xmm(id));
    case OpClass::mask: return x86::k(id);
    case OpClass::tile: return x86::tmm(id);
    default: return Operand();
  }
}

Operand make_reg(const OperandKind& kind, uint32_t id) { return make_reg(kind.cls, kind.bits, id); }

Operand make_mem(const OperandKind& kind, uint32_t base, uint32_t index, int32_t disp, int vec_bits) {
  if (kind.cls == OpClass::vmem) {
    Operand idx = make_reg(OpClass::vec, kind.index_bits, index);
    // Scale 4 with dword indices / 8 with qword indices: lane i reads element i.
    uint32_t shift = kind.index_elem_bits == 64 ? 3 : 2;
    x86::Mem m = x86::ptr(x86::gpq(base), idx.as<x86::Vec>(), shift, disp);
    return m;
  }
  x86::Mem m = index == BaseReg::kIdBad ? x86::ptr(x86::gpq(base), disp)
                                       : x86::ptr(x86::gpq(base), x86::gpq(index), 0, disp);  // scale 1 (shift 0)
  if (kind.bcst_bits) {
    int n = (vec_bits ? vec_bits : 512) / kind.bcst_bits;
    m.setSize(uint32_t(kind.bcst_bits / 8));
    m.setBroadcast(n == 2 ? x86::Mem::Broadcast::k1To2
                   : n == 4 ? x86::Mem::Broadcast::k1To4
                   : n == 8 ? x86::Mem::Broadcast::k1To8
                   : n == 16 ? x86::Mem::Broadcast::k1To16
                             : x86::Mem::Broadcast::k1To32);
  } else if (kind.bits) {
    m.setSize(uint32_t(kind.bits / 8));
  }
  return m;
}

Operand make_fixed(const OperandKind& kind) {
  static const struct { const char* name; uint32_t id; OpClass cls; } table[] = {
      {"al", x86::Gp::kIdAx, OpClass::gp},  {"ax", x86::Gp::kIdAx, OpClass::gp},
      {"eax", x86::Gp::kIdAx, OpClass::gp}, {"rax", x86::Gp::kIdAx, OpClass::gp},
      {"cl", x86::Gp::kIdCx, OpClass::gp},  {"cx", x86::Gp::kIdCx, OpClass::gp},
      {"ecx", x86::Gp::kIdCx, OpClass::gp}, {"rcx", x86::Gp::kIdCx, OpClass::gp},
      {"dl", x86::Gp::kIdDx, OpClass::gp},  {"dx", x86::Gp::kIdDx, OpClass::gp},
      {"edx", x86::Gp::kIdDx, OpClass::gp}, {"rdx", x86::Gp::kIdDx, OpClass::gp},
      {"ebx", x86::Gp::kIdBx, OpClass::gp}, {"rbx", x86::Gp::kIdBx, OpClass::gp},
      {"esi", x86::Gp::kIdSi, OpClass::gp}, {"rsi", x86::Gp::kIdSi, OpClass::gp},
      {"edi", x86::Gp::kIdDi, OpClass::gp}, {"rdi", x86::Gp::kIdDi, OpClass::gp},
      {"xmm0", 0, OpClass::vec},            {"k0", 0, OpClass::mask},
  };
  for (const auto& e : table)
    if (kind.fixed == e.name) return make_reg(e.cls, kind.bits, e.id);
  return Operand();
}

}  // namespace peakprobe::x86
