#include "asm/x86/probe_form.hpp"

#include <cstring>

#include "asm/x86/state_forms.hpp"
#include "asm/x86/stream_emitter.hpp"

namespace peakprobe::x86 {
namespace {

Expected<isa::StreamHandle> wrap(Expected<StreamPlan> plan, const HostIsa& host) {
  if (!plan) return make_error(plan.error());
  return isa::StreamHandle(std::make_shared<X86ProbeStream>(std::move(plan.value()), host));
}

std::vector<MixEntry> mix_entries(const std::vector<isa::MixPart>& parts) {
  std::vector<MixEntry> entries;
  for (const auto& p : parts) entries.push_back({&static_cast<const X86ProbeForm*>(p.form)->form(), p.weight, p.chains});
  return entries;
}

}  // namespace

Expected<isa::JitFunction> X86ProbeStream::compile(int copies) const { return compile_stream(plan_, copies, host_); }

Expected<std::string> X86ProbeStream::listing(int copies) const {
  std::string text;
  if (auto fn = compile_stream(plan_, copies, host_, &text); !fn) return make_error(fn.error());
  return text;
}

isa::BufferFill X86ProbeStream::prepare(isa::ProbeConstants& constants, const std::string& dtype) const {
  ConstantsLayout& c = fill_constants(constants, dtype);
  // ldmxcsr and fxrstor load the harness's own MXCSR value from every buffer dword.
  if (plan_.buffer_holds_mxcsr)
    for (size_t i = 0; i < sizeof(c.data); i += 4) std::memcpy(c.data + i, &c.mxcsr, 4);
  isa::BufferFill fill;
  std::memcpy(fill.pattern, c.data, sizeof(fill.pattern));
  fill.chase_bits = plan_.chase_bits;
  fill.chase_byteswap = plan_.chase_byteswap;
  return fill;
}

std::string X86ProbeForm::default_dtype() const { return infer_dtype(form_); }

void X86ProbeForm::set_immediates(int64_t value) {
  for (size_t i = 0; i < form_.text.operands.size(); ++i)
    if (form_.text.operands[i].cls == OpClass::imm) form_.imms[i] = value;
}

std::optional<std::string> X86ProbeForm::refusal() const { return refusal_reason(form_); }
std::optional<isa::Companion> X86ProbeForm::companion() const { return balancing_companion(form_); }
int X86ProbeForm::max_chains() const { return x86::max_chains(form_); }
std::vector<int> X86ProbeForm::latency_operands() const { return x86::latency_operands(form_); }
std::string X86ProbeForm::operand_kind(int operand) const { return form_.text.operands.at(size_t(operand)).text; }

Expected<isa::StreamHandle> X86ProbeForm::plan_throughput(int chains, const std::string& dtype) const {
  return wrap(x86::plan_throughput(form_, chains, host_, dtype), host_);
}
Expected<isa::StreamHandle> X86ProbeForm::plan_latency(const std::string& dtype) const {
  return wrap(x86::plan_latency(form_, host_, dtype), host_);
}
Expected<isa::StreamHandle> X86ProbeForm::plan_latency_through(int operand, const std::string& dtype) const {
  return wrap(x86::plan_latency_through(form_, operand, host_, dtype), host_);
}

Expected<std::unique_ptr<isa::ProbeForm>> make_probe_form(const std::string& text, const CpuInfo& cpu) {
  auto form = resolve_inst(text);
  if (!form) return make_error(form.error());
  return std::unique_ptr<isa::ProbeForm>(std::make_unique<X86ProbeForm>(std::move(form.value()), host_isa(cpu)));
}

int max_rounds(const std::vector<isa::MixPart>& parts) { return max_rounds(mix_entries(parts)); }

Expected<isa::StreamHandle> plan_mix(const std::vector<isa::MixPart>& parts, int rounds, const std::string& dtype) {
  if (parts.empty()) return make_error("an empty mix");
  const HostIsa& host = static_cast<const X86ProbeForm*>(parts.front().form)->host();
  return wrap(plan_mix(mix_entries(parts), rounds, host, dtype), host);
}

}  // namespace peakprobe::x86
