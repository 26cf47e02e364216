#include "matmul/column_split.hpp"

#include <catch2/catch.hpp>

using peakprobe::ColumnSplit;

TEST_CASE("column split: 513 columns in 16-lane vectors go 16 : 17 vectors, not 5 : 4 panels", "[column_split]") {
  const ColumnSplit s(513, 64, 4, 2);
  CHECK(s.lanes == 16);
  CHECK(s.vectors == 33);
  CHECK(s.threads == 2);
  CHECK(s.cut(0) == 0);
  CHECK(s.cut(1) == 256);
  CHECK(s.cut(2) == 513);
  CHECK(s.most_vectors() == 17);
}

TEST_CASE("column split: no more column threads than nr-wide panels", "[column_split]") {
  CHECK(ColumnSplit(100, 64, 4, 8).threads == 2);   // two panels, though 7 vectors
  CHECK(ColumnSplit(64, 64, 4, 3).threads == 1);
  CHECK(ColumnSplit(1, 16, 1, 2).threads == 1);
  CHECK(ColumnSplit(4096, 48, 3, 0).threads == 1);  // an unset thread count means one
}

TEST_CASE("column split: the cuts cover every column once, on vector boundaries, none empty", "[column_split]") {
  for (int64_t n : {1, 15, 16, 17, 127, 128, 513, 1000, 2048})
    for (int nr : {16, 32, 48, 64})
      for (int nv : {1, 2, nr / 16})
        for (int threads : {1, 2, 3, 5, 8}) {
          const ColumnSplit s(n, nr, nv, threads);
          INFO("n " << n << " nr " << nr << " nv " << nv << " threads " << threads);
          REQUIRE(s.cut(0) == 0);
          REQUIRE(s.cut(s.threads) == n);
          int64_t most = 0;
          for (int tc = 0; tc < s.threads; ++tc) {
            const int64_t a = s.cut(tc), b = s.cut(tc + 1);
            CHECK(a < b);
            CHECK(a % s.lanes == 0);
            most = std::max(most, (b - a + s.lanes - 1) / s.lanes);
          }
          CHECK(most == s.most_vectors());
        }
}
