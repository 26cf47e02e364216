// Anonymous memory for memory probes, 2 MiB aligned, with a transparent-huge-page request and a
// check of what the kernel actually granted.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
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
  Pages pages() const { return pages_; }
  // "4k", "2m" or "mixed": from AnonHugePages of this mapping in /proc/self/smaps (after touching).
  std::string granted_pages() const;

 private:
  uint8_t* map_ = nullptr;
  size_t map_bytes_ = 0;
  uint8_t* data_ = nullptr;
  size_t bytes_ = 0;
  Pages pages_ = Pages::small;
};

// The buffer in `slot` when it serves a request for `bytes` of `pages`: at least that large and no
// more than twice (so a small working set never sits in a giant mapping, and the memory held stays
// within twice the request); otherwise the old one is unmapped first and a new one mapped into the
// slot. Check ok() on the result.
MemBuffer& reuse_or_map(std::unique_ptr<MemBuffer>& slot, size_t bytes, MemBuffer::Pages pages);

}  // namespace peakprobe
