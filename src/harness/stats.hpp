// Summary statistics of repeated timings.
#pragma once
#include <vector>

#include "peakprobe/result.hpp"

namespace peakprobe {

// Linear-interpolated percentile (p in [0, 1]) of unsorted values; 0 for an empty set.
double percentile(std::vector<double> values, double p);
double median(std::vector<double> values);
// The smallest value that another value confirms (lies within `tolerance`, relative, above it): a
// minimum that one odd sample cannot set. 0 when no two values agree.
double confirmed_min(std::vector<double> values, double tolerance);
// min, median, max, spread = (median - min) / min, samples.
Stats summarize(const std::vector<double>& values);

}  // namespace peakprobe
