// The process-wide JIT runtime every ISA's emitter adds its code to (asmjit's JitRuntime is the same
// for every architecture). Included by asm/<isa>/ only: src/ sees asm/jit.hpp.
#pragma once
#include <asmjit/core.h>

#include "asm/jit.hpp"
#include "peakprobe/expected.hpp"

namespace peakprobe::isa {

// Adds finished code to the runtime (thread-safe).
Expected<JitFunction> add_to_runtime(asmjit::CodeHolder& code);
// The environment code must be generated for: the host's.
const asmjit::Environment& jit_environment();

}  // namespace peakprobe::isa
