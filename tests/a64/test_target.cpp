// The AArch64 answers of the seam: widths, roofs, register budgets and names, each checked against
// the form it names (which must resolve) rather than against a CPU's figures.
#include <catch2/catch.hpp>

#include "asm/a64/inst_form.hpp"
#include "asm/a64/target.hpp"
#include "cpu/cpu_info.hpp"

using namespace peakprobe;

TEST_CASE("a64 target: every form it names resolves", "[a64][target]") {
  const auto& t = isa::host_target();
  CHECK(t.name() == "a64");
  CpuInfo all;
  all.features = {"fp", "asimd", "bf16", "i8mm", "asimddp"};
  std::vector<std::string> named = {t.ruler_forms().one_cycle, t.ruler_forms().multi_cycle, t.help_texts().example_form};
  for (auto dt : {MatmulDtype::f32, MatmulDtype::bf16, MatmulDtype::i8}) named.push_back(t.matmul_roof(all, dt).instruction);
  named.push_back(t.flop_pair(all, true)->mul);
  named.push_back(t.flop_pair(all, true)->add);
  for (const auto& f : t.issue_width_forms()) named.push_back(f);
  for (const auto& text : named) {
    INFO(text);
    auto f = a64::resolve_inst(text);
    REQUIRE(f.ok());
    CHECK(f->display == text);
  }
  // The roof's operations follow the catalog's convention: 2 per multiply-add lane or product.
  CHECK(t.matmul_roof(all, MatmulDtype::f32).ops == 8);
  CHECK(t.matmul_roof(all, MatmulDtype::i8).ops == 32);
  auto fmla = t.arithmetic("fmla v.4s, v.4s, v.4s");
  REQUIRE(fmla);
  CHECK(fmla->ops == 8);
  CHECK(fmla->dtype == "f32");
}

TEST_CASE("a64 target: widths, kernels and levels", "[a64][target]") {
  const auto& t = isa::host_target();
  CHECK(t.width_class("fmla v.4s, v.4s, v.4s") == "128");
  CHECK(t.width_class("fadd v.2s, v.2s, v.2s") == "64");
  CHECK(t.width_class("ldr q, [x]") == "128");
  CHECK(t.width_class("fadd s, s, s") == "scalar");
  CHECK(t.width_class("add x, x, x") == "scalar");
  CpuInfo bare;
  CHECK_FALSE(t.gemm_unsupported(bare, MatmulDtype::f32).empty());
  CHECK_THAT(t.gemm_unsupported(bare, MatmulDtype::i8), Catch::Contains("i8mm"));
  CHECK_THAT(t.gemm_unsupported(bare, MatmulDtype::i8), Catch::Contains("sdot"));
  CHECK(t.registers_needed({8, 3, 128, MatmulDtype::f32}) <= t.vector_registers(128));
  CHECK_FALSE(t.gemm_widened(bare, MatmulDtype::i8));  // every AArch64 kernel runs its own dot product
  for (MatmulDtype d : {MatmulDtype::f32, MatmulDtype::bf16, MatmulDtype::i8})
    CHECK_FALSE(t.gemm_widened_alternative(bare, d).has_value());
  CHECK_FALSE(t.limit_isa(bare, "neon").ok());
  CHECK_FALSE(t.limit_isa(bare, "sve").ok());
  // Levels narrowest first; each takes away what lies above it, and the int8 path follows.
  CHECK(t.isa_levels() == std::vector<std::string>{"neon", "dotprod", "i8mm"});
  CpuInfo v1;
  v1.features = {"asimd", "asimddp", "i8mm", "bf16", "sve", "svei8mm"};
  CHECK_FALSE(t.gemm_signed_a(v1, MatmulDtype::i8));
  auto dotprod = t.limit_isa(v1, "dotprod");
  REQUIRE(dotprod.ok());
  CHECK(dotprod->features == std::vector<std::string>{"asimd", "asimddp"});
  CHECK(t.gemm_signed_a(*dotprod, MatmulDtype::i8));
  CHECK_FALSE(t.gemm_signed_a(*dotprod, MatmulDtype::f32));
  CHECK(t.gemm_unsupported(*dotprod, MatmulDtype::i8).empty());
  CHECK_FALSE(t.gemm_unsupported(*dotprod, MatmulDtype::bf16).empty());
  CHECK(t.matmul_roof(*dotprod, MatmulDtype::i8).instruction.rfind("sdot", 0) == 0);
  CHECK(t.matmul_roof(v1, MatmulDtype::i8).instruction.rfind("usdot", 0) == 0);
  auto neon_only = t.limit_isa(v1, "neon");
  REQUIRE(neon_only.ok());
  CHECK(neon_only->features == std::vector<std::string>{"asimd"});
  CHECK_FALSE(t.gemm_unsupported(*neon_only, MatmulDtype::i8).empty());
  CHECK(t.limit_isa(v1, "i8mm")->features == v1.features);
  CHECK_THAT(t.limit_isa(*dotprod, "i8mm").error(), Catch::Contains("no i8mm"));
  // The libraries are held below the widest level, and only there.
  CHECK(t.library_isa_limit("i8mm").level.empty());
  CHECK(t.library_isa_limit("dotprod").level == "dotprod");
  CHECK(t.library_isa_limit("neon").openblas_coretype == "ARMV8");
  CHECK(t.mem_widths(bare) == std::vector<int>{64});
  CpuInfo neon;
  neon.features = {"asimd"};
  CHECK(t.mem_widths(neon) == std::vector<int>{64, 128, 512});
  CHECK(t.width_name(512) == "neon-x4");  // four q registers per ld1/st1, not a register width
  CHECK(t.width_name(128) == "neon");
  CHECK_THAT(t.mem_width_unsupported(512), Catch::Contains("ld1/st1"));
  CHECK(t.mem_max_step_bytes() >= 128);
}

TEST_CASE("a64 target: the form list is sorted, unique and resolves to itself", "[a64][target]") {
  const auto& forms = isa::host_target().all_forms();
  CHECK(forms.size() >= 1500);
  for (size_t i = 1; i < forms.size(); ++i) CHECK(forms[i - 1].text < forms[i].text);
  for (size_t i = 0; i < forms.size(); i += 37) {
    INFO(forms[i].text);
    auto f = a64::resolve_inst(forms[i].text);
    REQUIRE(f.ok());
    CHECK(f->display == forms[i].text);
  }
}
