#include "asm/a64/probe_form.hpp"

#include <cstring>

#include "asm/a64/stream_emitter.hpp"

namespace peakprobe::a64 {
namespace {

Expected<isa::StreamHandle> wrap(Expected<StreamPlan> plan) {
  if (!plan) return make_error(plan.error());
  return isa::StreamHandle(std::make_shared<A64ProbeStream>(std::move(plan.value())));
}

std::vector<MixEntry> mix_entries(const std::vector<isa::MixPart>& parts) {
  std::vector<MixEntry> entries;
  for (const auto& p : parts) entries.push_back({&static_cast<const A64ProbeForm*>(p.form)->form(), p.weight, p.chains});
  return entries;
}

}  // namespace

Expected<isa::JitFunction> A64ProbeStream::compile(int copies) const { return compile_stream(plan_, copies); }

Expected<std::string> A64ProbeStream::listing(int copies) const {
  std::string text;
  if (auto fn = compile_stream(plan_, copies, &text); !fn) return make_error(fn.error());
  return text;
}

isa::BufferFill A64ProbeStream::prepare(isa::ProbeConstants& constants, const std::string& dtype) const {
  ConstantsLayout& c = fill_constants(constants, dtype);
  isa::BufferFill fill;
  std::memcpy(fill.pattern, c.data, sizeof(fill.pattern));
  fill.chase_bits = plan_.chase_bits;
  return fill;
}

void A64ProbeForm::set_immediates(int64_t value) {
  for (size_t i = 0; i < form_.ops.size(); ++i)
    if (form_.ops[i].kind == OpKind::imm || form_.ops[i].kind == OpKind::shift) form_.imms[i] = value;
}

std::optional<std::string> A64ProbeForm::refusal() const {
  std::string why = refusal_reason(form_);
  if (why.empty()) return std::nullopt;
  return why;
}

Expected<isa::StreamHandle> A64ProbeForm::plan_throughput(int chains, const std::string&) const {
  return wrap(a64::plan_throughput(form_, chains));
}
Expected<isa::StreamHandle> A64ProbeForm::plan_latency(const std::string&) const { return wrap(a64::plan_latency(form_)); }
Expected<isa::StreamHandle> A64ProbeForm::plan_latency_through(int operand, const std::string&) const {
  return wrap(a64::plan_latency_through(form_, operand));
}

Expected<std::unique_ptr<isa::ProbeForm>> make_probe_form(const std::string& text) {
  auto form = resolve_inst(text);
  if (!form) return make_error(form.error());
  return std::unique_ptr<isa::ProbeForm>(std::make_unique<A64ProbeForm>(std::move(form.value())));
}

int max_rounds(const std::vector<isa::MixPart>& parts) { return max_rounds(mix_entries(parts)); }

Expected<isa::StreamHandle> plan_mix(const std::vector<isa::MixPart>& parts, int rounds) {
  return wrap(plan_mix(mix_entries(parts), rounds));
}

}  // namespace peakprobe::a64
