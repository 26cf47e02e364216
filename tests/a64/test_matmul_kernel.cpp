// The AArch64 micro-kernels compute C (+)= A x B exactly: every dtype the CPU runs, full and edge
// tiles, packed and in-place A, in-place B (which leaves the packed panel behind), both the store and
// the accumulate epilogue, against a plain loop.
#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <regex>
#include <set>
#include <sstream>
#include <vector>

#include "asm/a64/matmul_kernel.hpp"
#include "asm/target.hpp"
#include "kernel_step_check.hpp"
#include "cpu/cpu_info.hpp"

using namespace peakprobe;
using isa::MicroKernelShape;

namespace {

uint16_t to_bf16(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return uint16_t(u >> 16);  // small integers are exact in bf16
}

// Runs one kernel of `shape` on a rows x cols tile over k_steps, twice (store, then accumulate),
// and compares with the plain product (exact: small integers).
void check_tile(const MicroKernelShape& s, int rows, int cols, int k_steps) {
  INFO(to_string(s.dtype) << " " << s.mr << "x" << s.nv << " tile " << rows << "x" << cols << " k " << k_steps
                          << (s.a_direct ? " in place" : " packed") << (s.signed_a ? " signed A" : "")
                          << (s.b_direct ? " B in place" : ""));
  const int g = s.k_group(), nr = s.nr(), k = k_steps * g;
  // A[i][kk], B[kk][j] small integers (int8: the whole u8 and s8 ranges); packed panels as
  // src/matmul/packing.cpp lays them out, with signed_a's shifted A and column-sum row.
  const bool i8 = s.dtype == MatmulDtype::i8;
  auto a_val = [i8](int i, int kk) { return i8 ? (i * 37 + kk * 11 + 100) % 256 : (i * 3 + kk) % 5 + 1; };
  auto b_val = [i8](int kk, int j) { return i8 ? (kk * 29 + j * 13) % 256 - 128 : (kk * 2 + j) % 7 - 3; };
  std::vector<uint32_t> a_panel(size_t(k_steps * s.mr)), b_panel(size_t((k_steps + (s.signed_a ? 1 : 0)) * nr));
  const int lda_words = k_steps + 3;
  std::vector<uint32_t> a_rows(size_t(s.mr * lda_words));
  auto pack_word = [&](auto value_of, int count) {
    uint32_t w = 0;
    for (int e = 0; e < count; ++e) {
      const int v = value_of(e);
      if (s.dtype == MatmulDtype::f32) {
        float f = float(v);
        std::memcpy(&w, &f, 4);
      } else if (s.dtype == MatmulDtype::bf16) {
        w |= uint32_t(to_bf16(float(v))) << (16 * e);
      } else {
        w |= uint32_t(uint8_t(int8_t(v))) << (8 * e);
      }
    }
    return w;
  };
  for (int st = 0; st < k_steps; ++st) {
    for (int i = 0; i < s.mr; ++i) {
      const uint32_t w = i < rows ? pack_word([&](int e) { return a_val(i, st * g + e); }, g) : 0;
      a_panel[size_t(st * s.mr + i)] = s.signed_a && i < rows ? w ^ 0x80808080u : w;
      a_rows[size_t(i * lda_words + st)] = w;
    }
    for (int j = 0; j < nr; ++j)
      b_panel[size_t(st * nr + j)] = j < cols ? pack_word([&](int e) { return b_val(st * g + e, j); }, g) : 0;
  }
  if (s.signed_a)
    for (int j = 0; j < cols; ++j) {
      int32_t sum = 0;
      for (int kk = 0; kk < k; ++kk) sum += b_val(kk, j);
      b_panel[size_t(k_steps * nr + j)] = uint32_t(128 * sum);
    }
  // In-place B: B's rows ldb_words apart (the packed panel's rows with a gap), and the panel the
  // kernel packs from them on the way.
  const int ldb_words = nr + 3;
  std::vector<uint32_t> b_rows(size_t(std::max(1, k_steps) * ldb_words), 0xBADBAD), b_out(b_panel.size(), 0);
  for (int st = 0; st < k_steps; ++st)
    for (int j = 0; j < nr; ++j) b_rows[size_t(st * ldb_words + j)] = b_panel[size_t(st * nr + j)];
  const void* b = s.b_direct ? static_cast<const void*>(b_rows.data()) : b_panel.data();
  const int ldc = nr + 5;
  std::vector<uint32_t> c(size_t(s.mr * ldc), 0xDEADBEEF);
  a64::MicroKernels kernels(s);
  auto fn = kernels.get(rows, cols);
  REQUIRE(fn.ok());
  const void* a = s.a_direct ? static_cast<const void*>(a_rows.data()) : a_panel.data();
  const uint64_t ldb_bytes = uint64_t(ldb_words) * 4;
  (*fn)(uint64_t(k_steps), a, b, c.data(), uint64_t(ldc) * 4, 0, uint64_t(lda_words) * 4, ldb_bytes, b_out.data(), 1);
  (*fn)(uint64_t(k_steps), a, b, c.data(), uint64_t(ldc) * 4, 1, uint64_t(lda_words) * 4, ldb_bytes, b_out.data(), 1);
  if (s.b_direct)
    for (int w = 0; w < k_steps * nr; ++w) CHECK(b_out[size_t(w)] == b_panel[size_t(w)]);
  for (int i = 0; i < s.mr; ++i)
    for (int j = 0; j < ldc; ++j) {
      const uint32_t got = c[size_t(i * ldc + j)];
      if (i >= rows || j >= cols) {
        CHECK(got == 0xDEADBEEF);  // outside the tile: never written
        continue;
      }
      int64_t want = 0;
      for (int kk = 0; kk < k; ++kk) want += int64_t(a_val(i, kk)) * b_val(kk, j);
      want *= 2;
      if (i8) {
        CHECK(int32_t(got) == want);
      } else {
        float f;
        std::memcpy(&f, &got, 4);
        CHECK(f == float(want));
      }
    }
}

// A full tile, an edge tile (fewer rows, a partial last vector), 1x1, and k = 0 (C becomes zero,
// then stays).
void check_tiles(const MicroKernelShape& s) {
  REQUIRE(a64::check_shape(s, 32).empty());
  check_tile(s, s.mr, s.nr(), 5);
  check_tile(s, std::max(1, s.mr - 2), s.nr() - 1, 3);
  check_tile(s, 1, 1, 1);
  check_tile(s, s.mr, s.nr(), 0);
  // Whole unrolled iterations alone, and with a tail (a64::kKernelUnroll steps an iteration).
  check_tile(s, s.mr, s.nr(), 2 * a64::kKernelUnroll);
  check_tile(s, std::max(1, s.mr - 1), s.nr(), 2 * a64::kKernelUnroll + 1);
}

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t pos = 0; (pos = text.find(what, pos)) != std::string::npos; pos += what.size()) ++n;
  return n;
}

}  // namespace

TEST_CASE("a64 matmul kernel: every dtype, full and edge tiles, packed and in-place A", "[a64][matmul_kernel]") {
  const CpuInfo cpu = detect_cpu_info();
  for (MatmulDtype dt : {MatmulDtype::f32, MatmulDtype::bf16, MatmulDtype::i8}) {
    if (!isa::host_target().gemm_unsupported(cpu, dt).empty()) continue;
    for (auto [mr, nv] : {std::pair{8, 3}, std::pair{6, 4}, std::pair{7, 2}, std::pair{1, 1}}) {
      check_tiles(MicroKernelShape{mr, nv, 128, dt, false, isa::host_target().gemm_signed_a(cpu, dt)});
    }
  }
  // int8 by sdot, as on cores without i8mm: checked wherever the CPU has the dot product.
  if (cpu.has("asimddp"))
    for (auto [mr, nv] : {std::pair{8, 3}, std::pair{6, 4}, std::pair{7, 2}, std::pair{1, 1}})
      check_tiles(MicroKernelShape{mr, nv, 128, MatmulDtype::i8, false, true});
  // In-place A: every dtype whose A is packed as it is (a word a row and k group), up to the
  // tallest block the kernels keep row pointers for.
  for (MatmulDtype dt : {MatmulDtype::f32, MatmulDtype::bf16, MatmulDtype::i8}) {
    if (!isa::host_target().gemm_unsupported(cpu, dt).empty() || isa::host_target().gemm_signed_a(cpu, dt)) continue;
    INFO(to_string(dt) << " A in place");
    const MicroKernelShape direct{a64::kAInPlaceRows, 4, 128, dt, true};
    REQUIRE(a64::check_shape(direct, 32).empty());
    check_tile(direct, a64::kAInPlaceRows, 16, 4);
    check_tile(direct, a64::kAInPlaceRows - 1, 11, 2);
    check_tile(direct, a64::kAInPlaceRows, 16, 2 * a64::kKernelUnroll + 3);
    check_tile(direct, a64::kAInPlaceRows - 1, 11, 2 * a64::kKernelUnroll + 1);
  }
  // B in place (f32, whole-width tiles), with A packed or in place.
  for (bool a_in_place : {false, true})
    for (auto [mr, nv] : {std::pair{6, 4}, std::pair{4, 3}, std::pair{1, 1}}) {
      MicroKernelShape s{mr, nv, 128, MatmulDtype::f32, a_in_place};
      s.b_direct = true;
      REQUIRE(a64::check_shape(s, 32).empty());
      check_tile(s, mr, s.nr(), 5);
      check_tile(s, std::max(1, mr - 1), s.nr(), 3);
      check_tile(s, mr, s.nr(), 0);
    }
}

TEST_CASE("a64 matmul kernel: shapes outside the register file or the ISA are refused", "[a64][matmul_kernel]") {
  CHECK(a64::registers_needed(8, 3) == 29);
  CHECK_THAT(a64::check_shape(MicroKernelShape{8, 4, 128, MatmulDtype::f32}, 32), Catch::Contains("38"));
  CHECK_THAT(a64::check_shape(MicroKernelShape{6, 4, 256, MatmulDtype::f32}, 32), Catch::Contains("128"));
  // In place, A of any dtype packed as it is, up to the rows the kernels keep pointers for; not int8
  // A shifted by 128.
  CHECK(a64::check_shape(MicroKernelShape{6, 4, 128, MatmulDtype::bf16, true}, 32).empty());
  CHECK_THAT(a64::check_shape(MicroKernelShape{a64::kAInPlaceRows + 1, 2, 128, MatmulDtype::f32, true}, 32),
             Catch::Contains("row pointers"));
  CHECK_THAT(a64::check_shape(MicroKernelShape{6, 4, 128, MatmulDtype::i8, true, true}, 32),
             Catch::Contains("shifted"));
  CHECK_FALSE(a64::check_shape(MicroKernelShape{6, 4, 128, MatmulDtype::f32, false, true}, 32).empty());
  auto sdot = a64::micro_kernel_listing(MicroKernelShape{8, 3, 128, MatmulDtype::i8, false, true}, 8, 12);
  REQUIRE(sdot.ok());
  CHECK(sdot->find("sudot") == std::string::npos);
  CHECK(sdot->find("sdot") != std::string::npos);
  CHECK_FALSE(a64::micro_kernel_listing(MicroKernelShape{6, 4, 128, MatmulDtype::f32}, 7, 16).ok());
  CHECK_FALSE(a64::micro_kernel_listing(MicroKernelShape{6, 4, 128, MatmulDtype::f32}, 6, 17).ok());
  MicroKernelShape b_in_place{6, 4, 128, MatmulDtype::f32};
  b_in_place.b_direct = true;
  CHECK(a64::micro_kernel_listing(b_in_place, 6, 16).ok());
  CHECK_FALSE(a64::micro_kernel_listing(b_in_place, 6, 15).ok());  // an edge panel is packed ahead
  CHECK_FALSE(isa::host_target().b_in_place_edges(b_in_place));      // and the GEMM is told so
  b_in_place.dtype = MatmulDtype::bf16;
  CHECK_THAT(a64::check_shape(b_in_place, 32), Catch::Contains("in-place B"));
}

// The k loop takes kKernelUnroll steps an iteration where B is packed, each reading its operands at
// its own displacement, the pointers moved once; a tail loop of one step takes the rest. In-place B
// keeps one step an iteration.
TEST_CASE("a64 matmul kernel: the k loop runs kKernelUnroll steps an iteration, each at its own displacement",
          "[a64][matmul_kernel]") {
  constexpr int kUnroll = a64::kKernelUnroll;
  auto text = a64::micro_kernel_listing(MicroKernelShape{8, 3, 128, MatmulDtype::f32}, 8, 12);
  REQUIRE(text.ok());
  INFO(*text);
  // 8 rows x 3 vectors, one per accumulator per k step: kUnroll steps in the loop, one in the tail.
  CHECK(count(*text, "fmla") == 24u * (kUnroll + 1));
  // Step u: packed A's two registers of rows at 32 u and 32 u + 16 bytes on x1, packed B's three
  // vectors at 48 u (a pair) and 48 u + 32 on x2. Step 0's twice: the tail's too.
  for (int u = 0; u < kUnroll; ++u) {
    INFO("step " << u);
    const size_t copies = u == 0 ? 2 : 1;
    const auto at = [](const char* reg, int off) {
      return off ? fmt::format("[{}, {}]", reg, off) : fmt::format("[{}]", reg);
    };
    CHECK(count(*text, at("x1", 32 * u)) == copies);
    CHECK(count(*text, at("x1", 32 * u + 16)) == copies);
    CHECK(count(*text, at("x2", 48 * u + 32)) == copies);
  }
  CHECK(count(*text, fmt::format("add x1, x1, {}", 32 * kUnroll)) == 1);
  CHECK(count(*text, fmt::format("add x2, x2, {}", 48 * kUnroll)) == 1);
  CHECK(count(*text, "add x1, x1, 32") == 1);
  CHECK(count(*text, "add x2, x2, 48") == 1);
  CHECK(count(*text, fmt::format("lsr x0, x0, {}", a64::kKernelUnrollShift)) == 1);
  // Every block the register file holds compiles, whatever its A step: a load's offset out of its
  // encodable range (19 x 1: 292 bytes at step 3) takes its address in a register first.
  for (MatmulDtype dt : {MatmulDtype::f32, MatmulDtype::bf16, MatmulDtype::i8})
    for (bool signed_a : {false, true})
      for (int nv = 1; nv <= 4; ++nv)
        for (int mr = 1; mr <= 32; ++mr) {
          const MicroKernelShape s{mr, nv, 128, dt, false, signed_a};
          if (!a64::check_shape(s, 32).empty()) continue;
          INFO(to_string(dt) << (signed_a ? " signed A " : " ") << mr << "x" << nv);
          CHECK(a64::micro_kernel_listing(s, mr, s.nr()).ok());
          CHECK(a64::micro_kernel_listing(s, std::max(1, mr - 1), s.nr() - 1).ok());
        }
  // In-place B: one step an iteration.
  MicroKernelShape b_in_place{6, 4, 128, MatmulDtype::f32};
  b_in_place.b_direct = true;
  auto one_step = a64::micro_kernel_listing(b_in_place, 6, 16);
  REQUIRE(one_step.ok());
  CHECK(count(*one_step, "fmla") == 24u);
  CHECK(count(*one_step, "lsr") == 0u);
}

namespace {

// The first unrolled iteration of a kernel's k loop (the lines after its label up to the packed
// pointers' adds), each line spelled as a catalog form: registers by kind, a memory operand as
// [x], a lane as [1], an immediate as #imm. A one-word lane load is the load and the lane insert
// kernel_step stands it for, a post-indexed load the load and its pointer's add.
std::multiset<std::string> loop_forms(const std::string& listing) {
  std::multiset<std::string> forms;
  std::istringstream in(listing);
  bool in_loop = false, aligned = false;
  const std::regex post_indexed(R"(\], \d+$)"), end_of_step(R"(^(add x[12], x[12], |subs |b\.))");
  for (std::string line; std::getline(in, line);) {
    if (!in_loop) {
      if (line.rfind("align", 0) == 0) aligned = true;
      else if (aligned && !line.empty() && line.back() == ':') in_loop = true;
      continue;
    }
    if (line.empty() || line.back() == ':' || std::regex_search(line, end_of_step)) break;
    if (std::regex_search(line, post_indexed)) forms.insert("add x, x, #imm");
    if (line.rfind("ld1 ", 0) == 0) {
      forms.insert("ldr s, [x]");
      forms.insert("ins v.s[1], v.s[0]");
      continue;
    }
    if (line.rfind("ldur ", 0) == 0) line = "ldr " + line.substr(5);
    line = std::regex_replace(line, std::regex(R"(\[x\d+(, \d+)?\](, \d+)?)"), "[x]");
    line = std::regex_replace(line, std::regex(R"(\b([qdsvxw])\d+\b)"), "$1");
    line = std::regex_replace(line, std::regex(R"(\.(\d?[bhsd])\[\d+\])"), ".$1[1]");
    // asmjit's logger cannot name the by-element operand of the dot products: a pair of bf16 lanes
    // (bfdot, .2h[i]) or four bytes (sdot and sudot, .4b[i]).
    line = std::regex_replace(line, std::regex(R"(\.<Unknown>)"), line.rfind("bfdot", 0) == 0 ? ".2h[1]" : ".4b[1]");
    line = std::regex_replace(line, std::regex(R"(, \d+$)"), ", #imm");
    forms.insert(line);
  }
  return forms;
}

}  // namespace

// kernel_step is what `matmul` measures as the loop's own ceiling: it must be the loop's code, each
// instruction spelled as the target resolves it.
TEST_CASE("a64 matmul kernel: kernel_step names the instructions of the generated k step", "[a64][matmul_kernel]") {
  std::vector<MicroKernelShape> shapes;
  for (MatmulDtype dt : {MatmulDtype::f32, MatmulDtype::bf16, MatmulDtype::i8})
    for (bool signed_a : {false, true})
      for (auto [mr, nv] : {std::pair{8, 3}, std::pair{6, 4}, std::pair{7, 2}, std::pair{5, 1}})
        if (!signed_a || dt == MatmulDtype::i8) shapes.push_back({mr, nv, 128, dt, false, signed_a});
  MicroKernelShape a_in_place{6, 4, 128, MatmulDtype::f32, true};
  MicroKernelShape b_in_place{6, 4, 128, MatmulDtype::f32};
  b_in_place.b_direct = true;
  shapes.push_back(a_in_place);
  shapes.push_back(MicroKernelShape{5, 4, 128, MatmulDtype::bf16, true});
  shapes.push_back(b_in_place);
  for (const MicroKernelShape& s : shapes) {
    INFO(to_string(s.dtype) << " " << s.mr << "x" << s.nv << (s.signed_a ? " signed A" : "")
                            << (s.a_direct ? " A in place" : "") << (s.b_direct ? " B in place" : ""));
    if (!a64::check_shape(s, 32).empty()) continue;
    test::check_loop_is_step(s, a64::micro_kernel_listing(s, s.mr, s.nr()), a64::kKernelUnroll, loop_forms);
  }
  CHECK(isa::host_target().kernel_step(MicroKernelShape{2, 2, 512, MatmulDtype::bf16, false, false, false, true}).empty());
}
