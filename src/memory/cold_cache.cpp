#include "memory/cold_cache.hpp"

#include <fmt/format.h>
#include <sys/mman.h>

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <map>

#include "memory/sizes.hpp"

namespace peakprobe {

namespace {

constexpr uint64_t kPage = 4096;
constexpr uint64_t kLine = 64;
constexpr uint64_t kMiB = uint64_t{1} << 20;

uint64_t round_up(uint64_t v, uint64_t to) { return (v + to - 1) / to * to; }

// Rotated arguments, by index: every argument (all) or the weights (wei).
std::vector<std::size_t> rotated_args(ColdCacheMode mode, const std::vector<ColdCacheArg>& args) {
  std::vector<std::size_t> out;
  for (std::size_t i = 0; i < args.size(); ++i)
    if (mode == ColdCacheMode::all || (mode == ColdCacheMode::wei && args[i].is_weights)) out.push_back(i);
  return out;
}

}  // namespace

Expected<ColdCacheMode> parse_cold_cache_mode(const std::string& text) {
  for (ColdCacheMode m : {ColdCacheMode::none, ColdCacheMode::wei, ColdCacheMode::all})
    if (text == to_string(m)) return m;
  return make_error(fmt::format("unknown cold-cache mode '{}' (choices: none, wei, all)", text));
}

const char* to_string(ColdCacheMode mode) {
  switch (mode) {
    case ColdCacheMode::none: return "none";
    case ColdCacheMode::wei: return "wei";
    case ColdCacheMode::all: return "all";
  }
  return "none";
}

uint64_t cold_cache_pile_bytes(const CpuInfo& cpu, int threads) {
  const int smt = std::max(cpu.smt_per_core, 1);
  // Per level, one core's share; the largest entry where a level appears twice (hybrid CPUs).
  std::map<int, uint64_t> per_core;
  for (const CacheLevel& c : cpu.caches) {
    if (c.level < 2 || c.type == "instruction" || c.size_bytes == 0) continue;
    const uint64_t cores_sharing = static_cast<uint64_t>(std::max(c.shared_by_cpus / smt, 1));
    uint64_t& share = per_core[c.level];
    share = std::max(share, c.size_bytes / cores_sharing);
  }
  uint64_t core_bytes = 0;
  for (const auto& [level, share] : per_core) core_bytes += share;
  if (core_bytes == 0) return 64 * kMiB;
  int cores = std::max(threads, 1);
  // SMT siblings share their core's caches: threads beyond the cores add nothing to evict.
  if (cpu.physical_cores > 0) cores = std::min(cores, cpu.physical_cores);
  return 3 * core_bytes * static_cast<uint64_t>(cores);
}

uint64_t cold_cache_tlb_bytes(uint64_t pile_bytes) {
  constexpr uint64_t kMax = 1024 * kMiB;
  return std::max(round_up(std::min(pile_bytes, kMax / 2) * 2, kPage), kPage);
}

void ColdCache::FreeDeleter::operator()(void* p) const { std::free(p); }

void ColdCache::UnmapDeleter::operator()(void* p) const {
  if (p) munmap(p, bytes);
}

Expected<ColdCache> ColdCache::create(ColdCacheMode mode, std::vector<ColdCacheArg> args, uint64_t pile_bytes,
                                      bool flush_tlb) {
  ColdCache cache;
  cache.mode_ = mode;
  cache.args_ = std::move(args);
  for (const ColdCacheArg& a : cache.args_) cache.current_.push_back(a.ptr);
  if (flush_tlb) {
    Expected<bool> mapped = cache.map_tlb_buffer(pile_bytes);
    if (!mapped) return make_error(mapped.error());
  }
  if (mode == ColdCacheMode::none) return cache;

  const std::vector<std::size_t> rotated = rotated_args(mode, cache.args_);
  if (rotated.empty())
    return make_error(mode == ColdCacheMode::wei ? "cold-cache mode wei: no argument is marked as weights"
                                                 : "cold-cache mode all: no arguments to rotate");
  uint64_t rotated_bytes = 0;
  for (std::size_t i : rotated) {
    const ColdCacheArg& a = cache.args_[i];
    if (!a.ptr) return make_error(fmt::format("cold cache: argument {} has no pointer", i));
    rotated_bytes += a.bytes;
  }
  if (rotated_bytes == 0) return make_error("cold cache: the rotated arguments hold 0 bytes");
  const uint64_t copies = std::max<uint64_t>(2, (pile_bytes + rotated_bytes - 1) / rotated_bytes);
  if (copies > static_cast<uint64_t>(INT_MAX))
    return make_error(fmt::format("cold cache: {} copies of {} needed to fill {}; too many", copies,
                                  format_bytes(rotated_bytes), format_bytes(pile_bytes)));
  cache.copies_ = static_cast<int>(copies);
  for (std::size_t i : rotated) {
    Expected<bool> added = cache.add_slab(i);
    if (!added) return make_error(added.error());
  }
  return cache;
}

Expected<bool> ColdCache::add_slab(std::size_t arg) {
  const ColdCacheArg& a = args_[arg];
  // Copies of a page or more start on their own page: the L2 streamer prefetches within a page, so
  // the end of one copy does not pull in the start of the next. Smaller ones are packed by line.
  const uint64_t align = a.bytes >= kPage ? kPage : kLine;
  const uint64_t stride = round_up(std::max<uint64_t>(a.bytes, 1), align);
  uint64_t total = 0;
  if (__builtin_mul_overflow(stride, static_cast<uint64_t>(copies_), &total))
    return make_error(fmt::format("cold cache: {} copies of argument {} overflow the address space", copies_, arg));
  void* block = std::aligned_alloc(align, total);
  if (!block)
    return make_error(fmt::format("cold cache: cannot allocate {} copies of argument {} ({} in all)", copies_, arg,
                                  format_bytes(total)));
  Slab slab{arg, stride, std::unique_ptr<std::byte, FreeDeleter>(static_cast<std::byte*>(block))};
  for (int k = 0; k < copies_; ++k) std::memcpy(slab.block.get() + static_cast<uint64_t>(k) * stride, a.ptr, a.bytes);
  slabs_.push_back(std::move(slab));
  bytes_allocated_ += total;
  return true;
}

Expected<bool> ColdCache::map_tlb_buffer(uint64_t pile_bytes) {
  const uint64_t bytes = cold_cache_tlb_bytes(pile_bytes);
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED)
    return make_error(fmt::format("cold cache: cannot map {} for the TLB flush", format_bytes(bytes)));
  // With transparent huge pages one 2 MiB entry would cover 512 of the 4 KiB steps, and the walk
  // would evict a 512th of the entries it should. A refusal leaves 4 KiB pages likely anyway.
  madvise(p, bytes, MADV_NOHUGEPAGE);
  tlb_ = std::unique_ptr<std::byte, UnmapDeleter>(static_cast<std::byte*>(p), UnmapDeleter{bytes});
  // Write each page once now: an untouched page reads as the shared zero page, and the first walk
  // would pay page faults instead of TLB misses.
  for (uint64_t off = 0; off < bytes; off += kPage) tlb_.get()[off] = std::byte{1};
  tlb_bytes_ = bytes;
  bytes_allocated_ += bytes;
  return true;
}

const std::vector<void*>& ColdCache::next() {
  if (copies_ == 0) return current_;
  for (const Slab& s : slabs_) current_[s.arg] = s.block.get() + static_cast<uint64_t>(next_copy_) * s.stride;
  next_copy_ = (next_copy_ + 1) % copies_;
  return current_;
}

void ColdCache::flush_tlb() {
  if (!tlb_) return;
  const volatile std::byte* p = tlb_.get();
  unsigned sum = 0;
  for (uint64_t off = 0; off < tlb_bytes_; off += kPage) sum += static_cast<unsigned>(p[off]);
  tlb_sink_ += sum;
}

}  // namespace peakprobe
