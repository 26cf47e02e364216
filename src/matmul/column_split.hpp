// How the threads of a row of the GEMM's thread grid split C's columns: gemm.cpp runs the split,
// cost_model.cpp prices it, from this one definition.
#pragma once
#include <algorithm>
#include <cstdint>

namespace peakprobe {

// Columns go to threads in whole vectors, not whole nr-wide panels: a thread's last panel may then
// be narrower, and its kernel computes only the vectors it holds. With panels, 513 columns in panels
// of 64 split 5 : 4 (320 and 193 columns); in vectors 16 : 17. A cut falls on a vector: where a
// vector fills a cache line and C's rows start on line boundaries, no two threads write one line.
// At most one thread per nr-wide panel is started.
struct ColumnSplit {
  int64_t n = 0, lanes = 1, vectors = 0;
  int threads = 1;  // the column threads started

  ColumnSplit(int64_t columns, int nr, int nv, int thread_cols) : n(std::max<int64_t>(columns, 0)) {
    lanes = std::max(1, nr / std::max(1, nv));
    vectors = (n + lanes - 1) / lanes;
    const int64_t panels = (n + std::max(1, nr) - 1) / std::max(1, nr);
    threads = int(std::max<int64_t>(1, std::min<int64_t>(std::max(1, thread_cols), panels)));
  }
  // The first column of thread tc (0 <= tc <= threads; tc == threads gives n).
  int64_t cut(int tc) const { return std::min(n, vectors * tc / threads * lanes); }
  // The most vectors one thread holds.
  int64_t most_vectors() const { return (vectors + threads - 1) / threads; }
};

}  // namespace peakprobe
