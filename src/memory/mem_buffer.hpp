// Anonymous memory for memory probes, 2 MiB aligned, with a transparent-huge-page request and a
// check of what the kernel actually granted.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

namespace peakprobe {

class MemBuffer {
 public:
  enum class Pages { small, huge };  // 4 KiB (MADV_NOHUGEPAGE) or 2 MiB (MADV_HUGEPAGE)
  MemBuffer(size_t bytes, Pages pages);
  ~MemBuffer();
  MemBuffer(const MemBuffer&) = delete;
  MemBuffer& operator=(const MemBuffer&) = delete;
  bool ok() const { return data_ != nullptr; }
  uint8_t* data() const { return data_; }
  size_t size() const { return bytes_; }
  // "4k", "2m" or "mixed": from AnonHugePages of this mapping in /proc/self/smaps (after touching).
  std::string granted_pages() const;

 private:
  uint8_t* map_ = nullptr;
  size_t map_bytes_ = 0;
  uint8_t* data_ = nullptr;
  size_t bytes_ = 0;
};

}  // namespace peakprobe
