// Tests for src/harness/probe_buffer.cpp: the buffer every probe's memory operands touch is whole
// pages (where it lies is the target's: isa::map_low_pages), and its fills give the data pattern or
// a pointer to itself at every word.
#include <catch2/catch.hpp>

#include <cstdint>
#include <cstring>

#include "harness/probe_buffer.hpp"

using namespace peakprobe;

TEST_CASE("probe buffer: whole pages, filled with the pattern or with pointers to itself",
          "[probe_buffer]") {
  ProbeBuffer buf;
  REQUIRE(buf.ok());
  const auto base = reinterpret_cast<uintptr_t>(buf.data());
  CHECK(base % 4096 == 0);
  uint8_t pattern[64];
  for (int i = 0; i < 64; ++i) pattern[i] = uint8_t(i * 7 + 1);
  buf.fill(pattern, 0);
  for (size_t off = 0; off < ProbeBuffer::kBytes; off += 64) CHECK(std::memcmp(buf.data() + off, pattern, 64) == 0);
  // Every aligned 64-bit word holds the start address; every 32-bit word, its low half.
  buf.fill(pattern, 64);
  for (size_t off = 0; off < ProbeBuffer::kBytes; off += 8) {
    uint64_t w = 0;
    std::memcpy(&w, buf.data() + off, 8);
    CHECK(w == base);
  }
  buf.fill(pattern, 32);
  for (size_t off = 0; off < ProbeBuffer::kBytes; off += 4) {
    uint32_t w = 0;
    std::memcpy(&w, buf.data() + off, 4);
    CHECK(w == uint32_t(base));
  }
  // Byte-swapped: what a byte-swapping load reads back as the address.
  buf.fill(pattern, 64, true);
  uint64_t w = 0;
  std::memcpy(&w, buf.data() + 64, 8);
  CHECK(__builtin_bswap64(w) == base);
}
