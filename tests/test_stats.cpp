#include <catch2/catch.hpp>
#include <vector>

#include "harness/stats.hpp"

using namespace peakprobe;

TEST_CASE("percentile interpolates between sorted values", "[stats]") {
  std::vector<double> v = {4, 1, 3, 2, 5};
  CHECK(percentile(v, 0.0) == Approx(1));
  CHECK(percentile(v, 1.0) == Approx(5));
  CHECK(percentile(v, 0.5) == Approx(3));
  CHECK(percentile(v, 0.25) == Approx(2));
  CHECK(percentile({1, 2}, 0.5) == Approx(1.5));
  CHECK(percentile({}, 0.5) == 0.0);
}

TEST_CASE("summarize: min, median, max and spread above the best", "[stats]") {
  Stats s = summarize({10, 12, 11, 30, 10});
  CHECK(s.samples == 5);
  CHECK(s.min == Approx(10));
  CHECK(s.max == Approx(30));
  CHECK(s.median == Approx(11));
  CHECK(s.spread == Approx(0.1));
  Stats e = summarize({});
  CHECK(e.samples == 0);
  CHECK(e.spread == 0.0);
  // An impossible sample (no time is negative) widens the spread, over the median, instead of
  // zeroing it: a row whose samples ran from -22.6 to 9.97 once showed a spread of 0.
  Stats odd = summarize({-22.6, 7.3, 7.4, 9.97});
  CHECK(odd.median == Approx(7.35));
  CHECK(odd.spread == Approx((7.35 + 22.6) / 7.35));
}

TEST_CASE("confirmed_min: the smallest value another one agrees with", "[stats]") {
  // One odd low value cannot set the minimum; its agreeing neighbour pair does.
  CHECK(confirmed_min({0.69, 1.02, 1.015, 1.30}, 0.01) == 1.015);
  CHECK(confirmed_min({1.0, 1.005}, 0.01) == 1.0);
  CHECK(confirmed_min({1.0, 1.5, 2.0}, 0.01) == 0.0);
  CHECK(confirmed_min({}, 0.01) == 0.0);
  CHECK(confirmed_min({3.0}, 0.01) == 0.0);
}

TEST_CASE("confirmed_min: with more confirmations an agreeing odd pair cannot set it", "[stats]") {
  // Two odd values that agree by chance, then four at the real level.
  const std::vector<double> v{0.60, 0.603, 0.78, 0.781, 0.782, 0.785, 0.95};
  CHECK(confirmed_min(v, 0.01) == 0.60);
  CHECK(confirmed_min(v, 0.01, 3) == 0.78);
  CHECK(confirmed_min(v, 0.01, 4) == 0.0);  // only three values lie within 1% above 0.78
  CHECK(confirmed_min(v, 0.01, 0) == 0.60);  // 0 confirmations reads as one
}

TEST_CASE("theil_sen_slope: the slope of a line, unmoved by one odd point", "[stats]") {
  // Cycles of a loop at six code lengths: 0.5 per instruction and 40 of fixed cost.
  std::vector<std::pair<double, double>> pts;
  for (double n : {64.0, 96.0, 128.0, 128.0, 192.0, 256.0}) pts.push_back({n, 40 + 0.5 * n});
  CHECK(theil_sen_slope(pts) == Approx(0.5));
  pts[0].second += 2.4;  // one length pays a little extra: its own two-point slope reads 0.4625
  CHECK(theil_sen_slope(pts) == Approx(0.5).epsilon(0.01));
  CHECK(theil_sen_slope({{1, 1}}) == 0);
  CHECK(theil_sen_slope({{1, 1}, {1, 5}}) == 0);  // no two distinct x
  CHECK(theil_sen_slope({{1, 1}, {3, 5}}) == Approx(2));
}

