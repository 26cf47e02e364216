// Instruction text on through everything that follows resolution, short of running it: the stream
// planner (asm/x86/stream_plan: throughput, latency, per-operand latency, balanced pairs and mixes)
// and the emitter (asm/x86/stream_emitter, into an asmjit Assembler). The first byte picks the
// machine: AVX2 only, or AVX-512 with AMX, so that the planner's AVX-512 paths (32 vector registers,
// mask registers, tiles) are reached on any host. Forms the machine lacks, and forms the harness
// refuses, stop where the probe runner stops them.
#include <asmjit/x86.h>

#include "asm/x86/inst_form.hpp"
#include "asm/x86/state_forms.hpp"
#include "asm/x86/stream_emitter.hpp"
#include "asm/x86/stream_plan.hpp"
#include "fuzz_util.hpp"

using namespace peakprobe;

namespace {

void emit(const Expected<x86::StreamPlan>& plan, const x86::HostIsa& isa) {
  if (!plan) return;
  if (plan->copy.empty()) fuzz::fail("a plan without instructions", plan->method);
  asmjit::CodeHolder code;
  code.init(asmjit::Environment(asmjit::Arch::kX64));
  asmjit::x86::Assembler a(&code);
  (void)x86::emit_stream_function(*a.as<asmjit::x86::Emitter>(), plan.value(), 2, isa);
}

bool machine_has(const x86::InstForm& form, const x86::HostIsa& isa) {
  for (const auto& f : form.features) {
    if (!isa.avx512f && f.rfind("avx512", 0) == 0) return false;
    if (!isa.amx && f.rfind("amx", 0) == 0) return false;
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0 || size > 200) return 0;
  x86::HostIsa isa;
  isa.avx = isa.avx2 = isa.fma = true;
  isa.avx512f = isa.avx512bw = isa.avx512dq = isa.amx = (data[0] & 1) != 0;
  auto form = x86::resolve_inst(fuzz::text_of(data + 1, size - 1));
  if (!form || !machine_has(*form, isa) || x86::refusal_reason(*form)) return 0;
  const std::string dtype = x86::infer_dtype(form->text.mnemonic);
  if (auto companion = x86::balancing_companion(*form)) {
    auto other = x86::resolve_inst(companion->text);
    if (!other) fuzz::fail("a companion does not resolve", companion->text);
    std::vector<x86::MixEntry> entries = {{&form.value(), 1}, {&other.value(), 1}};
    if (const int rounds = x86::max_rounds(entries); rounds > 0) emit(x86::plan_mix(entries, rounds, isa, dtype), isa);
    return 0;
  }
  emit(x86::plan_latency(*form, isa, dtype), isa);
  const int kmax = x86::max_chains(*form);
  for (int k : {1, kmax / 2, kmax})
    if (k >= 1) emit(x86::plan_throughput(*form, k, isa, dtype), isa);
  for (int op : x86::latency_operands(*form)) emit(x86::plan_latency_through(*form, op, isa, dtype), isa);
  // A mix with a general-purpose add, as `mix` and `pairs` build them.
  auto add = x86::resolve_inst("add r64, r64");
  std::vector<x86::MixEntry> mix = {{&form.value(), 2}, {&add.value(), 1}};
  if (const int rounds = x86::max_rounds(mix); rounds > 0) emit(x86::plan_mix(mix, rounds, isa, dtype), isa);
  return 0;
}
