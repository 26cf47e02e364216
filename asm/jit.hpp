// Generated code as the harness sees it, for every ISA: a function that runs a stream `iterations`
// times, the read-only constants it loads during set-up, and how the probe buffer must be filled.
// No asmjit here: asm/jit_runtime.hpp is the side that makes the code.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

namespace peakprobe::isa {

// Read-only data a probe function loads while it sets its registers up (data patterns, indices,
// masks, control words). The layout belongs to the ISA (asm/<isa>/stream_emitter.hpp); the harness
// only keeps it alive, aligned, and passes it along.
struct alignas(64) ProbeConstants {
  static constexpr size_t kBytes = 1024;
  uint8_t bytes[kBytes];
};

// Every generated probe function: `iterations` loop iterations over `buffer` (ProbeBuffer).
using ProbeFn = void (*)(uint64_t iterations, void* buffer, const ProbeConstants* constants);

// How the probe buffer must be filled before a stream runs (ProbeBuffer::fill).
struct BufferFill {
  uint8_t pattern[64] = {};  // repeated over the buffer: the dtype's data, or a control word
  int chase_bits = 0;        // 32/64: every word holds the buffer's own address (pointer chases)
  bool chase_byteswap = false;  // ... byte-swapped (for a load that swaps it back)
};

// The data pattern probe registers start from, for every ISA: 1.0 in every lane of a float dtype
// (chains stay finite and normal: x*1 = x, x/1 = x, sqrt(1) = 1, and a running sum of ones stops
// growing at 2^24 in f32 long before it could overflow), 1 in every byte, halfword and word for
// integers.
void fill_data_pattern(uint8_t out[64], const std::string& dtype);

// While one lives on a thread, the code that thread adds to the JIT runtime starts on a 4 KiB page
// boundary, not wherever the runtime has room. For the clock's reference code: how long a loop
// iteration takes beyond its instructions depends on where the loop sits (on a Zen 4 VM the clock's
// add-chain loops at page offset 0xcc0 read 2% more ticks per cycle than at 0x000, every time), so
// a calibrator made after other code was generated (a worker thread's, a later command's) read
// another clock than the first one of the process. Page-aligned, every calibrator's code sits alike.
class PageAlignedCode {
 public:
  PageAlignedCode();
  ~PageAlignedCode();
  PageAlignedCode(const PageAlignedCode&) = delete;
  PageAlignedCode& operator=(const PageAlignedCode&) = delete;

 private:
  bool outer_;
};

// Generated code owned by the process-wide JIT runtime; released on destruction.
class JitFunction {
 public:
  JitFunction() = default;
  // `block`: the start of the memory the runtime allocated for it (the code may start further in).
  JitFunction(void* fn, size_t size, void* block) : fn_(fn), block_(block), size_(size) {}
  JitFunction(JitFunction&& o) noexcept : fn_(o.fn_), block_(o.block_), size_(o.size_) {
    o.fn_ = nullptr;
    o.block_ = nullptr;
  }
  JitFunction& operator=(JitFunction&& o) noexcept;
  JitFunction(const JitFunction&) = delete;
  JitFunction& operator=(const JitFunction&) = delete;
  ~JitFunction();
  ProbeFn fn() const { return reinterpret_cast<ProbeFn>(fn_); }
  // The code as another function type (memory and matmul kernels have their own signatures).
  template <typename F>
  F as() const {
    return reinterpret_cast<F>(fn_);
  }
  size_t code_size() const { return size_; }

 private:
  void* fn_ = nullptr;
  void* block_ = nullptr;
  size_t size_ = 0;
};

}  // namespace peakprobe::isa
