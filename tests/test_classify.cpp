// Tests for src/pairs/classify.cpp: the same-port measure and the three pair classes.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <string>

#include "pairs/classify.hpp"

using peakprobe::classify_pair;
using peakprobe::PairClass;
using peakprobe::same_port_measure;
using peakprobe::slower_than_serial;

namespace {
// Synthetic timings, cycles per instruction alone: A is the slower one.
constexpr double kA = 0.5;
constexpr double kB = 0.25;
}  // namespace

TEST_CASE("A pair as fast as the slower part alone co-issues", "[pairs]") {
  const double s = same_port_measure(0.5, kA, kB);
  CHECK(s == Approx(0.0).margin(1e-12));
  CHECK(classify_pair(s) == PairClass::co_issue);
}

TEST_CASE("A pair as slow as both in sequence shares a pipe", "[pairs]") {
  const double s = same_port_measure(0.75, kA, kB);
  CHECK(s == Approx(1.0));
  CHECK(classify_pair(s) == PairClass::shared);
}

TEST_CASE("A pair in between is partial", "[pairs]") {
  const double s = same_port_measure(0.6, kA, kB);
  CHECK(s == Approx(0.4));
  CHECK(classify_pair(s) == PairClass::partial);
}

TEST_CASE("The measure does not depend on which part is A", "[pairs]") {
  CHECK(same_port_measure(0.6, kB, kA) == Approx(same_port_measure(0.6, kA, kB)));
}

TEST_CASE("Weights enter through the per-group alone times", "[pairs]") {
  // 2 x A + 1 x B per group: A alone needs 2 x 0.5 = 1.0 cycles, B alone 0.25.
  const double a_group = 2 * kA, b_group = 1 * kB;
  CHECK(same_port_measure(1.0, a_group, b_group) == Approx(0.0).margin(1e-12));
  CHECK(same_port_measure(1.1, a_group, b_group) == Approx(0.4));
  CHECK(same_port_measure(1.25, a_group, b_group) == Approx(1.0));
  // 1 x A + 2 x B: both parts need 0.5 cycles per group, so sharing one pipe means 1.0.
  CHECK(same_port_measure(0.75, kA, 2 * kB) == Approx(0.5));
}

TEST_CASE("The measure is clamped to [0, 1]", "[pairs]") {
  // Faster than the slower part alone (noise, or a better schedule than alone) reads as co-issue.
  CHECK(same_port_measure(0.45, kA, kB) == 0.0);
  // Slower than both in sequence (front-end limit, a dependency the harness missed) reads as shared.
  CHECK(same_port_measure(2.0, kA, kB) == 1.0);
}

TEST_CASE("Degenerate timings give 0 instead of a division by zero", "[pairs]") {
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  CHECK(same_port_measure(0.0, kA, kB) == 0.0);
  CHECK(same_port_measure(-1.0, kA, kB) == 0.0);
  CHECK(same_port_measure(0.6, 0.0, kB) == 0.0);
  CHECK(same_port_measure(0.6, kA, 0.0) == 0.0);
  CHECK(same_port_measure(0.6, -kA, kB) == 0.0);
  CHECK(same_port_measure(0.6, kA, -kB) == 0.0);
  CHECK(same_port_measure(nan, kA, kB) == 0.0);
  CHECK(same_port_measure(0.6, nan, kB) == 0.0);
  CHECK(same_port_measure(inf, kA, kB) == 0.0);
  CHECK(same_port_measure(0.6, kA, inf) == 0.0);
}

TEST_CASE("Class thresholds: bounds belong to partial", "[pairs]") {
  CHECK(peakprobe::kCoIssueBelow == 0.25);
  CHECK(peakprobe::kSharedAbove == 0.75);
  CHECK(classify_pair(0.0) == PairClass::co_issue);
  CHECK(classify_pair(0.2499) == PairClass::co_issue);
  CHECK(classify_pair(0.25) == PairClass::partial);
  CHECK(classify_pair(0.5) == PairClass::partial);
  CHECK(classify_pair(0.75) == PairClass::partial);
  CHECK(classify_pair(0.7501) == PairClass::shared);
  CHECK(classify_pair(1.0) == PairClass::shared);
}

TEST_CASE("Pair classes have stable names", "[pairs]") {
  CHECK(std::string(to_string(PairClass::co_issue)) == "co-issue");
  CHECK(std::string(to_string(PairClass::partial)) == "partial");
  CHECK(std::string(to_string(PairClass::shared)) == "shared");
}

TEST_CASE("A pair far slower than both in sequence pays a penalty, which a shared pipe never does", "[pairs]") {
  // Both in sequence take 0.75: one shared pipe. A scheduler that serves the pipe badly may cost tens
  // of percent more; a multiple of it is a cost at every switch between the two.
  CHECK_FALSE(slower_than_serial(0.75, kA, kB));
  CHECK_FALSE(slower_than_serial(1.1, kA, kB));
  CHECK_FALSE(slower_than_serial(1.5 * 0.75, kA, kB));  // the bound itself is not beyond it
  CHECK(slower_than_serial(1.5 * 0.75 * 1.01, kA, kB));
  CHECK(slower_than_serial(340.0, kA, kB));
  // Weights enter through the per-group alone times, as for the measure.
  CHECK_FALSE(slower_than_serial(1.6, 2 * kA, kB));
  CHECK(slower_than_serial(1.9, 2 * kA, kB));
  // The measure itself stays clamped: the penalty is told apart by this, not by the measure.
  CHECK(same_port_measure(340.0, kA, kB) == 1.0);
  // Broken inputs never read as a penalty.
  const double inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
  CHECK_FALSE(slower_than_serial(inf, kA, kB));
  CHECK_FALSE(slower_than_serial(nan, kA, kB));
  CHECK_FALSE(slower_than_serial(10, 0, kB));
  CHECK_FALSE(slower_than_serial(10, kA, -1));
}
