// The AArch64 side of asm/probe_form.hpp: an InstForm behind isa::ProbeForm, a StreamPlan behind
// isa::ProbeStream.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "asm/a64/inst_form.hpp"
#include "asm/a64/stream_plan.hpp"
#include "asm/probe_form.hpp"
#include "peakprobe/cpu_info.hpp"

namespace peakprobe::a64 {

class A64ProbeStream final : public isa::ProbeStream {
 public:
  explicit A64ProbeStream(StreamPlan plan) : plan_(std::move(plan)) {}
  int chains() const override { return plan_.chains; }
  int measured_per_copy() const override { return plan_.measured_per_copy; }
  const std::string& method() const override { return plan_.method; }
  double bridge_cycles() const override { return plan_.bridge_cycles; }
  bool upper_bound() const override { return plan_.upper_bound; }
  Expected<isa::JitFunction> compile(int copies) const override;
  Expected<std::string> listing(int copies) const override;
  isa::BufferFill prepare(isa::ProbeConstants& constants, const std::string& dtype) const override;
  const StreamPlan& plan() const { return plan_; }

 private:
  StreamPlan plan_;
};

class A64ProbeForm final : public isa::ProbeForm {
 public:
  explicit A64ProbeForm(InstForm form) : form_(std::move(form)) {}
  const std::string& display() const override { return form_.display; }
  const std::vector<std::string>& features() const override { return form_.features; }
  std::string default_dtype() const override { return infer_dtype(form_); }
  void set_immediates(int64_t value) override;
  std::optional<std::string> refusal() const override;
  std::optional<isa::Companion> companion() const override { return std::nullopt; }
  int max_chains() const override { return a64::max_chains(form_); }
  std::vector<int> latency_operands() const override { return a64::latency_operands(form_); }
  std::string operand_kind(int operand) const override { return form_.ops.at(size_t(operand)).text; }
  Expected<isa::StreamHandle> plan_throughput(int chains, const std::string& dtype) const override;
  Expected<isa::StreamHandle> plan_latency(const std::string& dtype) const override;
  Expected<isa::StreamHandle> plan_latency_through(int operand, const std::string& dtype) const override;
  const InstForm& form() const { return form_; }

 private:
  InstForm form_;
};

Expected<std::unique_ptr<isa::ProbeForm>> make_probe_form(const std::string& text);
int max_rounds(const std::vector<isa::MixPart>& parts);
Expected<isa::StreamHandle> plan_mix(const std::vector<isa::MixPart>& parts, int rounds);

}  // namespace peakprobe::a64
