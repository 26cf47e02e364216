// The AMX micro-kernels' code, instruction by instruction: one configuration load and one release
// per call, A and B tiles loaded once per k block and multiplied into every C tile, C loaded or
// zeroed, then stored; edge tiles configured with fewer rows and columns, not more instructions.
#include <catch2/catch.hpp>

#include <string>

#include "asm/x86/matmul_kernel.hpp"
#include "asm/x86/tile_kernel.hpp"

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
  }
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
  // 48 x 16 fits the eight tiles (3 C + 3 A + 1 B) but not the kernel's two row pointers.
  CHECK_THAT(x86::check_tile_shape(tiles(48, 1, MatmulDtype::bf16)), Catch::Contains("at most 32 rows"));
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
