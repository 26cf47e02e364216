// The AMX micro-kernels' code, instruction by instruction: one configuration load and one release
// per call (a row of B panels), A and B tiles loaded once per k block and multiplied into every C
// tile, C loaded or zeroed, then stored, for each panel; edge tiles configured with fewer rows and
// columns, not more instructions. Where the CPU has AMX: a row of panels in one call computes what
// a call per panel does.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "asm/x86/matmul_kernel.hpp"
#include "asm/x86/tile_kernel.hpp"
#include "cpu/cpu_info.hpp"
#include "matmul/gemm.hpp"
#include "skip.hpp"

using namespace peakprobe;
using isa::MicroKernelShape;

namespace {

int count(const std::string& hay, const std::string& needle) {
  int n = 0;
  for (size_t at = hay.find(needle); at != std::string::npos; at = hay.find(needle, at + 1)) ++n;
  return n;
}

MicroKernelShape tiles(int mr, int nv, MatmulDtype dt) {
  MicroKernelShape s{mr, nv, 512, dt};
  s.tiles = true;
  return s;
}

}  // namespace

TEST_CASE("tile kernel: a 2 x 2 block loads two A and two B tiles per k block and multiplies four", "[tile_kernel]") {
  for (MatmulDtype dt : {MatmulDtype::bf16, MatmulDtype::i8}) {
    auto text = x86::micro_kernel_listing(tiles(32, 2, dt), 32, 32);
    REQUIRE(text);
    INFO(*text);
    CHECK(count(*text, "ldtilecfg") == 1);
    CHECK(count(*text, "tilerelease") == 1);
    CHECK(count(*text, dt == MatmulDtype::bf16 ? "tdpbf16ps" : "tdpbusd") == 4);
    // Four C tiles loaded (accumulate) or zeroed (first k block); two A and two B tiles in the loop.
    CHECK(count(*text, "tilezero") == 4);
    CHECK(count(*text, "tileloadd") == 4 + 4);
    CHECK(count(*text, "tilestored") == 4);
    // Each multiply reads one A and one B tile into a C tile: tmm0-3 C, tmm4-5 A, tmm6-7 B.
    CHECK(count(*text, "tmm0, tmm4, tmm6") == 1);
    CHECK(count(*text, "tmm3, tmm5, tmm7") == 1);
    // Two loops: the k blocks of a panel, and the panels of the row.
    CHECK(count(*text, "jnz") == 2);
    // Every line of the B block some k blocks ahead is prefetched: 16 steps x 32 columns x 4 bytes.
    CHECK(count(*text, "prefetcht0") == 16 * 32 * 4 / 64);
  }
}

TEST_CASE("tile kernel: a row of B panels in one call computes what a call per panel does", "[tile_kernel][hw]") {
  CpuInfo cpu = detect_cpu_info();
  for (MatmulDtype dt : {MatmulDtype::bf16, MatmulDtype::i8}) {
    Gemm gemm(cpu, dt);
    if (!gemm.micro_kernel_shape(32, 2, false).tiles)
      PP_SKIP("this CPU (or its OS) gives no AMX tiles for " << to_string(dt));
    auto fn = gemm.tile_kernel(32, 2);
    REQUIRE(fn);
    INFO(to_string(dt));
    // 3 panels of 32 k steps x 32 columns after one another, an A panel of 32 rows x 32 steps; C is
    // 32 rows of 3 x 32 columns. Words of small values, so that every sum is exact in f32 as in s32
    // (bf16 words 0x3f80 + low bits: 1 to 1.5; int8 bytes 0..3).
    constexpr int kSteps = 32, kRows = 32, kCols = 32, kPanels = 3, kLdc = kPanels * kCols;
    std::mt19937 rng(7);
    auto words = [&](size_t n) {
      std::vector<uint32_t> w(n);
      for (auto& x : w)
        x = dt == MatmulDtype::bf16 ? 0x3f803f80u | (rng() & 0x003f003fu) : rng() & 0x03030303u;
      return w;
    };
    const std::vector<uint32_t> a = words(kRows * kSteps), b = words(size_t(kPanels) * kSteps * kCols);
    std::vector<uint32_t> row(kRows * kLdc, 0), each(kRows * kLdc, 0);
    for (int accumulate : {0, 1}) {
      (*fn)(kSteps, a.data(), b.data(), row.data(), kLdc * 4, uint64_t(accumulate), 0, 0, nullptr, kPanels);
      for (int p = 0; p < kPanels; ++p)
        (*fn)(kSteps, a.data(), b.data() + p * kSteps * kCols, each.data() + p * kCols, kLdc * 4,
              uint64_t(accumulate), 0, 0, nullptr, 1);
      CHECK(std::memcmp(row.data(), each.data(), row.size() * 4) == 0);
    }
    // The sums are not all zero (a kernel that wrote nothing would pass the comparison).
    CHECK(std::count(row.begin(), row.end(), 0u) == 0);
    // No panels: C is left as it was.
    const std::vector<uint32_t> before = row;
    (*fn)(kSteps, a.data(), b.data(), row.data(), kLdc * 4, 0, 0, 0, nullptr, 0);
    CHECK(row == before);
  }
}

TEST_CASE("tile kernel: a row keeps the registers the ABI asks kept and reads its panels from the 10th argument",
          "[tile_kernel]") {
  // 48 x 16: three rows of C tiles, the third addressed through r14, which the kernel saves.
  auto text = x86::micro_kernel_listing(tiles(48, 1, MatmulDtype::bf16), 48, 16);
  REQUIRE(text);
  INFO(*text);
  CHECK(count(*text, "push ") == 4);
  CHECK(count(*text, "pop ") == 4);
  for (const char* reg : {"rbx", "r12", "r13", "r14"}) {
    CHECK(count(*text, std::string("push ") + reg) == 1);
    CHECK(count(*text, std::string("pop ") + reg) == 1);
  }
  // The 10th argument: past the four saved registers (32 bytes), the return address and the 7th to
  // 9th arguments' slots (32 more).
  CHECK(count(*text, "[rsp+64]") == 1);
  CHECK(count(*text, "tilestored [r14+r8]") == 1);
  CHECK(count(*text, "tdpbf16ps") == 3);
  // No panels: straight to the release, past the loops.
  CHECK(count(*text, "test rbx, rbx") == 1);
}

TEST_CASE("tile kernel: edge tiles use only the tiles they cover", "[tile_kernel]") {
  // 17 x 16 of a 32 x 32 block: two row tiles (16 + 1 rows), one column tile: 2 C, 2 A, 1 B.
  auto text = x86::micro_kernel_listing(tiles(32, 2, MatmulDtype::bf16), 17, 16);
  REQUIRE(text);
  CHECK(count(*text, "tdpbf16ps") == 2);
  CHECK(count(*text, "tilestored") == 2);
  // 5 x 3: one tile each, whatever the block.
  auto small = x86::micro_kernel_listing(tiles(32, 2, MatmulDtype::i8), 5, 3);
  REQUIRE(small);
  CHECK(count(*small, "tdpbusd") == 1);
  CHECK(count(*small, "tilestored") == 1);
}

TEST_CASE("tile kernel: shapes the tiles cannot hold are refused with the reason", "[tile_kernel]") {
  CHECK(x86::check_tile_shape(tiles(32, 2, MatmulDtype::bf16)).empty());
  CHECK(x86::check_tile_shape(tiles(16, 3, MatmulDtype::i8)).empty());  // 3 C + 1 A + 3 B
  CHECK_THAT(x86::check_tile_shape(tiles(32, 3, MatmulDtype::bf16)), Catch::Contains("needs 11 tiles"));
  CHECK_THAT(x86::check_tile_shape(tiles(20, 1, MatmulDtype::bf16)), Catch::Contains("multiple of 16"));
  // 48 x 16 fits the eight tiles (3 C + 3 A + 1 B), the tallest block that does: 64 x 16 would need 9.
  CHECK(x86::check_tile_shape(tiles(48, 1, MatmulDtype::bf16)).empty());
  CHECK_THAT(x86::check_tile_shape(tiles(64, 1, MatmulDtype::bf16)), Catch::Contains("needs 9 tiles"));
  CHECK_THAT(x86::check_tile_shape(tiles(32, 2, MatmulDtype::f32)), Catch::Contains("no f32"));
  MicroKernelShape narrow = tiles(32, 2, MatmulDtype::bf16);
  narrow.vec_bits = 256;
  CHECK_THAT(x86::check_tile_shape(narrow), Catch::Contains("512"));
  MicroKernelShape widened = tiles(32, 2, MatmulDtype::i8);
  widened.widened = true;
  CHECK_FALSE(x86::check_tile_shape(widened).empty());
  // The listing refuses them too, rather than generating code the tiles cannot run.
  CHECK_FALSE(x86::micro_kernel_listing(tiles(64, 2, MatmulDtype::bf16), 64, 32));
}
