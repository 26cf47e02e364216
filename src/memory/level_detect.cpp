#include "memory/level_detect.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <string>

#include "memory/sizes.hpp"

namespace peakprobe {

namespace {

// Thresholds of the method described in the header, in natural-log units of bandwidth.
const double kMinDrop = std::log(1.15);        // a level is at least this much slower than the one before
const double kEndTolerance = std::log(1.10);   // an end plateau's points lie this close to its median
const double kFlatSlope = std::log(1.20);      // per octave
constexpr double kSlopeHalfWindow = 0.5;       // octaves either side of a point
constexpr double kMinInteriorSpan = 0.25;      // octaves from a plateau's first point to its last
constexpr double kMinTrendSpan = 1.0;          // octaves a run must span for its slope to count
constexpr double kNoteFactor = 1.5;            // edge vs reported capacity

// The curve in log space: x = log2(bytes), y = ln(GB/s), ys = y after the median filter.
struct Series {
  std::vector<double> x, y, ys, gbps;
  std::size_t size() const { return x.size(); }
};

// A plateau as an inclusive index range, with its level (ln of the median bandwidth).
struct Run {
  std::size_t first = 0, last = 0;
  double level = 0;
};

double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// Sorted by size; points sharing a size are averaged (in log space) so x strictly increases and
// the interpolation below never divides by zero.
Series make_series(const std::vector<CurvePoint>& curve) {
  std::map<uint64_t, std::vector<double>> by_size;
  for (const CurvePoint& p : curve)
    if (p.size_bytes > 0 && std::isfinite(p.gbps) && p.gbps > 0) by_size[p.size_bytes].push_back(std::log(p.gbps));
  Series s;
  for (const auto& [bytes, logs] : by_size) {
    double sum = 0;
    for (double l : logs) sum += l;
    s.x.push_back(std::log2(static_cast<double>(bytes)));
    s.y.push_back(sum / static_cast<double>(logs.size()));
    s.gbps.push_back(std::exp(s.y.back()));
  }
  s.ys = s.y;
  for (std::size_t i = 1; i + 1 < s.size(); ++i) s.ys[i] = median_of({s.y[i - 1], s.y[i], s.y[i + 1]});
  return s;
}

// Least-squares slope of ys over the points within half an octave of i (and at least its direct
// neighbours, so a sparse curve still has a slope).
double local_slope(const Series& s, std::size_t i) {
  std::size_t lo = i, hi = i;
  while (lo > 0 && (lo == i || s.x[i] - s.x[lo - 1] <= kSlopeHalfWindow)) --lo;
  while (hi + 1 < s.size() && (hi == i || s.x[hi + 1] - s.x[i] <= kSlopeHalfWindow)) ++hi;
  double mx = 0, my = 0;
  for (std::size_t j = lo; j <= hi; ++j) {
    mx += s.x[j];
    my += s.ys[j];
  }
  const double n = static_cast<double>(hi - lo + 1);
  mx /= n;
  my /= n;
  double sxy = 0, sxx = 0;
  for (std::size_t j = lo; j <= hi; ++j) {
    sxy += (s.x[j] - mx) * (s.ys[j] - my);
    sxx += (s.x[j] - mx) * (s.x[j] - mx);
  }
  return sxx > 0 ? sxy / sxx : 0.0;
}

double run_level(const Series& s, std::size_t first, std::size_t last) {
  return std::log(median_of(std::vector<double>(s.gbps.begin() + static_cast<long>(first),
                                                s.gbps.begin() + static_cast<long>(last) + 1)));
}

Run make_run(const Series& s, std::size_t first, std::size_t last) { return {first, last, run_level(s, first, last)}; }

// Maximal runs of flat points.
std::vector<Run> flat_runs(const Series& s) {
  std::vector<Run> runs;
  const std::size_t n = s.size();
  std::size_t i = 0;
  while (i < n) {
    if (std::abs(local_slope(s, i)) > kFlatSlope) {
      ++i;
      continue;
    }
    std::size_t j = i;
    while (j + 1 < n && std::abs(local_slope(s, j + 1)) <= kFlatSlope) ++j;
    runs.push_back(make_run(s, i, j));
    i = j + 1;
  }
  return runs;
}

// Interior runs spanning less than kMinInteriorSpan are the flat-looking middle of a transition.
void drop_short_runs(const Series& s, std::vector<Run>& runs) {
  const std::size_t n = s.size();
  std::erase_if(runs, [&](const Run& r) {
    const bool at_end = r.first == 0 || r.last == n - 1;
    return !at_end && s.x[r.last] - s.x[r.first] < kMinInteriorSpan;
  });
}

// Extends [from, from] one point at a time in direction step (+1 or -1, stopping before `limit`)
// while every point stays within kEndTolerance of the growing range's median.
Run end_run(const Series& s, std::size_t from, long step, std::size_t limit) {
  std::size_t lo = from, hi = from;
  while (true) {
    const long next = static_cast<long>(step > 0 ? hi : lo) + step;
    if (next < 0 || static_cast<std::size_t>(next) >= s.size() || static_cast<std::size_t>(next) == limit) break;
    const std::size_t a = std::min(lo, static_cast<std::size_t>(next));
    const std::size_t b = std::max(hi, static_cast<std::size_t>(next));
    std::vector<double> vals(s.ys.begin() + static_cast<long>(a), s.ys.begin() + static_cast<long>(b) + 1);
    const double med = median_of(vals);
    const bool fits = std::all_of(vals.begin(), vals.end(), [&](double v) { return std::abs(v - med) <= kEndTolerance; });
    if (!fits) break;
    lo = a;
    hi = b;
  }
  return make_run(s, lo, hi);
}

// Where the curve starts or ends on a slope, the end value still says something (the last point
// may be the only one in DRAM): give it a plateau of its own.
void add_end_runs(const Series& s, std::vector<Run>& runs) {
  const std::size_t n = s.size();
  if (runs.empty()) {
    runs.push_back(end_run(s, 0, +1, n));
    if (runs.back().last + 1 < n) runs.push_back(end_run(s, n - 1, -1, runs.back().last));
    return;
  }
  if (runs.front().first > 0) runs.insert(runs.begin(), end_run(s, 0, +1, runs.front().first));
  if (runs.back().last + 1 < n) runs.push_back(end_run(s, n - 1, -1, runs.back().last));
}

// The run's trend line evaluated at x0: the Theil-Sen slope (the median of the slopes between
// all pairs of its points) through the median of y - slope * x. Medians, because a run's ends may
// carry the shoulder of the transition next to it, and a least-squares line would tilt towards
// it. The slope is clamped to what a flat run may have, and taken as 0 over less than
// kMinTrendSpan, where a few noisy points carried across a wide gap would invent a step.
double trend_at(const Series& s, const Run& r, double x0) {
  double slope = 0;
  if (s.x[r.last] - s.x[r.first] >= kMinTrendSpan) {
    std::vector<double> slopes;
    for (std::size_t i = r.first; i <= r.last; ++i)
      for (std::size_t j = i + 1; j <= r.last; ++j) slopes.push_back((s.ys[j] - s.ys[i]) / (s.x[j] - s.x[i]));
    slope = std::clamp(median_of(std::move(slopes)), -kFlatSlope, kFlatSlope);
  }
  std::vector<double> intercepts;
  for (std::size_t i = r.first; i <= r.last; ++i) intercepts.push_back(s.ys[i] - slope * s.x[i]);
  return median_of(std::move(intercepts)) + slope * x0;
}

// The step between two plateaus where they meet: each one's trend carried to the middle of the gap
// between them. A gentle slope that the flat test happened to split continues across the gap (a
// step near 0); a cache edge leaves the whole drop; a rise gives a negative step.
double step_between(const Series& s, const Run& a, const Run& b) {
  const double gap = 0.5 * (s.x[a.last] + s.x[b.first]);
  return trend_at(s, a, gap) - trend_at(s, b, gap);
}

// b is a level of its own only where the curve steps down by at least kMinDrop from a.
bool should_merge(const Series& s, const Run& a, const Run& b) { return step_between(s, a, b) < kMinDrop; }

void merge_runs(const Series& s, std::vector<Run>& runs) {
  while (runs.size() > 1) {
    std::optional<std::size_t> best;
    for (std::size_t i = 0; i + 1 < runs.size(); ++i) {
      if (!should_merge(s, runs[i], runs[i + 1])) continue;
      if (!best || step_between(s, runs[i], runs[i + 1]) < step_between(s, runs[*best], runs[*best + 1])) best = i;
    }
    if (!best) return;
    runs[*best] = make_run(s, runs[*best].first, runs[*best + 1].last);
    runs.erase(runs.begin() + static_cast<long>(*best) + 1);
  }
}

// log2 of the size where ys crosses the midpoint of the two levels; of several crossings (noise),
// the one nearest the gap between the plateaus. The middle of the gap if there is none.
double edge_x(const Series& s, const Run& a, const Run& b) {
  const double mid = 0.5 * (a.level + b.level);
  const double gap = 0.5 * (s.x[a.last] + s.x[b.first]);
  std::optional<double> best;
  for (std::size_t k = a.first; k < b.last; ++k) {
    const double d0 = s.ys[k] - mid, d1 = s.ys[k + 1] - mid;
    if (d0 == 0 && d1 == 0) continue;
    if ((d0 > 0) == (d1 > 0) && d1 != 0) continue;
    const double t = d0 / (d0 - d1);
    const double x = s.x[k] + t * (s.x[k + 1] - s.x[k]);
    if (!best || std::abs(x - gap) < std::abs(*best - gap)) best = x;
  }
  return best.value_or(gap);
}

}  // namespace

std::vector<CacheLevelEdge> detect_levels(const std::vector<CurvePoint>& curve) {
  const Series s = make_series(curve);
  if (s.size() == 0) return {};
  std::vector<Run> runs = flat_runs(s);
  add_end_runs(s, runs);
  // Merging first lets pieces of one plateau that noise or a sparse start cut short join up
  // before the short ones are judged; merging again joins plateaus a dropped transition separated.
  merge_runs(s, runs);
  drop_short_runs(s, runs);
  merge_runs(s, runs);
  std::vector<CacheLevelEdge> levels;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    CacheLevelEdge e;
    e.gbps = std::exp(runs[i].level);
    if (i + 1 < runs.size()) e.edge_bytes = static_cast<uint64_t>(std::llround(std::exp2(edge_x(s, runs[i], runs[i + 1]))));
    levels.push_back(std::move(e));
  }
  return levels;
}

// ---- matching with the reported caches ----

uint64_t cache_capacity_for_threads(const CacheLevel& cache, int threads) {
  const int used = std::min(std::max(threads, 1), std::max(cache.instances, 1));
  return cache.size_bytes * static_cast<uint64_t>(used);
}

namespace {

struct Reported {
  int level = 0;
  uint64_t bytes = 0;
  std::string name() const { return fmt::format("L{}", level); }
};

std::vector<Reported> reported_levels(const std::vector<CacheLevel>& caches, int threads) {
  std::map<int, uint64_t> by_level;
  for (const CacheLevel& c : caches) {
    if (c.type == "instruction" || c.size_bytes == 0) continue;
    uint64_t& bytes = by_level[c.level];
    bytes = std::max(bytes, cache_capacity_for_threads(c, threads));
  }
  std::vector<Reported> out;
  for (const auto& [level, bytes] : by_level) out.push_back({level, bytes});
  return out;
}

// An edge for a note. Edges are interpolated between sweep points a quarter octave apart, so two
// or three significant digits ("8 MiB", "1.5 MiB", "256 KiB") are all they can claim.
std::string edge_text(uint64_t bytes) {
  static constexpr const char* kNames[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  std::size_t u = 0;
  double v = static_cast<double>(bytes);
  while (u + 1 < std::size(kNames) && v >= 1024) {
    v /= 1024;
    ++u;
  }
  v = v >= 10 ? std::round(v) : std::round(v * 10) / 10;
  if (v >= 1024 && u + 1 < std::size(kNames)) {
    v /= 1024;
    ++u;
  }
  return fmt::format("{:g} {}", v, kNames[u]);
}

void add_note(std::string& note, const std::string& text) {
  note += note.empty() ? text : "; " + text;
}

double log_distance(uint64_t a, uint64_t b) {
  return std::abs(std::log(static_cast<double>(a) / static_cast<double>(b)));
}

// For each edge, the index of its reported level or -1: an order-keeping alignment that matches as
// many edges as it can (a skipped edge costs more than any match) at the least total log distance.
std::vector<int> align(const std::vector<uint64_t>& edges, const std::vector<Reported>& rep) {
  constexpr double kSkipEdge = 1e6;
  const std::size_t n = edges.size(), m = rep.size();
  std::vector<std::vector<double>> f(n + 1, std::vector<double>(m + 1, 0.0));
  for (std::size_t i = 1; i <= n; ++i) f[i][0] = static_cast<double>(i) * kSkipEdge;
  for (std::size_t i = 1; i <= n; ++i)
    for (std::size_t j = 1; j <= m; ++j)
      f[i][j] = std::min({f[i][j - 1], f[i - 1][j] + kSkipEdge,
                          f[i - 1][j - 1] + log_distance(edges[i - 1], rep[j - 1].bytes)});
  std::vector<int> match(n, -1);
  std::size_t i = n, j = m;
  while (i > 0 && j > 0) {
    if (f[i][j] == f[i - 1][j - 1] + log_distance(edges[i - 1], rep[j - 1].bytes)) {
      match[--i] = static_cast<int>(--j);
    } else if (f[i][j] == f[i][j - 1]) {
      --j;
    } else {
      --i;
    }
  }
  return match;
}

std::string mismatch_note(uint64_t edge, const Reported& r) {
  const double ratio = static_cast<double>(edge) / static_cast<double>(r.bytes);
  if (ratio * kNoteFactor >= 1.0 && ratio <= kNoteFactor) return {};
  const char* why = ratio < 1 ? "a VM may expose less cache than it reports"
                              : "a non-inclusive cache or the prefetchers can carry the edge past the reported size";
  return fmt::format("curve edge at {}, but the OS reports {} of {} ({})", edge_text(edge), format_bytes(r.bytes),
                     r.name(), why);
}

// Which reported level the last plateau is: DRAM (-1) unless the curve stops inside a cache above
// the last matched one.
int last_plateau_level(const std::vector<Reported>& rep, int last_matched, uint64_t curve_top) {
  if (curve_top == 0) return -1;
  for (std::size_t j = static_cast<std::size_t>(last_matched + 1); j < rep.size(); ++j)
    if (rep[j].bytes >= curve_top) return static_cast<int>(j);
  return -1;
}

// Index of the plateau whose range of sizes holds `bytes`: the first with an edge above it.
std::size_t plateau_holding(const std::vector<CacheLevelEdge>& levels, uint64_t bytes) {
  for (std::size_t i = 0; i < levels.size(); ++i)
    if (levels[i].edge_bytes && *levels[i].edge_bytes > bytes) return i;
  return levels.size() - 1;
}

void note_missing(std::vector<CacheLevelEdge>& levels, const Reported& missing, const std::vector<Reported>& rep,
                  const std::vector<int>& level_of) {
  const std::size_t i = plateau_holding(levels, missing.bytes);
  const std::string& holder = levels[i].name;
  std::string text = fmt::format("no separate {} plateau found; ", missing.name());
  if (level_of[i] < 0 && holder != "DRAM") {
    text += "its bandwidth may be too close to a neighbouring level's";
  } else {
    const bool holder_below = level_of[i] >= 0 && rep[static_cast<std::size_t>(level_of[i])].level < missing.level;
    text += holder_below ? fmt::format("{} and {} bandwidths may be too close", holder, missing.name())
                         : fmt::format("{} and {} bandwidths may be too close", missing.name(), holder);
  }
  add_note(levels[i].note, text);
}

std::vector<CacheLevelEdge> name_by_order(std::vector<CacheLevelEdge> levels) {
  for (std::size_t i = 0; i < levels.size(); ++i)
    levels[i].name = i + 1 < levels.size() ? fmt::format("L{}", i + 1) : "DRAM";
  if (!levels.empty()) add_note(levels.front().note, "the OS reports no caches; levels named by their order");
  return levels;
}

}  // namespace

std::vector<CacheLevelEdge> match_levels(std::vector<CacheLevelEdge> levels, const std::vector<CacheLevel>& caches,
                                         int threads, uint64_t curve_top_bytes) {
  if (levels.empty()) return levels;
  const std::vector<Reported> rep = reported_levels(caches, threads);
  if (rep.empty()) return name_by_order(std::move(levels));

  std::vector<std::size_t> with_edge;
  std::vector<uint64_t> edges;
  for (std::size_t i = 0; i < levels.size(); ++i)
    if (levels[i].edge_bytes) {
      with_edge.push_back(i);
      edges.push_back(*levels[i].edge_bytes);
    }
  const std::vector<int> match = align(edges, rep);

  // level_of[i]: the reported level plateau i was named after, -1 for DRAM and unknown.
  std::vector<int> level_of(levels.size(), -1);
  std::vector<bool> seen(rep.size(), false);
  int last_matched = -1;
  for (std::size_t k = 0; k < with_edge.size(); ++k) {
    CacheLevelEdge& e = levels[with_edge[k]];
    if (match[k] < 0) {
      e.name = "unknown";
      add_note(e.note, fmt::format("curve edge at {} matches no cache the OS reports (a TLB's reach or a "
                                   "prefetcher can make an extra step)",
                                   edge_text(*e.edge_bytes)));
      continue;
    }
    const Reported& r = rep[static_cast<std::size_t>(match[k])];
    e.name = r.name();
    e.reported_bytes = r.bytes;
    const std::string note = mismatch_note(*e.edge_bytes, r);
    if (!note.empty()) add_note(e.note, note);
    level_of[with_edge[k]] = match[k];
    seen[static_cast<std::size_t>(match[k])] = true;
    last_matched = std::max(last_matched, match[k]);
  }

  for (std::size_t i = 0; i < levels.size(); ++i) {
    if (levels[i].edge_bytes) continue;
    const int j = last_plateau_level(rep, last_matched, curve_top_bytes);
    if (j < 0) {
      levels[i].name = "DRAM";
    } else {
      levels[i].name = rep[static_cast<std::size_t>(j)].name();
      levels[i].reported_bytes = rep[static_cast<std::size_t>(j)].bytes;
      level_of[i] = j;
      seen[static_cast<std::size_t>(j)] = true;
    }
  }

  for (std::size_t j = 0; j < rep.size(); ++j) {
    const bool reached = curve_top_bytes == 0 || rep[j].bytes <= curve_top_bytes;
    if (!seen[j] && reached) note_missing(levels, rep[j], rep, level_of);
  }
  return levels;
}

}  // namespace peakprobe
