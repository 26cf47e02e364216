#include "harness/stats.hpp"

#include <algorithm>
#include <cmath>

namespace peakprobe {

double percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0.0;
  std::sort(v.begin(), v.end());
  p = std::clamp(p, 0.0, 1.0);
  const double pos = p * double(v.size() - 1);
  const size_t lo = size_t(std::floor(pos));
  const size_t hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (v[hi] - v[lo]) * (pos - double(lo));
}

double median(std::vector<double> v) { return percentile(std::move(v), 0.5); }

double confirmed_min(std::vector<double> v, double tolerance, size_t confirmations) {
  std::sort(v.begin(), v.end());
  confirmations = std::max<size_t>(1, confirmations);
  for (size_t i = 0; i + confirmations < v.size(); ++i)
    if (v[i + confirmations] <= v[i] * (1 + tolerance)) return v[i];
  return 0.0;
}

Stats summarize(const std::vector<double>& v) {
  Stats s;
  if (v.empty()) return s;
  s.samples = int(v.size());
  s.min = *std::min_element(v.begin(), v.end());
  s.max = *std::max_element(v.begin(), v.end());
  s.median = median(v);
  // A minimum at or below zero (a time can be neither) is no base: the spread is then taken over the
  // median, so that such a sample widens it instead of zeroing it.
  s.spread = s.min > 0 ? (s.median - s.min) / s.min : s.median > 0 ? (s.median - s.min) / s.median : 0.0;
  return s;
}

double theil_sen_slope(const std::vector<std::pair<double, double>>& points) {
  std::vector<double> slopes;
  for (size_t i = 0; i < points.size(); ++i)
    for (size_t j = i + 1; j < points.size(); ++j)
      if (points[j].first != points[i].first)
        slopes.push_back((points[j].second - points[i].second) / (points[j].first - points[i].first));
  return slopes.empty() ? 0.0 : median(slopes);
}

}  // namespace peakprobe
