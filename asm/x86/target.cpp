#include "asm/x86/target.hpp"

#include "asm/x86/matmul_kernel.hpp"
#include "asm/x86/arithmetic.hpp"
#include "asm/x86/form_enumeration.hpp"
#include "asm/x86/host_isa.hpp"
#include "asm/x86/inst_form.hpp"
#include "asm/x86/mem_kernels.hpp"
#include "asm/x86/probe_form.hpp"

#include <fmt/format.h>
#include <immintrin.h>
#include <sys/mman.h>

#include <algorithm>

#include <fmt/format.h>

namespace peakprobe::x86 {

namespace {
bool ends_with(const std::string& s, const char* suffix) {
  const std::string t(suffix);
  return s.size() >= t.size() && s.compare(s.size() - t.size(), t.size(), t) == 0;
}
}  // namespace

// The f32 kernels are AVX-512 where the CPU has it, else AVX2 with FMA (gemm_unsupported says when
// neither is there).
int X86Target::gemm_vector_bits(const CpuInfo& cpu) const { return cpu.has("avx512_f") ? 512 : 256; }

Expected<std::unique_ptr<isa::ProbeForm>> X86Target::probe_form(const std::string& text, const CpuInfo& cpu) const {
  return make_probe_form(text, cpu);
}
int X86Target::max_rounds(const std::vector<isa::MixPart>& parts) const { return x86::max_rounds(parts); }
Expected<isa::StreamHandle> X86Target::plan_mix(const std::vector<isa::MixPart>& parts, int rounds,
                                                const std::string& dtype) const {
  return x86::plan_mix(parts, rounds, dtype);
}

Expected<isa::FormInfo> X86Target::resolve(const std::string& text) const {
  auto form = resolve_inst(text);
  if (!form) return make_error(form.error());
  return isa::FormInfo{form->display, form->text.mnemonic, form->features};
}

const std::vector<isa::ListedForm>& X86Target::all_forms() const { return enumerate_forms(); }

std::vector<std::string> X86Target::form_families() const { return x86::form_families(); }

std::optional<isa::Target::Arithmetic> X86Target::arithmetic(const std::string& text) const {
  auto form = resolve_inst(text);
  if (!form) return std::nullopt;
  auto a = arithmetic_of(*form);
  if (!a) return std::nullopt;
  return Arithmetic{a->ops, a->dtype};
}

std::string X86Target::check_immediate(const std::string& text, int64_t value) const {
  auto form = resolve_inst(text);
  if (!form) return "";  // resolving reports its own error
  // A 64-bit operation sign-extends its imm32: 0xffffffff there is not encodable at all.
  const bool wide = std::any_of(form->text.operands.begin(), form->text.operands.end(), [](const auto& op) {
    return (op.cls == OpClass::gp || op.cls == OpClass::fixed || op.cls == OpClass::mem) && op.bits == 64;
  });
  for (const auto& op : form->text.operands) {
    if (op.cls != OpClass::imm || op.bits < 8 || op.bits > 32) continue;
    const int64_t lo = -(int64_t{1} << (op.bits - 1));
    const int64_t hi = op.bits == 32 && wide ? INT32_MAX : (int64_t{1} << op.bits) - 1;
    if (value < lo || value > hi)
      return fmt::format("--imm {}: '{}' takes an imm{}, from {} to {}", value, text, op.bits, lo, hi);
  }
  return "";
}

isa::Target::HelpTexts X86Target::help_texts() const {
  HelpTexts h;
  h.notation = "Intel-manual notation";
  h.example_form = "vfmadd231ps ymm, ymm, ymm";
  h.operand_kinds =
      "Operand kinds: r8 r16 r32 r64, xmm ymm zmm, k, tmm, imm8 imm16 imm32, m8..m512, m (lea),\n"
      "m32bcst m64bcst, vm32x..vm64z (gathers), fixed registers (cl, rax), '{k}' write mask,\n"
      "and a '{vex}' or '{evex}' prefix to pick the encoding. Any instruction asmjit knows works.\n";
  h.inst_examples =
      "  peakprobe inst \"vfmadd231ps ymm, ymm, ymm\" \"imul r64, r64\"\n"
      "  peakprobe inst \"{vex} vpdpbusd ymm, ymm, ymm\" --ops 32 --dtype i8\n"
      "  peakprobe inst \"mov r64, m64\"          # load-to-use latency by pointer chase\n";
  h.run_filter = "fp.fma,ymm";
  h.run_examples = "  peakprobe run --filter zmm --json -  # AVX-512 rows as JSON on stdout\n";
  h.mix_example = "\"vfmadd231ps zmm, zmm, zmm:2\" \"vaddps zmm, zmm, zmm:1\"";
  h.pair_example = "\"vfmadd231ps ymm, ymm, ymm\" \"vmovups ymm, m256\"";
  h.pairs_example = "\"add r64, r64\" \"imul r64, r64\" \"vaddps ymm, ymm, ymm\"";
  h.pairs_set = "fp.ymm";
  h.flop_a = "the widest vfmadd231ps this CPU runs";
  h.flop_b = "vaddps of the same width";
  h.table_examples =
      "  peakprobe table --isa avx512 --json avx512.json   # every form that needs an AVX-512 feature\n"
      "  peakprobe table --group gp --filter \"r64\"          # general-purpose forms on 64-bit registers\n"
      "  peakprobe table --filter vfmadd --list             # what would be measured, and what not, and why\n"
      "  peakprobe table --pipes --json t.json --html t.html  # the whole table with its pipe groups\n"
      "  peakprobe table --pipes --forms \"vpermd ymm, ymm, ymm\" \"vpsadbw ymm, ymm, ymm\"  # two forms' pipes\n";
  return h;
}

// 512 with AVX-512, 256 with AVX2, else 128 (SSE: xmm0..15), whether or not the GEMM can run.
int X86Target::model_vector_bits(const CpuInfo& cpu) const {
  return cpu.has("avx512_f") ? 512 : cpu.has("avx2") ? 256 : 128;
}

// The x86 kernels broadcast one A element at a time into one register.
int X86Target::registers_needed(const isa::MicroKernelShape& shape) const { return x86::registers_needed(shape); }

int X86Target::a_in_place_rows() const { return x86::kAInPlaceRows; }

bool X86Target::b_in_place_edges(const isa::MicroKernelShape& shape) const { return x86::b_in_place_edges(shape); }

std::string X86Target::check_kernel_shape(const isa::MicroKernelShape& shape, int vector_registers) const {
  return check_shape(shape, vector_registers);
}

std::vector<isa::StepInstruction> X86Target::kernel_step(const isa::MicroKernelShape& shape) const {
  return x86::kernel_step_instructions(shape);
}

std::unique_ptr<isa::MicroKernels> X86Target::micro_kernels(const isa::MicroKernelShape& shape) const {
  return std::make_unique<MicroKernels>(shape);
}

std::string X86Target::gemm_unsupported(const CpuInfo& cpu, MatmulDtype dtype) const {
  switch (dtype) {
    case MatmulDtype::f32:
      if (cpu.has("avx512_f") || (cpu.has("avx2") && cpu.has("fma"))) return "";
      return "the f32 kernels need avx512_f, or avx2 with fma";
    // Without vdpbf16ps the elements are widened to f32 when packed and run on the FMA.
    case MatmulDtype::bf16:
      if (cpu.has("avx512_f") || (cpu.has("avx2") && cpu.has("fma"))) return "";
      return "the bf16 kernels need avx512_f, or avx2 with fma (bf16 widened to f32)";
    // Without vpdpbusd they are widened to int16 and run on vpmaddwd (AVX-512 BW at 512 bits).
    case MatmulDtype::i8:
      if (cpu.has("avx512_f"))
        return cpu.has("avx512_vnni") || cpu.has("avx512_bw")
                   ? ""
                   : "the int8 kernels need avx512_vnni (vpdpbusd) or avx512_bw (vpmaddwd on zmm)";
      return cpu.has("avx2") ? "" : "the int8 kernels need avx512_f or avx2";
  }
  return "unknown dtype";
}

// The 512-bit dot products, where the GEMM runs at 512 bits; at 256 bits AVX-VNNI's VEX vpdpbusd
// (Alder Lake, Sapphire Rapids, Zen 5) for int8. No 256-bit bf16 dot product without AVX-512.
bool X86Target::gemm_widened(const CpuInfo& cpu, MatmulDtype dtype) const {
  if (gemm_tiles(cpu, dtype)) return false;  // AMX takes bf16 and int8 as they are
  const bool zmm = gemm_vector_bits(cpu) == 512;
  switch (dtype) {
    case MatmulDtype::f32: return false;
    case MatmulDtype::bf16: return !(zmm && cpu.has("avx512_bf16"));
    case MatmulDtype::i8: return zmm ? !cpu.has("avx512_vnni") : !cpu.has("avx_vnni");
  }
  return false;
}

// bf16 on zmm: vdpbf16ps, or the f32 FMA on elements widened when packed. The dot product is not
// always the faster: on the Emerald Rapids VM (Golden Cove) vdpbf16ps zmm runs one every 2 cycles,
// 32 FLOP a cycle, where vfmadd231ps zmm runs 2 a cycle, 64 FLOP. int8 is left as it is: its widened
// path (vpmaddwd, then vpaddd) did at most half the work of vpdpbusd a cycle on every core seen (Zen
// 4 and 5, Sapphire and Emerald Rapids).
std::optional<CpuInfo> X86Target::gemm_widened_alternative(const CpuInfo& cpu, MatmulDtype dtype) const {
  if (dtype != MatmulDtype::bf16 || gemm_tiles(cpu, dtype) || gemm_widened(cpu, dtype)) return std::nullopt;
  CpuInfo widened = cpu;
  std::erase(widened.features, std::string("avx512_bf16"));
  return widened;
}

// AMX where the CPU has the dtype's tile product and the OS granted the tile state (a feature the
// kernel did not grant is not in cpu.features); --isa avx512 and below take AMX away.
bool X86Target::gemm_tiles(const CpuInfo& cpu, MatmulDtype dtype) const {
  if (gemm_vector_bits(cpu) != 512 || !cpu.has("amx_tile")) return false;
  switch (dtype) {
    case MatmulDtype::f32: return false;
    case MatmulDtype::bf16: return cpu.has("amx_bf16");
    case MatmulDtype::i8: return cpu.has("amx_int8");
  }
  return false;
}

std::string X86Target::width_name(int vector_bits) const { return isa_name(vector_bits); }

isa::MatmulRoof X86Target::matmul_roof(const CpuInfo& cpu, MatmulDtype dtype) const {
  switch (dtype) {
    case MatmulDtype::f32: {
      const int bits = gemm_vector_bits(cpu);
      // One FMA per lane: two FLOP.
      return {bits == 512 ? "vfmadd231ps zmm, zmm, zmm" : "vfmadd231ps ymm, ymm, ymm", bits, 2.0 * bits / 32, "f32"};
    }
    // Two bf16 products per 32-bit lane, each a multiply and an add; widened, the f32 FMA.
    case MatmulDtype::bf16:
      // 16 x 16 x 32 products a tile multiply, each a multiply and an add.
      if (gemm_tiles(cpu, dtype)) return {"tdpbf16ps tmm, tmm, tmm", 512, 2.0 * 16 * 16 * 32, "bf16", true};
      if (gemm_widened(cpu, dtype)) return matmul_roof(cpu, MatmulDtype::f32);
      return {"vdpbf16ps zmm, zmm, zmm", 512, 2.0 * 2 * 512 / 32, "bf16"};
    // Four u8 x s8 products per 32-bit lane; widened, two int16 products. The roof is the
    // multiply-add alone: where the vpaddd beside each one shares its pipes (Intel's ports 0, 1 and 5)
    // the kernel cannot reach it, and the efficiency shows that.
    case MatmulDtype::i8: {
      if (gemm_tiles(cpu, dtype)) return {"tdpbusd tmm, tmm, tmm", 512, 2.0 * 16 * 16 * 64, "i8", true};
      if (gemm_widened(cpu, dtype)) {
        const int bits = gemm_vector_bits(cpu);
        return {bits == 512 ? "vpmaddwd zmm, zmm, zmm" : "vpmaddwd ymm, ymm, ymm", bits, 2.0 * 2 * bits / 32, "i16"};
      }
      if (gemm_vector_bits(cpu) == 256) return {"{vex} vpdpbusd ymm, ymm, ymm", 256, 2.0 * 4 * 256 / 32, "i8"};
      return {"vpdpbusd zmm, zmm, zmm", 512, 2.0 * 4 * 512 / 32, "i8"};
    }
  }
  return {};
}

std::optional<isa::FlopPair> X86Target::flop_pair(const CpuInfo& cpu, bool fused_only) const {
  if (cpu.has("avx512_f")) return isa::FlopPair{"vfmadd231ps zmm, zmm, zmm", "vaddps zmm, zmm, zmm", true};
  if (cpu.has("fma")) return isa::FlopPair{"vfmadd231ps ymm, ymm, ymm", "vaddps ymm, ymm, ymm", true};
  if (fused_only) return std::nullopt;
  if (cpu.has("avx")) return isa::FlopPair{"vmulps ymm, ymm, ymm", "vaddps ymm, ymm, ymm", false};
  return isa::FlopPair{"mulps xmm, xmm", "addps xmm, xmm", false};
}

std::vector<isa::FlopPair> X86Target::flop_pairs() const {
  // Below 512 bits each pair comes twice: as VEX (or EVEX-only f16) forms, and forced to EVEX. A VEX
  // mix has 16 registers for the FMA's chains and the add's together, too few to keep both pipe
  // kinds busy (Zen 5 VM: the 1:1 ymm mix ran 0.73 cycles a pair with VEX, 0.50 with EVEX's 32
  // registers, where the FMA alone ran 0.50 an instruction). The ceiling is the better of the two,
  // and the VEX one stands on a CPU without AVX-512.
  std::vector<isa::FlopPair> out;
  auto add = [&](const std::string& prefix, const std::string& fma, const std::string& plus, const char* reg) {
    out.push_back({fmt::format("{0}{1} {2}, {2}, {2}", prefix, fma, reg), fmt::format("{0}{1} {2}, {2}, {2}", prefix, plus, reg), true});
  };
  for (const char* w : {"zmm", "ymm", "xmm"})
    for (const char* t : {"ps", "pd", "ph"}) {
      add("", fmt::format("vfmadd231{}", t), fmt::format("vadd{}", t), w);
      if (std::string(w) != "zmm" && std::string(t) != "ph")
        add("{evex} ", fmt::format("vfmadd231{}", t), fmt::format("vadd{}", t), w);
    }
  for (const char* t : {"ss", "sd", "sh"}) {
    add("", fmt::format("vfmadd231{}", t), fmt::format("vadd{}", t), "xmm");
    if (std::string(t) != "sh") add("{evex} ", fmt::format("vfmadd231{}", t), fmt::format("vadd{}", t), "xmm");
  }
  return out;
}

std::vector<std::vector<std::string>> X86Target::pipe_seed_candidates() const {
  // One or two forms per pipe kind that x86 cores have split differently over the years (Intel's
  // ports 0/1/5/6 with shifts on 0/6 and the slow integer unit on 1; AMD's four ALUs, three AGUs and
  // four FP pipes with FMA/MUL apart from ADD). 256-bit forms where AVX2 runs, SSE otherwise.
  return {
      {"add r64, r64"},                                      // integer ALU
      {"imul r64, r64"},                                     // integer multiplier
      {"popcnt r64, r64"},                                   // bit counting (Intel: the multiplier's port)
      {"shlx r64, r64, r64", "shl r64, imm8"},               // shifts (Intel: ports 0 and 6 only)
      {"crc32 r64, r64"},                                    // CRC (a multiplier on several cores)
      {"div r32"},                                           // integer divider
      {"mov r64, m64"},                                      // load
      {"mov m64, r64"},                                      // store
      {"vmovups ymm, m256", "movups xmm, m128"},             // vector load
      {"vmovups m256, ymm", "movups m128, xmm"},             // vector store
      {"vaddps ymm, ymm, ymm", "addps xmm, xmm"},            // FP add
      {"vmulps ymm, ymm, ymm", "mulps xmm, xmm"},            // FP multiply
      {"vfmadd231ps ymm, ymm, ymm"},                         // FMA
      {"vdivps ymm, ymm, ymm", "divps xmm, xmm"},            // FP divider
      {"vshufps ymm, ymm, ymm, imm8", "shufps xmm, xmm, imm8"},  // in-lane shuffle
      {"vpermps ymm, ymm, ymm"},                             // lane-crossing shuffle
      {"vpaddd ymm, ymm, ymm", "paddd xmm, xmm"},            // vector integer ALU
      {"vpmulld ymm, ymm, ymm", "pmulld xmm, xmm"},          // vector integer multiply
      {"vpslld ymm, ymm, imm8", "pslld xmm, imm8"},          // vector shift
      {"vcvtdq2ps ymm, ymm", "cvtdq2ps xmm, xmm"},           // conversion
      {"vpmovmskb r32, ymm", "pmovmskb r32, xmm"},           // vector to general register
  };
}

std::string X86Target::report_pair_set(const CpuInfo& cpu) const {
  return cpu.has("avx512_f") ? "fp.zmm" : cpu.has("avx2") ? "fp.ymm" : "fp.xmm";
}

std::string X86Target::width_class(const std::string& text) const {
  // Tile multiplies are no vector width: their ceilings are the matrix unit's own (not "scalar").
  if (text.find("tmm") != std::string::npos) return tiles_name();
  if (text.find("zmm") != std::string::npos) return "512";
  if (text.find("ymm") != std::string::npos) return "256";
  if (text.find("xmm") != std::string::npos) {
    // Scalar SSE/AVX forms (addss, vfmadd231sd, vaddsh) use xmm registers for one element.
    std::string t = !text.empty() && text.front() == '{' ? text.substr(text.find('}') + 1) : text;
    t.erase(0, t.find_first_not_of(' '));
    const std::string m = t.substr(0, t.find(' '));
    const bool integer_vector = m.rfind("p", 0) == 0 || m.rfind("vp", 0) == 0;  // vpdpbusd ends in "sd" too
    if (!integer_vector && (ends_with(m, "ss") || ends_with(m, "sd") || ends_with(m, "sh"))) return "scalar";
    return "128";
  }
  return "scalar";
}

Expected<CpuInfo> X86Target::limit_isa(const CpuInfo& cpu, const std::string& level) const {
  if (level == "amx") {
    if (!cpu.has("amx_tile")) return make_error("--isa amx: this CPU has no amx_tile (or the OS did not grant its state)");
    return cpu;
  }
  if (level == "avx512") {
    if (!cpu.has("avx512_f")) return make_error("--isa avx512: this CPU has no avx512_f");
    // The vector kernels alone: AMX's tiles go (oneDNN and the other libraries are held to avx512 too).
    CpuInfo out = cpu;
    std::erase_if(out.features, [](const std::string& f) { return f.rfind("amx", 0) == 0; });
    return out;
  }
  if (level != "avx2") return make_error(fmt::format("--isa '{}': one of avx2, avx512, amx", level));
  if (!cpu.has("avx2") || !cpu.has("fma")) return make_error("--isa avx2: this CPU lacks avx2 or fma");
  // Everything EVEX-encoded goes: AVX-512 in all its parts, AVX10, and AMX (its tiles are fed by
  // AVX-512 code). VEX forms such as avx_vnni stay: they run on ymm registers.
  CpuInfo out = cpu;
  auto above = [](const std::string& f) {
    return f.rfind("avx512", 0) == 0 || f.rfind("avx10", 0) == 0 || f.rfind("amx", 0) == 0;
  };
  out.features.erase(std::remove_if(out.features.begin(), out.features.end(), above), out.features.end());
  return out;
}

std::vector<int> X86Target::mem_widths(const CpuInfo& cpu) const { return x86::mem_widths(host_isa(cpu)); }

std::string X86Target::mem_width_unsupported(int bits) const {
  return fmt::format("{}-bit kernels need {}", bits, bits == 512 ? "avx512_f" : "avx2 and fma");
}

// The widest kernel steps kMemUnroll vectors of 64 bytes per array.
uint64_t X86Target::mem_max_step_bytes() const { return uint64_t(kMemUnroll) * 64; }

Expected<isa::MemKernelCode> X86Target::compile_mem_kernel(isa::MemKernel kernel, int bits, const CpuInfo& cpu) const {
  auto code = x86::compile_mem_kernel(kernel, bits, host_isa(cpu));
  if (!code) return make_error(code.error());
  return isa::own_mem_kernel(std::move(code->fn), code->info, code->width_bits, code->bytes_per_iteration,
                             code->array_step);
}

int X86Target::max_chase_chains() const { return kMaxChains; }

Expected<isa::ChaseCode> X86Target::compile_chase(int chains) const {
  auto code = x86::compile_chase(chains);
  if (!code) return make_error(code.error());
  return isa::own_chase(std::move(*code), kChaseUnroll);
}

isa::LibraryIsaLimit X86Target::library_isa_limit(const std::string& level) const {
  isa::LibraryIsaLimit limit;
  // amx (and no --isa) lets every library pick what it likes; at avx512 oneDNN is held below AMX (the
  // only library here with AMX kernels).
  if (level == "avx512") {
    limit.level = level;
    limit.onednn_max_isa = 0xe7;  // dnnl_cpu_isa_avx512_core_bf16 (with VNNI; oneDNN 2 and 3)
    limit.onednn_only = true;
    return limit;
  }
  if (level != "avx2") return limit;
  limit.level = level;
  limit.onednn_max_isa = 0x7;  // dnnl_cpu_isa_avx2 (the same value in oneDNN 2 and 3)
  limit.openblas_coretype = "Haswell";
  // BLIS's x86-64 configurations whose kernels stay within AVX2.
  limit.blis_configs = {"haswell", "zen", "zen2", "zen3", "sandybridge", "penryn", "excavator",
                        "steamroller", "piledriver", "bulldozer", "generic"};
  return limit;
}

// 0.3.21 (Debian 12) does not know family 6 model 207 (Emerald Rapids) and runs its Prescott (SSE3)
// kernels there: sgemm at 33 GFLOP/s on one core against 151-176 for its SkylakeX kernels. The core
// types named are those of its DYNAMIC_ARCH x86-64 list whose sgemm kernels need no more than these
// features.
isa::Target::OpenblasCores X86Target::openblas_cores(const CpuInfo& cpu) const {
  OpenblasCores cores;
  cores.fallback = "Prescott";
  if (cpu.has("avx512_f") && cpu.has("avx512_cdi") && cpu.has("avx512_bw") && cpu.has("avx512_dq") &&
      cpu.has("avx512_vl"))
    cores.for_features = "SkylakeX";
  else if (cpu.has("avx2") && cpu.has("fma"))
    cores.for_features = "Haswell";
  else if (cpu.has("avx"))
    cores.for_features = "Sandybridge";
  return cores;
}

}  // namespace peakprobe::x86

namespace peakprobe::isa {
const Target& host_target() {
  static const x86::X86Target target;
  return target;
}
void spin_pause() { _mm_pause(); }

void* map_low_pages(size_t bytes) {
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_32BIT, -1, 0);
  return p == MAP_FAILED ? nullptr : p;
}

}  // namespace peakprobe::isa
