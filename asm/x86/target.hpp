// The x86-64 answers to asm/target.hpp.
#pragma once
#include "asm/target.hpp"

namespace peakprobe::x86 {

class X86Target final : public isa::Target {
 public:
  std::string name() const override { return "x86"; }
  Expected<isa::FormInfo> resolve(const std::string& text) const override;
  std::string check_immediate(const std::string& text, int64_t value) const override;
  const std::vector<isa::ListedForm>& all_forms() const override;
  std::vector<std::string> form_families() const override;
  std::optional<Arithmetic> arithmetic(const std::string& text) const override;
  int gemm_vector_bits(const CpuInfo& cpu) const override;
  std::string gemm_unsupported(const CpuInfo& cpu, MatmulDtype dtype) const override;
  // vpdpbusd multiplies unsigned by signed bytes, and the widened kernels zero-extend A into int16:
  // A is never shifted.
  bool gemm_signed_a(const CpuInfo&, MatmulDtype) const override { return false; }
  bool gemm_widened(const CpuInfo& cpu, MatmulDtype dtype) const override;
  bool gemm_tiles(const CpuInfo& cpu, MatmulDtype dtype) const override;
  std::optional<CpuInfo> gemm_widened_alternative(const CpuInfo& cpu, MatmulDtype dtype) const override;
  std::string tiles_name() const override { return "amx"; }
  int a_in_place_rows() const override;
  bool a_in_place_partial_groups() const override { return true; }
  bool b_in_place_edges(const isa::MicroKernelShape& shape) const override;
  int vector_registers(int vector_bits) const override { return vector_bits == 512 ? 32 : 16; }
  int model_vector_bits(const CpuInfo& cpu) const override;
  int registers_needed(const isa::MicroKernelShape& shape) const override;
  std::string check_kernel_shape(const isa::MicroKernelShape& shape, int vector_registers) const override;
  std::unique_ptr<isa::MicroKernels> micro_kernels(const isa::MicroKernelShape& shape) const override;
  std::vector<isa::StepInstruction> kernel_step(const isa::MicroKernelShape& shape) const override;
  std::string width_name(int vector_bits) const override;
  isa::MatmulRoof matmul_roof(const CpuInfo& cpu, MatmulDtype dtype) const override;
  std::optional<isa::FlopPair> flop_pair(const CpuInfo& cpu, bool fused_only) const override;
  std::vector<isa::FlopPair> flop_pairs() const override;
  std::string report_pair_set(const CpuInfo& cpu) const override;
  std::vector<std::string> matrix_groups() const override { return {"amx"}; }
  std::string width_class(const std::string& instruction) const override;
  Expected<std::unique_ptr<isa::ProbeForm>> probe_form(const std::string& text, const CpuInfo& cpu) const override;
  int max_rounds(const std::vector<isa::MixPart>& parts) const override;
  Expected<isa::StreamHandle> plan_mix(const std::vector<isa::MixPart>& parts, int rounds,
                                       const std::string& dtype) const override;
  std::vector<std::vector<std::string>> pipe_seed_candidates() const override;
  std::vector<std::string> issue_width_forms() const override { return {"nop", "mov r64, r64", "add r64, r64"}; }
  RulerForms ruler_forms() const override { return {"add r64, r64", "imul r64, r64"}; }
  HelpTexts help_texts() const override;
  std::vector<int> vector_widths() const override { return {64, 128, 256, 512}; }
  std::vector<int> mem_widths(const CpuInfo& cpu) const override;
  std::string mem_width_unsupported(int bits) const override;
  uint64_t mem_max_step_bytes() const override;
  Expected<isa::MemKernelCode> compile_mem_kernel(isa::MemKernel kernel, int bits, const CpuInfo& cpu) const override;
  int max_chase_chains() const override;
  Expected<isa::ChaseCode> compile_chase(int chains) const override;
  std::vector<std::string> isa_levels() const override { return {"avx2", "avx512", "amx"}; }
  Expected<CpuInfo> limit_isa(const CpuInfo& cpu, const std::string& level) const override;
  isa::LibraryIsaLimit library_isa_limit(const std::string& level) const override;
  OpenblasCores openblas_cores(const CpuInfo& cpu) const override;
};

}  // namespace peakprobe::x86
