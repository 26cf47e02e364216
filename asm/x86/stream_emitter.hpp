// Turns a StreamPlan into machine code: a function that sets registers up, runs `copies` copies of
// the plan's pattern per loop iteration, and restores the caller's state.
#pragma once
#include <cstdint>
#include <memory>
#include <string>

#include <asmjit/x86.h>

#include "asm/jit_runtime.hpp"
#include "asm/x86/stream_plan.hpp"
#include "peakprobe/expected.hpp"

namespace peakprobe::x86 {

// The x86 layout of isa::ProbeConstants: what the generated code loads during set-up.
struct alignas(64) ConstantsLayout {
  uint8_t data[64];       // the dtype's data pattern (1.0 or small integers)
  uint8_t index32[64];    // dword i = i
  uint8_t index64[64];    // qword i = i
  uint8_t ones[64];       // all bits set
  uint8_t tilecfg[64];    // AMX palette 1, 8 tiles of 16 rows x 64 bytes
  uint32_t mxcsr;         // all exceptions masked, flush-to-zero and denormals-are-zero
};
static_assert(sizeof(ConstantsLayout) <= isa::ProbeConstants::kBytes);
// Writes the layout for `dtype` into `c` and returns it.
ConstantsLayout& fill_constants(isa::ProbeConstants& c, const std::string& dtype);

// Sets general register `id` (asmjit id) to `value` so that every reader sees an ordinary register:
// never by a 64-bit move of a sign-extended 32-bit immediate (stream_emitter.cpp says why).
void set_gp(asmjit::x86::Emitter& e, uint32_t id, uint64_t value);

using isa::JitFunction;
using isa::ProbeFn;

// Emits the whole function into any asmjit emitter (an Assembler to run it, a Builder to inspect it).
// The loop body sits between `loop` and the closing `dec rdi; jnz loop`.
asmjit::Error emit_stream_function(asmjit::x86::Emitter& e, const StreamPlan& plan, int copies, const HostIsa& isa);

Expected<JitFunction> compile_stream(const StreamPlan& plan, int copies, const HostIsa& isa,
                                     std::string* listing = nullptr);

}  // namespace peakprobe::x86
