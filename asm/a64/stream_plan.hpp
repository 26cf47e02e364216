// Plans the AArch64 instruction streams that measure one form (or a mix): which registers each
// instance uses and how registers start. Pure data, so tests can check the dependency structure
// without running anything.
//
// Register conventions of every generated probe function (AAPCS64: x0-x2 are the arguments):
//   x0  loop counter     x1  probe buffer     x2  constants (during set-up)
//   x18 platform register, sp the stack: never touched.
// x3-x17 and x19-x30 (27 general registers) and v0-v31 are free for the stream; the function saves
// the callee-saved ones (x19-x30, d8-d15) itself.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include <asmjit/core.h>

#include "asm/a64/inst_form.hpp"
#include "peakprobe/expected.hpp"

namespace peakprobe::a64 {

struct PlannedInst {
  uint32_t inst_id = 0;
  std::vector<asmjit::Operand> ops;
  bool measured = true;
};

struct GpInit {
  uint32_t id = 0;
  bool buffer = false;  // the probe buffer's address (pointer chases), else `value`
  uint64_t value = 0;
};

struct StreamPlan {
  bool latency = false;
  int chains = 1;
  std::vector<PlannedInst> copy;       // one copy of the pattern; the emitter repeats it
  int measured_per_copy = 0;
  std::vector<GpInit> gp_inits;
  uint32_t vec_used = 0;               // bit i: v<i> is read or written (set up with the data pattern)
  int chase_bits = 0;                  // 64: buffer words hold the buffer's own address
  std::string method;                  // how the latency chain is built
  std::vector<int> measured_per_form;  // mixes: measured instances of each form per copy
  double bridge_cycles = 0;
  bool upper_bound = false;
};

inline constexpr int kGpFree = 27;
inline constexpr int kVecFree = 32;
// Chains beyond this gain nothing on any core (latency x pipes of the widest known ones stays
// below it) and only lengthen the code.
inline constexpr int kMaxChains = 24;

// What a part of a mix that only writes its destination, and writes it whole, rotates its instances
// through (see writes_whole_destination), as on x86 (asm/x86/stream_plan.hpp): such a part carries
// no chain, and the registers go to the parts that chain. With 32 vector registers a pair of a
// 4-cycle FMA and an add at one register per instance gets 14 rounds, fewer FMA chains than the
// 16 a core with four FMA pipes needs. Four, not one: some cores wait on the old value of a register
// an instruction only writes.
inline constexpr int kWholeWriteChains = 4;

// Whether the form writes one register, which it does not read and writes whole: a general register
// (a w write clears the upper half), a scalar SIMD&FP register or a vector (both clear what lies
// above). Not an element (ins, lane loads), not a narrowing into the upper half (xtn2, shrn2,
// addhn2, fcvtn2...), not tbx, sri or sli, and not the vector orr and bic with an immediate
// (Vd = Vd | imm), which keep part of the old value or read it (asmjit's table marks some of these
// write-only), and not a form with a second result.
bool writes_whole_destination(const InstForm& form);

struct MixEntry {
  const InstForm* form = nullptr;
  int weight = 1;
  int chains = 0;  // chains its instances rotate through; 0: weight x rounds (one per instance), or
                   // kWholeWriteChains for a part that writes its whole destination in a mix of several
};

int max_chains(const InstForm& form);
int max_rounds(const std::vector<MixEntry>& entries);
Expected<StreamPlan> plan_mix(const std::vector<MixEntry>& entries, int rounds);
Expected<StreamPlan> plan_throughput(const InstForm& form, int chains);

// Inputs a latency chain can come back through (operand indices): the destination when it is also
// read, the other read registers of the destination's register file, and the address of a load
// into a 64-bit general register (pointer chase).
std::vector<int> latency_operands(const InstForm& form);
Expected<StreamPlan> plan_latency(const InstForm& form);
Expected<StreamPlan> plan_latency_through(const InstForm& form, int operand);

}  // namespace peakprobe::a64
