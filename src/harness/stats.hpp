// Summary statistics of repeated timings.
#pragma once
#include <utility>
#include <vector>

#include "peakprobe/result.hpp"

namespace peakprobe {

// Linear-interpolated percentile (p in [0, 1]) of unsorted values; 0 for an empty set.
double percentile(std::vector<double> values, double p);
double median(std::vector<double> values);
// The smallest value that another value confirms (lies within `tolerance`, relative, above it): a
// minimum that one odd sample cannot set. 0 when no two values agree. With `confirmations` > 1, that
// many other values must lie within `tolerance` of it (for thousands of values, where two odd ones
// may agree by chance).
double confirmed_min(std::vector<double> values, double tolerance, size_t confirmations = 1);
// Theil-Sen slope of y over x: the median of the slopes of every pair of points with different x.
// One point off the line moves it no more than noise does (a least-squares fit would follow it).
// 0 for fewer than two distinct x.
double theil_sen_slope(const std::vector<std::pair<double, double>>& points);
// min, median, max, spread = (median - min) / min (over the median when min <= 0), samples.
Stats summarize(const std::vector<double>& values);

}  // namespace peakprobe
