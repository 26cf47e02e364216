// Test helper: a CpuInfo that has exactly the given features (as the OS enables them).
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "peakprobe/cpu_info.hpp"

namespace peakprobe::test {

inline CpuInfo cpu_with(std::vector<std::string> features) {
  CpuInfo c;
  c.features = std::move(features);
  return c;
}

}  // namespace peakprobe::test
