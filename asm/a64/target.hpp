// The AArch64 answers to asm/target.hpp.
#pragma once
#include "asm/target.hpp"

namespace peakprobe::a64 {

class A64Target final : public isa::Target {
 public:
  std::string name() const override { return "a64"; }
  Expected<isa::FormInfo> resolve(const std::string& text) const override;
  std::string check_immediate(const std::string& text, int64_t value) const override;
  const std::vector<isa::ListedForm>& all_forms() const override;
  std::vector<std::string> form_families() const override;
  std::optional<Arithmetic> arithmetic(const std::string& text) const override;
  int gemm_vector_bits(const CpuInfo&) const override { return 128; }
  std::string gemm_unsupported(const CpuInfo& cpu, MatmulDtype dtype) const override;
  bool gemm_signed_a(const CpuInfo& cpu, MatmulDtype dtype) const override;
  bool gemm_widened(const CpuInfo&, MatmulDtype) const override { return false; }
  bool gemm_tiles(const CpuInfo&, MatmulDtype) const override { return false; }  // SME: asmjit has no encoder
  std::optional<CpuInfo> gemm_widened_alternative(const CpuInfo&, MatmulDtype) const override { return std::nullopt; }
  std::string tiles_name() const override { return "sme"; }
  int a_in_place_rows() const override;
  bool b_in_place_edges(const isa::MicroKernelShape& shape) const override;
  int vector_registers(int) const override { return 32; }
  int model_vector_bits(const CpuInfo&) const override { return 128; }
  int registers_needed(const isa::MicroKernelShape& shape) const override;
  std::string check_kernel_shape(const isa::MicroKernelShape& shape, int vector_registers) const override;
  std::unique_ptr<isa::MicroKernels> micro_kernels(const isa::MicroKernelShape& shape) const override;
  std::vector<isa::StepInstruction> kernel_step(const isa::MicroKernelShape& shape) const override;
  // 512 names the memory kernels that move four q registers per ld1/st1 ("neon-x4"); no register is
  // that wide.
  std::string width_name(int vector_bits) const override {
    return vector_bits >= 512 ? "neon-x4" : vector_bits >= 128 ? "neon" : "scalar";
  }
  isa::MatmulRoof matmul_roof(const CpuInfo& cpu, MatmulDtype dtype) const override;
  std::optional<isa::FlopPair> flop_pair(const CpuInfo& cpu, bool fused_only) const override;
  std::vector<isa::FlopPair> flop_pairs() const override;
  std::string report_pair_set(const CpuInfo&) const override { return "fp.v128"; }
  std::vector<std::string> matrix_groups() const override { return {"mat.i8", "mat.bf16"}; }
  std::string width_class(const std::string& instruction) const override;
  Expected<std::unique_ptr<isa::ProbeForm>> probe_form(const std::string& text, const CpuInfo& cpu) const override;
  int max_rounds(const std::vector<isa::MixPart>& parts) const override;
  Expected<isa::StreamHandle> plan_mix(const std::vector<isa::MixPart>& parts, int rounds,
                                       const std::string& dtype) const override;
  std::vector<std::vector<std::string>> pipe_seed_candidates() const override;
  std::vector<std::string> issue_width_forms() const override { return {"nop", "mov x, x", "add x, x, x"}; }
  RulerForms ruler_forms() const override { return {"add x, x, x", "mul x, x, x"}; }
  HelpTexts help_texts() const override;
  std::vector<int> vector_widths() const override { return {64, 128, 512}; }
  std::vector<int> mem_widths(const CpuInfo& cpu) const override;
  std::string mem_width_unsupported(int bits) const override;
  uint64_t mem_max_step_bytes() const override;
  Expected<isa::MemKernelCode> compile_mem_kernel(isa::MemKernel kernel, int bits, const CpuInfo& cpu) const override;
  int max_chase_chains() const override;
  Expected<isa::ChaseCode> compile_chase(int chains) const override;
  std::vector<std::string> isa_levels() const override { return {"neon", "dotprod", "i8mm"}; }
  Expected<CpuInfo> limit_isa(const CpuInfo& cpu, const std::string& level) const override;
  isa::LibraryIsaLimit library_isa_limit(const std::string& level) const override;
  // Its AArch64 fallback is the generic Armv8 core; no core is chosen by features here.
  OpenblasCores openblas_cores(const CpuInfo&) const override { return {"ARMV8", ""}; }
};

}  // namespace peakprobe::a64
