// The memory a probe's loads, stores and gathers touch: 64 KiB, L1/L2 resident, mapped by the target
// (isa::map_low_pages): below 4 GiB where the ISA has 32-bit loads that a pointer chase may use, so
// that a 32-bit load of a pointer is still the pointer.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

namespace peakprobe {

class ProbeBuffer {
 public:
  static constexpr size_t kBytes = 64 * 1024;
  ProbeBuffer();
  ~ProbeBuffer();
  ProbeBuffer(const ProbeBuffer&) = delete;
  ProbeBuffer& operator=(const ProbeBuffer&) = delete;
  bool ok() const { return data_ != nullptr; }
  uint8_t* data() const { return data_; }
  // Fills the buffer with the 64-byte data pattern, or with the buffer's own address in every 32- or
  // 64-bit word (chase_bits) so that any aligned load of a word yields the start address again.
  // With `byteswap` the words hold the address byte-swapped (what a byte-swapping load reads back as
  // the address).
  void fill(const uint8_t pattern[64], int chase_bits, bool byteswap = false);

 private:
  uint8_t* data_ = nullptr;
};

}  // namespace peakprobe
