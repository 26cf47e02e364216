#include "harness/probe_buffer.hpp"

#include "asm/target.hpp"

#include <sys/mman.h>

#include <cstring>

namespace peakprobe {

ProbeBuffer::ProbeBuffer() {
  data_ = static_cast<uint8_t*>(isa::map_low_pages(kBytes));
}

ProbeBuffer::~ProbeBuffer() {
  if (data_) munmap(data_, kBytes);
}

void ProbeBuffer::fill(const uint8_t pattern[64], int chase_bits, bool byteswap) {
  if (!data_) return;
  const uint64_t addr = reinterpret_cast<uint64_t>(data_);
  const uint64_t self = byteswap && chase_bits == 64 ? __builtin_bswap64(addr) : addr;
  for (size_t off = 0; off < kBytes; off += 64) {
    if (chase_bits == 64) {
      for (size_t i = 0; i < 64; i += 8) std::memcpy(data_ + off + i, &self, 8);
    } else if (chase_bits == 32) {
      const uint32_t self32 = byteswap ? __builtin_bswap32(uint32_t(addr)) : uint32_t(addr);
      for (size_t i = 0; i < 64; i += 4) std::memcpy(data_ + off + i, &self32, 4);
    } else {
      std::memcpy(data_ + off, pattern, 64);
    }
  }
}

}  // namespace peakprobe
