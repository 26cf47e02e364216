// Plots of measured ceilings and memory sweeps as self-contained SVG documents: the roofline, bandwidth
// by working set and load-to-use latency by working set.
//
// Like svg_heatmap.hpp: no scripts, no external fonts, images or stylesheets, text as <text> in
// sans-serif, and the plotted values as JSON in <metadata> so tools can read them back without
// scraping the drawing. The output depends only on the arguments, so it can be compared byte for
// byte. NaN and infinite values are left out of the drawing and written as null in the metadata.
#pragma once
#include <string>
#include <vector>

#include "peakprobe/ceiling.hpp"
#include "peakprobe/cpu_info.hpp"
#include "peakprobe/mem_result.hpp"

namespace peakprobe {

// Log-log roofline for the ceilings measured with `threads` threads: x is arithmetic intensity
// (FLOP/byte), y GFLOP/s. One horizontal roof per floating-point dtype (its best ceiling) and one
// dashed roof per integer dtype (GOP/s); one diagonal roof per memory level (its "load" ceiling,
// else its first), cut where it meets the highest floating-point roof; the ridge points there, and
// the kernels run with `threads` threads as labelled dots. A kernel scored against a compute roof of
// its own (ScoreRequest::roof_gflops, none of the drawn roofs) gets that roof as a dotted line, so
// the dot's height under it reads as the efficiency the tables print.
std::string roofline_svg(const CeilingTable& t, const std::vector<KernelScore>& kernels, int threads,
                         const std::string& title);

// GB/s by working-set size (log x), one line per (kernel, isa, threads) through the rows that have a
// finite rate; the y axis turns logarithmic when the rates span more than a factor of 20. Detected
// level edges are dashed vertical lines, the sizes the OS reports for the data and unified caches
// dotted ones.
std::string bandwidth_svg(const std::vector<BandwidthResult>& rows, const std::vector<CacheLevelEdge>& levels,
                          const std::vector<CacheLevel>& caches, const std::string& title);

// Latency in ns (log y) by working-set size (log x), one line per (mode, pages, chains) through the
// rows that have a finite latency, with the reported cache sizes as dotted vertical lines.
std::string latency_svg(const std::vector<LatencyResult>& rows, const std::vector<CacheLevel>& caches,
                        const std::string& title);

}  // namespace peakprobe
