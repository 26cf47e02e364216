// The generated micro-kernels, read as code: one dot instruction per accumulator per k step, into
// rows x vectors distinct accumulators fed by the B vectors and one broadcast; masked column tails;
// both the store and the accumulate epilogue; shapes outside the register file refused.
#include <catch2/catch.hpp>

#include <fmt/format.h>

#include <map>
#include <regex>
#include <sstream>
#include <set>
#include <vector>

#include "asm/target.hpp"
#include "kernel_step_check.hpp"
#include "asm/x86/matmul_kernel.hpp"

using namespace peakprobe;
using peakprobe::x86::MicroKernelShape;

namespace {

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t pos = 0; (pos = text.find(what, pos)) != std::string::npos; ++pos) ++n;
  return n;
}

// Destination registers of every `mnemonic` line.
std::set<std::string> destinations(const std::string& text, const std::string& mnemonic) {
  std::set<std::string> out;
  std::regex line(mnemonic + R"(\s+([xyz]mm\d+))");
  for (auto it = std::sregex_iterator(text.begin(), text.end(), line); it != std::sregex_iterator(); ++it)
    out.insert((*it)[1]);
  return out;
}

// The k step's code appears kKernelUnroll times in the unrolled loop and once in its tail loop.
constexpr size_t kStepCopies = size_t(x86::kKernelUnroll) + 1;

// The lines of the first unrolled iteration of a kernel's k loop: those after the loop's label
// (the first label after its alignment) up to its pointer adds.
std::vector<std::string> first_loop_iteration(const std::string& listing) {
  std::vector<std::string> lines;
  std::istringstream in(listing);
  bool in_loop = false, aligned = false;
  for (std::string line; std::getline(in, line);) {
    if (!in_loop) {
      if (line.rfind("align", 0) == 0) aligned = true;
      else if (aligned && !line.empty() && line.back() == ':') in_loop = true;
      continue;
    }
    if (line.rfind("add ", 0) == 0 || line.rfind("dec ", 0) == 0 || line.back() == ':') break;
    lines.push_back(line);
  }
  return lines;
}

}  // namespace

// Found on the Sapphire Rapids-class VM: one k step an iteration paid its pointer adds and branch
// on every step (14.1 cycles for 24 FMAs that need 12; 1024^3 at 154 GFLOP/s, 162 unrolled).
TEST_CASE("matmul kernel: the k loop runs kKernelUnroll steps an iteration, each at its own displacement",
          "[matmul_kernel]") {
  auto text = x86::micro_kernel_listing(MicroKernelShape{6, 4, 512, MatmulDtype::f32}, 6, 64);
  REQUIRE(text.ok());
  // Packed B: step u reads its 4 vectors at u x 256 bytes on (rdx), packed A its 6 words at u x 24 (rsi).
  for (int u = 0; u < x86::kKernelUnroll; ++u) {
    INFO("step " << u);
    for (int j = 0; j < 4; ++j) {
      const int off = 256 * u + 64 * j;
      CHECK(count(*text, off ? "[rdx+" + std::to_string(off) + "]" : "[rdx]") == (u == 0 ? 2u : 1u));  // step 0 twice: the tail's
    }
    for (int i = 0; i < 6; ++i) {
      const int off = 24 * u + 4 * i;
      CHECK(count(*text, off ? "[rsi+" + std::to_string(off) + "]" : "[rsi]") == (u == 0 ? 2u : 1u));
    }
  }
  // The pointers move once an iteration by the steps it ran: kKernelUnroll in the loop, 1 in the tail.
  CHECK(count(*text, "add rdx, " + std::to_string(256 * x86::kKernelUnroll)) == 1);
  CHECK(count(*text, "add rsi, " + std::to_string(24 * x86::kKernelUnroll)) == 1);
  CHECK(count(*text, "add rdx, 256") == 1);
  CHECK(count(*text, "add rsi, 24") == 1);
  CHECK(count(*text, "shr rdi, " + std::to_string(x86::kKernelUnrollShift)) == 1);
  CHECK(count(*text, "and rax, " + std::to_string(x86::kKernelUnroll - 1)) == 1);
  // In-place A moves both of its row pointers by 4 bytes a step, with the steps at displacements.
  MicroKernelShape a_direct{6, 4, 512, MatmulDtype::f32};
  a_direct.a_direct = true;
  auto in_place = x86::micro_kernel_listing(a_direct, 6, 64);
  REQUIRE(in_place.ok());
  CHECK(count(*in_place, "add rsi, " + std::to_string(4 * x86::kKernelUnroll)) == 1);
  CHECK(count(*in_place, "add r10, " + std::to_string(4 * x86::kKernelUnroll)) == 1);
  CHECK(count(*in_place, "[r10+r11*2+" + std::to_string(4 * (x86::kKernelUnroll - 1)) + "]") == 1);
  CHECK(count(*in_place, "r12") == 0);  // six rows take two row pointers
  // Past six rows a third row pointer, in r12 (callee-saved: pushed, popped, and the stack
  // arguments 8 bytes further), reads rows 6-8. A bf16 block reads its k pairs from A's rows the
  // same way: a word a row and step.
  static_assert(x86::kAInPlaceRows == 9, "the listing checks below are of the tallest block");
  MicroKernelShape tall{9, 3, 512, MatmulDtype::bf16};
  tall.a_direct = true;
  REQUIRE(x86::check_shape(tall, 32).empty());
  auto tall_listing = x86::micro_kernel_listing(tall, 9, 48);
  REQUIRE(tall_listing.ok());
  CHECK(count(*tall_listing, "push r12") == 1);
  CHECK(count(*tall_listing, "pop r12") == 1);
  CHECK(count(*tall_listing, "r13") == 0);
  CHECK(count(*tall_listing, "mov r11, qword ptr [rsp+16]") == 1);  // lda, the 7th argument, past the saved r12
  CHECK(count(*tall_listing, "add r12, " + std::to_string(4 * x86::kKernelUnroll)) == 1);
  CHECK(count(*tall_listing, "[r12+r11*2+" + std::to_string(4 * (x86::kKernelUnroll - 1)) + "]") == 1);
  CHECK(count(*tall_listing, "vdpbf16ps") == 9 * 3 * kStepCopies);
  // Taller blocks, and A whose packing changes it (widened to f32), are refused.
  MicroKernelShape taller{x86::kAInPlaceRows + 1, 1, 512, MatmulDtype::f32};
  taller.a_direct = true;
  CHECK_THAT(x86::check_shape(taller, 32), Catch::Contains("row pointers"));
  MicroKernelShape widened{6, 2, 256, MatmulDtype::bf16, true, false, true};
  CHECK_THAT(x86::check_shape(widened, 16), Catch::Contains("widened"));
}

TEST_CASE("matmul kernel: rows x vectors independent accumulators per k step", "[matmul_kernel]") {
  for (auto [dt, mnemonic] : {std::pair{MatmulDtype::f32, "vfmadd231ps"}, std::pair{MatmulDtype::bf16, "vdpbf16ps"},
                              std::pair{MatmulDtype::i8, "vpdpbusd"}}) {
    INFO(mnemonic);
    auto full = x86::micro_kernel_listing(MicroKernelShape{6, 4, 512, dt}, 6, 64);
    REQUIRE(full.ok());
    CHECK(count(*full, mnemonic) == 24 * kStepCopies);
    CHECK(destinations(*full, mnemonic).size() == 24);  // no two dot products share an accumulator
    CHECK(count(*full, "vpbroadcastd") == 6 * kStepCopies);
    CHECK(count(*full, "{k1}") == 0);
    // Both epilogues: plain stores for the first k block, load-add-store after.
    const char* add = dt == MatmulDtype::i8 ? "vpaddd" : "vaddps";
    CHECK(count(*full, add) == 24);
    CHECK(count(*full, "prefetcht0") >= 6 * 4);  // every line of the C tile requested early
  }
}

TEST_CASE("matmul kernel: edge tiles use fewer rows and a masked last vector", "[matmul_kernel]") {
  auto edge = x86::micro_kernel_listing(MicroKernelShape{6, 4, 512, MatmulDtype::f32}, 3, 37);
  REQUIRE(edge.ok());
  CHECK(count(*edge, "vfmadd231ps") == 9 * kStepCopies);  // 3 rows x 3 vectors (37 columns)
  CHECK(count(*edge, "{k1}") > 0);
  auto avx2 = x86::micro_kernel_listing(MicroKernelShape{6, 2, 256, MatmulDtype::f32}, 6, 13);
  REQUIRE(avx2.ok());
  CHECK(count(*avx2, "vfmadd231ps") == 12 * kStepCopies);
  CHECK(count(*avx2, "vmaskmovps") > 0);
  CHECK(avx2->find("zmm") == std::string::npos);
  for (const auto& line : destinations(*avx2, "vfmadd231ps")) CHECK(std::stoi(line.substr(3)) < 16);
}

TEST_CASE("matmul kernel: in-place B steps ldb through B and stores every vector it reads to the packed panel", "[matmul_kernel]") {
  for (int bits : {512, 256}) {
    MicroKernelShape s{6, bits == 512 ? 4 : 2, bits, MatmulDtype::f32};
    s.b_direct = true;
    INFO(bits);
    auto text = x86::micro_kernel_listing(s, 6, s.nr());
    REQUIRE(text.ok());
    CHECK(count(*text, "vfmadd231ps") == size_t(6 * s.nv));
    // Each B vector loaded once per k step and stored once to the panel in rbx, saved and restored.
    CHECK(count(*text, "vmovups [rbx") == size_t(s.nv));
    CHECK(count(*text, "push rbx") == 1);
    CHECK(count(*text, "pop rbx") == 1);
    CHECK(count(*text, "add rdx, rax") == 1);  // B's next row: ldb bytes on, not the panel's width
    CHECK(count(*text, "add rbx, " + std::to_string(4 * s.nr())) == 1);
    // The stack arguments sit 8 bytes further once rbx is pushed: ldb at +24, the panel at +32.
    CHECK(count(*text, "[rsp+24]") == 1);
    CHECK(count(*text, "[rsp+32]") == 1);
  }
  MicroKernelShape edge{6, 4, 512, MatmulDtype::f32};
  edge.b_direct = true;
  edge.dtype = MatmulDtype::bf16;
  CHECK_THAT(x86::check_shape(edge, 32), Catch::Contains("in-place B"));
  // Packed kernels keep their fixed step and never touch rbx.
  auto packed = x86::micro_kernel_listing(MicroKernelShape{6, 4, 512, MatmulDtype::f32}, 6, 64);
  REQUIRE(packed.ok());
  CHECK(count(*packed, "rbx") == 0);
  CHECK(count(*packed, "add rdx, 256") == 1);
  // A and B both in place: lda (7th argument) also 8 bytes further, at +16.
  MicroKernelShape both{6, 4, 512, MatmulDtype::f32, true};
  both.b_direct = true;
  auto both_text = x86::micro_kernel_listing(both, 6, 64);
  REQUIRE(both_text.ok());
  CHECK(count(*both_text, "[rsp+16]") == 1);
  CHECK(count(*both_text, "[rsp+24]") == 1);
  CHECK(count(*both_text, "[rsp+32]") == 1);
  // And past six rows, r12 pushed after rbx: every stack argument 16 bytes further, popped in reverse.
  MicroKernelShape both_tall{9, 3, 512, MatmulDtype::f32, true};
  both_tall.b_direct = true;
  auto tall_text = x86::micro_kernel_listing(both_tall, 9, 48);
  REQUIRE(tall_text.ok());
  CHECK(count(*tall_text, "mov r11, qword ptr [rsp+24]") == 1);  // lda
  CHECK(count(*tall_text, "qword ptr [rsp+32]") == 1);            // ldb
  CHECK(count(*tall_text, "qword ptr [rsp+40]") == 1);            // b_out
  const size_t pop_r12 = tall_text->find("pop r12"), pop_rbx = tall_text->find("pop rbx");
  REQUIRE(pop_r12 != std::string::npos);
  REQUIRE(pop_rbx != std::string::npos);
  CHECK(pop_r12 < pop_rbx);
  CHECK(tall_text->find("push rbx") < tall_text->find("push r12"));
}

TEST_CASE("matmul kernel: in-place B on zmm reads an edge panel through a masked last vector, ymm packs it", "[matmul_kernel]") {
  MicroKernelShape s{6, 4, 512, MatmulDtype::f32};
  s.b_direct = true;
  CHECK(isa::host_target().b_in_place_edges(s));
  // 35 columns: two whole vectors and three lanes of a third; the fourth is not touched.
  auto text = x86::micro_kernel_listing(s, 5, 35);
  REQUIRE(text.ok());
  INFO(*text);
  CHECK(count(*text, "mov eax, 7\nkmovw k2, eax") == 1);  // the three columns of the last vector
  // Each step: the masked-zeroing load of B's third vector, then all three stored whole to the panel.
  CHECK(count(*text, "{k2}{z}") == 1);
  CHECK(count(*text, "vmovups zmm17 {k2}{z}, [rdx+128]") == 1);
  CHECK(count(*text, "vmovups [rbx") == 3);
  CHECK(count(*text, "vmovups [rbx+128], zmm17") == 1);
  CHECK(count(*text, "vfmadd231ps") == size_t(5 * 3));
  // A whole-width kernel has no mask on B.
  auto whole = x86::micro_kernel_listing(s, 6, 64);
  REQUIRE(whole.ok());
  CHECK(count(*whole, "k2") == 0);
  // The ymm kernels have no mask register to spare: in place they stay whole panels wide.
  MicroKernelShape narrow{6, 2, 256, MatmulDtype::f32};
  narrow.b_direct = true;
  CHECK_FALSE(isa::host_target().b_in_place_edges(narrow));
  auto refused = x86::micro_kernel_listing(narrow, 6, 13);
  REQUIRE_FALSE(refused.ok());
  CHECK_THAT(refused.error(), Catch::Contains("whole 16 columns wide"));
  // Packed kernels never ask (the question is about reading B in place).
  CHECK_FALSE(isa::host_target().b_in_place_edges(MicroKernelShape{6, 4, 512, MatmulDtype::f32}));
}

TEST_CASE("matmul kernel: shapes outside the register file or the ISA are refused", "[matmul_kernel]") {
  CHECK(x86::check_shape(MicroKernelShape{6, 4, 512, MatmulDtype::f32}, 32).empty());
  CHECK(x86::check_shape(MicroKernelShape{14, 2, 512, MatmulDtype::f32}, 32).empty());  // 28 + 2 + 1 = 31
  CHECK_THAT(x86::check_shape(MicroKernelShape{7, 4, 512, MatmulDtype::f32}, 32), Catch::Contains("33"));
  CHECK_THAT(x86::check_shape(MicroKernelShape{6, 4, 256, MatmulDtype::f32}, 16), Catch::Contains("registers"));
  CHECK_THAT(x86::check_shape(MicroKernelShape{6, 2, 256, MatmulDtype::bf16}, 16), Catch::Contains("AVX-512"));
  CHECK(x86::check_shape(MicroKernelShape{6, 2, 256, MatmulDtype::bf16, false, false, true}, 16).empty());
  // Widened int8 needs one more register (the product): 6 x 2 fits 16, 7 x 2 does not.
  CHECK(x86::check_shape(MicroKernelShape{6, 2, 256, MatmulDtype::i8, false, false, true}, 16).empty());
  CHECK_THAT(x86::check_shape(MicroKernelShape{7, 2, 256, MatmulDtype::i8, false, false, true}, 16),
             Catch::Contains("registers"));
  CHECK_FALSE(x86::check_shape(MicroKernelShape{6, 2, 256, MatmulDtype::f32, false, false, true}, 16).empty());
  CHECK_FALSE(x86::check_shape(MicroKernelShape{6, 5, 512, MatmulDtype::f32}, 32).empty());
  CHECK_FALSE(x86::micro_kernel_listing(MicroKernelShape{6, 4, 512, MatmulDtype::f32}, 7, 64).ok());
  CHECK_FALSE(x86::micro_kernel_listing(MicroKernelShape{6, 4, 512, MatmulDtype::f32}, 6, 65).ok());
}

TEST_CASE("matmul kernel: widened bf16 runs the FMA, widened int8 a multiply-add of int16 pairs and an add", "[matmul_kernel]") {
  for (int bits : {256, 512}) {
    const int nv = bits == 512 ? 4 : 2, lanes = bits / 32;
    INFO(bits << " bits");
    auto bf = x86::micro_kernel_listing(MicroKernelShape{6, nv, bits, MatmulDtype::bf16, false, false, true}, 6,
                                        nv * lanes);
    REQUIRE(bf.ok());
    CHECK(count(*bf, "vfmadd231ps") == size_t(6 * nv) * kStepCopies);
    CHECK(count(*bf, "vdpbf16ps") == 0);
    CHECK(count(*bf, "vaddps") == size_t(6 * nv));  // C is f32, as for native bf16
    auto i8 = x86::micro_kernel_listing(MicroKernelShape{6, nv, bits, MatmulDtype::i8, false, false, true}, 6,
                                        nv * lanes);
    REQUIRE(i8.ok());
    CHECK(count(*i8, "vpdpbusd") == 0);
    CHECK(count(*i8, "vpmaddwd") == size_t(6 * nv) * kStepCopies);
    // One vpaddd per multiply-add into its own accumulator, and one per accumulator in the update.
    CHECK(count(*i8, "vpaddd") == size_t(6 * nv) * (kStepCopies + 1));  // a step's adds, and the update's
    CHECK(destinations(*i8, "vpaddd").size() == size_t(6 * nv));
    // The products go through the temporary and, for a row's last vector, the broadcast register
    // (A is not read after it): neither is an accumulator. Which product reaches which accumulator
    // is the dataflow test below.
    const auto products = destinations(*i8, "vpmaddwd");
    CHECK(products.size() == 2);
    for (const auto& p : products) CHECK(destinations(*i8, "vpaddd").count(p) == 0);
    const auto broadcasts = destinations(*i8, "vpbroadcastd");
    REQUIRE(broadcasts.size() == 1);
    CHECK(products.count(*broadcasts.begin()) == 1);
    if (bits == 256) CHECK(i8->find("zmm") == std::string::npos);
  }
}

namespace {

// The first unrolled iteration of the k loop, run symbolically: a load names what it read (B at
// its displacement from rdx, A at its displacement from rsi), vpmaddwd the product of what its
// sources hold, and an add into an accumulator appends that term to it. Returns each accumulator's
// terms, in order.
std::map<std::string, std::vector<std::string>> widened_loop_terms(const std::string& listing) {
  std::map<std::string, std::string> reg;
  std::map<std::string, std::vector<std::string>> acc;
  const std::regex inst(R"(^(\w+) ([xyz]mm\d+), (\S+?)(?:, (\S+))?$)");
  const std::regex mem(R"(\[(r\w+)(?:\+(\d+))?\])");
  for (const std::string& line : first_loop_iteration(listing)) {
    std::smatch m, where;
    if (std::regex_search(line, where, mem) && line.rfind("v", 0) == 0 && line.find("mm") < line.find('[')) {
      const std::string dst = line.substr(line.find(' ') + 1, line.find(',') - line.find(' ') - 1);
      reg[dst] = std::string(where[1] == "rdx" ? "B" : "A") + "@" + (where[2].matched ? where[2].str() : "0");
      continue;
    }
    REQUIRE(std::regex_match(line, m, inst));
    if (m[1] == "vpmaddwd") {
      REQUIRE(reg.count(m[3]) == 1);
      REQUIRE(reg.count(m[4]) == 1);
      reg[m[2]] = reg[m[3]] + "*" + reg[m[4]];
    } else {
      REQUIRE(m[1] == "vpaddd");
      REQUIRE(m[2] == m[3]);
      REQUIRE(reg.count(m[4]) == 1);
      acc[m[2]].push_back(reg[m[4]]);
    }
  }
  return acc;
}

}  // namespace

// The multiplies of a row come before their adds where the registers allow (an add right after
// the multiply it waits on took a pipe the next multiply needed): the dataflow must stay exact.
TEST_CASE("matmul kernel: widened int8 adds B_j x A_i into accumulator (i, j) once a step", "[matmul_kernel]") {
  for (int bits : {256, 512}) {
    for (int nv : {1, 2, 3, 4}) {
      const int mr = bits == 256 ? (nv < 3 ? 5 : 2) : 6, lanes = bits / 32, nr = nv * lanes;
      MicroKernelShape s{mr, nv, bits, MatmulDtype::i8, false, false, true};
      // The whole block, and an edge tile: a row fewer and the last vector masked (one vector fewer
      // where the block has more than one and the columns end inside the one before).
      for (const auto& [rows, cols] : {std::pair{mr, nr}, std::pair{std::max(1, mr - 1), std::max(1, nr - lanes - 1)}}) {
        const int used = (cols + lanes - 1) / lanes;
        INFO(bits << " bits, " << mr << "x" << nv << " vectors, tile " << rows << "x" << cols);
        auto text = x86::micro_kernel_listing(s, rows, cols);
        REQUIRE(text.ok());
        INFO(*text);
        const auto acc = widened_loop_terms(*text);
        REQUIRE(acc.size() == size_t(rows * used));
        std::set<std::string> all;
        for (const auto& [name, terms] : acc) {
          INFO(name);
          REQUIRE(terms.size() == size_t(x86::kKernelUnroll));
          // Step u of accumulator (i, j): B at 4 nr u + j vectors in, A at 4 mr u + 4 i (the packed
          // panels keep the block's strides at an edge too), in register i * used + j.
          std::smatch first;
          REQUIRE(std::regex_match(terms[0], first, std::regex(R"(B@(\d+)\*A@(\d+))")));
          const int j = std::stoi(first[1]) / (bits / 8), i = std::stoi(first[2]) / 4;
          CHECK(name == fmt::format("{}mm{}", bits == 512 ? 'z' : 'y', i * used + j));
          for (int u = 0; u < x86::kKernelUnroll; ++u) {
            CHECK(terms[size_t(u)] == fmt::format("B@{}*A@{}", 4 * nr * u + j * bits / 8, 4 * mr * u + 4 * i));
            all.insert(terms[size_t(u)]);
          }
        }
        CHECK(all.size() == size_t(rows * used * x86::kKernelUnroll));  // no two accumulators share a product
      }
    }
  }
}

TEST_CASE("matmul kernel: int8 on ymm is AVX-VNNI's VEX vpdpbusd, no EVEX byte in it", "[matmul_kernel]") {
  // Where the CPU has AVX-VNNI (gemm_widened says no widening at 256 bits), the 6 x 16 block's dot
  // products are VEX-encoded: the EVEX form would need AVX-512 VNNI and VL, which --isa avx2 takes away.
  CHECK(x86::check_shape(MicroKernelShape{6, 2, 256, MatmulDtype::i8}, 16).empty());
  auto text = x86::micro_kernel_listing(MicroKernelShape{6, 2, 256, MatmulDtype::i8}, 6, 16);
  REQUIRE(text.ok());
  INFO(*text);
  CHECK(count(*text, "vpdpbusd") == 12 * kStepCopies);
  CHECK(count(*text, "vpaddd") == 12);  // the update adds C as int32
  CHECK(text->find("zmm") == std::string::npos);
  // asmjit's listing spells the VEX form with its encoding prefix.
  CHECK(count(*text, "{vex} vpdpbusd") == 12 * kStepCopies);
}

namespace {

// The first unrolled iteration of a kernel's k loop, each line spelled as a form (registers by
// class, a memory operand by its width).
std::multiset<std::string> loop_forms(const std::string& listing) {
  std::multiset<std::string> forms;
  for (std::string line : first_loop_iteration(listing)) {
    const std::string width = line.find("zmm") != std::string::npos ? "m512" : "m256";
    line = std::regex_replace(line, std::regex(R"(([xyz]mm)\d+)"), "$1");
    line = std::regex_replace(line, std::regex(R"(dword ptr \[[^\]]*\])"), "m32");
    line = std::regex_replace(line, std::regex(R"(\[[^\]]*\])"), width);
    forms.insert(line);
  }
  return forms;
}

}  // namespace

// kernel_step is what `matmul` measures as the loop's own ceiling: it must be the loop's code.
TEST_CASE("matmul kernel: kernel_step names the instructions of the generated k step", "[matmul_kernel]") {
  MicroKernelShape widened{4, 2, 256, MatmulDtype::i8};
  widened.widened = true;
  MicroKernelShape bf16_as_f32{6, 2, 256, MatmulDtype::bf16};
  bf16_as_f32.widened = true;
  MicroKernelShape b_in_place{6, 3, 512, MatmulDtype::f32};
  b_in_place.b_direct = true;
  for (const MicroKernelShape& s :
       {MicroKernelShape{6, 4, 512, MatmulDtype::f32}, MicroKernelShape{9, 3, 512, MatmulDtype::f32},
        MicroKernelShape{6, 2, 256, MatmulDtype::f32}, MicroKernelShape{6, 4, 512, MatmulDtype::bf16},
        MicroKernelShape{6, 4, 512, MatmulDtype::i8}, MicroKernelShape{6, 2, 256, MatmulDtype::i8}, widened,
        bf16_as_f32, b_in_place}) {
    INFO(to_string(s.dtype) << " " << s.mr << "x" << s.nv << " " << s.vec_bits << (s.widened ? " widened" : "")
                            << (s.b_direct ? " b_direct" : ""));
    test::check_loop_is_step(s, x86::micro_kernel_listing(s, s.mr, s.nr()), x86::kKernelUnroll, loop_forms);
  }
  CHECK(isa::host_target().kernel_step(MicroKernelShape{32, 2, 512, MatmulDtype::bf16, false, false, false, true}).empty());
}
