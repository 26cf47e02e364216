#include "pairs/cluster.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>

namespace peakprobe {

namespace {

using Matrix = std::vector<std::vector<std::optional<double>>>;
using Group = std::vector<int>;

// One cell, tolerating a ragged matrix and treating non-finite values as not measured.
std::optional<double> cell(const Matrix& m, int i, int j) {
  const auto ui = static_cast<std::size_t>(i), uj = static_cast<std::size_t>(j);
  if (ui >= m.size() || uj >= m[ui].size() || !m[ui][uj] || !std::isfinite(*m[ui][uj])) return std::nullopt;
  return m[ui][uj];
}

// The matrix should be symmetric, but a caller may fill only one triangle; use whatever is there.
std::optional<double> contention(const Matrix& m, int i, int j) {
  const auto ij = cell(m, i, j), ji = cell(m, j, i);
  if (ij && ji) return (*ij + *ji) / 2;
  return ij ? ij : ji;
}

// Mean over measured cross pairs; empty when no pair between the two clusters was measured.
std::optional<double> average_linkage(const Matrix& m, const Group& a, const Group& b) {
  double sum = 0;
  int count = 0;
  for (int i : a) {
    for (int j : b) {
      if (const auto v = contention(m, i, j)) {
        sum += *v;
        ++count;
      }
    }
  }
  if (count == 0) return std::nullopt;
  return sum / count;
}

struct Candidate {
  std::size_t a = 0, b = 0;
  double linkage = 0;
};

// The pair of clusters with the highest linkage at or above threshold, if any.
std::optional<Candidate> best_merge(const Matrix& m, const std::vector<Group>& clusters, double threshold) {
  std::optional<Candidate> best;
  for (std::size_t a = 0; a < clusters.size(); ++a) {
    for (std::size_t b = a + 1; b < clusters.size(); ++b) {
      const auto link = average_linkage(m, clusters[a], clusters[b]);
      if (!link || *link < threshold) continue;
      if (!best || *link > best->linkage) best = Candidate{a, b, *link};
    }
  }
  return best;
}

std::size_t matrix_order(const Matrix& m) {
  std::size_t n = m.size();
  for (const auto& row : m) n = std::max(n, row.size());
  return n;
}

// Appended rather than written as "#" + std::to_string(i): GCC 12 gives a false -Wrestrict
// warning for that operator+ at -O2.
std::string placeholder(int index) {
  std::string s = "#";
  s += std::to_string(index);
  return s;
}

}  // namespace

std::vector<std::vector<int>> cluster_pipe_groups(const Matrix& same_port, double threshold) {
  std::vector<Group> clusters;
  for (std::size_t i = 0; i < matrix_order(same_port); ++i) clusters.push_back({static_cast<int>(i)});

  while (const auto merge = best_merge(same_port, clusters, threshold)) {
    Group& into = clusters[merge->a];
    into.insert(into.end(), clusters[merge->b].begin(), clusters[merge->b].end());
    clusters.erase(clusters.begin() + static_cast<std::ptrdiff_t>(merge->b));
  }

  for (auto& g : clusters) std::sort(g.begin(), g.end());
  std::sort(clusters.begin(), clusters.end(), [](const Group& x, const Group& y) { return x.front() < y.front(); });
  return clusters;
}

std::vector<std::vector<std::string>> name_groups(const std::vector<std::vector<int>>& groups,
                                                  const std::vector<std::string>& names) {
  std::vector<std::vector<std::string>> named;
  for (const auto& g : groups) {
    std::vector<std::string> row;
    for (int i : g) {
      const bool known = i >= 0 && static_cast<std::size_t>(i) < names.size();
      row.push_back(known ? names[static_cast<std::size_t>(i)] : placeholder(i));
    }
    named.push_back(std::move(row));
  }
  return named;
}

}  // namespace peakprobe
