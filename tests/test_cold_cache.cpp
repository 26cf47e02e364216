// Tests for src/memory/cold_cache.cpp: which arguments rotate, through how many distinct copies with
// the original content, how large the pile is, and failures as values.
#include <catch2/catch.hpp>

#include <cstdint>
#include <cstring>
#include <numeric>
#include <set>
#include <vector>

#include "memory/cold_cache.hpp"

using namespace peakprobe;

namespace {

constexpr uint64_t KiB = 1024;
constexpr uint64_t MiB = 1024 * KiB;

// Three arguments of a kernel: source, weights, destination, each with its own byte pattern.
struct Args {
  std::vector<unsigned char> src = pattern(48 * KiB, 1);
  std::vector<unsigned char> wei = pattern(64 * KiB, 2);
  std::vector<unsigned char> dst = pattern(1000, 3);

  static std::vector<unsigned char> pattern(std::size_t n, int salt) {
    std::vector<unsigned char> v(n);
    for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<unsigned char>(i * 7 + static_cast<std::size_t>(salt));
    return v;
  }
  std::vector<ColdCacheArg> list() {
    return {{src.data(), src.size(), false}, {wei.data(), wei.size(), true}, {dst.data(), dst.size(), false}};
  }
  uint64_t total() const { return src.size() + wei.size() + dst.size(); }
};

bool same_bytes(const void* p, const std::vector<unsigned char>& original) {
  return std::memcmp(p, original.data(), original.size()) == 0;
}

bool aligned64(const void* p) { return reinterpret_cast<uintptr_t>(p) % 64 == 0; }

}  // namespace

TEST_CASE("parse_cold_cache_mode", "[memory]") {
  CHECK(*parse_cold_cache_mode("none") == ColdCacheMode::none);
  CHECK(*parse_cold_cache_mode("wei") == ColdCacheMode::wei);
  CHECK(*parse_cold_cache_mode("all") == ColdCacheMode::all);
  for (const char* bad : {"", "weights", "ALL ", "cold"}) {
    const auto r = parse_cold_cache_mode(bad);
    REQUIRE_FALSE(r.ok());
    CHECK_THAT(r.error(), Catch::Contains(std::string("'") + bad + "'") && Catch::Contains("none, wei, all"));
  }
  CHECK(std::string(to_string(ColdCacheMode::wei)) == "wei");
}

TEST_CASE("cold_cache_pile_bytes: 3 x (L2 + L3 per core) x cores", "[memory]") {
  CpuInfo cpu;
  cpu.physical_cores = 2;
  cpu.logical_cpus = 2;
  cpu.caches = {{1, "data", 32 * KiB, 64, 8, 1, 2},
                {1, "instruction", 32 * KiB, 64, 8, 1, 2},
                {2, "unified", 1 * MiB, 64, 8, 1, 2},
                {3, "unified", 32 * MiB, 64, 16, 2, 1}};
  CHECK(cold_cache_pile_bytes(cpu, 2) == 102 * MiB);
  CHECK(cold_cache_pile_bytes(cpu, 1) == 51 * MiB);
  CHECK(cold_cache_pile_bytes(cpu, 8) == 102 * MiB);  // only 2 cores to evict

  // With SMT the sharing count is in logical CPUs: 2 cores of 2 threads share the L3, L2 per core.
  CpuInfo smt = cpu;
  smt.smt_per_core = 2;
  smt.logical_cpus = 4;
  smt.caches = {{2, "unified", 1 * MiB, 64, 8, 2, 2}, {3, "unified", 32 * MiB, 64, 16, 4, 1}};
  CHECK(cold_cache_pile_bytes(smt, 2) == 102 * MiB);

  CHECK(cold_cache_pile_bytes(CpuInfo{}, 4) == 64 * MiB);  // caches unknown
}

TEST_CASE("cold_cache_tlb_bytes: twice the pile, at most 1 GiB", "[memory]") {
  CHECK(cold_cache_tlb_bytes(1 * MiB) == 2 * MiB);
  CHECK(cold_cache_tlb_bytes(102 * MiB) == 204 * MiB);
  CHECK(cold_cache_tlb_bytes(4096 * MiB) == 1024 * MiB);
  CHECK(cold_cache_tlb_bytes(0) == 4096);
  CHECK(cold_cache_tlb_bytes(1000) % 4096 == 0);
}

TEST_CASE("ColdCache none: the original pointers every time", "[memory]") {
  Args a;
  auto cache = ColdCache::create(ColdCacheMode::none, a.list(), 1 * MiB);
  REQUIRE(cache.ok());
  CHECK(cache->copies() == 0);
  CHECK(cache->bytes_allocated() == 0);
  for (int run = 0; run < 3; ++run) {
    const auto& p = cache->next();
    REQUIRE(p.size() == 3);
    CHECK(p[0] == a.src.data());
    CHECK(p[1] == a.wei.data());
    CHECK(p[2] == a.dst.data());
  }
}

TEST_CASE("ColdCache wei: only the weights rotate, through distinct identical copies", "[memory]") {
  Args a;
  const uint64_t pile = 1 * MiB;
  auto cache = ColdCache::create(ColdCacheMode::wei, a.list(), pile);
  REQUIRE(cache.ok());
  const int n = cache->copies();
  CHECK(n == 16);  // 1 MiB / 64 KiB
  CHECK(static_cast<uint64_t>(n) * a.wei.size() >= pile);
  CHECK(cache->bytes_allocated() >= static_cast<uint64_t>(n) * a.wei.size());

  std::vector<void*> first;
  std::set<void*> seen;
  for (int run = 0; run < n; ++run) {
    const auto p = cache->next();
    if (run == 0) first = p;
    CHECK(p[0] == a.src.data());
    CHECK(p[2] == a.dst.data());
    CHECK(p[1] != a.wei.data());
    CHECK(aligned64(p[1]));
    CHECK(same_bytes(p[1], a.wei));
    seen.insert(p[1]);
  }
  CHECK(seen.size() == static_cast<std::size_t>(n));
  CHECK(cache->next() == first);  // wraps to the first copy

  // The copies do not overlap: a write to one leaves the others as they were.
  auto* w = static_cast<unsigned char*>(first[1]);
  std::memset(w, 0xAB, a.wei.size());
  CHECK(same_bytes(cache->next()[1], a.wei));
}

TEST_CASE("ColdCache all: every argument rotates", "[memory]") {
  Args a;
  const uint64_t pile = 1 * MiB;
  auto cache = ColdCache::create(ColdCacheMode::all, a.list(), pile);
  REQUIRE(cache.ok());
  const int n = cache->copies();
  CHECK(static_cast<uint64_t>(n) * a.total() >= pile);
  CHECK(static_cast<uint64_t>(n - 1) * a.total() < pile);  // no more than needed
  std::vector<std::set<void*>> seen(3);
  for (int run = 0; run < n; ++run) {
    const auto& p = cache->next();
    CHECK(p[0] != a.src.data());
    CHECK(p[1] != a.wei.data());
    CHECK(p[2] != a.dst.data());
    CHECK(same_bytes(p[0], a.src));
    CHECK(same_bytes(p[1], a.wei));
    CHECK(same_bytes(p[2], a.dst));
    for (int k = 0; k < 3; ++k) {
      CHECK(aligned64(p[static_cast<std::size_t>(k)]));
      seen[static_cast<std::size_t>(k)].insert(p[static_cast<std::size_t>(k)]);
    }
  }
  for (const auto& s : seen) CHECK(s.size() == static_cast<std::size_t>(n));
}

TEST_CASE("ColdCache: at least two copies, a TLB buffer on request", "[memory]") {
  Args a;
  auto small = ColdCache::create(ColdCacheMode::all, a.list(), 1);
  REQUIRE(small.ok());
  CHECK(small->copies() == 2);
  CHECK(small->tlb_buffer_bytes() == 0);
  small->flush_tlb();  // nothing to do, no crash

  auto flushing = ColdCache::create(ColdCacheMode::wei, a.list(), 1 * MiB, true);
  REQUIRE(flushing.ok());
  CHECK(flushing->tlb_buffer_bytes() == 2 * MiB);
  CHECK(flushing->bytes_allocated() >= 2 * MiB + 1 * MiB);
  flushing->flush_tlb();
  flushing->flush_tlb();
  CHECK(same_bytes(flushing->next()[1], a.wei));

  // Moving keeps the copies and the rotation.
  ColdCache moved = std::move(*flushing);
  CHECK(moved.copies() == 16);
  CHECK(same_bytes(moved.next()[1], a.wei));
}

TEST_CASE("ColdCache: failures are errors, not crashes", "[memory]") {
  Args a;
  std::vector<ColdCacheArg> no_weights = {{a.src.data(), a.src.size(), false}};
  const auto wei = ColdCache::create(ColdCacheMode::wei, no_weights, 1 * MiB);
  REQUIRE_FALSE(wei.ok());
  CHECK_THAT(wei.error(), Catch::Contains("weights"));

  const auto null_ptr = ColdCache::create(ColdCacheMode::all, {{nullptr, 4096, false}}, 1 * MiB);
  REQUIRE_FALSE(null_ptr.ok());
  CHECK_THAT(null_ptr.error(), Catch::Contains("no pointer"));

  CHECK_FALSE(ColdCache::create(ColdCacheMode::all, {}, 1 * MiB).ok());
  CHECK_FALSE(ColdCache::create(ColdCacheMode::all, {{a.src.data(), 0, false}}, 1 * MiB).ok());

  // Two copies of a 1 PiB argument exceed any address space: the allocation fails before any copy.
  const auto huge = ColdCache::create(ColdCacheMode::all, {{a.src.data(), std::size_t{1} << 50, false}}, 1 * MiB);
  REQUIRE_FALSE(huge.ok());
  CHECK_THAT(huge.error(), Catch::Contains("cannot allocate"));
}
