// The x86 side of asm/probe_form.hpp: an InstForm and the host's ISA level behind isa::ProbeForm, a
// StreamPlan behind isa::ProbeStream.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "asm/probe_form.hpp"
#include "asm/x86/host_isa.hpp"
#include "asm/x86/inst_form.hpp"
#include "asm/x86/stream_plan.hpp"
#include "peakprobe/cpu_info.hpp"

namespace peakprobe::x86 {

class X86ProbeStream final : public isa::ProbeStream {
 public:
  X86ProbeStream(StreamPlan plan, const HostIsa& host) : plan_(std::move(plan)), host_(host) {}
  int chains() const override { return plan_.chains; }
  int measured_per_copy() const override { return plan_.measured_per_copy; }
  const std::string& method() const override { return plan_.method; }
  double bridge_cycles() const override { return plan_.bridge_cycles; }
  bool upper_bound() const override { return plan_.upper_bound; }
  bool copies_continue_chains() const override { return plan_.memory_stride_per_copy == 0; }
  Expected<isa::JitFunction> compile(int copies) const override;
  Expected<std::string> listing(int copies) const override;
  isa::BufferFill prepare(isa::ProbeConstants& constants, const std::string& dtype) const override;
  const StreamPlan& plan() const { return plan_; }

 private:
  StreamPlan plan_;
  HostIsa host_;
};

class X86ProbeForm final : public isa::ProbeForm {
 public:
  X86ProbeForm(InstForm form, const HostIsa& host) : form_(std::move(form)), host_(host) {}
  const std::string& display() const override { return form_.display; }
  const std::vector<std::string>& features() const override { return form_.features; }
  std::string default_dtype() const override;
  void set_immediates(int64_t value) override;
  std::optional<std::string> refusal() const override;
  std::optional<isa::Companion> companion() const override;
  int max_chains() const override;
  std::vector<int> latency_operands() const override;
  std::string operand_kind(int operand) const override;
  Expected<isa::StreamHandle> plan_throughput(int chains, const std::string& dtype) const override;
  Expected<isa::StreamHandle> plan_latency(const std::string& dtype) const override;
  Expected<isa::StreamHandle> plan_latency_through(int operand, const std::string& dtype) const override;
  const InstForm& form() const { return form_; }
  const HostIsa& host() const { return host_; }

 private:
  InstForm form_;
  HostIsa host_;
};

Expected<std::unique_ptr<isa::ProbeForm>> make_probe_form(const std::string& text, const CpuInfo& cpu);
// The mix's forms must all come from make_probe_form.
int max_rounds(const std::vector<isa::MixPart>& parts);
Expected<isa::StreamHandle> plan_mix(const std::vector<isa::MixPart>& parts, int rounds, const std::string& dtype);

}  // namespace peakprobe::x86
