#include "asm/x86/tile_kernel.hpp"

#include <array>
#include <cstdint>

#include <fmt/format.h>

namespace peakprobe::x86 {
using namespace asmjit;
namespace ax = asmjit::x86;

namespace {

constexpr int kTiles = 8;             // tmm0..tmm7
constexpr int kTileRowBytes = 64;     // 16 words of k (A, B) or 16 columns (C)
constexpr int kRows = isa::MicroKernelShape::kTileRows;
constexpr int kDepth = isa::MicroKernelShape::kTileDepthSteps;

// Palette 1 configuration: byte 0 the palette, bytes 16 + 2t the bytes per row of tile t, byte 48 + t
// its rows; unused tiles stay zero (the CPU refuses a configuration with reserved bytes set).
struct TileConfig {
  std::array<uint8_t, 64> bytes{};
  TileConfig() { bytes[0] = 1; }
  void set(int tile, int rows, int row_bytes) {
    bytes[size_t(16 + 2 * tile)] = uint8_t(row_bytes & 0xff);
    bytes[size_t(17 + 2 * tile)] = uint8_t(row_bytes >> 8);
    bytes[size_t(48 + tile)] = uint8_t(rows);
  }
};

InstId dot_id(MatmulDtype dtype) {
  // tdpbusd multiplies the unsigned bytes of its A tile by the signed bytes of its B tile.
  return dtype == MatmulDtype::bf16 ? ax::Inst::kIdTdpbf16ps : ax::Inst::kIdTdpbusd;
}

}  // namespace

std::string check_tile_shape(const isa::MicroKernelShape& s) {
  if (s.dtype == MatmulDtype::f32) return "tile kernels multiply bf16 or int8 (the matrix unit has no f32 product)";
  if (s.widened || s.signed_a || s.a_direct || s.b_direct)
    return "tile kernels take packed, unwidened, unsigned A and packed B";
  if (s.vec_bits != 512) return "tile kernels are 16 columns of 32-bit sums wide (vec_bits 512)";
  if (s.mr % kRows != 0 || s.mr < kRows || s.nv < 1)
    return fmt::format("tile block {}x{}: rows must be a multiple of {} and columns of {}", s.mr, s.nr(), kRows,
                       s.lanes());
  const int c_tiles = s.mr / kRows * s.nv;
  if (c_tiles + s.mr / kRows + s.nv > kTiles)
    return fmt::format("tile block {}x{} needs {} tiles ({} of C, {} of A, {} of B), the CPU has {}", s.mr, s.nr(),
                       c_tiles + s.mr / kRows + s.nv, c_tiles, s.mr / kRows, s.nv, kTiles);
  if (s.mr > 2 * kRows)
    return fmt::format("tile block {}x{}: at most {} rows (the kernel addresses two tiles of rows)", s.mr, s.nr(),
                       2 * kRows);
  return "";
}

Error emit_tile_kernel(ax::Assembler& e, const isa::MicroKernelShape& s, int rows, int cols) {
  const int row_tiles = (rows + kRows - 1) / kRows;      // tiles of C down, used by this edge
  const int col_tiles = (cols + s.lanes() - 1) / s.lanes();  // and across
  const int c_count = row_tiles * col_tiles;
  auto c_tile = [&](int i, int j) { return ax::tmm(uint32_t(i * col_tiles + j)); };
  auto a_tile = [&](int i) { return ax::tmm(uint32_t(c_count + i)); };
  auto b_tile = [&](int j) { return ax::tmm(uint32_t(c_count + row_tiles + j)); };

  TileConfig cfg;
  for (int i = 0; i < row_tiles; ++i) {
    const int r = std::min(kRows, rows - i * kRows);
    cfg.set(c_count + i, r, kTileRowBytes);
    for (int j = 0; j < col_tiles; ++j) cfg.set(i * col_tiles + j, r, std::min(s.lanes(), cols - j * s.lanes()) * 4);
  }
  for (int j = 0; j < col_tiles; ++j) cfg.set(c_count + row_tiles + j, kDepth, std::min(s.lanes(), cols - j * s.lanes()) * 4);

  // rdi k steps (then blocks left), rsi A's block, rdx B, rcx C rows 0-15, r8 C's row stride,
  // r9 accumulate (then C rows 16-31), r10 A's row stride (64 bytes: a block's rows lie one after
  // another, pack_a_tile_blocks), rax B's row stride.
  const ax::Gp steps = ax::rdi, a = ax::rsi, b = ax::rdx, c0 = ax::rcx, ldc = ax::r8, accumulate = ax::r9;
  const ax::Gp c1 = ax::r9, lda = ax::r10, ldb = ax::rax;
  Label config = e.newLabel(), loop = e.newLabel(), done = e.newLabel(), zero = e.newLabel(), run = e.newLabel();
  e.ldtilecfg(ax::ptr(config));
  e.mov(lda, Imm(kTileRowBytes));
  e.mov(ldb, Imm(s.nr() * 4));
  // c + 16 ldc (an address scales by 8 at most); c1 takes accumulate's register once it is tested.
  auto c_second_rows = [&] {
    e.mov(c1, ldc);
    e.shl(c1, 4);
    e.add(c1, c0);
  };
  e.test(accumulate, accumulate);
  e.jz(zero);
  c_second_rows();
  for (int i = 0; i < row_tiles; ++i)
    for (int j = 0; j < col_tiles; ++j) e.tileloadd(c_tile(i, j), ax::ptr(i == 0 ? c0 : c1, ldc, 0, j * kTileRowBytes));
  e.jmp(run);
  e.bind(zero);
  c_second_rows();
  for (int i = 0; i < row_tiles; ++i)
    for (int j = 0; j < col_tiles; ++j) e.tilezero(c_tile(i, j));
  e.bind(run);
  e.shr(steps, 4);  // k blocks of 16 steps
  e.jz(done);
  e.align(AlignMode::kCode, 64);
  e.bind(loop);
  // Each tile loaded right before its first multiply: the tiles are not renamed, so a load waits
  // until the multiplies of the previous block have read the tile it overwrites, and interleaving
  // lets the next loads start while this block's first multiplies run.
  for (int i = 0; i < row_tiles; ++i) {
    e.tileloadd(a_tile(i), ax::ptr(a, lda, 0, i * kRows * kTileRowBytes));
    for (int j = 0; j < col_tiles; ++j) {
      if (i == 0) e.tileloadd(b_tile(j), ax::ptr(b, ldb, 0, j * kTileRowBytes));
      e.emit(dot_id(s.dtype), c_tile(i, j), a_tile(i), b_tile(j));
    }
  }
  e.add(a, Imm(s.mr * kTileRowBytes));  // the next block: mr rows of 64 bytes (edge rows zero)
  e.add(b, Imm(kDepth * s.nr() * 4));
  e.dec(steps);
  e.jnz(loop);
  e.bind(done);
  for (int i = 0; i < row_tiles; ++i)
    for (int j = 0; j < col_tiles; ++j)
      e.tilestored(ax::ptr(i == 0 ? c0 : c1, ldc, 0, j * kTileRowBytes), c_tile(i, j));
  e.tilerelease();
  e.ret();
  e.align(AlignMode::kData, 64);
  e.bind(config);
  return e.embed(cfg.bytes.data(), cfg.bytes.size());
}

}  // namespace peakprobe::x86
