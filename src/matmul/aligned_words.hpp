// Zeroed 32-bit words on 64-byte lines, for the panels and C tiles that the GEMM's kernels are timed
// on outside a product (call_calibration.cpp, team_witness.cpp).
#pragma once
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <memory>

namespace peakprobe {

struct AlignedFree {
  void operator()(void* p) const { std::free(p); }
};
using Words = std::unique_ptr<uint32_t[], AlignedFree>;

// `words` zeroed words from a line boundary (rounded up to whole lines); empty when out of memory.
inline Words zeroed_words(size_t words) {
  constexpr size_t kAlign = 64;
  const size_t bytes = (words * 4 + kAlign - 1) / kAlign * kAlign;
  auto* p = static_cast<uint32_t*>(std::aligned_alloc(kAlign, bytes));
  if (p) std::fill(p, p + bytes / 4, 0u);
  return Words(p);
}

}  // namespace peakprobe
