#include "asm/a64/target.hpp"

#include <sched.h>
#include <sys/mman.h>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <climits>

#include "asm/a64/arithmetic.hpp"
#include "asm/a64/form_enumeration.hpp"
#include "asm/a64/inst_form.hpp"
#include "asm/a64/matmul_kernel.hpp"
#include "asm/a64/mem_kernels.hpp"
#include "asm/a64/probe_form.hpp"

namespace peakprobe::a64 {

Expected<isa::FormInfo> A64Target::resolve(const std::string& text) const {
  auto form = resolve_inst(text);
  if (!form) return make_error(form.error());
  return isa::FormInfo{form->display, form->mnemonic, form->features};
}

std::string A64Target::check_immediate(const std::string& text, int64_t value) const {
  auto form = resolve_inst(text);
  if (!form) return "";  // resolving reports its own error
  bool has_imm = false;
  for (size_t i = 0; i < form->ops.size(); ++i)
    if (form->ops[i].kind == OpKind::shift && (value < 0 || value > 63))
      return fmt::format("--imm {}: '{}' shifts by 0 to 63", value, text);
  if (value < INT32_MIN || value > INT32_MAX)
    return fmt::format("--imm {}: '{}' takes a 32-bit immediate at most", value, text);
  for (size_t i = 0; i < form->ops.size(); ++i)
    if (form->ops[i].kind == OpKind::imm || form->ops[i].kind == OpKind::shift) {
      form->imms[i] = value;
      has_imm = true;
    }
  if (!has_imm) return "";
  // The encoder knows each immediate's rules (ranges, scaled offsets, logical bit patterns).
  std::vector<uint32_t> ids(form->ops.size(), 3), index(form->ops.size(), 4);
  for (size_t i = 0; i < form->ops.size(); ++i) ids[i] = 3 + uint32_t(i) * 4 % 24;
  if (!encodes(form->inst_id, make_operands(*form, ids, index, {})))
    return fmt::format("--imm {}: '{}' cannot encode that immediate", value, text);
  return "";
}

const std::vector<isa::ListedForm>& A64Target::all_forms() const { return enumerate_forms(); }
std::vector<std::string> A64Target::form_families() const { return a64::form_families(); }

std::optional<isa::Target::Arithmetic> A64Target::arithmetic(const std::string& text) const {
  auto form = resolve_inst(text);
  if (!form) return std::nullopt;
  auto a = arithmetic_of(*form);
  if (!a) return std::nullopt;
  return Arithmetic{a->ops, a->dtype};
}

std::string A64Target::gemm_unsupported(const CpuInfo& cpu, MatmulDtype dtype) const {
  switch (dtype) {
    case MatmulDtype::f32: return cpu.has("asimd") ? "" : "the f32 kernels need asimd (NEON)";
    case MatmulDtype::bf16: return cpu.has("bf16") ? "" : "the bf16 kernels need bf16 (bfdot)";
    case MatmulDtype::i8:
      return cpu.has("i8mm") || cpu.has("asimddp")
                 ? ""
                 : "the int8 kernels need asimddp (sdot) or i8mm (sudot: unsigned A x signed B)";
  }
  return "unknown dtype";
}

// Cores with the dot product but not i8mm (Neoverse N1, Cortex-A76/A77/A78) multiply signed by
// signed bytes only: A goes in shifted by 128 and B's column sums put the shift back.
bool A64Target::gemm_signed_a(const CpuInfo& cpu, MatmulDtype dtype) const {
  return dtype == MatmulDtype::i8 && !cpu.has("i8mm") && cpu.has("asimddp");
}

int A64Target::registers_needed(const isa::MicroKernelShape& shape) const {
  return a64::registers_needed(shape.mr, shape.nv);
}

int A64Target::a_in_place_rows() const { return a64::kAInPlaceRows; }

bool A64Target::b_in_place_edges(const isa::MicroKernelShape& shape) const { return a64::b_in_place_edges(shape); }

std::string A64Target::check_kernel_shape(const isa::MicroKernelShape& shape, int vector_registers) const {
  return check_shape(shape, vector_registers);
}

std::vector<isa::StepInstruction> A64Target::kernel_step(const isa::MicroKernelShape& shape) const {
  return kernel_step_instructions(shape);
}

std::unique_ptr<isa::MicroKernels> A64Target::micro_kernels(const isa::MicroKernelShape& shape) const {
  return std::make_unique<MicroKernels>(shape);
}

isa::MatmulRoof A64Target::matmul_roof(const CpuInfo& cpu, MatmulDtype dtype) const {
  switch (dtype) {
    case MatmulDtype::f32: return {"fmla v.4s, v.4s, v.4s", 128, 8, "f32"};
    case MatmulDtype::bf16: return {"bfdot v.4s, v.8h, v.8h", 128, 16, "bf16"};
    case MatmulDtype::i8:
      if (gemm_signed_a(cpu, dtype)) return {"sdot v.4s, v.16b, v.16b", 128, 32, "i8"};
      return {"usdot v.4s, v.16b, v.16b", 128, 32, "i8"};
  }
  return {};
}

std::optional<isa::FlopPair> A64Target::flop_pair(const CpuInfo& cpu, bool fused_only) const {
  if (cpu.has("asimd")) return isa::FlopPair{"fmla v.4s, v.4s, v.4s", "fadd v.4s, v.4s, v.4s", true};
  if (cpu.has("fp")) return isa::FlopPair{"fmadd s, s, s, s", "fadd s, s, s", true};
  (void)fused_only;
  return std::nullopt;
}

std::vector<isa::FlopPair> A64Target::flop_pairs() const {
  return {{"fmla v.4s, v.4s, v.4s", "fadd v.4s, v.4s, v.4s", true}, {"fmla v.2d, v.2d, v.2d", "fadd v.2d, v.2d, v.2d", true},
          {"fmla v.8h, v.8h, v.8h", "fadd v.8h, v.8h, v.8h", true}, {"fmla v.2s, v.2s, v.2s", "fadd v.2s, v.2s, v.2s", true},
          {"fmla v.4h, v.4h, v.4h", "fadd v.4h, v.4h, v.4h", true}, {"fmadd s, s, s, s", "fadd s, s, s", true},
          {"fmadd d, d, d, d", "fadd d, d, d", true},               {"fmadd h, h, h, h", "fadd h, h, h", true}};
}

std::string A64Target::width_class(const std::string& text) const {
  for (const char* w : {".16b", ".8h", ".4s", ".2d"})
    if (text.find(w) != std::string::npos) return "128";
  for (const char* w : {".8b", ".4h", ".2s", ".1d"})
    if (text.find(w) != std::string::npos) return "64";
  auto form = resolve_inst(text);
  if (form)
    for (const auto& op : form->ops)
      if (op.kind == OpKind::fpr && op.bits == 128) return "128";
  return "scalar";
}

Expected<std::unique_ptr<isa::ProbeForm>> A64Target::probe_form(const std::string& text, const CpuInfo&) const {
  return make_probe_form(text);
}
int A64Target::max_rounds(const std::vector<isa::MixPart>& parts) const { return a64::max_rounds(parts); }
Expected<isa::StreamHandle> A64Target::plan_mix(const std::vector<isa::MixPart>& parts, int rounds,
                                                const std::string&) const {
  return a64::plan_mix(parts, rounds);
}

std::vector<std::vector<std::string>> A64Target::pipe_seed_candidates() const {
  // Arm cores differ in how many integer ALUs also multiply or shift, and whether FP/ASIMD pipes
  // split FMA from add or permute: one form per kind, 128-bit NEON (every AArch64 core has it).
  return {
      {"add x, x, x"},                   // integer ALU
      {"mul x, x, x"},                   // integer multiply
      {"lsl x, x, x"},                   // shift by register
      {"udiv x, x, x"},                  // integer divider
      {"ldr x, [x]"},                    // load
      {"str x, [x]"},                    // store
      {"ldr q, [x]"},                    // vector load
      {"str q, [x]"},                    // vector store
      {"fadd v.4s, v.4s, v.4s"},         // FP add
      {"fmul v.4s, v.4s, v.4s"},         // FP multiply
      {"fmla v.4s, v.4s, v.4s"},         // FMA
      {"fdiv v.4s, v.4s, v.4s"},         // FP divider
      {"add v.4s, v.4s, v.4s"},          // vector integer ALU
      {"mul v.4s, v.4s, v.4s"},          // vector integer multiply
      {"shl v.4s, v.4s, #imm"},          // vector shift
      {"tbl v.16b, {v.16b}, v.16b"},     // table permute
      {"zip1 v.4s, v.4s, v.4s"},         // shuffle
      {"scvtf v.4s, v.4s"},              // conversion
      {"umov w, v.s[1]"},                // vector to general register
  };
}

isa::Target::HelpTexts A64Target::help_texts() const {
  HelpTexts h;
  h.notation = "Arm-manual notation, operand kinds in place of registers";
  h.example_form = "fmla v.4s, v.4s, v.4s";
  h.operand_kinds =
      "Operand kinds: x w (general), b h s d q (SIMD&FP scalars), v.8b v.16b v.4h v.8h v.2s v.4s v.1d v.2d,\n"
      "v.s[1] (an element; v.4b[i], v.2h[i] for dot products), {v.16b, v.16b} (lists), #imm,\n"
      "lsl #imm, [x] [x, #imm] [x, x] [x, x, lsl #imm], conditions (ne, ge...). Numbered registers (x3) work too.\n";
  h.inst_examples =
      "  peakprobe inst \"fmla v.4s, v.4s, v.4s\" \"mul x, x, x\"\n"
      "  peakprobe inst \"sdot v.4s, v.16b, v.16b\" --ops 32 --dtype i8\n"
      "  peakprobe inst \"ldr x, [x]\"                 # load-to-use latency by pointer chase\n";
  h.run_filter = "fp.fma,4s";
  h.run_examples = "  peakprobe run --filter v.4s --json -   # 128-bit vector rows as JSON on stdout\n";
  h.mix_example = "\"fmla v.4s, v.4s, v.4s:2\" \"fadd v.4s, v.4s, v.4s:1\"";
  h.pair_example = "\"fmla v.4s, v.4s, v.4s\" \"ldr q, [x]\"";
  h.pairs_example = "\"add x, x, x\" \"mul x, x, x\" \"fadd v.4s, v.4s, v.4s\"";
  h.pairs_set = "fp.v128";
  h.flop_a = "fmla v.4s (NEON)";
  h.flop_b = "fadd v.4s";
  h.table_examples =
      "  peakprobe table --group asimd --json asimd.json    # every vector form\n"
      "  peakprobe table --filter \"v.4s\"                   # forms on four 32-bit lanes\n"
      "  peakprobe table --filter fmla --list              # what would be measured, and what not, and why\n"
      "  peakprobe table --pipes --json t.json --html t.html  # the whole table with its pipe groups\n"
      "  peakprobe table --pipes --forms \"sdot v.4s, v.16b, v.16b\" \"ext v.16b, v.16b, v.16b, #imm\"  # two forms' pipes\n";
  return h;
}

std::vector<int> A64Target::mem_widths(const CpuInfo& cpu) const {
  if (cpu.has("asimd")) return {64, 128, kWidthX4};
  return {64};
}

std::string A64Target::mem_width_unsupported(int bits) const {
  return bits == kWidthX4 ? "the ld1/st1 kernels of four registers need asimd (NEON)"
                          : fmt::format("{}-bit kernels need asimd (NEON)", bits);
}

uint64_t A64Target::mem_max_step_bytes() const { return std::max(uint64_t(kMemUnroll) * 16, uint64_t(kMemUnrollX4) * 64); }

Expected<isa::MemKernelCode> A64Target::compile_mem_kernel(isa::MemKernel kernel, int bits, const CpuInfo& cpu) const {
  if (bits >= 128 && !cpu.has("asimd")) return make_error(mem_width_unsupported(bits));
  auto code = a64::compile_mem_kernel(kernel, bits);
  if (!code) return make_error(code.error());
  return isa::own_mem_kernel(std::move(code->fn), code->info, code->width_bits, code->bytes_per_iteration,
                             code->array_step);
}

int A64Target::max_chase_chains() const { return kMaxChaseChains; }

Expected<isa::ChaseCode> A64Target::compile_chase(int chains) const {
  auto code = a64::compile_chase(chains);
  if (!code) return make_error(code.error());
  return isa::own_chase(std::move(*code), kChaseUnroll);
}

// The levels follow the architecture's steps for matrix work: neon (Armv8.0 Advanced SIMD: f32),
// dotprod (Armv8.2/8.4 sdot/udot: int8 as on Neoverse N1, Cortex-A76), i8mm (Armv8.6 int8 and bf16
// matrix multiply, with bfdot: Neoverse V1/N2 and later). A level takes away the features above it;
// SVE and SME go below i8mm, as the kernels are NEON.
Expected<CpuInfo> A64Target::limit_isa(const CpuInfo& cpu, const std::string& level) const {
  static const std::vector<std::string> levels = isa_levels();
  const auto at = std::find(levels.begin(), levels.end(), level);
  if (at == levels.end()) return make_error(fmt::format("--isa '{}': one of {}", level, fmt::join(levels, ", ")));
  const char* needs = level == "neon" ? "asimd" : level == "dotprod" ? "asimddp" : "i8mm";
  if (!cpu.has(needs)) return make_error(fmt::format("--isa {}: this CPU has no {}", level, needs));
  if (level == "i8mm") return cpu;
  auto above = [&](const std::string& f) {
    if (f == "i8mm" || f == "bf16" || f == "ebf16" || f.rfind("sve", 0) == 0 || f.rfind("sme", 0) == 0) return true;
    return level == "neon" && f == "asimddp";
  };
  CpuInfo out = cpu;
  out.features.erase(std::remove_if(out.features.begin(), out.features.end(), above), out.features.end());
  return out;
}

isa::LibraryIsaLimit A64Target::library_isa_limit(const std::string& level) const {
  isa::LibraryIsaLimit limit;
  if (level != "neon" && level != "dotprod") return limit;  // i8mm, the widest: the libraries as they are
  limit.level = level;
  // oneDNN's AArch64 ISA levels are SVE lengths, none of them "NEON only": it cannot be held (0).
  // OpenBLAS's DYNAMIC_ARCH cores: the generic Armv8 NEON kernels, or Neoverse N1's (Armv8.2).
  limit.openblas_coretype = level == "neon" ? "ARMV8" : "NEOVERSEN1";
  // BLIS's AArch64 configurations with NEON kernels only (armsve and a64fx run SVE).
  limit.blis_configs = {"cortexa57", "cortexa53", "thunderx2", "firestorm", "generic"};
  return limit;
}

}  // namespace peakprobe::a64

namespace peakprobe::isa {
const Target& host_target() {
  static const a64::A64Target target;
  return target;
}

// `yield` lets a sibling hardware thread run; AArch64 has no pause with x86's pipeline effect.
void spin_pause() { asm volatile("yield" ::: "memory"); }

// AArch64 probes chase 64-bit pointers only: any address will do.
void* map_low_pages(size_t bytes) {
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  return p == MAP_FAILED ? nullptr : p;
}

}  // namespace peakprobe::isa
