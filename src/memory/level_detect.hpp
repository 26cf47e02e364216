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
// bandwidth are dropped. The method, in log(GB/s) against log2(size):
//  - a 3-point median filter removes single outliers;
//  - a point is flat when the least-squares slope over the points within half an octave of it is
//    below 15% per octave; maximal runs of flat points are the candidate plateaus. A slope test
//    (rather than "within +-10% of the run's median" alone) keeps the points of a gradual
//    transition out of the plateaus, where they would otherwise form short spurious levels;
//  - interior candidates spanning less than half an octave are transition points and are dropped;
//    where the curve starts or ends on a slope, the end points within +-10% of the end value form an
//    end plateau of their own, even a single point;
//  - neighbouring plateaus merge unless the later one is at least 15% lower and the drop between
//    them is local (at least half of that 15% between the last point of one and the first of the
//    next), so rises and gently sloping tails never make a level.
// gbps is the plateau's median; edge_bytes is where the smoothed curve crosses the geometric mean
// of this plateau's level and the next one's (interpolated in log-log), null for the last plateau.
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
