// One instruction form ready to be measured, and the streams planned from it, as the harness sees
// them for every ISA. asm/<isa>/probe_form.* implements them over the ISA's own form, planner and
// emitter; the harness (src/harness/) picks the chains, times the code and judges the figures.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "asm/jit.hpp"
#include "peakprobe/expected.hpp"

namespace peakprobe::isa {

// A planned stream: the pattern one copy holds, how its registers start, and how to read its timing.
class ProbeStream {
 public:
  virtual ~ProbeStream() = default;
  virtual int chains() const = 0;             // independent chains (1 for a latency chain)
  virtual int measured_per_copy() const = 0;  // measured instructions in one copy of the pattern
  // How the latency chain is built ("chain through the destination", ...), or why there is none.
  virtual const std::string& method() const = 0;
  // Cycles of known 1-cycle helpers in the chain, to subtract from each link.
  virtual double bridge_cycles() const = 0;
  // The chain includes a helper of unknown latency: the figure is an upper bound.
  virtual bool upper_bound() const = 0;
  // Whether each copy of a throughput stream continues the chains of the copy before. Not where
  // copies move on to fresh memory (a read-modify-write of memory): a register result read from
  // that memory starts anew in every copy, and K chains are not bound by the latency over K.
  virtual bool copies_continue_chains() const { return true; }
  // The function that runs `copies` copies of the pattern per loop iteration.
  virtual Expected<JitFunction> compile(int copies) const = 0;
  // The code compile(copies) generates, instruction by instruction as asmjit writes it: set-up, the
  // loop and the restore (`inst --listing`).
  virtual Expected<std::string> listing(int copies) const = 0;
  // Writes the constants this stream loads for `dtype` and says how the buffer must be filled.
  virtual BufferFill prepare(ProbeConstants& constants, const std::string& dtype) const = 0;
};
using StreamHandle = std::shared_ptr<const ProbeStream>;

// A form that changes state the harness stands on and is measured beside another that undoes it
// (push with pop).
struct Companion {
  std::string text;     // the companion form, in the spelling `inst` accepts
  bool first = false;   // the companion runs before the form (pop needs something pushed first)
  std::string why;      // what it undoes, for the latency method and docs
};

class ProbeForm {
 public:
  virtual ~ProbeForm() = default;
  virtual const std::string& display() const = 0;               // canonical spelling
  virtual const std::vector<std::string>& features() const = 0;  // CPU features it needs
  // The dtype it computes in when the catalog does not say ("-" for none).
  virtual std::string default_dtype() const = 0;
  // Every immediate operand takes `value` (`inst --imm`).
  virtual void set_immediates(int64_t value) = 0;
  // Why it cannot be measured in user space, or nullopt when it can.
  virtual std::optional<std::string> refusal() const = 0;
  // The form it must run beside, or nullopt when it runs alone.
  virtual std::optional<Companion> companion() const = 0;
  // Largest number of independent chains a throughput stream can have with distinct registers.
  virtual int max_chains() const = 0;
  // Inputs a latency chain can come back through (operand indices, 0-based), and an operand's kind
  // as the instruction text spells it.
  virtual std::vector<int> latency_operands() const = 0;
  virtual std::string operand_kind(int operand) const = 0;

  virtual Expected<StreamHandle> plan_throughput(int chains, const std::string& dtype) const = 0;
  // Error when the form has no register result to chain (stores, flag-only writers).
  virtual Expected<StreamHandle> plan_latency(const std::string& dtype) const = 0;
  // The chain from the result back into input `operand` only.
  virtual Expected<StreamHandle> plan_latency_through(int operand, const std::string& dtype) const = 0;
};

// One form of a mix and how many of it go into each group.
struct MixPart {
  const ProbeForm* form = nullptr;
  int weight = 1;
  // Independent chains the part's instances rotate through: 0 (or more than weight x rounds) gives
  // every instance of a copy its own. Fewer chains free registers for the other parts, so a mix
  // can run more rounds (see plan_mix in asm/target.hpp).
  int chains = 0;
};

}  // namespace peakprobe::isa
