// Deriving the roofline from measurements: compute ceilings from probe results (and the best FLOP
// mix), memory ceilings from bandwidth rows, ridge points, and scoring kernels against them.
// Pure functions: no measuring here.
#pragma once
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "peakprobe/ceiling.hpp"
#include "peakprobe/cpu_info.hpp"
#include "peakprobe/expected.hpp"
#include "peakprobe/mem_result.hpp"
#include "peakprobe/pair_result.hpp"
#include "peakprobe/result.hpp"

namespace peakprobe {

// The vector width an instruction text works on: "512", "256", "128" (bits), "scalar", or the matrix
// unit's name for tile multiplies (the host target's width_class).
std::string isa_of_instruction(const std::string& text);
bool is_float_dtype(const std::string& dtype);

// An all-cores ceiling per core and cycle. Each thread's figure is in the cycles of its own core, and
// the total sums each core's rate at its own clock, so the per-cycle rate is the mean of the threads'
// ops per cycle, and the clock is the one that turns it back into the total. Dividing the total by the
// one-core row's clock instead mixes two moments of a moving clock: on a Zen 5 VM the 2-thread ceiling
// of the 512-bit 16-bit integer add read 131.04 ops a cycle a core on a core that does 128 (the
// threads 0.2506 and 0.2511 cycles at about 3.75 GHz, the one-core row at 3.66 GHz). Without a
// usable cycle count for every thread (a result built by hand, a broken threaded run): the one-core
// clock, as before.
struct ThreadedRate {
  double ops_per_cycle = 0;  // per core
  double clock_ghz = 0;
};
ThreadedRate threaded_rate(double total, int threads, double ops_per_unit, const std::vector<double>& per_thread_cycles,
                           double one_core_ghz);

// A FLOP-mix ceiling's `source`: "mix A:B of <a> + <b>", its best ratio.
std::string mix_source(const FlopMixSearch& mix);

// A FLOP mix sets a ceiling only when it beats the best single instruction of its dtype and width
// by more than this: on a core whose adds share the FMA's pipes the search's best is the FMA alone or
// a mix within noise of it, which would name a mix the core gains nothing from.
inline constexpr double kMixCeilingMargin = 0.02;

// The best rate per (dtype, isa, threads) among ok results with ops; a FLOP mix that beats the best
// single instruction of its dtype and width (by kMixCeilingMargin) replaces it, on one core and,
// where the mix's best ratio was also run on every core at once, on all cores.
std::vector<ComputeCeiling> compute_ceilings(const std::vector<ProbeResult>& results,
                                             const std::vector<FlopMixSearch>& mixes = {});
// The indices of the searches whose best mix sets a one-core ceiling among `results`: those worth
// running on every core at once (of two encodings of one type and width, the faster).
std::vector<size_t> mixes_setting_ceilings(const std::vector<ProbeResult>& results,
                                           const std::vector<FlopMixSearch>& mixes);

// Which level a working set of `size` falls in for `threads` threads: "L1", "L2", ... or "DRAM",
// by the capacity the reported caches give those threads.
std::string level_for_size(uint64_t size, const std::vector<CacheLevel>& caches, int threads);
// One working-set size inside each reported level (half of the capacity available to the threads)
// and one for DRAM (dram_working_set), with their level names.
std::vector<std::pair<std::string, uint64_t>> level_sizes(const std::vector<CacheLevel>& caches, int threads);
// DRAM's working set for `threads` threads: 4 x where the last level ends (a stream over it leaves at
// most a quarter in that cache, whatever its replacement policy), at least 512 MiB, and past the
// last level's reported capacity by a sixteenth, so that level_for_size names it DRAM.
// `last_level_end`: where the machine showed its last level ending (2 x the plateau_size that the
// search moved below the reported size); 0: the reported capacity. A Sapphire Rapids-class VM
// reports 480 MiB of L3 and holds about 60-120 MiB: 4 x 480 MiB cost the full report 15 s of
// 46 (allocating, touching and streaming 1.9 GiB per kernel), and read what 512 MiB reads.
uint64_t dram_working_set(const std::vector<CacheLevel>& caches, int threads, uint64_t last_level_end = 0);
// The caches as this machine showed them: each instance of `level` cut to `one_thread_end` (where the
// one-core search found the level ending: one thread fills one instance), when that is less than an
// instance's reported size; unchanged otherwise. More threads get the level as its instances give
// them (each thread's own share of a private cache at most, the instances of a shared one), so
// their plan starts inside what one thread showed, not at the OS's size, and a size past the level
// names the next one (level_for_size, dram_working_set). A real multi-die L3 (instances of 32 MiB
// each shared by 16 CPUs) shows about one instance to one thread and is left as it is. On the Zen 5
// VM, which reports 508 MiB of L3 a core and holds about 8 MiB, the 2-core search had begun at
// 508 MiB (11 sizes, 2.4 s), and DRAM's 2-core rows were measured at 1.1 GiB, past twice the
// reported size so as to be named DRAM (3.1 s).
std::vector<CacheLevel> caches_as_shown(std::vector<CacheLevel> caches, const std::string& level,
                                        uint64_t one_thread_end);
// Twice the capacity the threads get from the level before `level` ("L3": twice the L2s), the
// smallest working set that is clearly out of it; 0 for the first level and for names not reported.
uint64_t level_floor(const std::string& level, const std::vector<CacheLevel>& caches, int threads);

// A working set inside a cache level as the machine shows it, not only as the OS reports it: from
// the planned size (level_sizes), halved while the load rate at half the size is more than
// kPlateauGain higher (the planned size then lies past where the level ends), never below `floor`
// (past the level before; level_floor); a gain is confirmed by measuring the larger size again (one
// slowed moment must not move the level); then once more onto the plateau's inner part when that half reads within
// kPlateauGain (a size right at the level's end reads between the level and the next: 45-57 GB/s
// from one moment to the next for two threads at 120 MiB on the VM below). A VM may report the host's whole last-level cache and hold a fraction of
// it: on a Sapphire Rapids-class VM that reports 480 MiB of L3 the bandwidth curve leaves its L3
// plateau (30 GB/s) at 116 MiB, and the L3 ceiling, measured at 240 MiB, read DRAM's 16 GB/s.
// When a size reads more than kPastEndGap under the rate at `floor` (the level's own rate, read
// once when first needed, just past the level before) and its half reads no faster (alike, or
// slower: DRAM's rate moves by more than kPlateauGain between moments), both may lie past the
// level's end and the halving goes on: on a Zen 5 VM that reports 508 MiB of L3, 254 and 127 MiB both read DRAM's 42 GB/s
// while 7.9 MiB read 101, and stopping at 127 MiB had the L3 row read DRAM and sized DRAM's working
// set from the reported 508 MiB (2 GiB per thread count, 10 s of a 49 s report). The walk goes on,
// also after a size that read faster, while sizes read that far under the floor's rate, and never
// measures the floor again (its rate, where the level before may show through, is no evidence). It
// stands once a faster size reads at least the walk's starting rate / (1 - kPastEndGap) (out of the
// next level by the ratio that started the walk), or once a faster size whose half still lies above
// the floor reads (the level before shows through only next to it); otherwise the search keeps what
// it had when the walk began (the planned size, or the plateau found after a faster size).
// `load_gbps(size)` measures one load rate (0 when it could not). Every size tried is in `tried`.
inline constexpr double kPlateauGain = 0.10;
inline constexpr double kPastEndGap = 0.25;
struct PlateauSearch {
  uint64_t size = 0;
  double gbps = 0;
  bool past_end = false;  // settled below the planned size after a confirmed faster one: the level ends sooner
  std::vector<std::pair<uint64_t, double>> tried;  // size, rate, in the order measured
};
PlateauSearch plateau_size(uint64_t planned, uint64_t floor, const std::function<double(uint64_t)>& load_gbps);

std::vector<MemoryCeiling> memory_ceilings(const std::vector<BandwidthResult>& rows,
                                           const std::vector<CacheLevel>& caches);

// For each thread count, each dtype's highest compute ceiling paired with every level's load (or
// best) bandwidth: ai = peak / bandwidth.
std::vector<RidgePoint> ridge_points(const std::vector<ComputeCeiling>& compute,
                                     const std::vector<MemoryCeiling>& memory);

// One rate that a vector width reached on one core, named by what ran (the family), so that the same
// instructions at two widths can be told from different ones.
struct WidthRate {
  std::string family;
  std::string dtype;          // as the ceilings name it ("i8" for u8 rows)
  std::string width;          // the ceiling's width name; only "128", "256", "512"... are compared
  double ops_per_cycle = 0;
};
// A rate that reads below the same family's rate at a wider width of its dtype, per lane: the same
// instructions at a narrower width run on at least the pipes of the wider ones (every pipe that takes
// their 256- or 512-bit form takes the 128-bit form too, on the cores this ran on, which split a
// wide form or run it on the same pipes), so their operations per cycle per lane are at least the
// wider ones'. One more than kNarrowShortfall under that was measured in a slowed moment (a busy
// host: on the Zen 5 VM a report read the f32 128-bit FMA:add mix at 22.0 FLOP a cycle, 5.5 a lane,
// beside the 256-bit mix's 47.6, 5.95 a lane, both `ok`). Different families are not compared: a
// wider width may have an instruction with more operations a lane that the narrower lacks (a 52-bit
// multiply-add only from 256 bits, a matrix multiply-accumulate at 128 bits beside 64-bit dot
// products). Widths that are not a number of bits (scalar: general registers, other pipes) are not
// compared. Each entry names the narrow rate and the wider one that shows it shortest, as indices
// into `rates`.
inline constexpr double kNarrowShortfall = 0.03;
struct NarrowShortfall {
  size_t narrow = 0, wide = 0;
  double shortfall = 0;  // 1 - the narrow's per-lane rate / the wide's
};
std::vector<NarrowShortfall> narrow_rates_short_of_wider(const std::vector<WidthRate>& rates);

CeilingTable make_ceiling_table(const std::vector<ProbeResult>& results, const std::vector<FlopMixSearch>& mixes,
                                const std::vector<BandwidthResult>& bandwidth, const std::vector<CacheLevel>& caches);

struct ScoreRequest {
  std::string name = "kernel";
  double flops = 0, bytes = 0, seconds = 0;
  std::string dtype = "f32";
  std::string level;  // "" = DRAM
  int threads = 1;
  // A kernel's own compute roof instead of the dtype's highest ceiling in the table (0: the table's):
  // the rate of the instruction the kernel is made of, measured on the same cores, which no kernel of
  // that instruction can beat. A matmul is multiply-adds only; the dtype's ceiling may be an FMA:add
  // mix it cannot use (Zen 5, f32 512: 96 FLOP a cycle for the mix, 64 for the multiply-add alone).
  double roof_gflops = 0;
  std::string roof_name;  // what that roof is, for bound_by: "f32 512 <the instruction>"
};
// Bounds of a score request: flops and bytes up to 1e24, seconds from 1 ps to 1e9 s; beyond them
// no kernel exists and the derived rates would not print.
inline constexpr double kMaxScoreCount = 1e24;
inline constexpr double kMinScoreSeconds = 1e-12, kMaxScoreSeconds = 1e9;
// Why a request is out of those bounds (or threads < 1), "" when it is fine: checkable before any
// table is measured.
std::string score_request_problem(const ScoreRequest& req);
// Fails on a request out of those bounds or with threads < 1, on a table with a ceiling that is not
// a positive finite number, and when the table has no ceiling for the dtype (unless the request
// brings its own roof), level and threads.
Expected<KernelScore> score_kernel(const CeilingTable& table, const ScoreRequest& req);

}  // namespace peakprobe
