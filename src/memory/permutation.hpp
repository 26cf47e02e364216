// Pointer-chase orders for the latency probes: next[i] is the line visited after line i. Every
// order here is a single cycle through all nodes, so a chase started anywhere touches the whole
// working set before it repeats.
#pragma once
#include <cstdint>
#include <vector>

namespace peakprobe {

// A uniformly random single cycle through n nodes (Sattolo's algorithm), reproducible from seed on
// any standard library. Random order defeats the hardware prefetchers, so each load pays the full
// latency of the level the working set lives in. n == 1 gives next[0] == 0; n == 0 gives {}.
std::vector<uint32_t> sattolo_cycle(uint32_t n, uint64_t seed);

// One cycle through all `lines` that visits the pages in order (page 0, 1, 2, ..., then back to
// 0) and the lines of each page in random order, each page's lines all before the next page. Every
// page is entered once per lap, so TLB misses fall to one per page while cache misses stay one per
// line: compared with sattolo_cycle at the same size, the difference is the TLB's cost. The last
// page may hold fewer lines. lines_per_page == 0 counts as 1; lines == 0 gives {}.
std::vector<uint32_t> page_local_cycle(uint32_t lines, uint32_t lines_per_page, uint64_t seed);

}  // namespace peakprobe
