#include "pairs/classify.hpp"

#include <algorithm>
#include <cmath>

namespace peakprobe {

namespace {

bool usable(double t) { return std::isfinite(t) && t > 0; }

}  // namespace

const char* to_string(PairClass c) {
  switch (c) {
    case PairClass::co_issue: return "co-issue";
    case PairClass::partial: return "partial";
    case PairClass::shared: return "shared";
  }
  return "partial";
}

double same_port_measure(double t_pair, double a_alone_group, double b_alone_group) {
  if (!usable(t_pair) || !usable(a_alone_group) || !usable(b_alone_group)) return 0;
  const double slower = std::max(a_alone_group, b_alone_group);
  const double faster = std::min(a_alone_group, b_alone_group);
  return std::clamp((t_pair - slower) / faster, 0.0, 1.0);
}

bool slower_than_serial(double t_pair, double a_alone_group, double b_alone_group) {
  if (!usable(t_pair) || !usable(a_alone_group) || !usable(b_alone_group)) return false;
  return t_pair > kPenaltyAbove * (a_alone_group + b_alone_group);
}

PairClass classify_pair(double same_port) {
  if (same_port < kCoIssueBelow) return PairClass::co_issue;
  if (same_port > kSharedAbove) return PairClass::shared;
  return PairClass::partial;
}

}  // namespace peakprobe
