// Turns a StreamPlan into machine code: a function that sets registers up, runs `copies` copies of
// the plan's pattern per loop iteration, and restores the caller's state.
#pragma once
#include <cstdint>
#include <memory>
#include <string>

#include <asmjit/x86.h>

#include "asm/x86/stream_plan.hpp"
#include "peakprobe/expected.hpp"

namespace peakprobe::x86 {

// Read-only data the generated code loads during set-up.
struct alignas(64) ProbeConstants {
  uint8_t data[64];       // the dtype's data pattern (1.0 or small integers)
  uint8_t index32[64];    // dword i = i
  uint8_t index64[64];    // qword i = i
  uint8_t ones[64];       // all bits set
  uint8_t tilecfg[64];    // AMX palette 1, 8 tiles of 16 rows x 64 bytes
  uint32_t mxcsr;         // all exceptions masked, flush-to-zero and denormals-are-zero
};
void fill_constants(ProbeConstants& c, const std::string& dtype);

using ProbeFn = void (*)(uint64_t iterations, void* buffer, const ProbeConstants* constants);

// Generated code owned by the process-wide JIT runtime; released on destruction.
class JitFunction {
 public:
  JitFunction() = default;
  JitFunction(void* fn, size_t size) : fn_(fn), size_(size) {}
  JitFunction(JitFunction&& o) noexcept : fn_(o.fn_), size_(o.size_) { o.fn_ = nullptr; }
  JitFunction& operator=(JitFunction&& o) noexcept;
  JitFunction(const JitFunction&) = delete;
  JitFunction& operator=(const JitFunction&) = delete;
  ~JitFunction();
  ProbeFn fn() const { return reinterpret_cast<ProbeFn>(fn_); }
  // The code as another function type (memory kernels have their own signatures).
  template <typename F>
  F as() const {
    return reinterpret_cast<F>(fn_);
  }
  size_t code_size() const { return size_; }

 private:
  void* fn_ = nullptr;
  size_t size_ = 0;
};

// Emits the whole function into any asmjit emitter (an Assembler to run it, a Builder to inspect it).
// The loop body sits between `loop` and the closing `dec rdi; jnz loop`.
asmjit::Error emit_stream_function(asmjit::x86::Emitter& e, const StreamPlan& plan, int copies, const HostIsa& isa);

// Adds finished code to the process-wide JIT runtime (thread-safe).
Expected<JitFunction> add_to_runtime(asmjit::CodeHolder& code);
// The environment code must be generated for.
const asmjit::Environment& jit_environment();

Expected<JitFunction> compile_stream(const StreamPlan& plan, int copies, const HostIsa& isa,
                                     std::string* listing = nullptr);

}  // namespace peakprobe::x86
