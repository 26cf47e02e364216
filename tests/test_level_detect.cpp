// Tests for src/memory/level_detect.cpp: plateaus and edges from synthetic bandwidth curves, clean
// and noisy, and their naming against reported caches.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "memory/level_detect.hpp"
#include "memory/sizes.hpp"

using namespace peakprobe;

namespace {

constexpr uint64_t KiB = 1024;
constexpr uint64_t MiB = 1024 * KiB;

struct Level {
  uint64_t bytes;  // where this level's plateau ends
  double gbps;
};

struct Shape {
  std::vector<Level> levels;   // caches, smallest first
  double dram_gbps = 20;
  double width_octaves = 0.15;  // how gradual each transition is (logistic scale in octaves)
  double noise = 0;             // multiplicative, uniform in [1 - noise, 1 + noise]
  uint64_t seed = 1;
  uint64_t from = 4 * KiB, to = 512 * MiB;
  double dram_slope_per_octave = 0;  // relative decline of DRAM bandwidth past the last cache
  std::vector<uint64_t> sizes;       // where the curve is sampled; empty: 4 points per octave, from..to
};

// A curve whose log bandwidth steps down by logistic transitions centred on each level's size (so
// the geometric-mean crossing is exactly at that size), sampled at 4 points per octave.
std::vector<CurvePoint> synth(const Shape& shape) {
  std::mt19937_64 rng(shape.seed);
  std::uniform_real_distribution<double> noise(1 - shape.noise, 1 + shape.noise);
  std::vector<CurvePoint> curve;
  for (uint64_t s : shape.sizes.empty() ? sweep_sizes(shape.from, shape.to, 4) : shape.sizes) {
    const double x = std::log2(static_cast<double>(s));
    double y = std::log(shape.dram_gbps);
    for (std::size_t i = 0; i < shape.levels.size(); ++i) {
      const double next = i + 1 < shape.levels.size() ? shape.levels[i + 1].gbps : shape.dram_gbps;
      const double edge = std::log2(static_cast<double>(shape.levels[i].bytes));
      y += (std::log(shape.levels[i].gbps) - std::log(next)) / (1 + std::exp((x - edge) / shape.width_octaves));
    }
    if (shape.dram_slope_per_octave > 0 && !shape.levels.empty()) {
      const double past = x - std::log2(static_cast<double>(shape.levels.back().bytes)) - 1;
      if (past > 0) y += past * std::log(1 - shape.dram_slope_per_octave);
    }
    curve.push_back({s, std::exp(y) * (shape.noise > 0 ? noise(rng) : 1.0)});
  }
  return curve;
}

Shape three_caches() {
  Shape s;
  s.levels = {{32 * KiB, 200}, {1 * MiB, 100}, {32 * MiB, 50}};
  s.dram_gbps = 20;
  return s;
}

// One core's view of a 16-thread part: private L1 and L2, one shared L3.
std::vector<CacheLevel> reported(uint64_t l3 = 32 * MiB) {
  return {{1, "data", 32 * KiB, 64, 8, 2, 8},
          {1, "instruction", 32 * KiB, 64, 8, 2, 8},
          {2, "unified", 1 * MiB, 64, 8, 2, 8},
          {3, "unified", l3, 64, 16, 16, 1}};
}

void check_edges(const std::vector<CacheLevelEdge>& levels, const Shape& shape) {
  REQUIRE(levels.size() == shape.levels.size() + 1);
  for (std::size_t i = 0; i < shape.levels.size(); ++i) {
    INFO("level " << i);
    REQUIRE(levels[i].edge_bytes.has_value());
    const double ratio = static_cast<double>(*levels[i].edge_bytes) / static_cast<double>(shape.levels[i].bytes);
    CHECK(ratio > 1 / 1.5);
    CHECK(ratio < 1.5);
    CHECK(levels[i].gbps == Approx(shape.levels[i].gbps).epsilon(0.1));
    CHECK(levels[i].name.empty());
  }
  CHECK_FALSE(levels.back().edge_bytes.has_value());
  CHECK(levels.back().gbps == Approx(shape.dram_gbps).epsilon(0.1));
}

std::vector<std::string> names(const std::vector<CacheLevelEdge>& levels) {
  std::vector<std::string> out;
  for (const auto& l : levels) out.push_back(l.name);
  return out;
}

const std::vector<std::string> kFourNames = {"L1", "L2", "L3", "DRAM"};

}  // namespace

TEST_CASE("detect_levels: clean curve, edges at the cache sizes", "[memory]") {
  const Shape shape = three_caches();
  const auto levels = detect_levels(synth(shape));
  check_edges(levels, shape);
  for (std::size_t i = 0; i < shape.levels.size(); ++i)
    CHECK(static_cast<double>(*levels[i].edge_bytes) == Approx(static_cast<double>(shape.levels[i].bytes)).epsilon(0.05));

  const auto named = match_levels(levels, reported(), 1);
  CHECK(names(named) == kFourNames);
  CHECK(named[0].reported_bytes == 32 * KiB);
  CHECK(named[1].reported_bytes == 1 * MiB);
  CHECK(named[2].reported_bytes == 32 * MiB);
  CHECK_FALSE(named[3].reported_bytes.has_value());
  for (const auto& l : named) CHECK(l.note.empty());
}

TEST_CASE("detect_levels: 5% multiplicative noise", "[memory]") {
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    INFO("seed " << seed);
    Shape shape = three_caches();
    shape.noise = 0.05;
    shape.seed = seed;
    const auto levels = detect_levels(synth(shape));
    check_edges(levels, shape);
    CHECK(names(match_levels(levels, reported(), 1)) == kFourNames);
  }
}

TEST_CASE("detect_levels: the full report's tapered sweep finds a large L3's edge", "[memory]") {
  // As on a VM that reports a 480 MiB L3 and shows a 240 MiB one: 4 points an octave to 64 MiB, 2
  // from there to twice the reported L3, then 1 an octave; the L3 edge falls in the half-dense part.
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    INFO("seed " << seed);
    Shape shape;
    shape.levels = {{48 * KiB, 300}, {2 * MiB, 120}, {240 * MiB, 40}};
    shape.dram_gbps = 15;
    shape.noise = 0.05;
    shape.seed = seed;
    shape.sizes = tapered_sweep_sizes(4 * KiB, 64 * MiB, 960 * MiB, 1920 * MiB, 4);
    const auto levels = detect_levels(synth(shape));
    check_edges(levels, shape);
  }
}

TEST_CASE("detect_levels: gradual transitions make no extra levels", "[memory]") {
  for (double width : {0.25, 0.4}) {
    for (uint64_t seed = 1; seed <= 10; ++seed) {
      INFO("width " << width << ", seed " << seed);
      Shape shape = three_caches();
      shape.width_octaves = width;
      shape.noise = 0.03;
      shape.seed = seed;
      check_edges(detect_levels(synth(shape)), shape);
    }
  }
}

TEST_CASE("detect_levels: a gently sloping DRAM tail is one level", "[memory]") {
  for (double slope : {0.05, 0.07, 0.10}) {
    for (uint64_t seed = 1; seed <= 10; ++seed) {
      INFO("slope " << slope << ", seed " << seed);
      Shape shape = three_caches();
      shape.to = 2048 * MiB;  // 5 octaves past the L3: DRAM falls to 20 x (1 - slope)^4
      shape.dram_slope_per_octave = slope;
      shape.noise = 0.03;
      shape.seed = seed;
      const auto levels = detect_levels(synth(shape));
      REQUIRE(levels.size() == 4);
      CHECK(levels[3].gbps < 20.5);
      CHECK(levels[3].gbps > 20 * std::pow(1 - slope, 4));
    }
  }
}

TEST_CASE("detect_levels: outliers, a slow start and a single DRAM point", "[memory]") {
  Shape shape = three_caches();
  auto curve = synth(shape);
  curve[20].gbps *= 2.5;   // one wild sample
  curve[41].gbps *= 0.4;
  curve[0].gbps *= 0.7;    // loop overhead at the smallest size: a rise, not a level
  check_edges(detect_levels(curve), shape);

  // The sweep ends one point past the L3 edge: DRAM is seen at a single point, still a level.
  Shape short_sweep = three_caches();
  short_sweep.width_octaves = 0.05;
  short_sweep.to = 40 * MiB;
  const auto levels = detect_levels(synth(short_sweep));
  REQUIRE(levels.size() == 4);
  CHECK(levels[3].gbps == Approx(20).epsilon(0.05));
}

TEST_CASE("detect_levels: degenerate curves", "[memory]") {
  CHECK(detect_levels({}).empty());
  CHECK(detect_levels({{4096, 0}, {8192, -1}, {0, 5}}).empty());
  const auto one = detect_levels({{4096, 50}});
  REQUIRE(one.size() == 1);
  CHECK(one[0].gbps == Approx(50));
  CHECK_FALSE(one[0].edge_bytes.has_value());
  // Unsorted input with a repeated size is sorted and averaged.
  const auto two = detect_levels({{8 * MiB, 20}, {4 * KiB, 100}, {8 * KiB, 100}, {8 * MiB, 20}, {16 * KiB, 100},
                                  {4 * MiB, 20}, {16 * MiB, 20}});
  REQUIRE(two.size() == 2);
  CHECK(*two[0].edge_bytes > 16 * KiB);
  CHECK(*two[0].edge_bytes < 4 * MiB);
}

TEST_CASE("match_levels: a VM whose L3 edge is smaller than reported", "[memory]") {
  Shape shape = three_caches();
  shape.levels[2].bytes = 8 * MiB;
  const auto named = match_levels(detect_levels(synth(shape)), reported(32 * MiB), 1);
  REQUIRE(names(named) == kFourNames);
  CHECK(named[2].note ==
        "curve edge at 8 MiB, but the OS reports 32 MiB of L3 (a VM may expose less cache than it reports)");
  CHECK(named[0].note.empty());
  CHECK(named[1].note.empty());
}

TEST_CASE("match_levels: a level with no plateau of its own", "[memory]") {
  // L2 and L3 at the same bandwidth: one plateau up to 32 MiB, named after the L3 it ends at.
  Shape merged;
  merged.levels = {{32 * KiB, 200}, {32 * MiB, 100}};
  const auto a = match_levels(detect_levels(synth(merged)), reported(), 1);
  REQUIRE(names(a) == std::vector<std::string>{"L1", "L3", "DRAM"});
  CHECK(a[1].note == "no separate L2 plateau found; L2 and L3 bandwidths may be too close");

  // L3 as slow as DRAM: the L2 plateau ends at 1 MiB and the rest is DRAM.
  Shape no_l3;
  no_l3.levels = {{32 * KiB, 200}, {1 * MiB, 100}};
  const auto b = match_levels(detect_levels(synth(no_l3)), reported(), 1);
  REQUIRE(names(b) == std::vector<std::string>{"L1", "L2", "DRAM"});
  CHECK(b[2].note == "no separate L3 plateau found; L3 and DRAM bandwidths may be too close");
}

TEST_CASE("match_levels: a flat curve is one plateau, named by where the sweep ends", "[memory]") {
  // Decision: with the curve's top size known, the only plateau is the smallest cache holding the
  // whole sweep, or DRAM beyond the largest; with it unknown, DRAM (sweeps go past the last level).
  Shape flat;
  flat.dram_gbps = 20;
  const auto levels = detect_levels(synth(flat));
  REQUIRE(levels.size() == 1);
  const auto dram = match_levels(levels, reported(), 1, 512 * MiB);
  REQUIRE(names(dram) == std::vector<std::string>{"DRAM"});
  CHECK_THAT(dram[0].note, Catch::Contains("no separate L1 plateau found") &&
                               Catch::Contains("no separate L3 plateau found"));
  CHECK(names(match_levels(levels, reported(), 1)) == std::vector<std::string>{"DRAM"});

  Shape tiny;
  tiny.to = 16 * KiB;
  tiny.dram_gbps = 200;
  const auto l1 = match_levels(detect_levels(synth(tiny)), reported(), 1, 16 * KiB);
  REQUIRE(names(l1) == std::vector<std::string>{"L1"});
  CHECK(l1[0].reported_bytes == 32 * KiB);
  CHECK(l1[0].note.empty());
}

TEST_CASE("match_levels: a sweep that stops inside the L3", "[memory]") {
  Shape shape = three_caches();
  shape.to = 16 * MiB;
  const auto named = match_levels(detect_levels(synth(shape)), reported(), 1, 16 * MiB);
  REQUIRE(names(named) == std::vector<std::string>{"L1", "L2", "L3"});
  for (const auto& l : named) CHECK(l.note.empty());
}

TEST_CASE("match_levels: capacities for the threads used", "[memory]") {
  const CacheLevel l2{2, "unified", 1 * MiB, 64, 8, 2, 8};
  CHECK(cache_capacity_for_threads(l2, 1) == 1 * MiB);
  CHECK(cache_capacity_for_threads(l2, 4) == 4 * MiB);
  CHECK(cache_capacity_for_threads(l2, 64) == 8 * MiB);
  const CacheLevel l3{3, "unified", 32 * MiB, 64, 16, 16, 2};
  CHECK(cache_capacity_for_threads(l3, 1) == 32 * MiB);
  CHECK(cache_capacity_for_threads(l3, 16) == 64 * MiB);
  CHECK(cache_capacity_for_threads(l3, 0) == 32 * MiB);

  // 4 threads: L1 128 KiB, L2 4 MiB, L3 32 MiB.
  Shape shape;
  shape.levels = {{128 * KiB, 800}, {4 * MiB, 400}, {32 * MiB, 150}};
  shape.dram_gbps = 60;
  const auto named = match_levels(detect_levels(synth(shape)), reported(), 4);
  REQUIRE(names(named) == kFourNames);
  CHECK(named[1].reported_bytes == 4 * MiB);
  for (const auto& l : named) CHECK(l.note.empty());
}

TEST_CASE("match_levels: extra edges and no reported caches", "[memory]") {
  // An extra step at 256 KiB (e.g. the L1 TLB's reach) between L1 and L2.
  Shape shape;
  shape.levels = {{32 * KiB, 200}, {256 * KiB, 150}, {1 * MiB, 100}, {32 * MiB, 50}};
  const auto levels = detect_levels(synth(shape));
  REQUIRE(levels.size() == 5);
  const auto named = match_levels(levels, reported(), 1);
  CHECK(names(named) == std::vector<std::string>{"L1", "unknown", "L2", "L3", "DRAM"});
  CHECK_THAT(named[1].note, Catch::Contains("curve edge at 256 KiB matches no cache"));

  const auto by_order = match_levels(detect_levels(synth(three_caches())), {}, 1);
  CHECK(names(by_order) == std::vector<std::string>{"L1", "L2", "L3", "DRAM"});
  CHECK_THAT(by_order[0].note, Catch::Contains("no caches"));
  CHECK(match_levels({}, reported(), 1).empty());
}
