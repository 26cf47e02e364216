// Tests for src/pairs/cluster.cpp: average-linkage clustering of same-port matrices into pipe groups.
#include <catch2/catch.hpp>

#include <optional>
#include <random>
#include <string>
#include <vector>

#include "pairs/cluster.hpp"

using peakprobe::cluster_pipe_groups;
using peakprobe::name_groups;

namespace {

using Matrix = std::vector<std::vector<std::optional<double>>>;
using Groups = std::vector<std::vector<int>>;

Matrix empty_matrix(std::size_t n) { return Matrix(n, std::vector<std::optional<double>>(n)); }

void set(Matrix& m, int i, int j, std::optional<double> v) {
  m[static_cast<std::size_t>(i)][static_cast<std::size_t>(j)] = v;
  m[static_cast<std::size_t>(j)][static_cast<std::size_t>(i)] = v;
}

// 7 instructions in pipe groups {0,1,2}, {3,4}, {5}, {6}: within a group 0.8 to 1.0, across
// groups 0.0 to 0.2, drawn at random (fixed seed) to stand in for measurement noise.
Matrix seven_by_seven() {
  const std::vector<int> group_of = {0, 0, 0, 1, 1, 2, 3};
  std::mt19937 rng(12345);
  std::uniform_real_distribution<double> noise(0.0, 0.2);
  Matrix m = empty_matrix(7);
  for (int i = 0; i < 7; ++i) {
    // The diagonal holds 1 (an instruction paired with itself shares its own pipe); it must not
    // matter to the clustering.
    set(m, i, i, 1.0);
    for (int j = i + 1; j < 7; ++j) {
      const bool same = group_of[static_cast<std::size_t>(i)] == group_of[static_cast<std::size_t>(j)];
      set(m, i, j, same ? 1.0 - noise(rng) : noise(rng));
    }
  }
  return m;
}

}  // namespace

TEST_CASE("Clustering recovers known pipe groups from a noisy matrix", "[pairs]") {
  CHECK(cluster_pipe_groups(seven_by_seven()) == Groups{{0, 1, 2}, {3, 4}, {5}, {6}});
}

TEST_CASE("The diagonal is ignored", "[pairs]") {
  Matrix m = seven_by_seven();
  for (std::size_t i = 0; i < m.size(); ++i) m[i][i] = 0.0;
  CHECK(cluster_pipe_groups(m) == Groups{{0, 1, 2}, {3, 4}, {5}, {6}});
  for (std::size_t i = 0; i < m.size(); ++i) m[i][i] = std::nullopt;
  CHECK(cluster_pipe_groups(m) == Groups{{0, 1, 2}, {3, 4}, {5}, {6}});
}

TEST_CASE("The threshold decides how far merging goes", "[pairs]") {
  CHECK(cluster_pipe_groups(seven_by_seven(), 1.5) == Groups{{0}, {1}, {2}, {3}, {4}, {5}, {6}});
  CHECK(cluster_pipe_groups(seven_by_seven(), -1.0) == Groups{{0, 1, 2, 3, 4, 5, 6}});
}

TEST_CASE("Missing values are left out of averages, not counted as zero", "[pairs]") {
  Matrix m = empty_matrix(3);
  set(m, 0, 1, 0.9);
  set(m, 0, 2, 0.8);
  // 1-2 not measured: the average between {0,1} and {2} is 0.8 over the one measured pair.
  CHECK(cluster_pipe_groups(m) == Groups{{0, 1, 2}});
}

TEST_CASE("Clusters with no measured value between them never merge", "[pairs]") {
  Matrix m = empty_matrix(5);
  set(m, 0, 1, 0.9);
  set(m, 2, 3, 0.95);
  // Instruction 4 has no measurements at all.
  CHECK(cluster_pipe_groups(m) == Groups{{0, 1}, {2, 3}, {4}});
  // Not even when any measured value would be enough.
  CHECK(cluster_pipe_groups(m, -1.0) == Groups{{0, 1}, {2, 3}, {4}});
}

TEST_CASE("Average linkage does not chain like single linkage", "[pairs]") {
  // A-B and B-C contend, A-C do not: B cannot share one pipe with both. Single linkage would put
  // all three together. Average linkage merges A and B first (the tie goes to the first pair), then
  // {A,B}-C averages (0.0 + 0.9) / 2 = 0.45, below the threshold.
  Matrix m = empty_matrix(3);
  set(m, 0, 1, 0.9);
  set(m, 1, 2, 0.9);
  set(m, 0, 2, 0.0);
  CHECK(cluster_pipe_groups(m, 0.5) == Groups{{0, 1}, {2}});
  // A threshold at or below that average joins them.
  CHECK(cluster_pipe_groups(m, 0.4) == Groups{{0, 1, 2}});
}

TEST_CASE("The strongest pair merges first", "[pairs]") {
  Matrix m = empty_matrix(3);
  set(m, 0, 1, 0.6);
  set(m, 1, 2, 0.95);
  set(m, 0, 2, 0.0);
  // 1-2 merge first; then {1,2}-0 averages (0.6 + 0.0) / 2 = 0.3 and 0 stays alone.
  CHECK(cluster_pipe_groups(m) == Groups{{0}, {1, 2}});
}

TEST_CASE("Groups are sorted and ordered by their smallest index", "[pairs]") {
  Matrix m = empty_matrix(6);
  set(m, 5, 1, 0.9);
  set(m, 3, 0, 0.8);
  CHECK(cluster_pipe_groups(m) == Groups{{0, 3}, {1, 5}, {2}, {4}});
}

TEST_CASE("One filled triangle is enough, asymmetric values are averaged", "[pairs]") {
  Matrix m = empty_matrix(3);
  m[0][1] = 0.9;  // [1][0] missing
  m[1][2] = 0.3;
  m[2][1] = 0.9;  // mean 0.6
  m[0][2] = 0.7;
  CHECK(cluster_pipe_groups(m) == Groups{{0, 1, 2}});
  m[2][1] = 0.5;  // mean 0.4: {0,1}-2 averages (0.7 + 0.4) / 2 = 0.55
  CHECK(cluster_pipe_groups(m) == Groups{{0, 1, 2}});
  m[0][2] = 0.5;  // (0.5 + 0.4) / 2 = 0.45
  CHECK(cluster_pipe_groups(m) == Groups{{0, 1}, {2}});
}

TEST_CASE("Degenerate matrices", "[pairs]") {
  CHECK(cluster_pipe_groups({}).empty());
  CHECK(cluster_pipe_groups(empty_matrix(1)) == Groups{{0}});
  // A ragged matrix: the order is its longest row; short rows simply lack measurements.
  Matrix ragged = {{std::nullopt, 0.9, 0.1}, {0.9}, {}};
  CHECK(cluster_pipe_groups(ragged) == Groups{{0, 1}, {2}});
}

TEST_CASE("name_groups maps indices to names", "[pairs]") {
  const std::vector<std::string> names = {"vaddps ymm, ymm, ymm", "vmulps ymm, ymm, ymm", "imul r64, r64"};
  CHECK(name_groups({{0, 1}, {2}}, names) ==
        std::vector<std::vector<std::string>>{{"vaddps ymm, ymm, ymm", "vmulps ymm, ymm, ymm"}, {"imul r64, r64"}});
  CHECK(name_groups({{0, 7}}, names) == std::vector<std::vector<std::string>>{{"vaddps ymm, ymm, ymm", "#7"}});
  CHECK(name_groups({}, names).empty());
}
