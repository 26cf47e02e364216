#include "asm/x86/tile_kernel.hpp"

#include "asm/x86/stream_emitter.hpp"

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
constexpr int kPrefetchBlocks = 4;  // how far ahead B's lines are prefetched, in k blocks
// Tiles of C rows a block may have: 3 x 1 (3 C, 3 A and 1 B tile) is the tallest block the eight
// tiles hold; a row streaming its B panels then reads a third of a tile of B per tile product, where
// 2 x 2 reads half of one.
constexpr int kMaxRowTiles = 3;

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
  // Past the tile count's check, a guard for the kernel's row pointers (c_rows).
  if (s.mr > kMaxRowTiles * kRows)
    return fmt::format("tile block {}x{}: at most {} rows (the kernel addresses {} tiles of rows)", s.mr, s.nr(),
                       kMaxRowTiles * kRows, kMaxRowTiles);
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
  // r9 accumulate, r11 C rows 16-31, r14 rows 32-47, r10 A's row stride (64 bytes: a block's rows
  // lie one after another, pack_a_tile_blocks), rax B's row stride. The 10th argument, the panels
  // of the row, is on the stack; the first panel's A and the k steps are kept in saved registers,
  // as each panel starts them again.
  const ax::Gp steps = ax::rdi, a = ax::rsi, b = ax::rdx, c0 = ax::rcx, ldc = ax::r8, accumulate = ax::r9;
  const ax::Gp c1 = ax::r11, lda = ax::r10, ldb = ax::rax, c2 = ax::r14;
  // C's rows of tile row i: c0, c0 + 16 ldc, c0 + 32 ldc (an address scales by 8 at most).
  const std::array<ax::Gp, kMaxRowTiles> c_rows = {c0, c1, c2};
  const ax::Gp panels = ax::rbx, a_first = ax::r12, steps_first = ax::r13;
  Label config = e.newLabel(), panel = e.newLabel(), finish = e.newLabel();
  Label loop = e.newLabel(), done = e.newLabel(), zero = e.newLabel(), run = e.newLabel();
  e.push(panels);
  e.push(a_first);
  e.push(steps_first);
  e.push(c2);
  e.mov(panels, ax::qword_ptr(ax::rsp, 4 * 8 + 32));  // past the 4 saved registers and 4 slots
  e.mov(a_first, a);
  e.mov(steps_first, steps);
  // Once per row: on a Sapphire Rapids-class VM loading the configuration and releasing the tiles
  // took about 70 ns a call, a quarter of a 128-step call's time.
  e.ldtilecfg(ax::ptr(config));
  set_gp(*e.as<ax::Emitter>(), lda.id(), kTileRowBytes);  // never a folded constant (stream_emitter.cpp)
  set_gp(*e.as<ax::Emitter>(), ldb.id(), uint64_t(s.nr() * 4));
  e.test(panels, panels);
  e.jz(finish);
  e.bind(panel);
  e.mov(a, a_first);
  e.mov(steps, steps_first);
  e.mov(c1, ldc);
  e.shl(c1, 4);                   // 16 ldc
  e.lea(c2, ax::ptr(c0, c1, 1));  // c0 + 32 ldc
  e.add(c1, c0);
  e.test(accumulate, accumulate);
  e.jz(zero);
  for (int i = 0; i < row_tiles; ++i)
    for (int j = 0; j < col_tiles; ++j)
      e.tileloadd(c_tile(i, j), ax::ptr(c_rows[size_t(i)], ldc, 0, j * kTileRowBytes));
  e.jmp(run);
  e.bind(zero);
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
  // B streams from L2 along the row (A stays in L1), and tile loads do not seem to draw the
  // hardware prefetchers: every line of the B block kPrefetchBlocks ahead is asked for now. On a
  // Sapphire Rapids-class VM 1024^3 bf16 ran 5-15% faster with 3-4 blocks ahead than without
  // (2 to 16 tried).
  const int b_block_bytes = kDepth * s.nr() * 4;
  for (int line = 0; line < b_block_bytes / 64; ++line)
    e.prefetcht0(ax::ptr(b, kPrefetchBlocks * b_block_bytes + line * 64));
  e.add(a, Imm(s.mr * kTileRowBytes));  // the next block: mr rows of 64 bytes (edge rows zero)
  e.add(b, Imm(b_block_bytes));  // after the last one, b is the next panel's start
  e.dec(steps);
  e.jnz(loop);
  e.bind(done);
  for (int i = 0; i < row_tiles; ++i)
    for (int j = 0; j < col_tiles; ++j)
      e.tilestored(ax::ptr(c_rows[size_t(i)], ldc, 0, j * kTileRowBytes), c_tile(i, j));
  e.add(c0, Imm(s.nr() * 4));  // the next panel's C: nr columns on
  e.dec(panels);
  e.jnz(panel);
  e.bind(finish);
  e.tilerelease();
  e.pop(c2);
  e.pop(steps_first);
  e.pop(a_first);
  e.pop(panels);
  e.ret();
  e.align(AlignMode::kData, 64);
  e.bind(config);
  return e.embed(cfg.bytes.data(), cfg.bytes.size());
}

}  // namespace peakprobe::x86
