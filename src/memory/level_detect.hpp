// Cache levels from a bandwidth-vs-working-set curve: find the plateaus and the edges between them
// (detect_levels), then name them after the caches the OS reports (match_levels). Pure functions
// of the curve; the sweep that measures it lives elsewhere.
#pragma once
#include <cstdint>
#include <vector>

#include "peakprobe/cpu_info.hpp"
#include "peakprobe/mem_result.hpp"

namespace peakprobe {

struct CurvePoint {
  uint64_t size_bytes = 0;  // working set of all threads together
  double gbps = 0;
};

// Plateaus of the curve, smallest working set first, names left empty. Expects a geometric sweep
// with at least 4 points per octave; points are sorted by size, and those with no finite positive
// bandwidth are dropped. The method, in ln(GB/s) against log2(size):
//  - a 3-point median filter removes single outliers;
//  - a point is flat when the least-squares slope over the points within half an octave of it is
//    below 20% per octave; maximal runs of flat points are the candidate plateaus. A slope test
//    (rather than "within +-10% of the run's median" alone) keeps the points of a gradual
//    transition out of the plateaus, where they would otherwise form short spurious levels;
//  - where the curve starts or ends on a slope, the end points within +-10% of the end value form
//    an end plateau of their own, even a single point (the last point may be the only one in DRAM);
//  - neighbouring plateaus merge unless the curve steps down by at least 15% where they meet: each
//    plateau's trend (Theil-Sen line, flat for runs under an octave) is carried to the middle of
//    the gap between them and compared there. So rises never make a level, nor does a gently
//    sloping DRAM tail that the flat test happened to cut in two;
//  - interior plateaus spanning less than a quarter octave (a single point at 4 per octave) are
//    the flat-looking middle of a transition and are dropped, then the merge runs again.
// gbps is the plateau's median; edge_bytes is where the smoothed curve crosses the geometric mean
// of this plateau's median and the next one's (interpolated in log-log), null for the last plateau.
// The thresholds were chosen on synthetic curves with logistic transitions up to an octave wide,
// up to +-8% noise and DRAM tails falling up to 10% per octave; a step of less than about 25%
// spread over a whole octave can no longer be told from a slope and may be missed.
std::vector<CacheLevelEdge> detect_levels(const std::vector<CurvePoint>& curve);

// How much of one reported cache level `threads` threads pinned one per core can use:
// size x min(threads, instances). For private caches that is one instance per thread; for a shared
// cache it assumes the threads spread over its instances (one thread uses one L3 slice's worth,
// enough threads use them all), an upper bound when they are packed onto fewer instances.
uint64_t cache_capacity_for_threads(const CacheLevel& cache, int threads);

// Names the plateaus L1, L2, L3, ... and DRAM. The reported levels are the data and unified caches
// (the largest entry where one level number appears twice, as on hybrid CPUs), with capacities from
// cache_capacity_for_threads. The edges are matched to them in order, as many as possible, at the
// least total distance in log space; reported_bytes is the matched capacity. An edge more than a
// factor 1.5 away from its capacity gets a note; an edge left over (more edges than levels) is named
// "unknown". The last plateau, which has no edge, is DRAM unless curve_top_bytes (the largest size
// of the curve; 0 = unknown) fits in a cache above the last matched one, then it is that cache: the
// sweep stopped before the working set left it. A reported level inside the curve's range with no
// plateau of its own gets a note on the plateau that covers its capacity. With no reported caches,
// the plateaus are named by their order.
std::vector<CacheLevelEdge> match_levels(std::vector<CacheLevelEdge> levels, const std::vector<CacheLevel>& caches,
                                         int threads, uint64_t curve_top_bytes = 0);

}  // namespace peakprobe
