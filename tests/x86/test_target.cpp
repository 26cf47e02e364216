// The x86 answers of the ISA seam (asm/target.hpp), checked against the literals the callers used
// before the seam: the roofline, dual-issue, report and matmul figures must not move with it.
#include <catch2/catch.hpp>

#include <algorithm>

#include "cpu_with.hpp"

#include "asm/target.hpp"
#include "asm/x86/inst_form.hpp"
#include "asm/x86/matmul_kernel.hpp"
#include "asm/x86/mem_kernels.hpp"
#include "asm/x86/target.hpp"
#include "catalog/catalog.hpp"
#include "cli/matmul_common.hpp"
#include "roofline/ceilings.hpp"

using namespace peakprobe;

namespace {
const CpuInfo kSse = test::cpu_with({"sse2"});
const CpuInfo kAvx = test::cpu_with({"sse2", "avx"});
const CpuInfo kZen3 = test::cpu_with({"sse2", "avx", "avx2", "fma"});
const CpuInfo kSpr = test::cpu_with({"sse2", "avx", "avx2", "fma", "avx512_f", "avx512_bf16", "avx512_vnni"});
}  // namespace

TEST_CASE("x86 target: it is the host's target", "[target]") {
  CHECK(isa::host_target().name() == "x86");
  CHECK(dynamic_cast<const x86::X86Target*>(&isa::host_target()) != nullptr);
}

TEST_CASE("x86 target: the matmul roof per dtype and vector width", "[target]") {
  const auto& t = isa::host_target();
  auto f32 = t.matmul_roof(kZen3, MatmulDtype::f32);
  CHECK(f32.instruction == "vfmadd231ps ymm, ymm, ymm");
  CHECK(f32.vector_bits == 256);
  CHECK(f32.ops == 16);
  CHECK(f32.dtype == "f32");
  f32 = t.matmul_roof(kSpr, MatmulDtype::f32);
  CHECK(f32.instruction == "vfmadd231ps zmm, zmm, zmm");
  CHECK(f32.ops == 32);
  const auto bf16 = t.matmul_roof(kSpr, MatmulDtype::bf16);
  CHECK(bf16.instruction == "vdpbf16ps zmm, zmm, zmm");
  CHECK(bf16.ops == 64);
  CHECK(bf16.dtype == "bf16");
  const auto i8 = t.matmul_roof(kSpr, MatmulDtype::i8);
  CHECK(i8.instruction == "vpdpbusd zmm, zmm, zmm");
  CHECK(i8.ops == 128);
  CHECK(i8.dtype == "i8");
  CHECK(t.gemm_vector_bits(kZen3) == 256);
  CHECK(t.gemm_vector_bits(kSpr) == 512);
}

TEST_CASE("x86 target: the FLOP pair falls back from FMA to multiply only when allowed", "[target]") {
  const auto& t = isa::host_target();
  auto p = t.flop_pair(kSpr, true);
  REQUIRE(p);
  CHECK(p->mul == "vfmadd231ps zmm, zmm, zmm");
  CHECK(p->add == "vaddps zmm, zmm, zmm");
  CHECK(p->fused);
  p = t.flop_pair(kZen3, true);
  REQUIRE(p);
  CHECK(p->mul == "vfmadd231ps ymm, ymm, ymm");
  CHECK_FALSE(t.flop_pair(kAvx, true));
  p = t.flop_pair(kAvx, false);
  REQUIRE(p);
  CHECK(p->mul == "vmulps ymm, ymm, ymm");
  CHECK_FALSE(p->fused);
  p = t.flop_pair(kSse, false);
  REQUIRE(p);
  CHECK(p->mul == "mulps xmm, xmm");
  CHECK(p->add == "addps xmm, xmm");
}

TEST_CASE("x86 target: the report's pair set follows the widest vector width", "[target]") {
  const auto& t = isa::host_target();
  CHECK(t.report_pair_set(kSpr) == "fp.zmm");
  CHECK(t.report_pair_set(kZen3) == "fp.ymm");
  CHECK(t.report_pair_set(kAvx) == "fp.xmm");
}

TEST_CASE("x86 target: instruction width from the operands", "[target][roofline]") {
  CHECK(isa_of_instruction("vfmadd231ps zmm, zmm, zmm") == "512");
  CHECK(isa_of_instruction("vaddpd ymm, ymm, m256") == "256");
  CHECK(isa_of_instruction("addps xmm, xmm") == "128");
  CHECK(isa_of_instruction("vfmadd231sd xmm, xmm, xmm") == "scalar");
  CHECK(isa_of_instruction("{vex} vpdpbusd xmm, xmm, xmm") == "128");
  CHECK(isa_of_instruction("imul r64, r64") == "scalar");
  CHECK(isa_of_instruction("vaddsh xmm, xmm, xmm") == "scalar");
  CHECK(isa_of_instruction("{evex} vfmadd231ss xmm, xmm, xmm") == "scalar");  // a FLOP pair's forced encoding
  CHECK(isa_of_instruction("{evex} vaddpd xmm, xmm, xmm") == "128");
  CHECK(isa_of_instruction("{evex} vfmadd231pd ymm, ymm, ymm") == "256");
  CHECK(isa_of_instruction("") == "scalar");
  CHECK(isa_of_instruction("tdpbf16ps tmm, tmm, tmm") == "amx");  // the matrix unit, not a scalar form
  CHECK(isa_of_instruction("tdpbusd tmm, tmm, tmm") == "amx");
}

TEST_CASE("x86 target: matmul kernel support, registers and width names", "[target]") {
  const auto& t = isa::host_target();
  CHECK(t.gemm_unsupported(kZen3, MatmulDtype::f32).empty());
  CHECK(t.gemm_unsupported(kSpr, MatmulDtype::bf16).empty());
  CHECK(t.gemm_unsupported(kSpr, MatmulDtype::i8).empty());
  CHECK(t.gemm_unsupported(kAvx, MatmulDtype::f32) == "the f32 kernels need avx512_f, or avx2 with fma");
  CHECK(t.gemm_unsupported(kAvx, MatmulDtype::bf16) == "the bf16 kernels need avx512_f, or avx2 with fma (bf16 widened to f32)");
  CHECK(t.gemm_unsupported(kAvx, MatmulDtype::i8) == "the int8 kernels need avx512_f or avx2");
  CHECK(t.gemm_unsupported(test::cpu_with({"avx512_f"}), MatmulDtype::i8) ==
        "the int8 kernels need avx512_vnni (vpdpbusd) or avx512_bw (vpmaddwd on zmm)");
  // Without a dot product at the GEMM's width, the elements are widened and the roof is what runs.
  CHECK(t.gemm_unsupported(kZen3, MatmulDtype::bf16).empty());
  CHECK(t.gemm_unsupported(kZen3, MatmulDtype::i8).empty());
  CHECK(t.gemm_widened(kZen3, MatmulDtype::bf16));
  CHECK(t.gemm_widened(kZen3, MatmulDtype::i8));
  CHECK_FALSE(t.gemm_widened(kZen3, MatmulDtype::f32));
  CHECK_FALSE(t.gemm_widened(kSpr, MatmulDtype::bf16));
  CHECK_FALSE(t.gemm_widened(kSpr, MatmulDtype::i8));
  CHECK(t.matmul_roof(kZen3, MatmulDtype::bf16).instruction == "vfmadd231ps ymm, ymm, ymm");
  CHECK(t.matmul_roof(kZen3, MatmulDtype::bf16).dtype == "f32");
  CHECK(t.matmul_roof(kZen3, MatmulDtype::i8).instruction == "vpmaddwd ymm, ymm, ymm");
  CHECK(t.matmul_roof(kZen3, MatmulDtype::i8).ops == 32);  // 8 lanes x 2 products x 2
  const CpuInfo skx = test::cpu_with({"avx512_f", "avx512_bw", "avx2", "fma"});
  CHECK(t.gemm_widened(skx, MatmulDtype::i8));
  CHECK(t.matmul_roof(skx, MatmulDtype::i8).instruction == "vpmaddwd zmm, zmm, zmm");
  CHECK(t.matmul_roof(skx, MatmulDtype::bf16).instruction == "vfmadd231ps zmm, zmm, zmm");
  CHECK(t.matmul_roof(kSpr, MatmulDtype::bf16).instruction == "vdpbf16ps zmm, zmm, zmm");
  CHECK(t.vector_registers(512) == 32);
  CHECK(t.vector_registers(256) == 16);
  CHECK(t.width_name(512) == "avx512");
  CHECK(t.width_name(256) == "avx2");
  CHECK(t.width_name(128) == "sse");
  CHECK(t.width_name(64) == "scalar");
}

TEST_CASE("x86 target: --isa avx2 takes every EVEX feature away and keeps the VEX ones", "[target]") {
  const auto& t = isa::host_target();
  CHECK(t.isa_levels() == std::vector<std::string>{"avx2", "avx512", "amx"});
  CpuInfo spr = kSpr;
  spr.features.insert(spr.features.end(), {"amx_tile", "amx_bf16", "avx_vnni", "avx10_1", "avx512_fp16"});
  auto held = t.limit_isa(spr, "avx2");
  REQUIRE(held);
  for (const auto& f : held->features) {
    INFO(f);
    CHECK(f.rfind("avx512", 0) != 0);
    CHECK(f.rfind("amx", 0) != 0);
    CHECK(f.rfind("avx10", 0) != 0);
  }
  CHECK(held->has("avx2"));
  CHECK(held->has("fma"));
  CHECK(held->has("avx_vnni"));
  // What the callers then decide follows the held CPU.
  CHECK(t.gemm_vector_bits(*held) == 256);
  CHECK(t.matmul_roof(*held, MatmulDtype::f32).instruction == "vfmadd231ps ymm, ymm, ymm");
  CHECK(t.gemm_unsupported(*held, MatmulDtype::bf16).empty());
  CHECK(t.gemm_widened(*held, MatmulDtype::bf16));
  // AVX-VNNI stays, and the 256-bit int8 kernels use it (its VEX vpdpbusd); without it they widen.
  CHECK_FALSE(t.gemm_widened(*held, MatmulDtype::i8));
  CHECK(t.matmul_roof(*held, MatmulDtype::i8).instruction == "{vex} vpdpbusd ymm, ymm, ymm");
  CHECK(t.matmul_roof(*held, MatmulDtype::i8).ops == 64);
  CpuInfo no_vnni = *held;
  std::erase(no_vnni.features, std::string("avx_vnni"));
  CHECK(t.gemm_widened(no_vnni, MatmulDtype::i8));
  CHECK(t.matmul_roof(no_vnni, MatmulDtype::i8).instruction == "vpmaddwd ymm, ymm, ymm");
  CHECK(t.report_pair_set(*held) == "fp.ymm");

  auto wide = t.limit_isa(kSpr, "avx512");
  REQUIRE(wide);
  CHECK(wide->features == kSpr.features);
  // avx512 takes AMX away (and only AMX); amx keeps everything and needs the tiles.
  auto vectors = t.limit_isa(spr, "avx512");
  REQUIRE(vectors);
  CHECK_FALSE(vectors->has("amx_tile"));
  CHECK_FALSE(vectors->has("amx_bf16"));
  CHECK(vectors->has("avx512_fp16"));
  CHECK(vectors->has("avx_vnni"));
  CHECK_FALSE(t.gemm_tiles(*vectors, MatmulDtype::bf16));
  auto tiles = t.limit_isa(spr, "amx");
  REQUIRE(tiles);
  CHECK(tiles->features == spr.features);
  auto no_tiles = t.limit_isa(kSpr, "amx");
  REQUIRE_FALSE(no_tiles);
  CHECK_THAT(no_tiles.error(), Catch::Contains("amx_tile"));
  auto none = t.limit_isa(kZen3, "avx512");
  REQUIRE_FALSE(none);
  CHECK_THAT(none.error(), Catch::Contains("avx512_f"));
  auto old = t.limit_isa(kAvx, "avx2");
  REQUIRE_FALSE(old);
  CHECK_THAT(old.error(), Catch::Contains("avx2 or fma"));
  auto unknown = t.limit_isa(kSpr, "sse9");
  REQUIRE_FALSE(unknown);
  CHECK_THAT(unknown.error(), Catch::Contains("one of avx2, avx512, amx"));
}

TEST_CASE("x86 target: the baseline libraries' switches per level", "[target]") {
  const auto& t = isa::host_target();
  const auto none = t.library_isa_limit("");
  CHECK(none.level.empty());
  CHECK(none.onednn_max_isa == 0);
  CHECK(none.openblas_coretype.empty());
  const auto avx2 = t.library_isa_limit("avx2");
  CHECK(avx2.level == "avx2");
  CHECK(avx2.onednn_max_isa != 0);
  CHECK_FALSE(avx2.openblas_coretype.empty());
  // Every BLIS configuration held within AVX2 is a name BLIS uses; the AVX-512 ones are not in it.
  for (const char* wide : {"skx", "knl", "zen4", "zen5"})
    CHECK(std::find(avx2.blis_configs.begin(), avx2.blis_configs.end(), wide) == avx2.blis_configs.end());
  CHECK(std::find(avx2.blis_configs.begin(), avx2.blis_configs.end(), "haswell") != avx2.blis_configs.end());
  CHECK_FALSE(avx2.onednn_only);
  // avx512 holds oneDNN below AMX (its bits a subset of what avx2 allows and more) and no other library.
  const auto vectors = t.library_isa_limit("avx512");
  CHECK(vectors.level == "avx512");
  CHECK(vectors.onednn_only);
  CHECK((vectors.onednn_max_isa & avx2.onednn_max_isa) == avx2.onednn_max_isa);
  // The widest level holds the libraries to nothing: every baseline runs as it would without --isa.
  const auto widest = t.library_isa_limit("amx");
  CHECK(widest.level.empty());
  CHECK(widest.onednn_max_isa == 0);
}

TEST_CASE("x86 target: bf16's dot product on zmm has the widened f32 kernels as an alternative, nothing else has", "[target]") {
  const auto& t = isa::host_target();
  const auto widened = t.gemm_widened_alternative(kSpr, MatmulDtype::bf16);
  REQUIRE(widened.has_value());
  // The CPU as the widened kernels see it: the same vector width, no bf16 dot product, the f32 FMA's roof.
  CHECK(t.gemm_widened(*widened, MatmulDtype::bf16));
  CHECK(t.gemm_vector_bits(*widened) == 512);
  CHECK(t.gemm_unsupported(*widened, MatmulDtype::bf16).empty());
  CHECK(t.matmul_roof(*widened, MatmulDtype::bf16).instruction == "vfmadd231ps zmm, zmm, zmm");
  CHECK(t.matmul_roof(kSpr, MatmulDtype::bf16).instruction == "vdpbf16ps zmm, zmm, zmm");
  // The other dtypes keep their kernels, and so does the rest of the CPU.
  CHECK_FALSE(t.gemm_widened(*widened, MatmulDtype::i8));
  CHECK(widened->features.size() + 1 == kSpr.features.size());
  CHECK_FALSE(t.gemm_widened_alternative(kSpr, MatmulDtype::f32).has_value());
  CHECK_FALSE(t.gemm_widened_alternative(kSpr, MatmulDtype::i8).has_value());
  // Already widened (no bf16 dot product, or 256 bits): no choice to make.
  CHECK_FALSE(t.gemm_widened_alternative(kZen3, MatmulDtype::bf16).has_value());
  CHECK_FALSE(t.gemm_widened_alternative(*t.limit_isa(kSpr, "avx2"), MatmulDtype::bf16).has_value());
  // On tiles: AMX takes bf16 as it is.
  CpuInfo amx = kSpr;
  amx.features.insert(amx.features.end(), {"amx_tile", "amx_bf16", "amx_int8"});
  CHECK_FALSE(t.gemm_widened_alternative(amx, MatmulDtype::bf16).has_value());
}

TEST_CASE("x86 target: OpenBLAS's fallback core and the core type this CPU's features run", "[target]") {
  const auto& t = isa::host_target();
  const CpuInfo skylake_x =
      test::cpu_with({"sse2", "avx", "avx2", "fma", "avx512_f", "avx512_cdi", "avx512_bw", "avx512_dq", "avx512_vl"});
  CHECK(t.openblas_cores(skylake_x).fallback == "Prescott");
  CHECK(t.openblas_cores(skylake_x).for_features == "SkylakeX");
  CHECK(t.openblas_cores(kZen3).for_features == "Haswell");
  CHECK(t.openblas_cores(*t.limit_isa(skylake_x, "avx2")).for_features == "Haswell");
  CHECK(t.openblas_cores(test::cpu_with({"sse2", "avx"})).for_features == "Sandybridge");
  CHECK(t.openblas_cores(test::cpu_with({"sse2"})).for_features.empty());
  // AVX-512F alone (no BW, DQ, VL) is not what the SkylakeX kernels need.
  CHECK(t.openblas_cores(test::cpu_with({"sse2", "avx", "avx2", "fma", "avx512_f"})).for_features == "Haswell");
}

TEST_CASE("x86 target: --widen follows bf16's choice where it has one and refuses what a CPU cannot do", "[target]") {
  using peakprobe::cli::widen_problem;
  using peakprobe::cli::WidenChoice;
  // Sapphire Rapids: bf16 has both paths on zmm; int8 runs on vpdpbusd and has no widened form here.
  CHECK(widen_problem(kSpr, MatmulDtype::bf16, WidenChoice::yes).empty());
  CHECK(widen_problem(kSpr, MatmulDtype::bf16, WidenChoice::no).empty());
  CHECK_THAT(widen_problem(kSpr, MatmulDtype::i8, WidenChoice::yes), Catch::Contains("they run on its dot product"));
  CHECK(widen_problem(kSpr, MatmulDtype::i8, WidenChoice::no).empty());
  // At 256 bits bf16 has no dot product: it widens already, so yes holds and no is refused.
  const CpuInfo avx2 = *isa::host_target().limit_isa(kSpr, "avx2");
  CHECK(widen_problem(avx2, MatmulDtype::bf16, WidenChoice::yes).empty());
  CHECK_THAT(widen_problem(avx2, MatmulDtype::bf16, WidenChoice::no), Catch::Contains("they must widen"));
  // Zen 3: no AVX-512, no VNNI: int8 widens too.
  CHECK_THAT(widen_problem(kZen3, MatmulDtype::i8, WidenChoice::no), Catch::Contains("no int8 dot product"));
  CHECK(widen_problem(kZen3, MatmulDtype::i8, WidenChoice::yes).empty());
  for (const CpuInfo* c : {&kSpr, &avx2, &kZen3})
    for (MatmulDtype d : {MatmulDtype::f32, MatmulDtype::bf16, MatmulDtype::i8})
      CHECK(widen_problem(*c, d, WidenChoice::automatic).empty());
}

TEST_CASE("x86 target: bf16 and int8 run on AMX tiles where the CPU and the OS grant them", "[target]") {
  const auto& t = isa::host_target();
  CpuInfo amx = kSpr;
  amx.features.insert(amx.features.end(), {"amx_tile", "amx_bf16", "amx_int8"});
  CHECK(t.gemm_tiles(amx, MatmulDtype::bf16));
  CHECK(t.gemm_tiles(amx, MatmulDtype::i8));
  CHECK_FALSE(t.gemm_tiles(amx, MatmulDtype::f32));
  CHECK_FALSE(t.gemm_tiles(kSpr, MatmulDtype::bf16));  // no tiles (or not granted: not in features)
  CpuInfo bf16_only = kSpr;
  bf16_only.features.insert(bf16_only.features.end(), {"amx_tile", "amx_bf16"});
  CHECK_FALSE(t.gemm_tiles(bf16_only, MatmulDtype::i8));
  const auto bf16 = t.matmul_roof(amx, MatmulDtype::bf16);
  CHECK(bf16.instruction == "tdpbf16ps tmm, tmm, tmm");
  CHECK(bf16.tiles);
  CHECK(bf16.ops == 2.0 * 16 * 16 * 32);
  const auto i8 = t.matmul_roof(amx, MatmulDtype::i8);
  CHECK(i8.instruction == "tdpbusd tmm, tmm, tmm");
  CHECK(i8.ops == 2.0 * 16 * 16 * 64);
  // The roofs agree with the catalog's operations per instruction.
  CHECK(t.arithmetic(bf16.instruction)->ops == bf16.ops);
  CHECK(t.arithmetic(i8.instruction)->ops == i8.ops);
  // A tile block: C, A and B tiles within the eight; vector registers not needed.
  isa::MicroKernelShape s{32, 2, 512, MatmulDtype::bf16};
  s.tiles = true;
  CHECK(t.check_kernel_shape(s, 32).empty());
  CHECK(t.registers_needed(s) == 0);
  CHECK(s.step_block() == 16);
  s.mr = 48;  // 6 C tiles + 3 A + 2 B
  CHECK_THAT(t.check_kernel_shape(s, 32), Catch::Contains("needs 11 tiles"));
  s.mr = 24;
  CHECK_THAT(t.check_kernel_shape(s, 32), Catch::Contains("multiple of 16"));
  s.mr = 32;
  s.dtype = MatmulDtype::f32;
  CHECK_FALSE(t.check_kernel_shape(s, 32).empty());
}

TEST_CASE("x86 target: the cost model's width and the micro-kernels through the seam", "[target]") {
  const auto& t = isa::host_target();
  CHECK(t.model_vector_bits(kSpr) == 512);
  CHECK(t.model_vector_bits(kZen3) == 256);
  CHECK(t.model_vector_bits(kAvx) == 128);  // no AVX2: planned as SSE, xmm0..15
  CHECK(t.model_vector_bits(kSse) == 128);
  // One broadcast register for A, nv for B, mr x nv accumulators; widened int8 one more for the
  // product before it is added.
  CHECK(t.registers_needed({6, 4, 512, MatmulDtype::f32}) == 29);
  CHECK(t.registers_needed({14, 2, 512, MatmulDtype::f32}) == 31);
  CHECK(t.registers_needed({6, 2, 256, MatmulDtype::i8, false, false, true}) == 16);
  CHECK(t.registers_needed({6, 2, 256, MatmulDtype::bf16, false, false, true}) == 15);
  const isa::MicroKernelShape fits{6, 4, 512, MatmulDtype::f32, false};
  const isa::MicroKernelShape too_big{7, 4, 512, MatmulDtype::f32, false};
  CHECK(t.check_kernel_shape(fits, 32).empty());
  CHECK(t.check_kernel_shape(too_big, 32) == x86::check_shape(too_big, 32));
  CHECK_FALSE(t.check_kernel_shape(too_big, 32).empty());
  auto kernels = t.micro_kernels(isa::MicroKernelShape{4, 2, 256, MatmulDtype::f32, false});
  REQUIRE(kernels);
  CHECK(kernels->shape().mr == 4);
  CHECK(kernels->shape().nr() == 16);
  CHECK_FALSE(kernels->get(5, 1).ok());  // outside the 4 x 16 block
}

TEST_CASE("x86 target: memory kernels through the seam: widths, steps, chases", "[target]") {
  const auto& t = isa::host_target();
  CHECK(t.vector_widths() == std::vector<int>{64, 128, 256, 512});
  CHECK(t.mem_widths(kSse) == std::vector<int>{64, 128});
  CHECK(t.mem_widths(kZen3) == std::vector<int>{64, 128, 256});
  CHECK(t.mem_widths(kSpr) == std::vector<int>{64, 128, 256, 512});
  CHECK(t.mem_width_unsupported(512) == "512-bit kernels need avx512_f");
  CHECK(t.mem_width_unsupported(256) == "256-bit kernels need avx2 and fma");
  CHECK(t.mem_max_step_bytes() == uint64_t(x86::kMemUnroll) * 64);
  CHECK(t.max_chase_chains() == x86::kMaxChains);

  // A kernel handed out through the seam is the ISA's own, and runs: one pass of load over 4 steps.
  auto load = t.compile_mem_kernel(isa::MemKernel::load, 128, kSse);
  REQUIRE(load);
  CHECK(load->info.kernel == isa::MemKernel::load);
  CHECK(load->array_step == 16u * x86::kMemUnroll);
  CHECK(load->bytes_per_iteration == load->array_step);
  std::vector<uint8_t> a(size_t(load->array_step * 4), 1);
  load->fn(1, 4, a.data(), nullptr, nullptr);
  CHECK_FALSE(t.compile_mem_kernel(isa::MemKernel::load, 96, kSse).ok());

  // A chase of one chain over a 2-line cycle ends where it started after an even number of links.
  auto chase = t.compile_chase(1);
  REQUIRE(chase);
  CHECK(chase->unroll == x86::kChaseUnroll);
  alignas(64) void* lines[16] = {};
  lines[0] = &lines[8];
  lines[8] = &lines[0];
  void* starts[1] = {&lines[0]};
  chase->fn(1, starts);
  CHECK(starts[0] == (x86::kChaseUnroll % 2 == 0 ? static_cast<void*>(&lines[0]) : static_cast<void*>(&lines[8])));
  CHECK_FALSE(t.compile_chase(t.max_chase_chains() + 1).ok());
}

TEST_CASE("x86 target: forms resolved for the catalog and the command line, immediates checked", "[target]") {
  const auto& t = isa::host_target();
  auto f = t.resolve("VFMADD231PS  ymm,ymm , ymm");
  REQUIRE(f);
  CHECK(f->display == x86::resolve_inst("vfmadd231ps ymm, ymm, ymm")->display);
  CHECK(f->mnemonic == "vfmadd231ps");
  CHECK(std::find(f->features.begin(), f->features.end(), "fma") != f->features.end());
  auto bad = t.resolve("vfmadd231pz ymm, ymm, ymm");
  REQUIRE_FALSE(bad);
  CHECK_THAT(bad.error(), Catch::Contains("vfmadd231p"));  // the nearest names
  CHECK(t.check_immediate("add r64, imm8", 127).empty());
  CHECK_THAT(t.check_immediate("add r64, imm8", 300), Catch::Contains("imm8, from -128 to 255"));
  // A 64-bit operation sign-extends its imm32.
  CHECK_THAT(t.check_immediate("add r64, imm32", 0xffffffffLL), Catch::Contains("to 2147483647"));
  CHECK(t.check_immediate("add r32, imm32", 0xffffffffLL).empty());
  CHECK(t.check_immediate("add r64, r64", 1 << 20).empty());  // no immediate: nothing to fit
  const auto rf = t.ruler_forms();
  CHECK(t.resolve(rf.one_cycle).ok());
  CHECK(t.resolve(rf.multi_cycle).ok());
}

TEST_CASE("x86 target: the help's examples are forms and sets this build knows", "[target]") {
  const auto& t = isa::host_target();
  const auto h = t.help_texts();
  CHECK(t.resolve(h.example_form).ok());
  // Every quoted form of the examples resolves (a mix part's ":WEIGHT" removed).
  for (const std::string& text : {h.inst_examples, h.mix_example, h.pair_example, h.pairs_example}) {
    size_t at = 0;
    int forms = 0;
    while ((at = text.find('"', at)) != std::string::npos) {
      const size_t end = text.find('"', at + 1);
      REQUIRE(end != std::string::npos);
      std::string form = text.substr(at + 1, end - at - 1);
      if (const auto colon = form.rfind(':'); colon != std::string::npos) form = form.substr(0, colon);
      INFO(form);
      CHECK(t.resolve(form).ok());
      ++forms;
      at = end + 1;
    }
    CHECK(forms >= 1);
  }
  CHECK_FALSE(h.operand_kinds.empty());
  CHECK(h.operand_kinds.back() == '\n');
  CHECK_FALSE(h.pairs_set.empty());
}

TEST_CASE("x86 target: operations per instruction from the mnemonic agree with the catalog's convention", "[target]") {
  const isa::Target& t = isa::host_target();
  auto ops = [&](const char* text) {
    auto a = t.arithmetic(text);
    return a ? a->ops : -1.0;
  };
  CHECK(ops("vfmadd231ps zmm, zmm, zmm") == 32);
  CHECK(ops("vfmadd231ps xmm, xmm, m32bcst") == 8);
  CHECK(ops("vfnmsub132pd ymm, ymm, ymm") == 8);
  CHECK(ops("vfmaddsub213ps ymm, ymm, ymm") == 16);
  CHECK(ops("vfmadd231sd xmm, xmm, xmm") == 2);
  CHECK(ops("addps xmm, xmm") == 4);
  CHECK(ops("vaddps ymm, ymm, m256") == 8);
  CHECK(ops("vsqrtpd zmm, zmm") == 8);
  CHECK(ops("vmulsh xmm, xmm, xmm") == 1);
  CHECK(ops("vmaxph zmm, zmm, zmm") == 32);
  CHECK(ops("vdpbf16ps zmm, zmm, zmm") == 64);
  CHECK(ops("vpdpbusd ymm, ymm, ymm") == 64);
  CHECK(ops("vpdpwssd xmm, xmm, xmm") == 16);
  // Packed integers: one op per lane, 2 per element product of the multiply-adds.
  CHECK(ops("vpaddb zmm, zmm, zmm") == 64);
  CHECK(ops("paddusw xmm, xmm") == 8);
  CHECK(ops("vpsubq ymm, ymm, m256") == 4);
  CHECK(ops("vpminud zmm, zmm, m32bcst") == 16);
  CHECK(ops("vpcmpub k, zmm, zmm, imm8") == 64);
  CHECK(ops("vpsravw zmm, zmm, zmm") == 32);
  CHECK(ops("vprolq zmm, zmm, imm8") == 8);
  CHECK(ops("vpmulhrsw ymm, ymm, ymm") == 16);
  CHECK(ops("pmuludq xmm, xmm") == 2);
  CHECK(ops("vpmaddwd zmm, zmm, zmm") == 64);
  CHECK(ops("pmaddubsw xmm, xmm") == 32);
  CHECK(ops("vpmadd52huq ymm, ymm, ymm") == 8);
  CHECK(t.arithmetic("vpmaxub ymm, ymm, ymm")->dtype == "i8");
  CHECK(t.arithmetic("vpmuldq ymm, ymm, ymm")->dtype == "i32");
  CHECK(t.arithmetic("vaddpd zmm, zmm, zmm")->dtype == "f64");
  CHECK(t.arithmetic("vdpbf16ps zmm, zmm, zmm")->dtype == "bf16");
  // No arithmetic this rule knows: moves, logic, shuffles, scalar integer forms.
  for (const char* none : {"vmovups ymm, m256", "vandps ymm, ymm, ymm", "vshufps ymm, ymm, ymm, imm8", "add r64, r64",
                           "vblendps ymm, ymm, ymm, imm8", "vpand ymm, ymm, ymm", "vpshufb zmm, zmm, zmm",
                           "pslldq xmm, imm8", "vpcmpestri xmm, xmm, imm8", "ptest xmm, xmm", "no such form"}) {
    INFO(none);
    CHECK_FALSE(t.arithmetic(none).has_value());
  }
  // Every catalog row the rule knows says the same (the rule only fills rows the catalog lacks).
  auto catalog = default_catalog();
  REQUIRE(catalog.ok());
  int compared = 0;
  for (const auto& row : *catalog) {
    auto a = t.arithmetic(row.text);
    if (!a) continue;
    INFO(row.text << " (" << row.origin << ")");
    CHECK(a->ops == row.ops_per_instruction);
    CHECK(a->dtype == row.dtype);
    ++compared;
  }
  CHECK(compared >= 50);
}

TEST_CASE("target: every matrix group is a group of the catalog", "[target]") {
  auto catalog = default_catalog();
  REQUIRE(catalog.ok());
  const auto groups = isa::host_target().matrix_groups();
  REQUIRE_FALSE(groups.empty());
  for (const auto& g : groups) {
    INFO(g);
    CHECK(std::any_of(catalog->begin(), catalog->end(), [&](const ProbeSpec& s) { return s.group == g; }));
  }
}
