// Packed layouts, element by element: A panels of mr rows per k step, B panels of nr columns per k
// step, bf16 pairs and int8 quads with the lower k in the low bits, zero padding past M, N and K,
// and a B range packed by one thread landing where the whole block would put it.
#include <catch2/catch.hpp>

#include <cstring>
#include <numeric>
#include <vector>

#include "matmul/packing.hpp"

using namespace peakprobe;

TEST_CASE("packing: f32 A panels are k-major with zero rows past M", "[packing]") {
  // 5 x 3 matrix, lda 4 (one unused column), mr 4: panels rows 0-3 and 4 (+3 zero rows).
  std::vector<float> a(20);
  std::iota(a.begin(), a.end(), 1.0f);
  std::vector<uint32_t> out(2 * 3 * 4, 0xdeadbeef);
  pack_a(a.data(), 4, 5, 3, 4, 4, out.data());
  auto f = [&](size_t i) { float x; std::memcpy(&x, &out[i], 4); return x; };
  // Panel 0, step 1: rows 0..3 at column 1 = a[r*4 + 1].
  for (int r = 0; r < 4; ++r) CHECK(f(4 + size_t(r)) == a[size_t(r * 4 + 1)]);
  // Panel 1 (row 4 only), step 2.
  CHECK(f(12 + 2 * 4 + 0) == a[4 * 4 + 2]);
  for (int r = 1; r < 4; ++r) CHECK(out[12 + 2 * 4 + size_t(r)] == 0u);
}

TEST_CASE("packing: bf16 and int8 A words hold consecutive k values, the k tail zero", "[packing]") {
  // bf16: 1 row, k = 3 -> 2 steps; the second word holds k=2 and a zero.
  std::vector<uint16_t> a16 = {0x1111, 0x2222, 0x3333};
  std::vector<uint32_t> out(2 * 2);
  pack_a(a16.data(), 3, 1, 3, 2, 2, out.data());
  CHECK(out[0] == 0x22221111u);
  CHECK(out[1] == 0u);  // padded row
  CHECK(out[2] == 0x00003333u);
  // int8: 1 row, k = 6 -> 2 steps.
  std::vector<uint8_t> a8 = {1, 2, 3, 4, 5, 6};
  std::vector<uint32_t> out8(2);
  pack_a(a8.data(), 6, 1, 6, 1, 1, out8.data());
  CHECK(out8[0] == 0x04030201u);
  CHECK(out8[1] == 0x00000605u);
}

TEST_CASE("packing: B panels per k step, zero columns past N, thread ranges in place", "[packing]") {
  const int64_t kc = 3, nc = 10, nr = 4;  // 3 panels, the last 2 columns wide
  std::vector<float> b(size_t(kc * 12));
  std::iota(b.begin(), b.end(), 0.0f);
  std::vector<uint32_t> whole(size_t(3 * kc * nr), 1), split(size_t(3 * kc * nr), 1);
  pack_b(b.data(), 12, kc, nc, 4, int(nr), 0, 3, whole.data());
  pack_b(b.data(), 12, kc, nc, 4, int(nr), 0, 1, split.data());
  pack_b(b.data(), 12, kc, nc, 4, int(nr), 1, 3, split.data());
  CHECK(whole == split);
  auto f = [&](size_t i) { float x; std::memcpy(&x, &whole[i], 4); return x; };
  // Panel 1, step 2, column 3 -> b[2][4 + 3].
  CHECK(f(size_t(1 * kc * nr + 2 * nr + 3)) == b[2 * 12 + 7]);
  // Panel 2 holds columns 8, 9 and two zeros.
  CHECK(f(size_t(2 * kc * nr + 0)) == b[8]);
  CHECK(whole[size_t(2 * kc * nr + 2)] == 0u);
  CHECK(whole[size_t(2 * kc * nr + 3)] == 0u);
}

TEST_CASE("packing: bf16 pairs and int8 quads interleave rows of B, vector and scalar paths alike", "[packing]") {
  // 37 columns exercises the 8/16-wide SIMD path and the scalar tail; k = 5 leaves partial groups.
  const int64_t k = 5, n = 37, nr = 48;
  std::vector<uint16_t> b16(size_t(k * n));
  std::vector<uint8_t> b8(size_t(k * n));
  for (size_t i = 0; i < b16.size(); ++i) b16[i] = uint16_t(i * 7 + 1), b8[i] = uint8_t(i * 13 + 5);
  std::vector<uint32_t> p16(size_t(k_steps(k, 2) * nr)), p8(size_t(k_steps(k, 1) * nr));
  pack_b(b16.data(), n, k, n, 2, int(nr), 0, 1, p16.data());
  pack_b(b8.data(), n, k, n, 1, int(nr), 0, 1, p8.data());
  for (int64_t s = 0; s < k_steps(k, 2); ++s)
    for (int64_t j = 0; j < nr; ++j) {
      uint32_t want = 0;
      for (int q = 0; q < 2; ++q)
        if (j < n && s * 2 + q < k) want |= uint32_t(b16[size_t((s * 2 + q) * n + j)]) << (16 * q);
      INFO("bf16 step " << s << " column " << j);
      CHECK(p16[size_t(s * nr + j)] == want);
    }
  for (int64_t s = 0; s < k_steps(k, 1); ++s)
    for (int64_t j = 0; j < nr; ++j) {
      uint32_t want = 0;
      for (int q = 0; q < 4; ++q)
        if (j < n && s * 4 + q < k) want |= uint32_t(b8[size_t((s * 4 + q) * n + j)]) << (8 * q);
      INFO("int8 step " << s << " column " << j);
      CHECK(p8[size_t(s * nr + j)] == want);
    }
}

// The vector paths move 4 rows x 4 words at a time, a whole six-row panel's 4 words at once, and two
// leftover rows 4 words at a time: every row count (full groups, remainders, rows past M) and every
// k length (whole groups of 4 words, tails, partial words) must give the same panels as a plain
// element copy.
TEST_CASE("packing: A panels equal a plain transpose for every row count and k tail", "[packing]") {
  for (int es : {1, 2, 4}) {
    const int g = 4 / es;
    // mr 6: whole panels take the six-row path; mr 7 and 10 reach the pair path after a 4 x 4 block
    // (with one row after it, and none); 2 mr + 3 rows leave an edge panel of three.
    for (int mr : {1, 4, 6, 7, 8, 9, 10, 13}) {
      for (int64_t mc : {int64_t(1), int64_t(mr), int64_t(2 * mr + 3)}) {
        for (int64_t kc : {int64_t(1), int64_t(g * 4), int64_t(g * 4 + 1), int64_t(g * 9 + g - 1), int64_t(37)}) {
          const int64_t lda = kc + 3;
          std::vector<uint8_t> a(size_t(mc * lda * es));
          for (size_t i = 0; i < a.size(); ++i) a[i] = uint8_t(i * 31 + 7);
          const int64_t steps = k_steps(kc, es), panels = (mc + mr - 1) / mr;
          std::vector<uint32_t> got(size_t(panels * steps * mr), 0xdeadbeef);
          pack_a(a.data(), lda, mc, kc, es, mr, got.data());
          for (int64_t p = 0; p < panels; ++p)
            for (int64_t s = 0; s < steps; ++s)
              for (int r = 0; r < mr; ++r) {
                const int64_t row = p * mr + r;
                uint32_t want = 0;
                for (int b = 0; b < 4; ++b) {
                  const int64_t byte = s * 4 + b;  // byte of the row's k range
                  if (row < mc && byte < kc * es) want |= uint32_t(a[size_t(row * lda * es + byte)]) << (8 * b);
                }
                INFO("es " << es << " mr " << mr << " mc " << mc << " kc " << kc << " panel " << p << " step " << s
                           << " row " << r);
                REQUIRE(got[size_t((p * steps + s) * mr + r)] == want);
              }
        }
      }
    }
  }
}

TEST_CASE("packing: int8 A shifted by 128 and B panels with 128 x column sums undo each other", "[packing]") {
  // 3 rows x k 7 (two steps, the second partial), mr 4; B 7 x 6 into panels of nr 4 (two panels).
  const int64_t m = 3, k = 7, n = 6, nr = 4, steps = k_steps(k, 1);
  std::vector<uint8_t> a(size_t(m * k)), b(size_t(k * n));
  for (size_t i = 0; i < a.size(); ++i) a[i] = uint8_t(i * 37 + 200);  // over 127 too
  for (size_t i = 0; i < b.size(); ++i) b[i] = uint8_t(i * 53 + 11);   // signed, both signs
  std::vector<uint32_t> plain(size_t(steps * 4)), shifted(size_t(steps * 4));
  pack_a(a.data(), k, m, k, 1, 4, plain.data());
  pack_a(a.data(), k, m, k, 1, 4, shifted.data(), true);
  for (int64_t s = 0; s < steps; ++s)
    for (int r = 0; r < 4; ++r) {
      const size_t at = size_t(s * 4 + r);
      CHECK(shifted[at] == (r < m ? plain[at] ^ 0x80808080u : 0u));  // padding rows stay zero
    }
  REQUIRE(b_panel_words(steps, int(nr), true) == (steps + 1) * nr);
  std::vector<uint32_t> packed(size_t(2 * b_panel_words(steps, int(nr), true)), 7);
  pack_b(b.data(), n, k, n, 1, int(nr), 0, 2, packed.data(), true);
  // Words as without sums, then the sums row; columns past N sum to zero.
  std::vector<uint32_t> no_sums(size_t(2 * steps * nr));
  pack_b(b.data(), n, k, n, 1, int(nr), 0, 2, no_sums.data());
  for (int64_t p = 0; p < 2; ++p) {
    const uint32_t* panel = packed.data() + p * (steps + 1) * nr;
    for (int64_t w = 0; w < steps * nr; ++w) CHECK(panel[w] == no_sums[size_t(p * steps * nr + w)]);
    for (int64_t j = 0; j < nr; ++j) {
      int32_t sum = 0;
      for (int64_t kk = 0; kk < k && p * nr + j < n; ++kk) sum += int8_t(b[size_t(kk * n + p * nr + j)]);
      CHECK(int32_t(panel[steps * nr + j]) == 128 * sum);
    }
  }
  // The identity the kernels rely on, row 1 x column 2: sum (a-128) b + 128 sum b = sum a b.
  int32_t shifted_dot = 0, plain_dot = 0;
  for (int64_t kk = 0; kk < k; ++kk) {
    const int32_t av = a[size_t(1 * k + kk)], bv = int8_t(b[size_t(kk * n + 2)]);
    shifted_dot += int8_t(uint8_t(av ^ 0x80)) * bv;
    plain_dot += av * bv;
  }
  CHECK(shifted_dot + int32_t(packed[size_t(steps * nr + 2)]) == plain_dot);
}

TEST_CASE("packing: widened panels hold bf16 as f32 and int8 as int16 pairs, A zero- and B sign-extended", "[packing]") {
  // bf16 A: 2 rows, k = 3, mr 2 -> 3 steps of one f32 each (the bf16 bits in the top half).
  const std::vector<uint16_t> a16 = {0x3f80, 0xbf80, 0x4000, 0x1234, 0x5678, 0x9abc};
  std::vector<uint32_t> pa(3 * 2, 0xdeadbeef);
  pack_a(a16.data(), 3, 2, 3, 2, 2, pa.data(), false, true);
  CHECK(k_steps(3, 2, true) == 3);
  for (int s = 0; s < 3; ++s)
    for (int r = 0; r < 2; ++r) CHECK(pa[size_t(s * 2 + r)] == uint32_t(a16[size_t(r * 3 + s)]) << 16);
  // int8 A: 1 row of k = 3 (mr 2: one zero row) -> 2 steps of an int16 pair, the k tail zero.
  const std::vector<uint8_t> a8 = {200, 7, 255};
  std::vector<uint32_t> p8(2 * 2, 0xdeadbeef);
  pack_a(a8.data(), 3, 1, 3, 1, 2, p8.data(), false, true);
  CHECK(k_steps(3, 1, true) == 2);
  CHECK(p8[0] == (200u | 7u << 16));  // zero-extended: 200 stays 200
  CHECK(p8[1] == 0u);                 // the row past M
  CHECK(p8[2] == 255u);               // k = 3 is past K: zero in the high half
  CHECK(p8[3] == 0u);
  // int8 B: k = 3, n = 3, nr 4 -> 2 steps of 4 words; column 3 and k = 3 are zero.
  const std::vector<int8_t> b8 = {-1, 2, -128, 3, -4, 127, 5, 6, -7};
  std::vector<uint32_t> pb(2 * 4, 0xdeadbeef);
  pack_b(b8.data(), 3, 3, 3, 1, 4, 0, 1, pb.data(), false, true);
  auto pair = [](int lo, int hi) { return uint32_t(uint16_t(int16_t(lo))) | uint32_t(uint16_t(int16_t(hi))) << 16; };
  CHECK(pb[0] == pair(-1, 3));
  CHECK(pb[1] == pair(2, -4));
  CHECK(pb[2] == pair(-128, 127));
  CHECK(pb[3] == 0u);
  CHECK(pb[4] == pair(5, 0));
  CHECK(pb[6] == pair(-7, 0));
  CHECK(pb[7] == 0u);
  // bf16 B: each element its own f32 word.
  std::vector<uint32_t> pbf(3 * 4, 0xdeadbeef);
  pack_b(a16.data(), 3, 2, 3, 2, 4, 0, 1, pbf.data(), false, true);
  CHECK(pbf[0] == 0x3f800000u);
  CHECK(pbf[4 + 2] == 0x9abc0000u);
  CHECK(pbf[3] == 0u);
}

TEST_CASE("packing: tile A panels row by row, k steps padded to whole tile depths", "[packing]") {
  // k steps rounded up to blocks: 3 bf16 values are 2 steps, padded to 16 for a tile kernel.
  CHECK(k_steps(3, 2) == 2);
  CHECK(k_steps(3, 2, false, 16) == 16);
  CHECK(k_steps(64, 1, false, 16) == 16);  // 64 int8 values: exactly one tile depth
  CHECK(k_steps(65, 1, false, 16) == 32);
  // bf16, 3 rows x k 35 (lda 36), mr 2, depth 16: 18 steps, padded to 32 (two blocks). Panel 0 rows
  // 0-1, panel 1 row 2 and a zero row; in a panel, block 0's two rows (16 words each), then block 1's.
  const int64_t kc = 35, lda = 36, steps = 32, depth = 16;
  std::vector<uint16_t> a(size_t(3 * lda));
  for (int r = 0; r < 3; ++r)
    for (int k = 0; k < lda; ++k) a[size_t(r * lda + k)] = uint16_t((r + 1) << 8 | k);
  std::vector<uint32_t> out(size_t(2 * 2 * steps), 0xdeadbeef);
  pack_a_tile_blocks(a.data(), lda, 3, kc, 2, 2, steps, int(depth), out.data());
  auto word = [&](int r, int k) { return uint32_t(a[size_t(r * lda + k)]) | uint32_t(a[size_t(r * lda + k + 1)]) << 16; };
  CHECK(out[0] == word(0, 0));                 // panel 0, block 0, row 0, step 0
  CHECK(out[15] == word(0, 30));               // ... step 15: k 30 and 31
  CHECK(out[16] == word(1, 0));                // block 0, row 1 right after row 0
  CHECK(out[32] == word(0, 32));               // block 1, row 0, step 16: k 32 and 33
  CHECK(out[33] == uint32_t(a[34]));           // step 17: k 34 and a zero past kc
  for (int w = 34; w < 48; ++w) CHECK(out[size_t(w)] == 0u);  // padding steps of row 0
  CHECK(out[size_t(2 * steps)] == word(2, 0));  // panel 1, block 0, row 2
  for (int w = 16; w < 32; ++w) CHECK(out[size_t(2 * steps + w)] == 0u);  // the row past M
}

TEST_CASE("packing: a B panel padded to a tile depth ends in zero steps", "[packing]") {
  // int8, k 5 (2 steps of quads), 4 columns, nr 4, padded to 16 steps.
  std::vector<int8_t> b(5 * 4);
  std::iota(b.begin(), b.end(), int8_t(1));
  std::vector<uint32_t> out(size_t(16 * 4), 0xdeadbeef);
  pack_b(b.data(), 4, 5, 4, 1, 4, 0, 1, out.data(), false, false, 16);
  CHECK(out[0] == 0x0d090501u);  // column 0, k 0-3: 1, 5, 9, 13
  CHECK(out[4] == 0x00000011u);  // column 0, k 4: 17, then zeros past K
  for (size_t w = 8; w < out.size(); ++w) CHECK(out[w] == 0u);
}
