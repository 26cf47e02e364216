// Cold-cache runs for kernel benchmarks, as oneDNN's benchdnn --cold-cache does: every run reads
// its arguments from a different copy, and the copies together are larger than the caches, so no
// run finds its data left in cache by the run before. Optionally the TLB is flushed too.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "peakprobe/cpu_info.hpp"
#include "peakprobe/expected.hpp"

namespace peakprobe {

// none: warm runs; wei: only the arguments marked as weights are rotated (the activations of a
// layer usually come warm from the layer before); all: every argument is rotated.
enum class ColdCacheMode { none, wei, all };

Expected<ColdCacheMode> parse_cold_cache_mode(const std::string& text);
const char* to_string(ColdCacheMode mode);

// Bytes of copies that evict the caches of the cores used: 3 x (L2 + L3 per core) x cores, where
// a shared cache counts as its size / the cores sharing it, cores = min(threads, physical cores).
// Three times the capacity because caches are not perfect LRU: data survives one pass over a
// working set the cache's size. 64 MiB when the CPU reports no L2 or larger caches.
uint64_t cold_cache_pile_bytes(const CpuInfo& cpu, int threads);

// Size of the TLB-flush buffer for a pile: 2 x pile_bytes, at most 1 GiB (the largest second-level
// TLBs cover a few thousand 4 KiB pages, far less), whole pages, at least one.
uint64_t cold_cache_tlb_bytes(uint64_t pile_bytes);

struct ColdCacheArg {
  void* ptr = nullptr;
  std::size_t bytes = 0;
  bool is_weights = false;  // rotated in mode wei
};

class ColdCache {
 public:
  // Copies of the rotated arguments until copies x (their bytes together) >= pile_bytes, at least
  // 2, each filled from the original. With flush_tlb, also a separate buffer of
  // cold_cache_tlb_bytes(pile_bytes) for flush_tlb(). Errors: wei with no argument marked as weights, a rotated argument
  // with no pointer, nothing to rotate, memory that cannot be had.
  static Expected<ColdCache> create(ColdCacheMode mode, std::vector<ColdCacheArg> args, uint64_t pile_bytes,
                                    bool flush_tlb = false);

  ColdCache(ColdCache&&) noexcept = default;
  ColdCache& operator=(ColdCache&&) noexcept = default;
  ColdCache(const ColdCache&) = delete;
  ColdCache& operator=(const ColdCache&) = delete;
  ~ColdCache() = default;

  // The argument pointers for the next run, in the order given: copy 0, 1, ..., wrapping, for the
  // rotated arguments; the original pointer for the others. Valid until the next call.
  const std::vector<void*>& next();
  // Touches one byte of every 4 KiB page of the TLB buffer so the translations of the copies are
  // evicted. Does nothing when the cache was created without flush_tlb.
  void flush_tlb();

  int copies() const { return copies_; }               // 0 in mode none
  uint64_t bytes_allocated() const { return bytes_allocated_; }
  uint64_t tlb_buffer_bytes() const { return tlb_bytes_; }
  ColdCacheMode mode() const { return mode_; }

 private:
  struct FreeDeleter {
    void operator()(void* p) const;
  };
  // No default member initializer: the class must be default-constructible while ColdCache is still
  // incomplete; unique_ptr value-initializes it to 0.
  struct UnmapDeleter {
    std::size_t bytes;
    void operator()(void* p) const;
  };
  // All copies of one rotated argument in one block, copy k at k * stride.
  struct Slab {
    std::size_t arg = 0;
    std::size_t stride = 0;
    std::unique_ptr<std::byte, FreeDeleter> block;
  };

  ColdCache() = default;
  Expected<bool> add_slab(std::size_t arg);
  Expected<bool> map_tlb_buffer(uint64_t pile_bytes);

  ColdCacheMode mode_ = ColdCacheMode::none;
  std::vector<ColdCacheArg> args_;
  std::vector<Slab> slabs_;
  std::vector<void*> current_;
  int copies_ = 0;
  int next_copy_ = 0;
  uint64_t bytes_allocated_ = 0;
  std::unique_ptr<std::byte, UnmapDeleter> tlb_;
  uint64_t tlb_bytes_ = 0;
  unsigned tlb_sink_ = 0;  // what flush_tlb read, kept so the reads have a use
};

}  // namespace peakprobe
