// Turns a StreamPlan into AArch64 machine code: a function that saves the callee-saved registers,
// sets the stream's registers up, runs `copies` copies of the pattern per loop iteration, and
// restores the caller's state.
#pragma once
#include <cstdint>
#include <string>

#include <asmjit/core.h>
#include <asmjit/arm.h>
#include <asmjit/arm/a64assembler.h>

#include "asm/a64/stream_plan.hpp"
#include "asm/jit_runtime.hpp"
#include "peakprobe/expected.hpp"

namespace peakprobe::a64 {
namespace aj = asmjit::a64;

// The AArch64 layout of isa::ProbeConstants: what the generated code loads during set-up.
struct alignas(64) ConstantsLayout {
  uint8_t data[64];  // the dtype's data pattern (1.0 or small integers)
};
static_assert(sizeof(ConstantsLayout) <= isa::ProbeConstants::kBytes);
ConstantsLayout& fill_constants(isa::ProbeConstants& c, const std::string& dtype);

// Saves x19-x30 and d8-d15 (160 bytes below sp) and restores them: every generated function's frame.
void emit_save_callee_saved(aj::Assembler& a);
void emit_restore_callee_saved(aj::Assembler& a);

asmjit::Error emit_stream_function(aj::Assembler& a, const StreamPlan& plan, int copies);
Expected<isa::JitFunction> compile_stream(const StreamPlan& plan, int copies, std::string* listing = nullptr);

}  // namespace peakprobe::a64
