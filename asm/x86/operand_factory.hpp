// Concrete asmjit operands for operand kinds: the one place that maps a kind and a register number
// (or an address) to machine operands, shared by form resolution and stream planning.
#pragma once
#include <asmjit/x86.h>

#include "asm/x86/inst_text.hpp"

namespace peakprobe::x86 {

// Register `id` of the kind's class and width (gp, vec, mask, tile).
asmjit::Operand make_reg(const OperandKind& kind, uint32_t id);
// A register of class `cls` and width `bits`.
asmjit::Operand make_reg(OpClass cls, int bits, uint32_t id);
// Memory operand for kinds mem / vmem. `base` is a 64-bit GP id; `index` a GP id (lea) or a vector id
// (gathers) or asmjit::BaseReg::kIdBad; `vec_bits` is the widest vector operand of the form (broadcasts).
asmjit::Operand make_mem(const OperandKind& kind, uint32_t base, uint32_t index, int32_t disp, int vec_bits);
asmjit::Operand make_fixed(const OperandKind& kind);
// The immediate every probe uses: 1 is a valid, harmless shift count, selector and rounding mode.
inline asmjit::Imm probe_imm(int64_t value = 1) { return asmjit::Imm(value); }

}  // namespace peakprobe::x86
