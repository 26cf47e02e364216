// Times a pair of generated functions that differ only in how many copies of the pattern they
// unroll (N and 2N). Subtracting cancels the call, the loop counter and the timer's own cost.
//
// With a Ruler, every sample of the pair is taken next to a sample of two reference streams: a
// dependent 1-cycle add chain (the clock of that moment) and independent adds over every free
// register (the core's full issue rate). Each sample is converted to core cycles with the clock of
// its own moment, and samples taken while the core ran slowed (its SMT sibling or the host busy)
// are recognised and left out. See docs/method.md, "Paired ruler".
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "asm/jit.hpp"
#include "harness/cycle_counter.hpp"
#include "peakprobe/result.hpp"

namespace peakprobe {

struct TimingBudget {
  double target_call_ticks = 60000;  // grow iterations until one call of the long function lasts this long
  int min_samples = 9;
  int max_samples = 80;
  double max_ticks = 2.5e7;          // stop sampling after this many ticks in total
  int min_clean_samples = 5;         // with a ruler: undisturbed samples wanted before stopping
};

// The reference streams of one pinned core (owned by its ClockCalibrator).
struct Ruler {
  isa::ProbeFn chain = nullptr;  // dependent register add (Target::ruler_forms): one add per core cycle
  double chain_units = 0;        // adds per call at chain_iters
  uint64_t chain_iters = 0;
  double chain_fixed_ticks = 0;  // ticks of a call spent outside the adds (call, set-up, timer)
  isa::ProbeFn wide = nullptr;   // the same add on independent registers: the core's full ALU rate
  double wide_units = 0;
  uint64_t wide_iters = 0;
  // Smallest ratio of a `wide` call's ticks to the adjacent `chain` call's ticks seen on this core:
  // the core running undisturbed (a busy sibling slows the wide stream far more than the chain).
  // Lowered by every timing that sees a faster moment.
  mutable double best_wide_ratio = 0;
  // A dependent multi-cycle chain (Target::ruler_forms().multi_cycle), about as long as a `chain` call. A sibling that
  // takes an ALU slot now and then delays a 1-cycle chain at almost every link it touches, a 3-cycle
  // chain a third as much, and a wide stream with the same share: on a Zen 3 VM the add chain and
  // the wide stream both ran 2-4% slow with their ratio unchanged, while the multi-cycle chain held steady
  // to 0.5%. The ratio of the chain to this call catches that.
  isa::ProbeFn slow = nullptr;
  uint64_t slow_iters = 0;
  // Smallest ratio of a `chain` call's ticks to the adjacent `slow` call's ticks: the 1-cycle chain
  // undisturbed. Lowered, like best_wide_ratio, only by a confirmed faster moment.
  mutable double best_chain_ratio = 0;
  // Set once the multi-cycle chain was seen moving on its own (see multi_cycle_chain_unsteady): it
  // then no longer sets the clock, and best_chain_ratio becomes the typical ratio of that moment and
  // is not lowered again. Its slow mode only lowers the ratio, so a sample above the typical ratio
  // still means a slowed add chain: a busy sibling can slow the add chain and the wide stream alike
  // (their ratio unchanged), and without this judge the clock would read that much too fast. Seen on
  // an Emerald Rapids VM: `ok` FP rows 4-7% faster than their pipes allow while the multi-cycle chain was off.
  mutable bool slow_unsteady = false;
  // Floors under the two learned ratios: the first calibration's (scalar code only, at the start of
  // the process) less half a learning step each, so that a quiet sample (within 1% of it) stays well
  // inside the judge's limits. Lessons may lower a ratio that far and no further: on
  // a Sapphire Rapids-class VM the references read wide/chain 0.97 and add/multi-cycle 0.30-0.31 for
  // the length of a 512-bit probe (1.05 and 0.334 before and after), the lessons of that probe took
  // both down step by step to 0.88 and 0.309, and every later sample of the run then looked 8-20%
  // slowed, its figures right but `mistrusted`.
  mutable double wide_ratio_floor = 0, chain_ratio_floor = 0;
  // A lesson: the ratio lowered towards `seen` by at most one step (kRulerCleanLimit for the wide
  // ratio, kRulerSteadyChainLimit for the add/multi-cycle one), never below its floor.
  void teach_wide_ratio(double seen) const;
  void teach_chain_ratio(double seen) const;
  // A wide/chain ratio of these calls as the wide stream's rate, adds per core cycle (the chain runs one
  // a cycle), and back: a rate compares across calibrators, whose calls are sized apart, and across
  // moments. 0 for a ratio or rate that is not positive, or calls not yet sized.
  double wide_rate(double wide_ratio) const;
  double ratio_for_wide_rate(double adds_per_cycle) const;
  void* buffer = nullptr;
  const isa::ProbeConstants* consts = nullptr;
  bool ready() const {
    return chain && wide && slow && chain_units > 0 && wide_units > 0 && slow_iters > 0 && best_wide_ratio > 0 &&
           best_chain_ratio > 0;
  }
};

// A sample counts as undisturbed while the wide reference runs within this of its best rate.
// Undisturbed ratios of the two whole reference calls sit within about 3% of the best on a Zen 3 VM;
// a busy sibling slows the wide call by 15% to 200%.
inline constexpr double kRulerCleanLimit = 0.05;
// The learned best wide/chain ratio falls by at most kRulerCleanLimit per lesson (one timing; only
// the first calibration teaches, see ClockCalibrator::measure): on an Emerald Rapids VM a
// calibration right after 512-bit FMA code saw the ratio at 0.80-0.83 against 1.007 everywhere
// else, and every later sample of the run then looked 25-60% slowed. A core that really runs the
// wide stream faster teaches it over a few lessons.
// (The add/multi-cycle ratio learns in steps of kRulerSteadyChainLimit: its undisturbed value holds
// within 0.5% on a quiet core, and a lesson taken in an odd moment must not move it far.)
double lower_best_ratio(double best, double seen, double step = kRulerCleanLimit);
// A sample counts as undisturbed while the 1-cycle chain runs within this of its best ratio to the
// multi-cycle one. The clock itself is the faster of the two chains, so a slowed add chain does not
// bias the conversion; the limit marks moments when a sibling takes enough ALU slots to slow the
// probe as well. Undisturbed ratios of the two calls sit within about 0.5% of the best on a Zen 3 VM
// (the TSC advances in steps of about 25 ticks there, 0.3% of a call); a light co-tenant kept the
// add chain 2-3% slow for minutes.
inline constexpr double kRulerChainLimit = 0.03;
// The add chain counts as steady while its ticks per link spread (10th to 90th percentile) within
// this: its own undisturbed jitter is 0.2-0.5% on the VMs seen so far.
inline constexpr double kRulerSteadyChainLimit = 0.01;

// True when the multi-cycle reference chain moved on its own: over moments whose wide stream and
// add chain ran undisturbed, the add chain's ticks per link (`add_tpc`) held within
// kRulerSteadyChainLimit while a fifth or more of the add/multi-cycle ratios (`chain_ratio`, same
// moments) sat more than kRulerChainLimit below the typical one, all within kRulerSteadyChainLimit
// of each other: a slow mode of the multi-cycle chain itself. A busy sibling slows the 1-cycle chain
// more than the 3-cycle one, so it spreads both; an interrupt in a multi-cycle call lowers one ratio
// by an arbitrary amount. Seen on an Emerald Rapids VM: add chain within 0.3%, the multi-cycle chain in two
// modes 5.6% apart; its slow mode taken for the undisturbed ratio left every sample looking slowed
// and every figure 6-12% high. Such a chain cannot witness a slowed add chain. Needs 6 moments.
bool multi_cycle_chain_unsteady(const std::vector<double>& add_tpc, const std::vector<double>& chain_ratio);

// Which multi-cycle calls ran at that chain's own undisturbed rate: within kRulerSteadyChainLimit of
// the fastest call among `neighbours` on each side (whole calls of one length, in the order taken).
// Only those may teach the add/multi-cycle ratio: a slowed multi-cycle call lowers its moment's
// ratio, and a lowered ratio taken as the undisturbed one makes every later steady add chain look
// slowed and, as a clock, reads it fast. Seen on a Sapphire Rapids-class VM (family 6 model 0xa7): the
// 3-cycle chain ran 1-20% slow in a third of its calls, each time by another amount (its sibling
// taking its one multiplier port now and then), the ratio learned fell from 0.334 to 0.246, and
// every figure of that run read 25-37% high in cycles (an add chain at 1.3 cycles).
std::vector<bool> multi_cycle_calls_fine(const std::vector<double>& call_ticks, size_t neighbours);

// The clock of one moment in ticks per core cycle: the add chain's own reading, or the lower one the
// multi-cycle chain says an undisturbed add chain would have taken (a sibling taking ALU slots slows
// the 1-cycle chain about three times as much), but never more than kRulerChainLimit below the add
// chain itself: a larger gap is a disturbed moment that the judge leaves out, not a clock, and
// nothing makes a chain faster than its latency.
double paired_ticks_per_cycle(double add_chain_tpc, double multi_cycle_estimate_tpc);

// A paired timing's figure from its fastest calls: the fastest long call minus the fastest short
// call of the undisturbed samples (`fastest_ticks_per_unit`, counter ticks per unit) over the fastest
// clock among the same samples (`sample_tpc`, ticks per core cycle of each, smallest = fastest).
// A call is fastest when
// nothing disturbed it and the clock ran fastest, so the two minima describe one moment. Call times
// can only err slow (noise adds time), and so can clock readings (no reference chain runs faster than
// its latency), which makes a figure read fast: the fastest reading carries the least of that error.
// When the fastest calls and the fastest clock come from different moments of a moving clock, the
// figure reads slow. Returns the figure and, in `index`, the sample whose clock it used
// (`sample_tpc.size()` when none); 0 for no usable reading.
double fastest_calls_at_fastest_clock(double fastest_ticks_per_unit, const std::vector<double>& sample_tpc,
                                      size_t* index = nullptr);

struct PairTiming {
  Stats per_unit;       // counter ticks per unit (instruction) from min/median/max of each function
  double tsc_per_unit_median = 0;  // TSC ticks per unit (differs from per_unit only with perf cycles)
  double tsc_per_unit_min = 0;
  // Fixed cost per call implied by the pair, as a fraction of the long call: with a = N*r + d and
  // b = 2N*r + d, d = 2a - b. It cannot really be negative; a clearly negative value means the short
  // calls were disturbed more than the long ones and the difference underestimates r.
  double overhead_fraction = 0;
  uint64_t iterations = 0;
  double short_min_ticks = 0, long_min_ticks = 0;  // best call of each function (paired: of the undisturbed samples)
  // With a ruler only (paired = true):
  bool paired = false;
  Stats cycles;                 // core cycles per unit, one estimate per undisturbed sample
  // The figure: paired, fastest_calls_at_fastest_clock; else the minimum (see timing.cpp).
  double value = 0;
  double ticks_per_cycle = 0;   // the clock the figure was converted with (paired: the fastest clock)
  double median_ticks_per_cycle = 0;  // the median clock of the samples (paired; judges how the clock moved)
  double fastest_ticks_per_unit = 0;  // fastest long minus fastest short call (paired: of the undisturbed samples), per unit
  bool fastest_not_positive = false;  // paired: that difference was not positive; `value` is the samples' median
  double ghz = 0;               // ticks_per_cycle in GHz (needs tsc_hz)
  int clean_samples = 0, slowed_samples = 0;  // undisturbed / taken while the core ran slowed
  double slowdown = 0;          // median slowdown of the wide reference in the slowed samples
};

// `units_short` / `units_long`: measured instructions per loop iteration of each function.
// Returns false with `error` set when the generated code faulted.
bool time_pair(isa::ProbeFn short_fn, isa::ProbeFn long_fn, double units_short, double units_long,
               void* buffer, const isa::ProbeConstants* consts, const CycleCounter& counter,
               const TimingBudget& budget, PairTiming& out, std::string& error, const Ruler* ruler = nullptr,
               double tsc_hz = 0);

}  // namespace peakprobe
