// Summary statistics of repeated timings.
#pragma once
#include <vector>

#include "peakprobe/result.hpp"

namespace peakprobe {

// Linear-interpolated percentile (p in [0, 1]) of unsorted values; 0 for an empty set.
double percentile(std::vector<double> values, double p);
double median(std::vector<double> values);
// min, median, max, spread = (median - min) / min, samples.
Stats summarize(const std::vector<double>& values);

}  // namespace peakprobe
