// Tests for src/memory/permutation.cpp: pointer-chase orders are single cycles through every node,
// and the page-local order finishes each page before moving to the next.
#include <catch2/catch.hpp>

#include <cstdint>
#include <set>
#include <vector>

#include "memory/permutation.hpp"

using namespace peakprobe;

namespace {

// Follows next from 0: true when the walk meets every node exactly once before it returns to 0.
bool is_single_cycle(const std::vector<uint32_t>& next) {
  if (next.empty()) return false;
  std::vector<bool> seen(next.size(), false);
  uint32_t at = 0;
  for (std::size_t step = 0; step < next.size(); ++step) {
    if (at >= next.size() || seen[at]) return false;
    seen[at] = true;
    at = next[at];
  }
  return at == 0;
}

}  // namespace

TEST_CASE("sattolo_cycle: one cycle through every node", "[memory]") {
  for (uint32_t n : {1u, 2u, 3u, 4u, 5u, 7u, 64u, 1000u, 4097u, 65536u}) {
    INFO("n = " << n);
    for (uint64_t seed : {1ull, 42ull, 0xdeadbeefull}) CHECK(is_single_cycle(sattolo_cycle(n, seed)));
  }
  CHECK(sattolo_cycle(1, 7) == std::vector<uint32_t>{0});
  CHECK(sattolo_cycle(2, 7) == std::vector<uint32_t>{1, 0});
  CHECK(sattolo_cycle(0, 7).empty());
}

TEST_CASE("sattolo_cycle: no node points to itself, seeds differ, same seed repeats", "[memory]") {
  const auto a = sattolo_cycle(1000, 1);
  for (uint32_t i = 0; i < a.size(); ++i) CHECK(a[i] != i);
  CHECK(sattolo_cycle(1000, 1) == a);
  CHECK(sattolo_cycle(1000, 2) != a);
  // Different seeds give many different cycles, not a few.
  std::set<std::vector<uint32_t>> distinct;
  for (uint64_t seed = 0; seed < 20; ++seed) distinct.insert(sattolo_cycle(16, seed));
  CHECK(distinct.size() == 20);
}

TEST_CASE("sattolo_cycle: the successor of a node is spread over all others", "[memory]") {
  // Sattolo draws uniformly among the (n-1)! cycles: next[0] is uniform over 1..n-1.
  constexpr uint32_t n = 8;
  std::vector<int> count(n, 0);
  for (uint64_t seed = 0; seed < 7000; ++seed) ++count[sattolo_cycle(n, seed)[0]];
  CHECK(count[0] == 0);
  for (uint32_t v = 1; v < n; ++v) CHECK(count[v] == Approx(1000).margin(150));
}

namespace {

// Walks the page-local chase from its first page's entry point and checks the page order: each
// page's lines all visited in one stretch, pages in ascending order, wrapping at the end.
void check_page_local(uint32_t lines, uint32_t per_page, uint64_t seed) {
  INFO("lines " << lines << ", per page " << per_page << ", seed " << seed);
  const auto next = page_local_cycle(lines, per_page, seed);
  REQUIRE(next.size() == lines);
  REQUIRE(is_single_cycle(next));
  const uint32_t pages = (lines + per_page - 1) / per_page;
  auto page_of = [&](uint32_t line) { return line / per_page; };
  auto lines_in = [&](uint32_t p) { return p + 1 < pages ? per_page : lines - p * per_page; };
  // Find where the walk enters page 0: the node whose predecessor lies on the last page.
  uint32_t at = 0;
  for (uint32_t i = 0; i < lines; ++i)
    if (page_of(i) == pages - 1 && page_of(next[i]) == 0) at = next[i];
  if (pages == 1) at = 0;
  for (uint32_t p = 0; p < pages; ++p) {
    std::set<uint32_t> visited;
    for (uint32_t k = 0; k < lines_in(p); ++k) {
      CHECK(page_of(at) == p);
      visited.insert(at);
      at = next[at];
    }
    CHECK(visited.size() == lines_in(p));
    CHECK(page_of(at) == (p + 1) % pages);
  }
}

}  // namespace

TEST_CASE("page_local_cycle: pages in order, lines of a page together", "[memory]") {
  check_page_local(64 * 16, 64, 1);   // 16 pages of 64 lines (4 KiB pages, 64-byte lines)
  check_page_local(64 * 16 + 5, 64, 2);  // a partial last page
  check_page_local(63, 64, 3);        // less than one page
  check_page_local(1000, 7, 4);
  check_page_local(10, 1, 5);         // one line per page: sequential
  check_page_local(1, 64, 6);
}

TEST_CASE("page_local_cycle: random inside a page, reproducible, degenerate inputs", "[memory]") {
  const auto a = page_local_cycle(64 * 8, 64, 11);
  CHECK(page_local_cycle(64 * 8, 64, 11) == a);
  CHECK(page_local_cycle(64 * 8, 64, 12) != a);
  // Not simply sequential inside a page (a stride prefetcher would hide the misses).
  int sequential = 0;
  for (uint32_t i = 0; i + 1 < a.size(); ++i) sequential += a[i] == i + 1;
  CHECK(sequential < 64);
  CHECK(page_local_cycle(0, 64, 1).empty());
  CHECK(is_single_cycle(page_local_cycle(100, 0, 1)));  // 0 lines per page counts as 1
  CHECK(page_local_cycle(1, 1, 1) == std::vector<uint32_t>{0});
}
