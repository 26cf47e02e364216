#include "memory/permutation.hpp"

#include <algorithm>
#include <numeric>
#include <random>
#include <utility>

namespace peakprobe {

namespace {

// A uniform integer in [0, bound) by rejection. std::uniform_int_distribution is not specified
// bit for bit, so it would give a different chase order under another standard library; the
// engine's output is specified, and this draw on top of it is too.
uint64_t draw_below(std::mt19937_64& rng, uint64_t bound) {
  const uint64_t limit = UINT64_MAX - UINT64_MAX % bound;  // multiples of bound fit below it
  uint64_t r = rng();
  while (r >= limit) r = rng();
  return r % bound;
}

// Fisher-Yates shuffle with the reproducible draw.
void shuffle(std::vector<uint32_t>& v, std::mt19937_64& rng) {
  for (std::size_t i = v.size(); i > 1; --i) std::swap(v[i - 1], v[draw_below(rng, i)]);
}

}  // namespace

std::vector<uint32_t> sattolo_cycle(uint32_t n, uint64_t seed) {
  std::vector<uint32_t> next(n);
  std::iota(next.begin(), next.end(), 0u);
  std::mt19937_64 rng(seed);
  // Sattolo: as Fisher-Yates, but j < i strictly. Each swap joins i's cycle with another, so the
  // result is one cycle of length n (Fisher-Yates would allow fixed points and short cycles).
  for (uint32_t i = n; i > 1; --i) std::swap(next[i - 1], next[draw_below(rng, i - 1)]);
  return next;
}

std::vector<uint32_t> page_local_cycle(uint32_t lines, uint32_t lines_per_page, uint64_t seed) {
  if (lines == 0) return {};
  const uint32_t per_page = std::max<uint32_t>(lines_per_page, 1);
  std::mt19937_64 rng(seed);
  // The visiting order: pages ascending, each page's own lines shuffled.
  std::vector<uint32_t> order;
  order.reserve(lines);
  std::vector<uint32_t> page;
  for (uint64_t first = 0; first < lines; first += per_page) {
    const uint64_t end = std::min<uint64_t>(first + per_page, lines);
    page.resize(static_cast<std::size_t>(end - first));
    std::iota(page.begin(), page.end(), static_cast<uint32_t>(first));
    shuffle(page, rng);
    order.insert(order.end(), page.begin(), page.end());
  }
  std::vector<uint32_t> next(lines);
  for (std::size_t k = 0; k < order.size(); ++k) next[order[k]] = order[(k + 1) % order.size()];
  return next;
}

}  // namespace peakprobe
