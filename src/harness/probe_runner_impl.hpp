// Internals of ProbeRunner shared by its translation units (single probes, mixes, threads).
#pragma once
#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "asm/target.hpp"
#include "harness/clock.hpp"
#include "harness/cycle_counter.hpp"
#include "harness/probe_buffer.hpp"
#include "harness/probe_runner.hpp"
#include "harness/thread_judgement.hpp"
#include "harness/timing.hpp"

namespace peakprobe::detail {

// A figure may exceed the widest issue rate this core showed by this much (timing jitter) before it
// is called an artefact.
inline constexpr double kIssueWidthTolerance = 0.03;
// A paired timing needs this many undisturbed samples.
inline constexpr int kMinCleanSamples = 5;
// A paired timing with too few undisturbed samples. How many others ran slowed does not matter: the
// figure comes from the fastest calls over the fastest clock of the undisturbed ones only, and a
// sibling that slows a probe call beside a clean-looking ruler makes that call slower, never the
// figure faster. Until 2026-11-27 a timing with more slowed samples than undisturbed
// ones was mistrusted too: on a Sapphire Rapids-class VM whose host's SMT sibling ran ALU-heavy code
// in bursts, that left 8 of 20 runs of the 512-bit FMA row `mistrusted` with right figures (0.499-0.505
// cycles, latency 3.99-4.02) and every 2-thread roof; without it, 50 of 50 runs `ok` at 0.498-0.506
// and 3.975-4.112, with the integer add and multiply rows as right (docs/method.md, "Paired ruler").
inline bool ran_slowed(int clean_samples) { return clean_samples < kMinCleanSamples; }
inline constexpr int kLatencyCopies = 48;
// Measured instructions per iteration of a throughput stream's short function (the long one has
// twice as many). Both loops of a pair must stream from the same part of the front end: on the
// Sapphire Rapids-class VM loops of up to about 80 long vector instructions from memory ran 5-6%
// faster than loops of 96 or more, and with 64 and 128 (until 2026-12-06) the two fell on either
// side and disagreed (docs/method.md, "Loop overhead").
inline constexpr int kThroughputUnits = 32;
// The copies of a pattern of `per_copy` measured instructions in a throughput stream's short
// function: as many as kThroughputUnits hold, rounded down (a short loop of 45 instructions and a
// long one of 90 would fall on either side of that front end's limit), at least one.
inline int throughput_copies(int per_copy) { return std::max(1, kThroughputUnits / std::max(1, per_copy)); }
// The copies of the two further layouts a chosen K is timed from (the sweep's own is `copies`):
// 3/4 and 1/2 of them, never more, each a count of its own; where `copies` is too small for two
// such counts, `copies` again, compiled and placed afresh, so that a median of three timings still
// outvotes an odd one.
std::vector<int> layout_copies(int copies);
inline constexpr int kAttempts = 4;
// A calibration this recent on the same core opens the next probe or mix (calibrate_before): a
// mix's own timing lasts about 2 ms, so it stands as near the samples as one taken afresh.
inline constexpr double kFreshCalibrationSeconds = 0.002;
// Pauses between the rounds of re-measurement: a busy sibling or host holds the core for seconds.
inline constexpr int kRetryPauseMs[] = {30, 250, 1000};

// Measures items 0..n-1 once each, then the mistrusted ones again after all the others, round by
// round (up to kAttempts in all), pausing longer after each round. A probe takes milliseconds and
// disturbances come in bursts, so a doubtful result is retried when the burst has likely passed;
// only a result that stays doubtful is reported mistrusted, with its attempts counted.
// `on_result(i, r)` sees every attempt's result as it comes; `stop()`, asked before each attempt,
// ends the batch early: the results then hold the items measured at least once (a prefix).
// `attempts` 1 measures each item once (under an emulator no retry can cure anything).
// `before_round()` runs before each retry round (the runner calibrates afresh there).
// A round that retried many items and cured almost none met a disturbance that lasts (a busy
// sibling thread all along, not a burst): further rounds would cost as much and cure as little.
inline constexpr size_t kPersistentRoundItems = 20;     // retried items that make a round telling
inline constexpr double kPersistentCuredFraction = 0.1;  // cured below this: the disturbance persists
// Whether a result is doubtful enough to measure again: mistrusted, or for a probe row either of its
// parts (the one-core figures, or the run on every --threads core at once).
template <class Result>
bool doubtful(const Result& r) {
  return r.status == Status::mistrusted;
}
inline bool doubtful(const ProbeResult& r) {
  return r.status == Status::mistrusted || r.threads_status == Status::mistrusted;
}
// Counts the attempts in the reason of each part still doubtful after them.
template <class Result>
void count_attempts(Result& r, int attempts) {
  if (r.status == Status::mistrusted) r.reason += fmt::format(" ({} attempts)", attempts);
}
inline void count_attempts(ProbeResult& r, int attempts) {
  if (r.status == Status::mistrusted) r.reason += fmt::format(" ({} attempts)", attempts);
  if (r.threads_status == Status::mistrusted) r.threads_reason += fmt::format(" ({} attempts)", attempts);
}
template <class Result>
std::vector<Result> measure_with_retries(size_t n, const std::function<Result(size_t)>& once,
                                         const std::function<void(size_t)>& on_start,
                                         const std::function<void(size_t, const Result&)>& on_result = {},
                                         const std::function<bool()>& stop = {}, int attempts = kAttempts,
                                         const std::function<void()>& before_round = {}) {
  std::vector<Result> results;
  results.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    if (stop && stop()) return results;
    if (on_start) on_start(i);
    results.push_back(once(i));
    if (on_result) on_result(i, results.back());
  }
  for (int attempt = 2; attempt <= attempts; ++attempt) {
    size_t retried = 0, cured = 0;
    for (size_t i = 0; i < n; ++i) {
      if (!doubtful(results[i])) continue;
      if (stop && stop()) return results;
      if (retried == 0 && before_round) before_round();
      ++retried;
      Result again = once(i);
      if (doubtful(again)) count_attempts(again, attempt);
      else ++cured;
      results[i] = std::move(again);
      if (on_result) on_result(i, results[i]);
    }
    if (retried == 0) break;
    if (retried >= kPersistentRoundItems && double(cured) < kPersistentCuredFraction * double(retried)) {
      spdlog::info("retry round {}: {} of {} doubtful results cured; the disturbance persists, no further rounds",
                   attempt, cured, retried);
      break;
    }
    if (attempt < attempts) std::this_thread::sleep_for(std::chrono::milliseconds(kRetryPauseMs[attempt - 2]));
  }
  return results;
}
// One measurement on its own, tried again while it stays doubtful, up to `attempts` in all, pausing
// before each retry (kRetryPauseMs: 30 ms, 250 ms, 1 s). Alone, an item has no batch between its
// attempts to let a burst pass, so the pauses come first; an error is not retried (it would recur).
// A result still doubtful at the end counts its attempts in its reason, as in a batch.
// Items alone have no round of many to tell a lasting disturbance from a burst; `memory` tells it
// across them: once kPersistentSingleItems items in a row stayed doubtful through all their
// attempts, each further one gets kPersistentSingleAttempts (one retry, after the first pause) until
// one comes out trusted. With the Zen 5 VM's other vCPU busy all along, a roofline's FLOP-mix
// searches (about ten mixes each, every one doubtful) took 49.7 s instead of 0.4, 1.28 s of pauses
// a mix.
inline constexpr int kPersistentSingleItems = 3;
inline constexpr int kPersistentSingleAttempts = 2;
struct RetryMemory {
  int exhausted_in_a_row = 0;  // items in a row that stayed doubtful after all their attempts
};
template <class Result>
Result measure_one_with_retries(const std::function<Result()>& once, int attempts = kAttempts,
                                RetryMemory* memory = nullptr) {
  if (memory && memory->exhausted_in_a_row >= kPersistentSingleItems)
    attempts = std::min(attempts, kPersistentSingleAttempts);
  Result r = once();
  for (int attempt = 2; attempt <= attempts && doubtful(r); ++attempt) {
    std::this_thread::sleep_for(std::chrono::milliseconds(kRetryPauseMs[attempt - 2]));
    Result again = once();
    if (doubtful(again)) count_attempts(again, attempt);
    r = std::move(again);
  }
  if (memory) memory->exhausted_in_a_row = doubtful(r) ? memory->exhausted_in_a_row + 1 : 0;
  return r;
}
// How often the runner may move to a quieter core: at most kMaxCoreMoves in any kCoreMoveWindowSeconds
// (each move costs a ranking of the cores and a calibration, 0.1-0.5 s: at most 5% of the time when
// every core is busy and the runner hops between them). A cap per run left a whole-table run on the
// Zen 5 VM on a core whose neighbour had turned busy: 3144 of its rows `mistrusted`, "24% slower",
// while the other core ran quiet.
inline constexpr int kMaxCoreMoves = 6;
inline constexpr double kCoreMoveWindowSeconds = 60;
class RecentMoves {
 public:
  // Whether a move may be made at `now_s` (seconds on any steady clock): fewer than kMaxCoreMoves
  // were recorded within the kCoreMoveWindowSeconds before it.
  bool room(double now_s) {
    while (!times_.empty() && now_s - times_.front() >= kCoreMoveWindowSeconds) times_.erase(times_.begin());
    return int(times_.size()) < kMaxCoreMoves;
  }
  // A move made at `now_s` (a ranking that moved nowhere is not one).
  void record(double now_s) { times_.push_back(now_s); }

 private:
  std::vector<double> times_;
};
// Calibration rounds (each min-based) that disagree by more than this mean the clock itself moved.
inline constexpr double kCalibrationSpreadLimit = 0.03;
// Below this implied loop overhead (see PairTiming::overhead_fraction) the difference is not trusted.
inline constexpr double kMinOverheadFraction = -0.03;
// A latency chain's N and 2N copies that imply a fixed cost beyond this share of the long call ran at
// different rates per link: the short calls in a slow mode (a chain of inserts from a general-purpose
// register runs 1, 1.6 or 2.3 cycles a link from call to call on Zen 4), the long calls in a fast one,
// and their difference reads a link far too fast (a 16-bit insert from a general-purpose register:
// 0.42 cycles with +58%, against 1.00 with +0.1-1.6%). Undisturbed latency chains of a whole table imply -3% to +5%
// (eliminated moves +1.5%); a busy moment +12%.
inline constexpr double kMaxLatencyOverheadFraction = 0.25;
// The same for a throughput stream: its short and long calls ran at different rates, and the
// difference of the two is no rate of the instruction. In a whole table on the Sapphire
// Rapids-class VM, 99.5% of 31447 throughput timings implied at most +8.7%; the 128-bit vector
// shifts and shuffles of the oldest vector extension, from memory, at 3 chains (work for two vector
// pipes) implied +35% to +43% in every timing and read 0.37-0.43 cycles, where 6 chains read 0.50
// with +0.3%.
inline constexpr double kMaxOverheadFraction = 0.25;
// Whether a throughput timing's implied loop overhead (PairTiming::overhead_fraction) is beyond
// kMaxOverheadFraction: such a timing does not count in the sweep, and a figure made of one is doubted.
inline bool overhead_beyond_loop(double overhead_fraction) { return overhead_fraction > kMaxOverheadFraction; }
// A dependent chain faster than this per link can only be rename-time elimination.
inline constexpr double kEliminatedLatency = 0.75;
// K chains through the destination timed below this share of one chain's latency over K are
// impossible (beats_chain_bound): undisturbed timings of K chains at their bound read within about 3%.
inline constexpr double kChainBoundSlack = 0.93;
// K chains timed below this share of one chain's latency over K are beyond their bound
// (beyond_chain_bound): possible, but a larger K within kExplainedLimit that is not wins the sweep.
inline constexpr double kChainBoundTrust = 0.99;
inline constexpr double kExplainedLimit = 0.04;
// An implied loop overhead this far above the lowest of its sweep leaves a K's figure unexplained.
inline constexpr double kOverheadExcess = 0.015;
// K chains that finish a link within this share above their latency have no slack (at_chain_bound);
// a larger K with slack timed within kSlackLimit of such a K is the one a sweep reports.
inline constexpr double kNoSlack = 1.05;
inline constexpr double kSlackLimit = 0.02;
// Two measurements of the chosen K whose minima differ by more than this are not reproducible.
inline constexpr double kRepeatLimit = 0.03;
// Timings of the same stream (three code layouts of the chosen K; a mix's two rounds) of which none
// comes within this of the reported one are doubted whatever their spread.
inline constexpr double kLayoutLimit = 0.05;
// A figure this far from the line through every code length timed (Theil-Sen, in ticks per
// instruction) is one length's effect. Undisturbed layouts of a steady stream fit it within about 1%.
inline constexpr double kLengthLimit = 0.03;
// The figure (the fastest calls over the fastest clock of its samples) this far from the same calls
// over the median clock of its samples: the clock moved that much during the timing, and which
// moment the fastest calls describe is no longer clear. Quiet rows agree within about 0.1%. (Until
// the figure came from the fastest calls, this held the median of the samples to them: on an
// Emerald Rapids VM a 512-bit FMA read 0.447 cycles from its samples and 0.500 from its fastest
// calls; the hardware does 0.5.)
inline constexpr double kPairedLimit = 0.04;
// The same check for the latency chain, tighter: a chain's figure is the base that throughput and
// operand latencies are judged by.
inline constexpr double kLatencyPairedLimit = 0.025;
// A paired timing's fastest calls (fastest long minus fastest short calls, in ticks) over the median clock
// of its samples, in cycles per unit; 0 without a clock.
inline double fastest_call_cycles(const PairTiming& t) {
  return t.median_ticks_per_cycle > 0 ? t.fastest_ticks_per_unit / t.median_ticks_per_cycle : 0.0;
}
// How far a paired timing's figure is from fastest_call_cycles, as a fraction of the latter; 0 when
// it was not paired or has no figure.
inline double chain_disagreement(const PairTiming& t) {
  const double fastest = fastest_call_cycles(t);
  if (!t.paired || !(fastest > 0) || !(t.value > 0)) return 0;
  return std::fabs(t.value - fastest) / fastest;
}
// How far the figure of the code layouts kept (their values sorted; the figure is the middle one)
// is from the nearest other timing of the same stream, as a fraction of the figure; 0 when there is
// no other. Where only one layout was kept, the ones left out (every_layout holds all) stand in: a
// figure no other layout confirms is held to the nearest one that did not count.
inline double layout_disagreement(const std::vector<double>& kept_sorted, const std::vector<double>& every_layout) {
  if (kept_sorted.empty()) return 0;
  const size_t mid = kept_sorted.size() / 2;
  const double fig = kept_sorted[mid];
  if (!(fig > 0)) return 0;
  double nearest = 1e300;
  for (size_t i = 0; i < kept_sorted.size(); ++i)
    if (i != mid) nearest = std::min(nearest, std::fabs(kept_sorted[i] - fig) / fig);
  if (kept_sorted.size() == 1) {
    bool skipped_self = false;  // the figure itself is among every_layout once
    for (double v : every_layout) {
      if (v == fig && !skipped_self) {
        skipped_self = true;
        continue;
      }
      if (v > 0) nearest = std::min(nearest, std::fabs(v - fig) / fig);
    }
  }
  return nearest < 1e300 ? nearest : 0.0;
}
// A figure from fastest calls this far below the median of its samples came from a few calls the
// rest do not bear out: a fast mode that few calls show, or a timer glitch. Noise lifts the median
// of an undisturbed-looking timing by up to about 15% on a busy host (a 512-bit FMA stream: samples
// 0.59, fastest calls 0.51 on the Sapphire Rapids-class VM); the shifts by `cl` and `bzhi` there had
// 3% of their long calls run in 0.7 of the others' time, and their fastest calls read 3-cycle
// chains at 0.15-1.7 cycles against samples at 3.0.
inline constexpr double kFastModeLimit = 0.25;
// 1 - figure / median sample of a paired timing; 1 when its fastest calls gave no positive figure;
// 0 when it is not paired or has no figure.
inline double fast_mode_gap(const PairTiming& t) {
  if (t.paired && t.fastest_not_positive) return 1;  // the fastest long call beat the fastest short one
  if (!t.paired || !(t.value > 0) || !(t.cycles.median > 0)) return 0;
  return std::max(0.0, 1 - t.value / t.cycles.median);
}

bool is_float(const std::string& dtype);
TimingBudget probe_budget();
// The short timing of a look beyond a plateau (look_ahead_index): 6-8 samples, 3 of them undisturbed.
TimingBudget look_ahead_budget();
// A sweep step that improves the best rate by this share (2%) is a gain.
inline constexpr double kSweepGain = 0.02;

struct Compiled {
  isa::JitFunction short_fn, long_fn;
  double units_short = 0, units_long = 0;
  isa::StreamHandle stream;  // what was compiled: it says how constants and buffer start
};
// Constants and buffer contents for one compiled stream: the dtype's pattern, pointer-chase words,
// or whatever else the stream loads (ProbeStream::prepare).
inline void prepare_data(const Compiled& c, const std::string& dtype, isa::ProbeConstants& consts,
                         ProbeBuffer& buffer) {
  const isa::BufferFill fill = c.stream->prepare(consts, dtype);
  buffer.fill(fill.pattern, fill.chase_bits, fill.chase_byteswap);
}
Expected<Compiled> compile_pair(const isa::StreamHandle& stream, int short_copies);
// Counter ticks per instruction -> core cycles per instruction.
Stats to_cycles(const Stats& ticks, double ticks_per_cycle);

// Everything that can make a timed stream doubtful, as readable reasons (empty = trusted).
// The add chain runs one add a cycle and the multi-cycle chain a whole number of cycles a link
// (Target::RulerForms), so the ruler's undisturbed add/multi-cycle ratio is 1/n for a whole n. Learned
// off every 1/n, the add chain itself ran slowed whenever it was learned, and every figure in its
// cycles is off by as much. Seen on the Zen 4 VM (family 25 model 17), in 4 of 150 runs of three
// forms: a host that kept the core's other hardware thread on integer code from before the ranking
// to the end of the run, the ratio learned at 0.348-0.350 (2.86 links, against 0.334-0.337 in the
// other runs), the ruler's clock 8% slow; a 4-cycle FMA chain read 3.65-3.73 cycles, 1.0-cycle
// 512-bit FMAs 0.92, the 3-cycle multiply chain 2.89, all `ok`, every sample judged against the
// same slowed ruler.
inline constexpr double kRulerWholeLimit = 0.025;
// How far 1 / best_chain_ratio (the multi-cycle chain's links in add-chain cycles) sits from the
// nearest whole number of at least 2, as a fraction of it; 0 when it cannot be judged (no ratio).
inline double ruler_off_whole(double best_chain_ratio) {
  if (!(best_chain_ratio > 0)) return 0;
  const double links = 1 / best_chain_ratio;
  const double n = std::max(2.0, std::round(links));
  return std::fabs(links - n) / n;
}

struct TrustInputs {
  ClockSample before, after;
  double ipc = 0;                  // instructions per cycle of the stream
  double overhead = 0;             // PairTiming::overhead_fraction
  double latency_overhead = 0;     // the same for the latency chain (0: none timed)
  double spread = 0;               // (median - min) / min
  double repeat_disagreement = 0;  // between two measurements of the same stream
  double length_disagreement = 0;  // of the figure from a line through every code length timed
  double paired_disagreement = 0;  // of the figure over the fastest clock from the same calls over the median clock
  double latency_paired_disagreement = 0;  // the same for the latency chain
  double below_typical = 0;        // how far a figure from fastest calls sits below its typical sample (fast_mode_gap)
  double issue_width = 0;          // most instructions per cycle this core was seen to run (0: unknown)
  int clean_samples = -1;          // paired timings: undisturbed samples (-1: not paired)
  int slowed_samples = 0;
  double slowdown = 0;
  std::string emulator;            // CpuInfo::emulator: non-empty, every figure is mistrusted
  // The ruler's learned add/multi-cycle ratio (Ruler::best_chain_ratio; 0: not judged, as where the
  // multi-cycle chain has modes of its own and no longer sets the clock).
  double ruler_chain_ratio = 0;
};
// Whether the ruler's own ratio says its add chain ran slowed (ruler_off_whole beyond
// kRulerWholeLimit); never under an emulator, whose rows are doubted for that.
inline bool ruler_ran_slowed(const TrustInputs& in) {
  return in.emulator.empty() && ruler_off_whole(in.ruler_chain_ratio) > kRulerWholeLimit;
}
std::vector<std::string> timing_doubts(const TrustInputs& in, const ProbeOptions& options);
// Whether K chains still bind a form of this latency: their rounds (K instructions per `latency`
// cycles) are within 15% of the rate measured, so more chains may run faster. A rate well above
// latency / K is held by the pipes (or the front end), not by the chains. (Until 2026-11-26 the test
// read rt x K > 0.85 latency, which every measurement meets: every sweep of a form with a latency
// ran to the register file's limit and kept the luckiest of a dozen single timings.)
bool chains_bind(double recip_throughput, int k, double latency_cycles);
// Whether the throughput sweep tries the next K after one at `k` chains. A step that improved the
// best rate by 2% or more, or whose rate still shows the chains binding, goes on. Otherwise one
// noisy step must not end the sweep (a slowed moment reads as "no gain, chains no longer bind"):
// two in a row without gain do. `steps_without_gain` counts this one.
bool sweep_goes_on(int k, bool improved, bool chain_bound, int steps_without_gain);
// Where a sweep that sweep_goes_on would end at `ks[stopped]` looks once more before it ends: the index
// in `ks` (the K tried, in order) of the first K at least half as many chains again as the last one
// tried, or the largest K up to `max_k` where that stops short (the register file's limit, or `max_k`
// itself); -1 when none is left up to `max_k`. A core can hold a stream at a plateau that more chains
// lift: on the Zen 4 VM 128-bit three-input bitwise logic ran 0.283-0.285 cycles at 4, 6 and 8 chains
// and 0.251 (its four pipes) at 10 and 12; the sweep ended at 8 in about half of 60 runs, so the row
// read 0.28 or 0.25 from run to run, both `ok`. The look is a short timing (look_ahead_budget) that
// most sweeps end on; one that gains kSweepGain is timed in full and counts as a step (the sweep goes
// on from there by the usual rules, except that no second look follows: one more step without gain ends
// it). Not beyond `max_k` (kLookAheadChains): a stream of more chains is one copy a loop, whose timings
// on the same VM read the four pipes at 0.217-0.233 cycles.
int look_ahead_index(const std::vector<int>& ks, size_t stopped, int max_k);
// The most chains a look beyond a plateau goes to: two copies of the stream in a loop.
inline constexpr int kLookAheadChains = kThroughputUnits / 2;
// The steps without gain after a step that counted (`steps` before it): none after one that
// improved, one more after one that did not, and as many as before after one whose long calls ran
// slower per instruction than its short ones (an implied loop overhead below kMinOverheadFraction):
// that step timed a mode of its code, not its chains. On the Sapphire Rapids-class VM a 64-bit
// insert from memory into a vector lane read 1.02 cycles at 2 chains (-14%) and 1.16 at 3 (-28%)
// after 1.01 at one, and the sweep ended there; 6 chains read 0.50 at every code length.
int steps_without_gain(int steps, bool improved, double overhead_fraction);
// Whether a sweep step ran more than 2% slower than the best of fewer chains (`best_so_far`, 1e300
// before any): implausible for more independent chains, so the step is timed once more first.
bool slower_than_fewer_chains(double recip_throughput, double best_so_far);
// Whether a latency method builds its chain through the destination (both ISAs' texts start so):
// then K independent copies of the form are K such chains, and the chain bound below holds.
bool chains_through_destination(const std::string& latency_method);
// The latency that bounds K throughput copies: the latency chain's where K copies are K such chains
// (chains_through_destination), none where every copy is independent of the one before (a write-only
// destination: the latency chain then runs through a source, a bridge or a loaded pointer, and K
// only counts destination registers). Without this a load's 9-cycle pointer chase "bound" 0.5-cycle
// loads up to K = 20: every load form of the table swept to 16-24 chains and lines, where the
// host's other thread slows some lines' loads for milliseconds at a time (Zen 4 VM: the same load
// stream ran 2.5-16% slow in a fifth to two thirds of 20-sample windows), and its figure came out
// 0.50 or 0.53-0.57 by the moment. One to three chains give the same rate there.
double copies_chain_latency(const std::string& latency_method, double latency_cycles);
// Whether the register file, not the hardware, ended the sweep: it reached the most chains the
// registers allow (`kmax`) while they still bound the rate (`chain_bound`, the last step's). A form
// with one chain at most is that chain whatever its latency method names (a stack top or implicit
// registers the form always names), so its own latency decides.
bool limited_by_registers(int chosen_k, int kmax, bool chain_bound, double recip_throughput, double latency_cycles);
// Whether K chains through the destination ran faster than one chain's latency allows (each finishes
// a link per `latency_cycles`, so K of them at most K per latency), beyond kChainBoundSlack for
// noise. Impossible in hardware: the timing's clock or calls were wrong. Seen on a Zen 4 VM whose
// host ran the core's other thread busy: a 3-cycle multiply read 0.86 cycles from 2 chains (every
// sample slowed, the implied loop overhead +57%), won the sweep and, outvoted by its two re-placed
// layouts (1.48, 1.49), left the row `ok` at 1.48 where 3 chains give 1.0.
bool beats_chain_bound(double recip_throughput, int k, double latency_cycles);
// Whether K chains through the destination ran faster than one chain's latency allows by more than
// kChainBoundTrust: not impossible (beats_chain_bound), since a chain can run faster inside a stream
// than alone, but not explained by its chains either.
bool beyond_chain_bound(double recip_throughput, int k, double latency_cycles);
// One K of a throughput sweep that counted (not impossible): its chains, its figure, whether the
// figure is beyond its chain bound (beyond_chain_bound), and the loop overhead its N and 2N copies
// imply (PairTiming::overhead_fraction).
struct SweepPoint {
  int k = 0;
  double recip = 0;
  bool beyond_bound = false;
  double overhead = 0;
  bool at_bound = false;  // at_chain_bound: no slack between its chains' rounds and its rate
};
// Whether K chains through the destination ran as fast as their latency lets them (each link
// within kNoSlack of `latency_cycles`): no slack, so a link that waits a cycle for its pipe delays
// its chain for good, and the stream's start and end, one latency long, weigh on its short calls
// more than on its long ones. Seen on the Sapphire Rapids-class VM: 8 chains of the 4-cycle 512-bit
// FMA read 0.493-0.503 cycles with an implied loop overhead of +1.5-2.0% (beyond the two FMA pipes'
// 0.5), where 10 and 12 chains read 0.500-0.508 with +0.2-0.7%; in 6 of 30 runs 8 chains won the
// sweep and their other code layouts read 0.504-0.520 (0.520 is 4% slow), with 10 or 12 at most 0.508.
bool at_chain_bound(double recip_throughput, int k, double latency_cycles);
// The K a sweep reports (after passing over a fastest K that larger K do not confirm:
// unconfirmed_by_more_chains): the fastest, unless its figure is unexplained and another K whose figure
// is explained ran within kExplainedLimit of it; then the fastest such K. A K so chosen that is at its
// chain bound (at_chain_bound) gives way in turn to the fastest larger, explained K with slack within
// kSlackLimit of it (and within kExplainedLimit of the fastest): the stream that measures the pipes,
// not the pipes and the chains at once. Unexplained: beyond its chain bound, or an implied loop
// overhead more than kOverheadExcess above the lowest of the K within kExplainedLimit of the fastest
// (taken as 0 where that is negative). Each K's copies hold about the same number of instructions, so
// their fixed cost is alike: a K whose short calls ran slower per instruction than its long ones
// implies a larger one and reads its difference too fast. The chain bound is the only check a
// throughput figure has against the hardware without a pipe count, and the fastest of several timings
// is where such a difference lands. On the Sapphire Rapids-class VM a 512-bit FP16 FMA chain reads
// 5.0-5.2 cycles alone, while 2 chains run at 2.00 cycles an instruction (4.0 a link) and 3 at 1.75
// (5.2): the one-chain latency is no proof there, and kChainBoundSlack let 10 chains at 0.491 cycles
// pass (2.04 a cycle, beyond the core's two FMA pipes; implied overhead +2.4%) where 12 and 16 chains
// read 0.501 (+0.3%); 36 rows of a whole table, FP16 FMAs and a 512-bit VNNI dot product, read
// 2.02-2.04 a cycle that way, and 14 128-bit integer and logic forms 3.04 a cycle from 3 chains (+3.0%;
// 6 chains 0.334, +0.2%) on its three vector ALUs.
// `prefer_explained` false: the fastest, whatever it implies. `points` must not be empty.
size_t chosen_sweep_point(const std::vector<SweepPoint>& points, bool prefer_explained = true);
// Whether the K of points[i] ran faster than every larger K of the sweep by more than kExplainedLimit,
// with at least two of them timed and agreeing within kExplainedLimit among themselves (a rate of the
// stream, not a slowed stretch of the host: each of them was timed again already where it ran 2% slower
// than fewer chains). More independent chains never slow a stream, so such a figure is a mode of its
// code, not a rate of its chains, and chosen_sweep_point passes over it (the rest choose as before). On
// the Zen 4 VM (2026-12-06) 128-bit three-input bitwise logic read 0.238-0.242 cycles at 16 chains (two
// copies a loop; the layout of one copy 0.249-0.260), beyond its four pipes, where 12, 20 and 24 chains
// read 0.250-0.255.
bool unconfirmed_by_more_chains(const std::vector<SweepPoint>& points, size_t i);
// The index of the fastest of `points` (not empty).
size_t fastest_point(const std::vector<SweepPoint>& points);
// Which of `points` are explained, as chosen_sweep_point judges them (also the layouts of the
// chosen K: an unexplained one is left out of their median while another is explained).
std::vector<bool> explained_points(const std::vector<SweepPoint>& points);
// The latency chain timed twice: the headline latency (`latency_method`) and an operand latency built
// the same way (same method, no bridge of unknown latency) are two timings of one chain, so a
// disagreement beyond kRepeatLimit is a doubt, with both figures. Seen on a Sapphire Rapids-class VM:
// the first 512-bit FMA probe of a run read its destination chain at 3.877 cycles (median of the
// paired samples, `ok`) while the same chain through operand 1 read 4.06 moments later; the core's
// clock hopped between about 3.6 and 4.1 GHz from call to call as the 512-bit code started, which the
// scalar add chain beside each sample did not follow. nullopt when they agree or nothing repeats.
std::optional<std::string> repeated_latency_doubt(const ProbeResult& r);
// Whether operand latency `l` is the headline chain timed a second time: the same method, no bridge
// of unknown latency, and a figure.
bool repeats_headline(const ProbeResult& r, const OperandLatency& l);
// A form whose headline chain no operand chain repeats (one latency path, paths built another way,
// or an operand chain that failed) has nothing to check it by, so its chain is timed
// twice, and a third time when the two disagree by more than kRepeatLimit (a whole table on the Zen 5
// VM once read a 512-bit AES round from memory at 3.386 cycles, every check passed, where three other
// tables and three runs read 3.996-4.03). The figure is the median timing; `nearest` is how far the
// closest other timing lies from it (a fraction of the figure; 0 with one timing).
struct LatencyVote {
  size_t figure = 0;
  double nearest = 0;
};
LatencyVote vote_latency_repeats(const std::vector<double>& cycles);
// Why repeats of a chain are doubted (none within kRepeatLimit of the figure), or nullopt.
std::optional<std::string> self_repeated_latency_doubt(const std::vector<double>& cycles);
// An error row from an illegal instruction becomes a skipped one: the features the form needs were
// checked before it ran, so the OS or the hypervisor blocks it.
ProbeResult skip_if_blocked(ProbeResult r);

// The ruler learns its core's undisturbed wide rate in one window of tries (30 ms); a sibling busy for
// the whole window sets it low, and every slowed sample of the run then looks undisturbed. Seen on a
// 16-vCPU Emerald Rapids VM: in 2 of 20 `inst` runs the register add read 0.29 cycles `ok` (its 5
// ALUs: 0.20), and the same core's wide stream had run near 5 adds a cycle a moment before, when the
// cores were ranked. A window whose rate falls this far below the core's rate at the ranking ran
// while the core was shared: undisturbed windows read 0-3.5% above the ranking (Zen 3 VM, 12 runs),
// a busy sibling takes 10-50%. As wide as the judge's own limit (kRulerCleanLimit): a window 10% low
// still passed samples slowed by 15% (on the Emerald Rapids VM, once, the add at 0.257 `ok`).
inline constexpr double kSharedWindowGap = 0.05;
// What a runner does with the rate its ruler's window learned (`learned`, ClockCalibrator::learned_wide_rate;
// 0: the window confirmed none) against the core's quiet rate at the ranking (`ranked`, quiet_wide_rate;
// 0: no ranking): keep it; take the window again (a first window more than kSharedWindowGap below);
// or assume the ranking's rate (a second window, `retaken`, that is still below or confirmed none:
// without a rate the ratio would be learned later from a probe's samples, after its code).
enum class RulerWindowStep { keep, retake, assume };
RulerWindowStep ruler_window_step(double learned, double ranked, bool retaken);
// A wide rate this much below the one the ruler had learned is no new steady state of the machine
// but a core shared with something else (a busy sibling takes 10-50%).
inline constexpr double kSteadyStateShift = 0.10;
// Whether a ruler that learned its core afresh after a ranking that found no quieter core keeps
// what it learned (`after`, adds a cycle of its wide stream) in place of what it had (`before`):
// both known, and `after` within kSteadyStateShift below `before` (or above it). Seen on the
// Sapphire Rapids-class VM (2026-12-06): 30-40 s into a whole `table`, the wide stream read 4-6%
// slower than the ruler had learned on both cores at once for the rest of the run; every later
// probe was then `mistrusted` ("slowed in 54 of 54 samples") and retried, 3806-5026 of 7847 rows
// in 3.5-4.5 min instead of about 65 s, while their figures stayed right (13 vector adds within 1%
// of a fresh run's, slightly nearer their pipes; a register xor 0.2003 cycles on 5 ALUs).
bool keeps_new_steady_state(double before, double after);

}  // namespace peakprobe::detail

namespace peakprobe {

struct ProbeRunner::Impl {
  using Compiled = detail::Compiled;
  CpuInfo cpu;
  ProbeOptions options;
  const isa::Target& target = isa::host_target();
  int pinned_cpu = -1;
  CycleCounter counter;
  std::unique_ptr<ClockCalibrator> clock;
  ClockReading start;
  ProbeBuffer buffer;
  isa::ProbeConstants consts;

  ClockSample last_calibration;  // the most recent ClockCalibrator::measure() around a probe
  // When and on which logical CPU it was taken (note_calibration).
  std::chrono::steady_clock::time_point last_calibration_at{};
  int last_calibration_cpu = -1;
  void note_calibration(const ClockSample& s) {
    last_calibration = s;
    last_calibration_at = std::chrono::steady_clock::now();
    last_calibration_cpu = pinned_cpu;
  }
  // Whatever ran since the last calibration (all cores busy, a ranking of the cores) keeps it from
  // opening the next timing, however short it was.
  void forget_calibration_moment() { last_calibration_cpu = -1; }

  // Times the pair beside the ruler; `t.cycles` and `t.ghz` are always set (from the last
  // calibration when the ruler is not ready).
  bool time(const Compiled& c, const std::string& dtype, PairTiming& t, std::string& err,
            const TimingBudget* budget = nullptr) {
    detail::prepare_data(c, dtype, consts, buffer);
    if (!time_pair(c.short_fn.fn(), c.long_fn.fn(), c.units_short, c.units_long, buffer.data(), &consts,
                   counter, budget ? *budget : detail::probe_budget(), t, err, &clock->ruler(), cpu.tsc_hz))
      return false;
    if (!t.paired && last_calibration.ticks_per_cycle > 0) {
      t.cycles = detail::to_cycles(t.per_unit, last_calibration.ticks_per_cycle);
      t.value = t.cycles.min;
      t.ticks_per_cycle = last_calibration.ticks_per_cycle;
      t.ghz = last_calibration.ghz;
    }
    return true;
  }
  ClockSample calibrate() {
    note_calibration(clock->measure());
    return last_calibration;
  }
  // The calibration that opens a probe or a mix: the one that closed the previous probe or mix, when
  // it was taken on this core moments ago (nothing ran since but code generation and bookkeeping),
  // or a new one. A batch of pairs calibrated on both sides of every mix and spent half its time
  // calibrating: 1.1 ms each side of a 2.1 ms timing on the Zen 5 VM (docs/method.md).
  ClockSample calibrate_before() {
    const double age = std::chrono::duration<double>(std::chrono::steady_clock::now() - last_calibration_at).count();
    // Only a sound one: an unpaired timing is converted with it and judged by its spread. A retry
    // round (measure_with_retries' before_round) forgets it: the attempt it retries closed with it.
    const bool sound = last_calibration.ticks_per_cycle > 0 && last_calibration.ghz > 0 &&
                       last_calibration.spread <= detail::kCalibrationSpreadLimit;
    if (sound && last_calibration_cpu == pinned_cpu && age >= 0 && age < detail::kFreshCalibrationSeconds) {
      spdlog::trace("calibration of {:.2f} ms ago opens this timing", age * 1e3);
      return last_calibration;
    }
    spdlog::trace("calibrating afresh: the last calibration is {:.2f} ms old", age * 1e3);
    return calibrate();
  }

  double issue_width = 0;  // most instructions per cycle seen on this core (measure_issue_width)
  // The ruler's add/multi-cycle ratio as a probe's trust checks read it (TrustInputs::ruler_chain_ratio):
  // 0 where the multi-cycle chain has modes of its own (its typical ratio is then no whole-cycle fact).
  // The ratio is of whole calls, each with the same fixed cost (call, timer reads): taken out here,
  // so that a costly timer read (a hypervisor that traps it) does not read as a fraction of a link.
  double ruler_chain_ratio() const {
    if (!clock) return 0;
    const Ruler& ruler = clock->ruler();
    const double r = ruler.best_chain_ratio;
    if (ruler.slow_unsteady || !(r > 0)) return 0.0;
    const double f = ruler.chain_fixed_ticks;
    const double chain = ruler.chain_units * last_calibration.ticks_per_cycle + f;
    const double slow = chain / r;
    return chain > f && slow > chain ? (chain - f) / (slow - f) : r;
  }

  // `chain`: the compiled latency chain, for repeat_unrepeated_latency.
  void measure_latency(const isa::ProbeForm& form, const std::string& dtype, ProbeResult& r, PairTiming& lat,
                       Compiled& chain);
  // After the operand chains: when none of them repeated the headline chain, times it again (and a
  // third time when two disagree) and makes `lat` the vote's figure; `repeats`: every timing, in cycles.
  void repeat_unrepeated_latency(const std::string& dtype, const ProbeResult& r, const Compiled& chain,
                                 PairTiming& lat, std::vector<double>& repeats);
  bool measure_throughput(const isa::ProbeForm& form, const std::string& dtype, ProbeResult& r, PairTiming& best_t,
                          Compiled& best, double latency_cycles, double& repeat_disagreement,
                          double& length_disagreement, double& paired_disagreement, bool& every_k_beat_bound);
  bool measure_balanced(const isa::ProbeForm& form, const isa::Companion& companion, const std::string& dtype,
                        ProbeResult& r, PairTiming& best_t, Compiled& best, double& repeat_disagreement);
  void measure_issue_width();
  // latencies[]: one chain per input operand, for forms with more than one path.
  void measure_operand_latencies(const isa::ProbeForm& form, const std::string& dtype, ProbeResult& r);
  // rounds 0: as many as the registers allow; otherwise exactly that many (error if they do not fit).
  MixResult run_mix_once(const std::vector<MixSpec>& parts, bool on_all_threads = false, int rounds = 0);
  // `c` on every --threads core at once (each pinned, each beside its own ruler), judged per physical
  // core against the same code's one-core figure (`one_core_cycles`, repeated within `one_core_noise`).
  void run_threads(const Compiled& c, const std::string& dtype, double one_core_cycles, double one_core_noise,
                   ProbeResult& r);

  // A co-tenant can start on this core's sibling in the middle of a run: on an Emerald Rapids VM every
  // probe after the 123rd of a `run` read 44-45% slowed on the core that was the quietest at the start.
// Probes and mixes (pairs, pair matrices, FLOP-mix searches) both count.
  // After kBusyStreak probes in a row were mostly slowed, the cores are ranked again and the runner
  // moves to a quieter one (with a fresh calibration); the retries then measure the doubtful rows there.
  int busy_streak = 0;
  detail::RecentMoves moves;
  // When a ranking last found no free, clearly quieter core (steady-clock seconds; none yet: -inf).
  double fruitless_ranking_at = -1e300;
  // Of the items measured alone: mixes, and apart from them their all-threads runs (another program
  // on another core spoils those alone: one memory would be reset by each trusted one-core mix).
  detail::RetryMemory single_retries, threaded_retries;
  // After the ruler learned its core (a warm-up on a new core): when the rate it learned is clearly below
  // the one the core showed at the ranking (detail::ruler_window_step), the window is taken
  // again over kLongRatioWindowSeconds; when that one still falls short, the ranking's rate is assumed,
  // so that the samples read as slowed, as they are. False in that last case.
  bool check_ruler_window();
  void note_probe_slowed(bool slowed);
  // `why_move`: what the log says of the core left ("ran slowed for 3 probes in a row").
  bool move_to_quieter_core(const std::string& why_move);
  // Whether the last move_to_quieter_core ranked the cores and found none clearly quieter to go to.
  bool ranked_in_vain = false;
  // After such a ranking: the ruler learns this core afresh, and keeps it when the machine moved to a
  // new steady state (detail::keeps_new_steady_state); else what it had learned stands.
  void relearn_in_place(const std::string& why);
  // Pins the runner to logical CPU `to` and has its calibrator learn that core afresh; on failure it
  // stays where it was, with what was learned there (and says why in `error`, when given).
  bool repin(int to, std::string* error);
};

// Probes in a row that ran mostly slowed before the runner looks for a quieter core.
inline constexpr int kBusyStreak = 3;
// After a ranking that found no core to move to, the next waits this long: a core slowed for the
// whole run (its host's other hardware thread busy) ranked every 3 probes, each ranking with its
// checks for other programs (taken_share) 60 ms, about 190 times in one roofline on the Zen 5 VM.
inline constexpr double kFruitlessRankingPauseSeconds = 5;


}  // namespace peakprobe
