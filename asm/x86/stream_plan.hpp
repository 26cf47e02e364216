// Plans the instruction streams that measure one form: which registers each instance uses, which
// helper instructions (resets, bridges) surround it, and how registers start. Pure data: no code is
// generated here, so tests can check the dependency structure without a JIT or a clock.
//
// Register conventions of every generated probe function (SysV: rdi, rsi, rdx are the arguments):
//   rdi  loop counter        rsi  probe buffer (64 KiB, below 4 GiB, 4 KiB aligned)
//   rsp  stack               r11  scratch: constants pointer during set-up, then the reset value
//                                 (or one more chain register for forms that need no reset)
// Everything else is free for the stream.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include <asmjit/x86.h>

#include "asm/x86/host_isa.hpp"
#include "asm/x86/inst_form.hpp"
#include "peakprobe/expected.hpp"

namespace peakprobe::x86 {

enum class StreamKind { throughput, latency };


enum class InitKind {
  data,          // vector: the data pattern of the dtype (1.0, or small integers)
  index,         // vector: element i holds i (gather indices stay inside the buffer)
  ones,          // mask: all bits set; vector: all ones (AVX2 gather masks)
  gp_value,      // general register: `value`
  buffer,        // general register: address of the probe buffer (pointer chase start)
  constant_one,  // general register: address of a read-only qword 1 (a divisor that never faults)
  return_stub,   // general register: address of the function's return stub (call r64)
  return_stub_pointer,  // general register: address of a qword holding the stub's address (call m64)
};

struct RegInit {
  OpClass cls = OpClass::gp;
  uint32_t id = 0;
  InitKind kind = InitKind::gp_value;
  uint64_t value = 0;
  int elem_bits = 32;  // for InitKind::index
};

struct PlannedInst {
  enum class Role { measured, reset, bridge };
  asmjit::BaseInst inst;
  std::vector<asmjit::Operand> ops;
  Role role = Role::measured;
  // Loads that take turns over the naturally aligned places of their line (see line_step in
  // stream_plan.cpp): `line_step` bytes apart (0: the operand stays where it is), this instance the
  // `line_slot`-th of its form in a copy, `line_period` of them in each copy. The plan's operand
  // holds the place of the first copy; the emitter moves each further copy on, so that a form with
  // one chain does not read one address again and again either.
  int32_t line_step = 0;
  int line_slot = 0;
  int line_period = 0;
};

struct StreamPlan {
  StreamKind kind = StreamKind::throughput;
  int chains = 1;                      // K: independent destinations (throughput) or 1 (latency)
  std::vector<PlannedInst> copy;       // one copy of the pattern; the emitter repeats it
  int measured_per_copy = 0;
  std::vector<RegInit> inits;
  std::string dtype;                   // picks the data pattern
  int vec_regs = 16;                   // registers the form may use (32 for EVEX-native forms)
  bool uses_tiles = false;
  bool x87_top_one = false;            // st(0) holds 1.0 before the loop (works_on_x87_stack_top)
  int chase_bits = 0;                  // 32/64: buffer words hold the buffer's own address
  bool chase_byteswap = false;         // ... byte-swapped (movbe loads swap them back)
  // The emitter places a lone `ret` after the function for call forms; an operand that is a Label
  // without an id in `copy` means that stub.
  bool return_stub = false;
  // Direct branches: an operand that is a Label without an id in `copy` means the next copy's branch
  // (the emitter binds a fresh label after each branch, past branch_target_align's padding), and the flags are set before the loop
  // so that every conditional branch goes the same way each time (see branch_taken).
  bool branch_to_next = false;
  // Taken direct branches: the next instruction starts at this boundary, the bytes between (zeros)
  // jumped over, never run. Branches packed 2 bytes apart outgrow what a branch target buffer tracks
  // per line: on a Zen 3 each then cost a redirect from decode (`jmp rel8` 11.2 cycles, `jnz rel8`
  // 18, mispredicted as not taken); one per 32 bytes (two a line, as a compiler's aligned targets)
  // runs at the core's taken-branch rate, 1.0 cycle there (16 bytes: 1.0-1.24 by code layout).
  int branch_target_align = 0;
  // Transactions (xbegin, xend): the fallback of each xbegin (a Label without an id in `copy`) is bound
  // right after the instruction that follows it, its xend: a transaction that commits and one that
  // aborts both go on there, and no xend runs outside a transaction (which faults).
  bool transactions = false;
  bool buffer_holds_mxcsr = false;     // buffer dwords hold the probe's MXCSR value (ldmxcsr, fxrstor)
  // Bytes the emitter adds to the buffer offsets of each further copy (wrapping inside
  // kMemorySpreadBytes): read-modify-write forms, so that no copy waits on the previous copy's store
  // to the same line; the lines used by one copy (see lines_for_chains in stream_plan.cpp).
  // 0: every copy uses the same lines.
  int32_t memory_stride_per_copy = 0;
  std::string method;                  // how the latency chain is built (or why there is none)
  std::vector<uint32_t> dest_ids;      // per chain: the destination register (empty if memory dest)
  std::vector<int> measured_per_form;  // mixes: measured instances of each entry per copy
  double bridge_cycles = 0;            // latency of known 1-cycle helpers in the chain, to subtract
  bool upper_bound = false;            // the chain includes a helper of unknown latency
};

// The place in its line of the `slot`-th load of a form whose loads take turns `step` bytes apart
// (PlannedInst::line_step), as a byte offset from the line's start.
inline int32_t line_place(int32_t step, int slot) { return step > 0 ? (slot % (64 / step)) * step : 0; }

// The L1-resident part of the probe buffer that per-copy memory offsets wrap within (every x86
// core since 2011 has at least 32 KiB of L1 data cache).
inline constexpr int32_t kMemorySpreadBytes = 16 * 1024;

// One instruction form of a mix and how many of it go into each group.
struct MixEntry {
  const InstForm* form = nullptr;
  int weight = 1;
  int chains = 0;  // chains its instances rotate through; 0: weight x rounds (one per instance)
};

// The dtype a form computes in when the catalog does not say: from the mnemonic's suffix.
std::string infer_dtype(const std::string& mnemonic);
// The same for a resolved form, which also knows the x87 forms' memory operands (their mnemonics
// carry no type suffix).
std::string infer_dtype(const InstForm& form);

// Largest K a throughput stream of this form can have with distinct registers (1 for the x87 forms
// that work on the stack top: every instance reads and writes st(0)).
int max_chains(const InstForm& form);

// An x87 form that reads and writes st(0), the stack top, and names no register (fadd m64, fsqrt,
// fchs, fsin): every instance of a stream chains through it. The stream starts with 1.0 there.
bool works_on_x87_stack_top(const InstForm& form);

// The chains a part of a mix of several gets when it only writes its destination, whole (a VEX
// `vaddps ymm` beside a VEX FMA), and the caller set no limit: it carries no chain, so one
// register per instance would only take the registers the chaining parts need. On a Zen 5 VM the
// VEX ymm pair FMA + add got 7 rounds of 16 registers (the FMA 7 chains of its 4 cycles: 0.744
// cycles a group, read as a shared pipe), where the same pair in EVEX encodings, 15 rounds, runs
// 0.502, both at once. Four, not one: some cores wait on the old value of a register an instruction
// only writes (a false dependency, as popcnt's on older Intel cores), and four such chains still
// keep up with one instance a cycle of a 3-cycle wait.
inline constexpr int kWholeWriteChains = 4;
// Whether the form's one written operand is a register destination it does not read and writes
// whole: a 32- or 64-bit general-purpose register, or the vector register of a VEX or EVEX form
// without a merge mask (an 8- or 16-bit write merges into the old value, a legacy SSE write keeps the
// upper lanes).
bool writes_whole_destination(const InstForm& form);

// Several forms interleaved in the ratio of their weights, `rounds` groups per copy: form i gets
// weight_i x rounds independent chains (its `chains` where fewer, unless it writes memory: its
// instances then rotate through them, instance j on chain j mod chains; a part that only writes its
// destination, whole, at most kWholeWriteChains when it has no limit and the mix has several parts),
// no register written by one chain is read by any other
// (of the same form or another), and sources are shared read-only registers.
// plan_throughput is the one-form case.
Expected<StreamPlan> plan_mix(const std::vector<MixEntry>& entries, int rounds, const HostIsa& isa,
                              const std::string& dtype);
// Most rounds of this mix that fit the register budget (0 if not even one does).
int max_rounds(const std::vector<MixEntry>& entries);

// A jmp or jcc to a relative target (the forms the emitter can point at the next instruction).
bool is_direct_branch(const InstForm& form);
// Whether a direct branch is taken in the stream: the flags at every branch are those of `cmp rdi, 0`
// before the loop and of the loop's `dec rdi` (ZF, SF, OF and CF clear while the loop runs), so jmp,
// jne, jae, ja, jns, jno, jge and jg are taken and their opposites are not.
bool branch_taken(const InstForm& form);

Expected<StreamPlan> plan_throughput(const InstForm& form, int chains, const HostIsa& isa,
                                     const std::string& dtype);
// Error when the form has no register result to chain (stores, flag-only writers).
Expected<StreamPlan> plan_latency(const InstForm& form, const HostIsa& isa, const std::string& dtype);

// Inputs a latency chain can come back through (operand indices, 0-based): the destination when it
// is also read, every other read register of the destination's class, and for general-purpose
// results the address of a memory operand. Empty when the form writes no register.
std::vector<int> latency_operands(const InstForm& form);
// The chain from the result back into input `operand` only (uops.info's "latency operand i ->
// result"). Registers: the result is that operand's register (two alternating registers when the
// destination is also read, so its own chain runs beside, not on, the measured path). Memory: the
// result feeds the address through `and t, result` (t stays 0, one cycle, subtracted).
Expected<StreamPlan> plan_latency_through(const InstForm& form, int operand, const HostIsa& isa,
                                          const std::string& dtype);

}  // namespace peakprobe::x86
