// The GEMM packing primitives (asm/pack.hpp) against a plain scalar reference written here, over
// every shape the ISA code splits into paths: row counts that fill whole 4-row blocks, leave 2 or 3
// or 1 behind, the 6-row panel with its own fast path, k tails of 0..3 words past whole 4-word
// steps, and B steps of 0..40 columns (whole 8/16-column vectors and the scalar tail). Each row is
// its own allocation of exactly the bytes it must hold, at an address off any vector alignment, so
// a read past a row's end or an assumed alignment shows (under the sanitizers, as an error). The
// output carries guard words after its end, and every output word starts as a sentinel: a word left
// unwritten, a zero fill missed, or a store past the end all read as a mismatch.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "asm/pack.hpp"

namespace {

constexpr uint32_t kSentinel = 0xdeadbeefu;
constexpr size_t kGuardWords = 8;

// A row of `bytes` random bytes starting `offset` bytes into its own allocation. The allocation
// is exactly offset + bytes long, so anything read past the row's end is outside it.
struct Row {
  std::vector<uint8_t> storage;
  size_t offset = 0;
  const uint8_t* data() const { return storage.data() + offset; }
};

Row random_row(std::mt19937& rng, size_t offset, size_t bytes) {
  Row r;
  r.offset = offset;
  r.storage.resize(offset + bytes);
  // Bytes before the row are random too: a read that starts early picks up a wrong value.
  for (auto& b : r.storage) b = uint8_t(rng());
  return r;
}

// Little-endian assembly of a word from bytes: the packed layouts are defined in memory order,
// byte 0 in the low bits (both hosts the packing runs on are little-endian).
uint32_t word_of(const uint8_t* p) {
  return uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 | uint32_t(p[3]) << 24;
}

// The header's definition of transpose_words, one word at a time.
std::vector<uint32_t> reference_transpose(const std::vector<Row>& rows, int nrows, int64_t words, int stride) {
  std::vector<uint32_t> out(size_t(words * stride) + kGuardWords, kSentinel);
  for (int64_t s = 0; s < words; ++s)
    for (int r = 0; r < stride; ++r)
      out[size_t(s * stride + r)] = r < nrows ? word_of(rows[size_t(r)].data() + 4 * s) : 0u;
  return out;
}

// The header's definition of interleave_rows: element j + c of row g (elem bytes, little-endian)
// at bits [8 * elem * g, 8 * elem * (g + 1)) of word c; a null row gives zeros.
std::vector<uint32_t> reference_interleave(const std::vector<const uint8_t*>& rows, int group, int64_t j,
                                           int64_t cols) {
  const int elem = 4 / group;
  std::vector<uint32_t> out(size_t(cols) + kGuardWords, kSentinel);
  for (int64_t c = 0; c < cols; ++c) {
    uint32_t w = 0;
    for (int g = 0; g < group; ++g)
      for (int b = 0; b < elem && rows[size_t(g)]; ++b)
        w |= uint32_t(rows[size_t(g)][(j + c) * elem + b]) << (8 * (elem * g + b));
    out[size_t(c)] = w;
  }
  return out;
}

// The first differing word, or "" when the two agree (one CHECK per shape, with a readable message).
std::string first_difference(const std::vector<uint32_t>& got, const std::vector<uint32_t>& want,
                             size_t payload_words) {
  for (size_t i = 0; i < want.size(); ++i)
    if (got[i] != want[i]) {
      std::ostringstream s;
      s << (i < payload_words ? "word " : "guard word past the end: ") << i << " is 0x" << std::hex << got[i]
        << ", expected 0x" << want[i];
      return s.str();
    }
  return "";
}

// Output buffers start 0..3 words past a 16-byte boundary, so the vector stores meet every
// misalignment a uint32_t pointer can have. The words skipped before the start stay sentinels too.
struct OutBuffer {
  std::vector<uint32_t> storage;
  size_t shift;
  OutBuffer(size_t words, size_t shift_words)
      : storage(shift_words + words + kGuardWords, kSentinel), shift(shift_words) {}
  uint32_t* data() { return storage.data() + shift; }
  // `want` covers the output and its guard words after it.
  std::string difference(const std::vector<uint32_t>& want, size_t payload_words) const {
    for (size_t i = 0; i < shift; ++i)
      if (storage[i] != kSentinel) return "a word before the start was written";
    return first_difference(std::vector<uint32_t>(storage.begin() + long(shift), storage.end()), want, payload_words);
  }
};

}  // namespace

TEST_CASE("pack: transpose_words equals the scalar transpose for every row count, stride and k tail",
          "[pack]") {
  std::mt19937 rng(20240601);
  // words 0..13 covers zero, one to three whole 4-word steps and every tail of 0..3 past them.
  for (int nrows = 1; nrows <= 12; ++nrows)
    for (int stride = nrows; stride <= nrows + 3; ++stride)
      for (int64_t words = 0; words <= 13; ++words) {
        std::vector<Row> rows;
        std::vector<const uint8_t*> ptrs;
        for (int r = 0; r < nrows; ++r) {
          // Odd offsets 1, 3, 5, ... 15: no row 2-, 4- or 16-byte aligned, each misaligned differently.
          rows.push_back(random_row(rng, size_t(2 * (r % 8) + 1), size_t(4 * words)));
          ptrs.push_back(rows.back().data());
        }
        const auto want = reference_transpose(rows, nrows, words, stride);
        OutBuffer out(size_t(words * stride), size_t(nrows + words) % 4);
        peakprobe::isa::transpose_words(ptrs.data(), nrows, words, stride, out.data());
        INFO("nrows " << nrows << ", stride " << stride << ", words " << words);
        CHECK(out.difference(want, size_t(words * stride)) == "");
      }
}

TEST_CASE("pack: transpose_words on whole six-row panels, the usual block depth and past it", "[pack]") {
  // Six rows under a stride of six take their own path, 4 words at a time; the sweep above only
  // reaches 13 words. The usual panel is 64 words deep; 66 and 67 add a tail after many steps.
  // Stride 7 and 8 with six rows and stride 6 with five rows must not take that path.
  std::mt19937 rng(7);
  struct Shape {
    int nrows, stride;
    int64_t words;
  };
  for (const Shape sh : {Shape{6, 6, 64}, Shape{6, 6, 66}, Shape{6, 6, 67}, Shape{6, 6, 4}, Shape{6, 7, 64},
                         Shape{6, 8, 67}, Shape{5, 6, 64}, Shape{12, 12, 65}, Shape{4, 4, 64}}) {
    std::vector<Row> rows;
    std::vector<const uint8_t*> ptrs;
    for (int r = 0; r < sh.nrows; ++r) {
      rows.push_back(random_row(rng, size_t(2 * r + 1), size_t(4 * sh.words)));
      ptrs.push_back(rows.back().data());
    }
    const auto want = reference_transpose(rows, sh.nrows, sh.words, sh.stride);
    OutBuffer out(size_t(sh.words * sh.stride), 1);
    peakprobe::isa::transpose_words(ptrs.data(), sh.nrows, sh.words, sh.stride, out.data());
    INFO("nrows " << sh.nrows << ", stride " << sh.stride << ", words " << sh.words);
    CHECK(out.difference(want, size_t(sh.words * sh.stride)) == "");
  }
}

TEST_CASE("pack: interleave_rows equals the scalar interleave for pairs and quads, any offset, null rows",
          "[pack]") {
  std::mt19937 rng(99);
  for (int group : {2, 4}) {
    const int elem = 4 / group;
    // Row starts off vector alignment, at odd bytes: the header asks for no alignment, not even
    // of a 2-byte element (the sanitizer build aborts on a misaligned read).
    auto offset = [&](int g) { return size_t(2 * g + 1); };
    for (int64_t j : {0, 1, 3, 8, 17})
      for (int64_t cols = 0; cols <= 40; ++cols)
        // Every subset of null rows (bit g set: row g is past K), from none to all.
        for (unsigned nulls = 0; nulls < (1u << group); ++nulls) {
          std::vector<Row> rows;
          std::vector<const uint8_t*> ptrs;
          for (int g = 0; g < group; ++g) {
            rows.push_back(random_row(rng, offset(g), size_t((j + cols) * elem)));
            ptrs.push_back(nulls >> g & 1 ? nullptr : rows.back().data());
          }
          const auto want = reference_interleave(ptrs, group, j, cols);
          OutBuffer out(size_t(cols), size_t(cols + j) % 4);
          peakprobe::isa::interleave_rows(ptrs.data(), group, j, cols, out.data());
          INFO("group " << group << ", j " << j << ", cols " << cols << ", null rows mask " << nulls);
          CHECK(out.difference(want, size_t(cols)) == "");
        }
  }
}

TEST_CASE("pack: interleave_rows puts row 0 in the low bits", "[pack]") {
  // The reference above could share a mistake with the code; this pins the layout by hand.
  const uint8_t a[] = {0x11, 0x22, 0x33, 0x44}, b[] = {0x55, 0x66, 0x77, 0x88};
  const uint8_t c[] = {0x99, 0xaa}, d[] = {0xbb, 0xcc};
  uint32_t out[3] = {kSentinel, kSentinel, kSentinel};
  const uint8_t* pairs[2] = {a, b};
  peakprobe::isa::interleave_rows(pairs, 2, 0, 2, out);
  CHECK(out[0] == 0x66552211u);
  CHECK(out[1] == 0x88774433u);
  CHECK(out[2] == kSentinel);
  const uint8_t* quads[4] = {a, b, c, d};
  peakprobe::isa::interleave_rows(quads, 4, 1, 1, out);
  CHECK(out[0] == 0xccaa6622u);
  CHECK(out[1] == 0x88774433u);  // untouched: one column only
  const uint8_t* holes[4] = {nullptr, b, nullptr, d};
  peakprobe::isa::interleave_rows(holes, 4, 0, 1, out);
  CHECK(out[0] == 0xbb005500u);
}

TEST_CASE("pack: transpose_words puts word s of row r at s * stride + r", "[pack]") {
  // By hand, for the same reason: three rows of two words under a stride of four.
  const uint32_t r0[] = {0x0a0a0a0a, 0x0b0b0b0b}, r1[] = {0x1a1a1a1a, 0x1b1b1b1b}, r2[] = {0x2a2a2a2a, 0x2b2b2b2b};
  const uint8_t* rows[3] = {reinterpret_cast<const uint8_t*>(r0), reinterpret_cast<const uint8_t*>(r1),
                            reinterpret_cast<const uint8_t*>(r2)};
  uint32_t out[9];
  std::fill(std::begin(out), std::end(out), kSentinel);
  peakprobe::isa::transpose_words(rows, 3, 2, 4, out);
  const uint32_t want[9] = {0x0a0a0a0a, 0x1a1a1a1a, 0x2a2a2a2a, 0, 0x0b0b0b0b, 0x1b1b1b1b, 0x2b2b2b2b, 0, kSentinel};
  for (int i = 0; i < 9; ++i) {
    INFO("word " << i);
    CHECK(out[i] == want[i]);
  }
}
