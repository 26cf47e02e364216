#include "harness/probe_runner.hpp"
#include "harness/probe_runner_impl.hpp"
#include "harness/stream_listing.hpp"
#include "harness/signal_guard.hpp"

#include <algorithm>
#include <optional>
#include <barrier>
#include <chrono>
#include <functional>
#include <cmath>
#include <set>
#include <thread>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "asm/target.hpp"
#include "harness/clock.hpp"
#include "cpu/cpu_info.hpp"
#include "harness/cycle_counter.hpp"
#include "harness/pin.hpp"
#include "harness/probe_buffer.hpp"
#include "harness/stats.hpp"
#include "harness/quiet_core.hpp"
#include "harness/timing.hpp"

namespace peakprobe {

namespace detail {


bool is_float(const std::string& dtype) {
  return dtype == "f64" || dtype == "f32" || dtype == "f16" || dtype == "bf16";
}

TimingBudget probe_budget() {
  TimingBudget b;
  b.target_call_ticks = 40000;
  b.min_samples = 15;
  b.max_samples = 80;
  b.max_ticks = 6e6;
  return b;
}

TimingBudget look_ahead_budget() {
  TimingBudget b = probe_budget();
  b.min_samples = 6;
  b.max_samples = 8;
  b.min_clean_samples = 3;
  return b;
}

Expected<Compiled> compile_pair(const isa::StreamHandle& stream, int short_copies) {
  auto s = stream->compile(short_copies);
  if (!s) return make_error(s.error());
  auto l = stream->compile(2 * short_copies);
  if (!l) return make_error(l.error());
  Compiled c;
  c.short_fn = std::move(s.value());
  c.long_fn = std::move(l.value());
  c.units_short = double(short_copies * stream->measured_per_copy());
  c.units_long = 2.0 * c.units_short;
  c.stream = stream;
  return c;
}

Stats to_cycles(const Stats& ticks, double ticks_per_cycle) {
  Stats s = ticks;
  s.min /= ticks_per_cycle;
  s.median /= ticks_per_cycle;
  s.max /= ticks_per_cycle;
  return s;
}

std::vector<std::string> timing_doubts(const TrustInputs& in, const ProbeOptions& options) {
  std::vector<std::string> doubts;
  // Under an instruction-set emulator the code runs and computes, but a cycle means nothing.
  if (!in.emulator.empty()) doubts.push_back("emulated: " + in.emulator);
  // A paired timing converted every sample with the clock of its own moment and judged each one
  // against the references beside it: the clock before and after the probe is not what its figure
  // was divided by, so a moving clock or an unsteady calibration round does not spoil it (a
  // disturbed sample is caught by the ruler below). Without a ruler they do.
  const bool paired = in.clean_samples >= 0;
  const double cal_spread = std::max(in.before.spread, in.after.spread);
  if (!paired && cal_spread > kCalibrationSpreadLimit)
    doubts.push_back(fmt::format("clock calibration unsteady (rounds differ by {:.1f}%)", cal_spread * 100));
  const double drift = in.before.ghz > 0 ? std::fabs(in.after.ghz - in.before.ghz) / in.before.ghz : 0.0;
  if (!paired && drift > options.drift_limit)
    doubts.push_back(fmt::format("core clock drifted {:.1f}% ({:.3f} -> {:.3f} GHz)", drift * 100, in.before.ghz,
                                 in.after.ghz));
  if (in.ipc <= 0) doubts.push_back("throughput timing came out non-positive");
  else if (in.issue_width > 0 && in.ipc > in.issue_width * (1 + kIssueWidthTolerance))
    doubts.push_back(fmt::format("{:.2f} instructions/cycle is beyond the {:.2f} this core was seen to issue at most",
                                 in.ipc, in.issue_width));
  if (in.overhead < kMinOverheadFraction)
    doubts.push_back(fmt::format("N and 2N copies disagree (implied loop overhead {:.1f}%)", in.overhead * 100));
  else if (overhead_beyond_loop(in.overhead))
    doubts.push_back(fmt::format("N and 2N copies disagree (implied loop overhead {:+.1f}%: its short and long calls "
                                 "ran at different rates)",
                                 in.overhead * 100));
  if (in.latency_overhead < kMinOverheadFraction || in.latency_overhead > kMaxLatencyOverheadFraction)
    doubts.push_back(fmt::format("the latency chain's N and 2N copies disagree (implied loop overhead {:+.1f}%: its "
                                 "short and long calls ran at different rates)",
                                 in.latency_overhead * 100));
  if (ruler_ran_slowed(in))
    doubts.push_back(fmt::format("the clock's add chain ran slowed: a multi-cycle link took {:.2f} of its adds where a "
                                 "whole number is expected (its other hardware thread or the host kept it busy)",
                                 1 / in.ruler_chain_ratio));
  if (in.clean_samples >= 0 && ran_slowed(in.clean_samples)) {
    // None slowed: the budget ran out first (a form of thousands of cycles, a call into the host).
    if (in.slowed_samples == 0)
      doubts.push_back(fmt::format("only {} sample{} fit its time budget, {} undisturbed ones wanted", in.clean_samples,
                                   in.clean_samples == 1 ? "" : "s", kMinCleanSamples));
    else
      doubts.push_back(fmt::format("the core ran slowed in {} of {} samples ({:.0f}% slower: its other hardware "
                                   "thread or the host was busy)",
                                   in.slowed_samples, in.slowed_samples + in.clean_samples, in.slowdown * 100));
  }
  // A wide spread alone does not spoil the minimum; a minimum that a second measurement does not
  // reproduce does.
  if (in.length_disagreement > kLengthLimit)
    doubts.push_back(fmt::format("code lengths disagree: a line through all of them is {:.1f}% off the figure (an "
                                 "effect of one code size, not of the instruction)",
                                 in.length_disagreement * 100));
  if (in.paired_disagreement > kPairedLimit)
    doubts.push_back(fmt::format("the clock moved by {:.1f}% during its timing (its fastest calls over the fastest "
                                 "and over the median clock of its samples disagree)",
                                 in.paired_disagreement * 100));
  if (in.latency_paired_disagreement > kLatencyPairedLimit)
    doubts.push_back(fmt::format("the clock moved by {:.1f}% during its latency chain's timing (its fastest calls over "
                                 "the fastest and over the median clock of its samples disagree)",
                                 in.latency_paired_disagreement * 100));
  if (in.below_typical > kFastModeLimit)
    doubts.push_back(fmt::format("its fastest calls ran {:.0f}% faster than its typical sample (a fast mode few "
                                 "calls show, or a timer glitch)",
                                 in.below_typical * 100));
  if (in.repeat_disagreement > kLayoutLimit)
    doubts.push_back(fmt::format("timings of the same stream disagree (the nearest to the figure differs by {:.0f}%)",
                                 in.repeat_disagreement * 100));
  else if (in.spread > options.spread_limit && in.repeat_disagreement > kRepeatLimit)
    doubts.push_back(fmt::format("unsteady timings (median {:.0f}% above the best, a repeat differs by {:.0f}%)",
                                 in.spread * 100, in.repeat_disagreement * 100));
  return doubts;
}

bool repeats_headline(const ProbeResult& r, const OperandLatency& l) {
  return l.method == r.latency_method && !l.upper_bound && l.cycles > 0;
}

std::optional<std::string> repeated_latency_doubt(const ProbeResult& r) {
  if (!r.latency_cycles || *r.latency_cycles <= 0) return std::nullopt;
  const double lat = *r.latency_cycles;
  for (const OperandLatency& l : r.latencies) {
    if (!repeats_headline(r, l)) continue;
    if (std::fabs(l.cycles - lat) <= kRepeatLimit * std::min(l.cycles, lat)) continue;
    return fmt::format("its latency chain timed twice disagrees ({:.3f} and {:.3f} cycles through operand {})", lat,
                       l.cycles, l.operand);
  }
  return std::nullopt;
}

LatencyVote vote_latency_repeats(const std::vector<double>& cycles) {
  LatencyVote v;
  if (cycles.size() < 2) return v;
  std::vector<size_t> order(cycles.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  // Two timings: the first stays the figure (the second only checks it); three or more: the median.
  if (cycles.size() >= 3) {
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return cycles[a] < cycles[b]; });
    v.figure = order[order.size() / 2];
  }
  const double fig = cycles[v.figure];
  if (!(fig > 0)) return v;  // no figure to be near (such a row is doubted for it already)
  v.nearest = 1e300;
  for (size_t i = 0; i < cycles.size(); ++i)
    if (i != v.figure) v.nearest = std::min(v.nearest, std::fabs(cycles[i] - fig) / fig);
  return v;
}

std::optional<std::string> self_repeated_latency_doubt(const std::vector<double>& cycles) {
  if (cycles.size() < 2) return std::nullopt;
  const LatencyVote vote = vote_latency_repeats(cycles);
  if (vote.nearest <= kRepeatLimit) return std::nullopt;
  std::vector<std::string> each;
  for (double c : cycles) each.push_back(fmt::format("{:.3f}", c));
  return fmt::format("its latency chain timed {} times disagrees ({} cycles: none within {:.0f}% of the figure, {:.3f})",
                     cycles.size(), fmt::join(each, ", "), kRepeatLimit * 100,
                     cycles[vote.figure]);
}

}  // namespace detail

namespace {
// K values tried in order; the register file's limit is always tried last (see chain_candidates).
const int kChainCandidates[] = {1, 2, 3, 4, 6, 8, 10, 12, 16, 20, 24, 28, 32};

std::vector<int> chain_candidates(int kmax) {
  std::vector<int> ks;
  for (int k : kChainCandidates)
    if (k < kmax) ks.push_back(k);
  ks.push_back(kmax);
  return ks;
}

}  // namespace

using namespace detail;

std::vector<std::string> missing_features(const CpuInfo& cpu, const std::vector<std::string>& needed) {
  std::vector<std::string> out;
  std::set<std::string> seen;
  for (const auto& f : needed) {
    std::string n = normalize_feature_name(f);
    if (!seen.insert(n).second || cpu.has(n)) continue;
    bool os_off = std::find(cpu.os_disabled.begin(), cpu.os_disabled.end(), n) != cpu.os_disabled.end();
    out.push_back(os_off ? n + " (CPU has it, OS does not enable its state)" : n);
  }
  return out;
}

void ProbeRunner::Impl::measure_latency(const isa::ProbeForm& form, const std::string& dtype, ProbeResult& r,
                                        PairTiming& lat, Compiled& chain) {
  auto plan = form.plan_latency(dtype);
  if (!plan) {
    r.latency_method = plan.error();
    return;
  }
  r.latency_method = plan.value()->method();
  auto c = compile_pair(plan.value(), kLatencyCopies);
  if (!c) {
    r.status = Status::error;
    r.reason = c.error();
    return;
  }
  std::string err;
  if (!time(c.value(), dtype, lat, err)) {
    r.status = Status::error;
    r.reason = "latency stream: " + err;
    return;
  }
  chain = std::move(c.value());
  spdlog::debug("  latency {:.4f} cycles (samples {:.4f}-{:.4f}, {} clean, {} slowed; at the median clock: fastest "
                "calls {:.4f}, median calls {:.4f}; overhead {:+.1f}%)",
                lat.value, lat.cycles.min, lat.cycles.max, lat.clean_samples, lat.slowed_samples,
                detail::fastest_call_cycles(lat),
                lat.median_ticks_per_cycle > 0 ? lat.per_unit.median / lat.median_ticks_per_cycle : 0.0,
                lat.overhead_fraction * 100);
}

void ProbeRunner::Impl::repeat_unrepeated_latency(const std::string& dtype, const ProbeResult& r,
                                                  const Compiled& chain, PairTiming& lat,
                                                  std::vector<double>& repeats) {
  if (!chain.stream || lat.cycles.samples == 0 || lat.value <= 0) return;
  // Under an emulator every row is mistrusted anyway: no repeats to pay for.
  if (!cpu.emulator.empty()) return;
  // An operand chain that repeats this one (repeats_headline, as repeated_latency_doubt reads them)
  // checks it; without one (a single path, other paths only, or an operand chain that could not be
  // timed) the chain repeats itself.
  for (const OperandLatency& l : r.latencies)
    if (repeats_headline(r, l)) return;
  std::vector<PairTiming> timings{lat};
  auto time_again = [&]() {
    PairTiming again;
    std::string err;
    if (time(chain, dtype, again, err) && again.cycles.samples > 0 && again.value > 0) timings.push_back(again);
  };
  auto values = [&]() {
    std::vector<double> v;
    for (const PairTiming& t : timings) v.push_back(t.value);
    return v;
  };
  time_again();
  if (detail::vote_latency_repeats(values()).nearest > kRepeatLimit) time_again();
  repeats = values();
  lat = timings[detail::vote_latency_repeats(repeats).figure];
  spdlog::debug("  latency chain timed {} times: {:.4f} cycles; the figure {:.4f}", repeats.size(),
                fmt::join(repeats, ", "), lat.value);
}

bool ProbeRunner::Impl::measure_throughput(const isa::ProbeForm& form, const std::string& dtype, ProbeResult& r,
                                           PairTiming& best_t, Compiled& best, double latency_cycles,
                                           double& repeat_disagreement, double& length_disagreement,
                                           double& paired_disagreement, bool& every_k_beat_bound) {
  const int kmax = form.max_chains();
  if (kmax < 1) {
    r.status = Status::error;
    r.reason = "no registers left for an independent stream";
    return false;
  }
  // The chain bound holds only where K copies are K chains like the latency chain (and where each copy
  // continues them: not where copies move on to fresh memory, see the first plan below).
  double bound_latency = detail::copies_chain_latency(r.latency_method, latency_cycles);
  double best_rt = 1e300;
  int best_copies = 1;
  // Every K that counted, for the choice after the sweep (chosen_sweep_point).
  struct SweptK {
    PairTiming t;
    Compiled code;
    int k = 0, copies = 0;
  };
  std::vector<SweptK> counted;
  std::vector<SweepPoint> points;
  struct Impossible {
    PairTiming t;
    Compiled code;
    int k = 0, copies = 0;
  };
  std::optional<Impossible> impossible_best;
  // Of the K whose short and long calls ran at different rates (overhead_beyond_loop), the one whose
  // overhead was the least odd, for a sweep in which no K counted otherwise (its fastest timings are
  // the most wrong: too fast).
  std::optional<Impossible> odd_best;
  bool chain_bound = false;
  int without_gain = 0;
  const std::vector<int> ks = chain_candidates(kmax);
  // Whether the one look beyond a plateau was taken (look_ahead_index).
  bool looked_ahead = false, quick_look = false;
  size_t ki = 0;
  // A sweep that would end at ks[ki] jumps once to the K beyond the plateau instead.
  auto look_ahead = [&]() {
    if (looked_ahead) return false;
    looked_ahead = true;
    const int next = look_ahead_index(ks, ki, kLookAheadChains);
    if (next < 0) return false;
    spdlog::debug("  K={:<2} no gain in {} steps: looking at {} chains before the sweep ends", ks[ki], without_gain,
                  ks[size_t(next)]);
    ki = size_t(next) - 1;  // the loop's ++ki lands on it
    quick_look = true;
    return true;
  };
  for (; ki < ks.size(); ++ki) {
    const int k = ks[ki];
    auto plan = form.plan_throughput(k, dtype);
    if (!plan) {
      r.status = Status::error;
      r.reason = plan.error();
      return false;
    }
    // An exchange-and-add with memory chains through its register at 8 cycles (the store forwarded to
    // the next load), but its throughput copies each work on fresh lines: 2 chains ran 2.0 cycles
    // each, and the bound had every K "impossible" and the row mistrusted (Zen 5 VM, docs/method.md).
    if (!plan.value()->copies_continue_chains()) bound_latency = 0;
    const int copies = throughput_copies(k);
    auto c = compile_pair(plan.value(), copies);
    if (!c) {
      r.status = Status::error;
      r.reason = c.error();
      return false;
    }
    PairTiming t;
    std::string err;
    // The look beyond a plateau is a short timing first: most find nothing, and only one that gains
    // is timed in full and counts (its full timing then judged as any step's).
    // (Nothing counted yet, best_rt 1e300: any look gains, so it is timed in full at once.)
    const bool looking = quick_look;
    quick_look = false;
    if (looking && best_rt < 1e300) {
      const TimingBudget quick = look_ahead_budget();
      if (!time(c.value(), dtype, t, err, &quick) || !(t.value < best_rt * (1 - kSweepGain))) {
        spdlog::debug("  K={:<2} a short look: {}; the sweep ends", k,
                      err.empty() ? fmt::format("{:.4f} cycles/inst, no gain", t.value) : err);
        break;
      }
      spdlog::debug("  K={:<2} a short look: {:.4f} cycles/inst, a gain: timed in full", k, t.value);
      t = PairTiming{};
    }
    if (!time(c.value(), dtype, t, err)) {
      // A look beyond the sweep's end is optional: its failure ends the sweep, not the row.
      if (looking) {
        spdlog::debug("  K={:<2} the look beyond the plateau failed ({}); the sweep ends", k, err);
        break;
      }
      r.status = Status::error;
      r.reason = "throughput stream: " + err;
      return false;
    }
    spdlog::debug("  K={:<2} {:.4f} cycles/inst (median {:.4f}, {} samples, {} slowed, overhead {:+.1f}%)", k, t.value,
                  t.cycles.median, t.cycles.samples, t.slowed_samples, t.overhead_fraction * 100);
    // More independent chains do not slow a stream down; a slowed moment does. A K slower than fewer
    // chains ran is timed once more before it counts against the sweep (on the Zen 4 VM two noisy
    // steps ended a 1-cycle vector add at 3 chains and 0.339 cycles, where 4 chains give 0.25).
    // The same code timed once more: a positive figure, or nothing.
    auto time_again = [&]() -> std::optional<PairTiming> {
      PairTiming again;
      std::string again_err;
      if (time(c.value(), dtype, again, again_err) && again.value > 0) return again;
      return std::nullopt;
    };
    if (detail::slower_than_fewer_chains(t.value, best_rt)) {
      if (auto again = time_again(); again && again->value < t.value) {
        spdlog::debug("  K={:<2} timed again: {:.4f} cycles/inst", k, again->value);
        t = *again;
      }
    }
    // Nor do K chains finish faster than K links per latency: such a timing is wrong, so it is timed
    // again, and if the repeat also beats the bound it cannot win the sweep (it would be the fastest
    // K) and counts as a step without gain.
    if (detail::beats_chain_bound(t.value, k, bound_latency)) {
      const double impossible = t.value;
      const std::optional<PairTiming> again = time_again();
      if (again) t = *again;
      spdlog::debug("  K={:<2} {:.4f} cycles/inst beats {} chains of {:.3f} cycles; {}: {:.4f}", k, impossible, k,
                    bound_latency, again ? "timed again" : "a second timing failed", t.value);
      if (detail::beats_chain_bound(t.value, k, bound_latency)) {
        // Kept only for a sweep in which every K was impossible (the row is then mistrusted): the one
        // nearest its bound, the least wrong.
        if (!impossible_best || t.value * k > impossible_best->t.value * impossible_best->k)
          impossible_best = Impossible{t, std::move(c.value()), k, copies};
        ++without_gain;
        if (!sweep_goes_on(k, false, chain_bound, without_gain) && !look_ahead()) break;
        continue;
      }
    }
    // Nor does the loop of a stream cost a quarter of its long call: a K whose short calls ran slower
    // per instruction than its long ones is timed again, and if the repeat does the same it does not
    // count (its difference would win the sweep at a rate no pipe gives: see kMaxOverheadFraction).
    if (overhead_beyond_loop(t.overhead_fraction)) {
      const double odd = t.overhead_fraction;
      const std::optional<PairTiming> again = time_again();
      if (again) t = *again;
      spdlog::debug("  K={:<2} implies a loop overhead of {:+.1f}%; {}: {:.4f} cycles/inst, {:+.1f}%", k, odd * 100,
                    again ? "timed again" : "a second timing failed", t.value, t.overhead_fraction * 100);
      if (overhead_beyond_loop(t.overhead_fraction)) {
        if (!odd_best || t.overhead_fraction < odd_best->t.overhead_fraction)
          odd_best = Impossible{t, std::move(c.value()), k, copies};
        ++without_gain;
        if (!sweep_goes_on(k, false, chain_bound, without_gain) && !look_ahead()) break;
        continue;
      }
    }
    const double rt = t.value;
    const bool improved = rt < best_rt * (1 - kSweepGain);
    best_rt = std::min(best_rt, rt);
    points.push_back(
        {k, rt, beyond_chain_bound(rt, k, bound_latency), t.overhead_fraction, at_chain_bound(rt, k, bound_latency)});
    counted.push_back({t, std::move(c.value()), k, copies});
    // Still bound by the chains means more chains may help, even when this step did not improve much.
    // (A load form without a latency stopped at 2 chains, 0.51 cycles, after one noisy step where 3
    // chains give 0.34: two steps without gain, and then one look beyond them, end a sweep.)
    chain_bound = chains_bind(rt, k, bound_latency);
    without_gain = steps_without_gain(without_gain, improved, t.overhead_fraction);
    if (!sweep_goes_on(k, improved, chain_bound, without_gain) && !look_ahead()) break;
  }
  if (!counted.empty()) {
    const size_t pick = chosen_sweep_point(points);
    const size_t fastest = fastest_point(points);
    if (pick != fastest && unconfirmed_by_more_chains(points, fastest)) {
      spdlog::debug("  K={:<2} {:.4f} cycles/inst is not what more chains ran (each of them more than {:.0f}% slower); K={} "
                    "({:.4f}) is",
                    points[fastest].k, points[fastest].recip, kExplainedLimit * 100, points[pick].k, points[pick].recip);
    } else if (pick != fastest) {
      // The fastest gave way for want of an explanation, or (explained) for want of slack.
      const bool for_slack = explained_points(points)[fastest];
      spdlog::debug("  K={:<2} {:.4f} cycles/inst (overhead {:+.1f}%) {} {} chains of {:.3f} cycles{}; K={} ({:.4f}, "
                    "{:+.1f}%, overhead {:+.1f}%) {}",
                    points[fastest].k, points[fastest].recip, points[fastest].overhead * 100,
                    for_slack ? "runs at the bound of its" : "is not what", points[fastest].k, bound_latency,
                    for_slack ? " (no slack)" : " explain", points[pick].k, points[pick].recip,
                    (points[pick].recip / points[fastest].recip - 1) * 100, points[pick].overhead * 100,
                    for_slack ? "has slack" : "is");
    }
    SweptK& chosen = counted[pick];
    best_t = chosen.t;
    best = std::move(chosen.code);
    r.accumulators = chosen.k;
    best_copies = chosen.copies;
    best_rt = chosen.t.value;
  }
  // No K counted: the least wrong of those that did not, and the row is doubted for it. Every K beat
  // its chain bound, or (where some K did not) the K with the least odd overhead, doubted for that
  // (timing_doubts).
  const bool fallback = !best.stream && (impossible_best || odd_best);
  if (!best.stream && impossible_best && !odd_best) {
    best_t = impossible_best->t;
    best = std::move(impossible_best->code);
    r.accumulators = impossible_best->k;
    best_copies = impossible_best->copies;
    every_k_beat_bound = true;
  }
  if (!best.stream && odd_best) {
    best_t = odd_best->t;
    best = std::move(odd_best->code);
    r.accumulators = odd_best->k;
    best_copies = odd_best->copies;
  }
  if (fallback) {
    best_rt = best_t.value;
    chain_bound = false;  // what the last counted K left says nothing of this one
  }
  if (!best.stream) {
    r.status = Status::error;
    r.reason = "throughput stream: no timing came out a number";
    return false;
  }
  // The register file, not the hardware, may have stopped the sweep: say so.
  // (One chain at most, kmax 1, as for a form whose every instance reads and writes one register it
  // always names: the stream is that chain, however many the hardware would run.)
  r.chains_limited_by_registers =
      limited_by_registers(r.accumulators, kmax, chain_bound, best_rt,
                           best.stream->copies_continue_chains() ? latency_cycles : 0.0);
  // The chosen K is timed twice more, from two other code layouts (3/4 and 1/2 of the copies,
  // placed afresh), and the median of the three timings is the figure. The sweep kept the fastest
  // explained K of several (or one with slack near it, or the fastest of the rest where more chains
  // did not confirm the fastest), so an artefact of one layout can win it: on
  // a Zen 3 VM one sweep timed 10 FMA chains at 0.466 cycles, every sample alike, where the hardware
  // needs 0.5. A layout can also be really slower (8 FMA chains at 12 copies ran at 0.635 in most
  // runs, at 8 and 16 copies at 0.50). With three layouts one odd one is outvoted; when no two
  // agree, the row is doubted (timing_doubts).
  struct Timed {
    PairTiming t;
    std::optional<Compiled> code;
  };
  std::vector<Timed> timed;
  timed.push_back({best_t, std::nullopt});
  const isa::StreamHandle best_stream = best.stream;
  // Smaller, never larger, than the sweep's: a larger loop of long instructions outgrows what the
  // front end streams from its loop buffer and decoded-op cache. On the Sapphire Rapids-class VM, a
  // 256-bit FP add from memory (9 bytes each) ran at 0.506 cycles with 32 copies of its 2 chains and at
  // 0.54-0.59 with 48 and 64 (1.5 and 2 times, the layouts until 2026-11-27), and 310 memory-operand
  // forms of the table were mistrusted for it ("N and 2N copies disagree").
  for (int copies : layout_copies(best_copies)) {
    auto c = compile_pair(best_stream, copies);
    PairTiming t;
    std::string err;
    if (!c || !time(c.value(), dtype, t, err) || t.value <= 0) continue;
    spdlog::debug("  K={:<2} layout of {} copies: {:.4f} cycles/inst ({:+.1f}%)", r.accumulators, copies, t.value,
                  (t.value / best_t.value - 1) * 100);
    timed.push_back({t, std::move(c.value())});
  }
  // A layout whose figure is unexplained (as the sweep judges a K: beyond the chain bound, or an
  // overhead above the others') is left out of the median while another is explained: on the
  // Sapphire Rapids-class VM 10 chains of a 512-bit FP16 FMA won a sweep at 0.501 cycles (+0.6%),
  // and its two other layouts read 0.495 and 0.488, both with the short calls' slow mode (2.02 a
  // cycle from their median, beyond the two FMA pipes).
  std::vector<double> every_layout;  // before the filter: a figure left alone is still held to them
  for (const Timed& x : timed) every_layout.push_back(x.t.value);
  {
    std::vector<SweepPoint> lp;
    for (const Timed& x : timed)
      lp.push_back({r.accumulators, x.t.value, beyond_chain_bound(x.t.value, r.accumulators, bound_latency),
                    x.t.overhead_fraction});
    const std::vector<bool> explained = explained_points(lp);
    if (std::find(explained.begin(), explained.end(), true) != explained.end()) {
      std::vector<Timed> kept;
      for (size_t i = 0; i < timed.size(); ++i)
        if (explained[i]) kept.push_back(std::move(timed[i]));
        else
          spdlog::debug("  K={:<2} a layout at {:.4f} cycles/inst (overhead {:+.1f}%) is not what its chains explain: "
                        "left out",
                        r.accumulators, timed[i].t.value, timed[i].t.overhead_fraction * 100);
      timed = std::move(kept);
    }
  }
  std::sort(timed.begin(), timed.end(), [](const Timed& a, const Timed& b) { return a.t.value < b.t.value; });
  const size_t mid = timed.size() / 2;
  const double fig = timed[mid].t.value;
  // One layout left: none confirms it, so it answers to the nearest of those left out. Otherwise a
  // fast artefact with the least overhead (the Zen 3 case above: 10 FMA chains at 0.466) would leave
  // out the two layouts that read the hardware's 0.50 with a little more overhead, and pass unchecked.
  std::vector<double> kept_values;
  for (const Timed& x : timed) kept_values.push_back(x.t.value);
  if (timed.size() > 1 || every_layout.size() > 1)
    repeat_disagreement = detail::layout_disagreement(kept_values, every_layout);
  // The three layouts time five or six code lengths (N and 2N of each). Each N/2N difference assumes
  // the two lengths cost the same per iteration beyond their copies; a length that pays something
  // extra (a front-end effect of that size) makes its difference short or long. A straight line
  // through every length, fitted so that one odd length cannot move it, tells such a figure apart:
  // on an Emerald Rapids VM a 256-bit FP multiply read 0.4628 cycles at 64 copies and 0.4605 at 96 (two
  // layouts agreeing, so the layout check passed) but 0.4970 at 128, every sample undisturbed; the
  // hardware does 0.5.
  // Each length in cycles at the clock of its own timing (the clock moves between layouts), the
  // figure's layout by the same two-point rule the line uses.
  auto cycles_per_tick = [](const PairTiming& t) { return t.ticks_per_cycle > 0 ? 1.0 / t.ticks_per_cycle : 1.0; };
  std::vector<std::pair<double, double>> lengths;
  for (const Timed& x : timed) {
    const Compiled& c = x.code ? *x.code : best;
    if (x.t.iterations == 0) continue;
    const double k = cycles_per_tick(x.t) / double(x.t.iterations);
    lengths.push_back({c.units_short, x.t.short_min_ticks * k});
    lengths.push_back({c.units_long, x.t.long_min_ticks * k});
  }
  const double line = theil_sen_slope(lengths);
  const double fig_two_point = timed[mid].t.fastest_ticks_per_unit * cycles_per_tick(timed[mid].t);
  // Three code lengths at least make a line that one odd length cannot move (a K of many chains has
  // few copies: 2 copies and their layout of 1 time lengths of 1, 2 and 4).
  std::set<double> distinct;
  for (const auto& l : lengths) distinct.insert(l.first);
  if (distinct.size() >= 3 && line > 0 && fig_two_point > 0) length_disagreement = std::fabs(fig_two_point - line) / line;
  // The figure (fastest calls over the fastest clock of its samples) against the same calls over their
  // median clock: they differ only when the clock moved during the timing (kPairedLimit).
  paired_disagreement = detail::chain_disagreement(timed[mid].t);
  spdlog::debug("  K={:<2} line through all lengths: {:.4f} cycles/inst, the figure's layout {:.4f} ({:+.1f}%), the "
                "figure {:.4f} ({:+.1f}% from the same calls at the median clock)",
                r.accumulators, line, fig_two_point, line > 0 ? (fig_two_point / line - 1) * 100 : 0.0, fig,
                paired_disagreement * 100);
  best_t = timed[mid].t;
  if (timed[mid].code) best = std::move(*timed[mid].code);
  return true;
}

bool ProbeRunner::Impl::measure_balanced(const isa::ProbeForm& form, const isa::Companion& companion,
                                         const std::string& dtype, ProbeResult& r, PairTiming& best_t,
                                         Compiled& best, double& repeat_disagreement) {
  auto other = target.probe_form(companion.text, cpu);
  if (!other) {
    r.status = Status::error;
    r.reason = "companion '" + companion.text + "': " + other.error();
    return false;
  }
  r.latency_method = "balanced with '" + other.value()->display() + "' (" + companion.why +
                     "): throughput only, cycles per instruction of the pair";
  const std::vector<isa::MixPart> entries = balanced_parts(form, *other.value(), companion.first);
  const int rounds = target.max_rounds(entries);
  auto plan = rounds > 0 ? target.plan_mix(entries, rounds, dtype)
                         : Expected<isa::StreamHandle>(make_error("not enough registers for the pair"));
  if (!plan) {
    r.status = Status::error;
    r.reason = plan.error();
    return false;
  }
  const int per_copy = plan.value()->measured_per_copy();
  auto c = compile_pair(plan.value(), throughput_copies(per_copy));
  if (!c) {
    r.status = Status::error;
    r.reason = c.error();
    return false;
  }
  PairTiming first, second;
  std::string err;
  if (!time(c.value(), dtype, first, err) || !time(c.value(), dtype, second, err)) {
    r.status = Status::error;
    r.reason = "balanced stream: " + err;
    return false;
  }
  repeat_disagreement = std::fabs(first.value - second.value) / std::min(first.value, second.value);
  best_t = second.value < first.value ? second : first;
  r.accumulators = rounds;
  best = std::move(c.value());
  return true;
}

void ProbeRunner::Impl::measure_operand_latencies(const isa::ProbeForm& form, const std::string& dtype,
                                                  ProbeResult& r) {
  const std::vector<int> ops = form.latency_operands();
  if (ops.size() < 2) return;  // one path: latency_cycles says it all
  // Doubt of a chain's timing, 1 at its limit: its clock moved, or a few fast calls set it.
  auto doubt = [](const PairTiming& x) {
    return std::max({detail::chain_disagreement(x) / kLatencyPairedLimit, detail::fast_mode_gap(x) / kFastModeLimit,
                     x.overhead_fraction / kMaxLatencyOverheadFraction,
                     x.overhead_fraction / kMinOverheadFraction});
  };
  for (int op : ops) {
    auto plan = form.plan_latency_through(op, dtype);
    if (!plan) continue;
    auto c = compile_pair(plan.value(), kLatencyCopies);
    if (!c) continue;
    // A chain whose two clock conversions disagree (kLatencyPairedLimit), whose fastest calls sit
    // far below its typical sample (kFastModeLimit), or whose N and 2N copies imply a fixed cost
    // outside what undisturbed chains show (kMinOverheadFraction, kMaxLatencyOverheadFraction), is
    // timed again, up to twice: the headline
    // latency is checked against this figure (repeated_latency_doubt), and one doubtful chain would
    // doubt a right headline.
    PairTiming t;
    bool timed = false;
    for (int attempt = 0; attempt < 3; ++attempt) {
      PairTiming again;
      std::string err;
      if (!time(c.value(), dtype, again, err) || again.cycles.samples == 0) break;
      if (!timed || doubt(again) < doubt(t)) t = again;
      timed = true;
      if (doubt(t) <= 1) break;
    }
    if (!timed) continue;
    OperandLatency l;
    l.operand = op + 1;
    l.kind = form.operand_kind(op);
    l.cycles = t.value - plan.value()->bridge_cycles();
    // What the row prints as this operand's latency must have passed what its headline passes: a
    // chain still doubtful after its attempts, with fewer than kMinCleanSamples undisturbed samples,
    // or not longer than its bridge is left out (logged), not printed inside an `ok` row.
    const bool slowed = t.paired && ran_slowed(t.clean_samples);
    if (doubt(t) > 1 || slowed || !(l.cycles > 0)) {
      spdlog::debug("  latency through operand {} left out: {:.3f} cycles{}{}", l.operand, l.cycles,
                    doubt(t) > 1 ? ", its timing doubted" : "",
                    slowed ? fmt::format(", {} undisturbed samples", t.clean_samples) : std::string());
      continue;
    }
    l.method = plan.value()->method();
    l.upper_bound = plan.value()->upper_bound();
    r.latencies.push_back(l);
  }
}

void ProbeRunner::Impl::measure_issue_width() {
  for (const std::string& text : target.issue_width_forms()) {
    auto form = target.probe_form(text, cpu);
    if (!form) continue;
    const int k = form.value()->max_chains();
    auto plan = form.value()->plan_throughput(k, "-");
    if (!plan) continue;
    auto c = compile_pair(plan.value(), throughput_copies(k));
    if (!c) continue;
    // Only an undisturbed timing may set the limit: a slowed one would make every later fast row
    // look impossible. With none, the limit stays unknown (0) and that check is skipped.
    for (int attempt = 0; attempt < 3; ++attempt) {
      PairTiming t;
      std::string err;
      // Nor a figure from a few odd fast calls, or from a clock that moved, or from a timing that ran
      // mostly slowed (stricter than ran_slowed, which judges one row): one such would raise the
      // limit for the whole run and let a wrong fast row pass.
      const bool trusted = time(c.value(), "-", t, err) && t.value > 0 &&
                           (!t.paired || (t.clean_samples >= kMinCleanSamples && t.clean_samples >= t.slowed_samples &&
                                          detail::fast_mode_gap(t) <= kFastModeLimit &&
                                          detail::chain_disagreement(t) <= kPairedLimit));
      if (trusted) issue_width = std::max(issue_width, 1.0 / t.value);
    }
  }
  spdlog::debug("widest issue rate seen: {:.2f} instructions/cycle", issue_width);
}

void ProbeRunner::Impl::run_threads(const Compiled& c, const std::string& dtype, double one_core_cycles,
                                    double one_core_noise, ProbeResult& r) {
  const int n = options.threads;
  r.threads = n;  // set before any early return: writers show the threaded verdict of rows with threads > 1
  std::vector<int> cpus;
  for (int id : cpu.core_order)
    if (int(cpus.size()) < n) cpus.push_back(id);
  if (int(cpus.size()) < n) {
    r.threads_status = Status::error;
    r.threads_reason = fmt::format("--threads {} but only {} CPUs are available", n, cpus.size());
    return;
  }
  // The one-core figure's own code, not a fresh compile of its stream: the same copies and the same
  // layout, so the two figures differ only in what ran beside them.
  if (!c.stream) {
    r.threads_status = Status::error;
    r.threads_reason = "threaded run: no compiled stream";
    return;
  }
  std::barrier sync(n);
  std::vector<double> rt(size_t(n), 0.0), ghz(size_t(n), 0.0), drift(size_t(n), 0.0), slowdown(size_t(n), 0.0);
  // Per thread: whether its own ruler saw most samples slowed (a busy sibling or host on that core).
  std::vector<char> slowed(size_t(n), 0);
  std::vector<std::string> errors(static_cast<size_t>(n));
  auto worker = [&](int i) {
    std::string err;
    if (!pin_current_thread(cpus[size_t(i)], &err)) errors[size_t(i)] = err;
    CycleCounter ctr;
    ProbeBuffer buf;
    isa::ProbeConstants k;
    prepare_data(c, dtype, k, buf);
    auto cal = ClockCalibrator::create(ctr, cpu.tsc_hz, cpu);
    sync.arrive_and_wait();
    if (!cal || !buf.ok()) {
      errors[size_t(i)] = cal ? "cannot map the probe buffer" : cal.error();
      sync.arrive_and_wait();
      sync.arrive_and_wait();
      return;
    }
    (*cal)->warm_up(0.1);
    ClockSample before = (*cal)->measure();
    sync.arrive_and_wait();  // every core busy from here: the same conditions as the measurement
    PairTiming t;
    if (!time_pair(c.short_fn.fn(), c.long_fn.fn(), c.units_short, c.units_long, buf.data(), &k, ctr,
                   probe_budget(), t, err, &(*cal)->ruler(), cpu.tsc_hz))
      errors[size_t(i)] = err;
    sync.arrive_and_wait();
    ClockSample after = (*cal)->measure();
    const double tpc = 0.5 * (before.ticks_per_cycle + after.ticks_per_cycle);
    if (t.paired) {
      slowed[size_t(i)] = ran_slowed(t.clean_samples);
      slowdown[size_t(i)] = t.slowdown;
      rt[size_t(i)] = t.value;
      ghz[size_t(i)] = t.ghz > 0 ? t.ghz : 0.5 * (before.ghz + after.ghz);
    } else {
      rt[size_t(i)] = tpc > 0 ? t.per_unit.min / tpc : 0.0;
      ghz[size_t(i)] = 0.5 * (before.ghz + after.ghz);
    }
    // A paired timing carried the clock of each sample's own moment (see timing_doubts).
    drift[size_t(i)] = !t.paired && before.ghz > 0 ? std::fabs(after.ghz - before.ghz) / before.ghz : 0.0;
  };
  std::vector<std::thread> team;
  for (int i = 0; i < n; ++i) team.emplace_back(worker, i);
  for (auto& t : team) t.join();
  for (const auto& e : errors)
    if (!e.empty()) {
      r.threads_status = Status::error;
      r.threads_reason = "threaded run: " + e;
      return;
    }
  r.per_thread_recip_throughput = rt;
  double total = 0;
  for (int i = 0; i < n; ++i)
    if (rt[size_t(i)] > 0) total += r.ops_per_instruction / rt[size_t(i)] * ghz[size_t(i)];
  if (r.ops_per_instruction > 0) {
    if (is_float(r.dtype)) r.total_gflops = total;
    else r.total_gops = total;
  }
  // A thread whose own ruler saw its core slowed (on a Zen 4 VM both threads read 27-29% slower than
  // one core alone, in agreement, while the host was busy); the per-core judgement below catches the
  // same when no ruler sees it.
  for (int i = 0; i < n && r.threads_status == Status::ok; ++i)
    if (slowed[size_t(i)]) {
      r.threads_status = Status::mistrusted;
      r.threads_reason = fmt::format("CPU {} ran slowed during the {}-thread run ({:.0f}% slower: its other hardware "
                                     "thread or the host was busy)",
                                     cpus[size_t(i)], n, 100 * slowdown[size_t(i)]);
    }
  const double worst = *std::max_element(drift.begin(), drift.end());
  if (worst > options.drift_limit && r.threads_status == Status::ok) {
    r.threads_status = Status::mistrusted;
    r.threads_reason = fmt::format("core clock drifted {:.1f}% during the {}-thread run", worst * 100, n);
  }
  // Per physical core against the same code alone on one core: a core that lags was disturbed, and
  // every core slowed alike (which no thread's own ruler sees when the host slows the whole guest) is
  // a shortfall. On a Zen 3 VM a 256-bit FMA read 0.680 and 0.677 cycles on both vCPUs at once, each
  // thread `ok` by its ruler, against 0.503 alone; a quiet moment gave 0.499 and 0.509.
  detail::ThreadRun run;
  run.cycles = rt;
  run.cpu = cpus;
  for (int id : cpus)
    run.core.push_back(id >= 0 && size_t(id) < cpu.cpu_core.size() ? cpu.cpu_core[size_t(id)] : -1);
  run.one_core_cycles = one_core_cycles;
  run.one_core_noise = one_core_noise;
  const detail::ThreadJudgement verdict = detail::judge_threads(run);
  r.per_thread_core = run.core;
  if (std::isfinite(verdict.shortfall)) r.threads_shortfall = verdict.shortfall;
  if (verdict.status != Status::ok && r.threads_status == Status::ok) {
    r.threads_status = verdict.status;
    r.threads_reason = verdict.reason;
  }
  // A doubted all-cores figure is not handed on as one (the one-core figures stand on their own).
  if (r.threads_status != Status::ok) r.total_gflops.reset(), r.total_gops.reset();
}

Expected<std::unique_ptr<ProbeRunner>> ProbeRunner::create(const CpuInfo& cpu, const ProbeOptions& options) {
  auto impl = std::make_unique<Impl>();
  impl->cpu = cpu;
  impl->options = options;
  int target = options.cpu >= 0 ? options.cpu : (cpu.core_order.empty() ? current_cpu() : cpu.core_order.front());
  std::string err;
  if (!pin_current_thread(target, &err)) return make_error(err);
  impl->pinned_cpu = target;
  if (!impl->buffer.ok()) return make_error("cannot map the probe buffer below 4 GiB");
  auto cal = ClockCalibrator::create(impl->counter, cpu.tsc_hz, cpu);
  if (!cal) return make_error("clock calibration: " + cal.error());
  impl->clock = std::move(cal.value());
  ClockSample s = impl->clock->warm_up();
  if (s.ghz <= 0) return make_error("clock calibration failed: the add chain could not be timed");
  impl->note_calibration(s);
  // A core found shared right after the ranking: move now rather than measure there (a move measures
  // the issue width on the new core).
  const bool moved = !impl->check_ruler_window() && impl->move_to_quieter_core("its reference window ran shared");
  if (!moved) impl->measure_issue_width();
  // The clock of the core the runner measures on, after any retaken window or move.
  impl->start.source = impl->counter.source();
  impl->start.ghz = impl->start.ghz_before = impl->start.ghz_after = impl->last_calibration.ghz;
  spdlog::debug("clock {:.3f} GHz on CPU {} ({})", impl->last_calibration.ghz, impl->pinned_cpu, impl->counter.source());
  return std::unique_ptr<ProbeRunner>(new ProbeRunner(std::move(impl)));
}

ProbeRunner::ProbeRunner(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
ProbeRunner::~ProbeRunner() = default;
const ClockReading& ProbeRunner::start_clock() const { return impl_->start; }
int ProbeRunner::cpu() const { return impl_->pinned_cpu; }
int ProbeRunner::threads() const { return impl_->options.threads; }

// The features a form needs are checked before it runs; one that still raises an illegal-instruction
// fault is blocked by the OS or the hypervisor (in a KVM guest on Zen 4 the CPU reports the feature of
// one such instruction, and the instruction faults). That is a fact of this machine, not a failed
// measurement.
namespace detail {
bool keeps_new_steady_state(double before, double after) {
  return before > 0 && after > 0 && after >= before * (1 - kSteadyStateShift);
}

RulerWindowStep ruler_window_step(double learned, double ranked, bool retaken) {
  if (ranked <= 0) return RulerWindowStep::keep;
  const bool short_of_ranking = learned < ranked * (1 - kSharedWindowGap);
  if (!retaken) return learned > 0 && short_of_ranking ? RulerWindowStep::retake : RulerWindowStep::keep;
  return short_of_ranking ? RulerWindowStep::assume : RulerWindowStep::keep;
}

bool chains_bind(double recip_throughput, int k, double latency_cycles) {
  return latency_cycles > 0 && recip_throughput > 0 && recip_throughput * k < 1.15 * latency_cycles;
}

bool slower_than_fewer_chains(double recip_throughput, double best_so_far) {
  return best_so_far < 1e300 && recip_throughput > best_so_far * 1.02;
}

bool chains_through_destination(const std::string& latency_method) {
  return latency_method.rfind("chain through the destination", 0) == 0;
}

double copies_chain_latency(const std::string& latency_method, double latency_cycles) {
  return chains_through_destination(latency_method) ? latency_cycles : 0.0;
}

bool limited_by_registers(int chosen_k, int kmax, bool chain_bound, double recip_throughput, double latency_cycles) {
  if (chosen_k != kmax) return false;
  return kmax == 1 ? chains_bind(recip_throughput, 1, latency_cycles) : chain_bound;
}

bool beats_chain_bound(double recip_throughput, int k, double latency_cycles) {
  return latency_cycles > 0 && recip_throughput > 0 && k > 0 && recip_throughput * k < kChainBoundSlack * latency_cycles;
}

bool at_chain_bound(double recip_throughput, int k, double latency_cycles) {
  return latency_cycles > 0 && recip_throughput > 0 && k > 0 && recip_throughput * k < kNoSlack * latency_cycles;
}

bool beyond_chain_bound(double recip_throughput, int k, double latency_cycles) {
  return latency_cycles > 0 && recip_throughput > 0 && k > 0 && recip_throughput * k < kChainBoundTrust * latency_cycles;
}

size_t fastest_point(const std::vector<SweepPoint>& points) {
  size_t fastest = 0;
  for (size_t i = 1; i < points.size(); ++i)
    if (points[i].recip < points[fastest].recip) fastest = i;
  return fastest;
}

std::vector<bool> explained_points(const std::vector<SweepPoint>& points) {
  if (points.empty()) return {};
  const size_t fastest = fastest_point(points);
  // The overhead of the K that compete: the lowest, but not below zero. One chain's short loop, far
  // slower, implies its own (-2.1% beside +0.3% for the rest, a 512-bit FP16 FMA) and does not
  // compete; a negative fixed cost is itself odd (its long calls ran faster per instruction), and a
  // reference below zero would hold a K with an ordinary one to an odd one.
  double reference = points[fastest].overhead;
  for (const SweepPoint& p : points)
    if (p.recip <= points[fastest].recip * (1 + kExplainedLimit)) reference = std::min(reference, p.overhead);
  reference = std::max(reference, 0.0);
  std::vector<bool> out;
  for (const SweepPoint& p : points) out.push_back(!p.beyond_bound && p.overhead <= reference + kOverheadExcess);
  return out;
}

bool unconfirmed_by_more_chains(const std::vector<SweepPoint>& points, size_t i) {
  if (i >= points.size()) return false;
  int larger = 0;
  double least = 1e300, most = 0;
  for (const SweepPoint& p : points)
    if (p.k > points[i].k) ++larger, least = std::min(least, p.recip), most = std::max(most, p.recip);
  // The larger K agree among themselves (a rate, not a slowed stretch) and the K beats them all.
  return larger >= 2 && most <= least * (1 + kExplainedLimit) && least > points[i].recip * (1 + kExplainedLimit);
}

size_t chosen_sweep_point(const std::vector<SweepPoint>& points, bool prefer_explained) {
  const size_t fastest = fastest_point(points);
  if (prefer_explained && points.size() > 1 && unconfirmed_by_more_chains(points, fastest)) {
    // The rest choose, and their choice is mapped back by position.
    std::vector<SweepPoint> rest;
    std::vector<size_t> from;
    for (size_t i = 0; i < points.size(); ++i)
      if (i != fastest) rest.push_back(points[i]), from.push_back(i);
    return from[chosen_sweep_point(rest, true)];
  }
  const std::vector<bool> explained = explained_points(points);
  if (!prefer_explained) return fastest;
  size_t pick = fastest;
  if (!explained[fastest]) {
    std::optional<size_t> other;
    for (size_t i = 0; i < points.size(); ++i)
      if (i != fastest && explained[i] && points[i].recip <= points[fastest].recip * (1 + kExplainedLimit) &&
          (!other || points[i].recip < points[*other].recip))
        other = i;
    pick = other.value_or(fastest);
  }
  if (!points[pick].at_bound) return pick;
  // Within kSlackLimit of the pick and, like the pick, within kExplainedLimit of the fastest: the
  // two steps never take a K further than that from the fastest.
  std::optional<size_t> slack;
  for (size_t i = 0; i < points.size(); ++i)
    if (points[i].k > points[pick].k && !points[i].at_bound && explained[i] &&
        points[i].recip <= points[pick].recip * (1 + kSlackLimit) &&
        points[i].recip <= points[fastest].recip * (1 + kExplainedLimit) &&
        (!slack || points[i].recip < points[*slack].recip))
      slack = i;
  return slack.value_or(pick);
}

std::vector<int> layout_copies(int copies) {
  std::vector<int> out;
  for (int c : {copies - std::max(1, copies / 4), copies - std::max(1, copies / 2)})
    if (c >= 1 && c != copies && std::find(out.begin(), out.end(), c) == out.end()) out.push_back(c);
  while (out.size() < 2) out.push_back(std::max(1, copies));
  return out;
}

int steps_without_gain(int steps, bool improved, double overhead_fraction) {
  if (improved) return 0;
  return overhead_fraction < kMinOverheadFraction ? steps : steps + 1;
}

bool sweep_goes_on(int k, bool improved, bool chain_bound, int steps_without_gain) {
  if (improved || chain_bound || k < 2) return true;
  return steps_without_gain < 2;
}

int look_ahead_index(const std::vector<int>& ks, size_t stopped, int max_k) {
  if (stopped >= ks.size()) return -1;
  const int wanted = (3 * ks[stopped] + 1) / 2;  // half again, rounded up
  int last = -1;  // the most chains up to max_k beyond the stop
  for (size_t i = stopped + 1; i < ks.size() && ks[i] <= max_k; ++i) {
    if (ks[i] >= wanted) return int(i);
    last = int(i);
  }
  // Fewer registers than that (or the bound first): the most chains left.
  return last;
}

ProbeResult skip_if_blocked(ProbeResult r) {
  if (r.status != Status::error || !is_illegal_instruction(r.reason)) return r;
  r.status = Status::skipped;
  r.reason = "illegal instruction (SIGILL) although the CPU reports every feature it needs: the OS or the "
             "hypervisor blocks it here";
  return r;
}
}  // namespace detail

ProbeResult ProbeRunner::run(const ProbeSpec& spec) { return run_batch({spec}).front(); }

std::vector<ProbeResult> ProbeRunner::run_batch(const std::vector<ProbeSpec>& specs,
                                                const std::function<void(size_t, const ProbeSpec&)>& on_start,
                                                const std::function<void(size_t, const ProbeResult&)>& on_result,
                                                const std::function<bool()>& stop) {
  return measure_with_retries<ProbeResult>(
      specs.size(), [&](size_t i) { return skip_if_blocked(run_once(specs[i])); },
      [&](size_t i) {
        if (on_start) on_start(i, specs[i]);
      },
      on_result, stop, impl_->cpu.emulator.empty() ? kAttempts : 1, [&] { impl_->forget_calibration_moment(); });
}

ProbeResult ProbeRunner::run_once(const ProbeSpec& spec) {
  Impl& m = *impl_;
  ProbeResult r;
  r.instruction = spec.text;
  r.group = spec.group;
  r.origin = spec.origin;
  r.ops_per_instruction = spec.ops_per_instruction;
  r.cpu = m.pinned_cpu;
  r.threads = 1;
  r.repro = fmt::format("peakprobe inst \"{}\" --cpu {}{}{}", spec.text, m.pinned_cpu,
                        spec.imm ? fmt::format(" --imm {}", *spec.imm) : std::string(), m.options.repro_extra);
  r.clock.source = m.counter.source();

  auto resolved = m.target.probe_form(spec.text, m.cpu);
  if (!resolved) {
    r.status = Status::error;
    r.reason = resolved.error();
    return r;
  }
  isa::ProbeForm& form = *resolved.value();
  r.instruction = form.display();
  if (spec.imm) form.set_immediates(*spec.imm);
  r.dtype = spec.dtype != "-" ? spec.dtype : form.default_dtype();
  std::vector<std::string> needed = form.features();
  needed.insert(needed.end(), spec.requires_features.begin(), spec.requires_features.end());
  auto missing = missing_features(m.cpu, needed);
  if (!missing.empty()) {
    r.status = Status::skipped;
    r.reason = "needs " + fmt::format("{}", fmt::join(missing, ", ")) + ", not available on this CPU";
    return r;
  }

  if (auto why = form.refusal()) {
    r.status = Status::skipped;
    r.reason = "refused before running: " + *why;
    return r;
  }

  spdlog::debug("{}:", r.instruction);
  ClockSample before = m.calibrate_before();
  PairTiming lat, tput;
  Compiled best;
  double repeat_disagreement = 0, length_disagreement = 0, paired_disagreement = 0;
  bool every_k_beat_bound = false;
  std::vector<double> latency_repeats;
  if (auto companion = form.companion()) {
    // Stack and flag forms: a balanced pair per copy, reported per instruction of the pair.
    if (!m.measure_balanced(form, *companion, r.dtype, r, tput, best, repeat_disagreement)) return r;
    // Its figure against the same calls at the median clock, as for any throughput stream: a clock
    // that moved during the timing is doubted here too. (One code length: no line through lengths.)
    paired_disagreement = detail::chain_disagreement(tput);
  } else {
    Compiled chain;
    m.measure_latency(form, r.dtype, r, lat, chain);
    if (r.status == Status::error) return r;
    m.measure_operand_latencies(form, r.dtype, r);
    m.repeat_unrepeated_latency(r.dtype, r, chain, lat, latency_repeats);
    const double lat_cycles = lat.cycles.samples > 0 ? lat.value : 0.0;
    if (!m.measure_throughput(form, r.dtype, r, tput, best, lat_cycles, repeat_disagreement, length_disagreement,
                              paired_disagreement, every_k_beat_bound))
      return r;
  }
  // The latency chain's figure against its own fastest calls, as for the throughput stream.
  const double latency_paired_disagreement = detail::chain_disagreement(lat);
  ClockSample after = m.calibrate();
  if (tput.cycles.samples == 0 || tput.ghz <= 0) {
    r.status = Status::error;
    r.reason = "clock calibration failed around this probe";
    return r;
  }
  r.clock = clock_reading(m.counter.source(), before, after);
  // The figures were converted with the clock of their own samples: that is the clock they report.
  r.clock.ghz = tput.ghz;

  r.throughput_stats = tput.cycles;
  const double rt = tput.value;
  r.recip_throughput_cycles = rt;
  if (rt > 0) r.throughput_ipc = 1.0 / rt;
  if (lat.cycles.samples > 0) {
    r.latency_stats = lat.cycles;
    r.latency_cycles = lat.value;
  }
  if (rt > 0 && r.ops_per_instruction > 0) {
    const double rate = r.ops_per_instruction / rt * r.clock.ghz;
    if (is_float(r.dtype)) r.gflops = rate;
    else r.gops = rate;
  }

  // Trust checks: each one names what was wrong.
  TrustInputs trust;
  trust.before = before;
  trust.after = after;
  trust.ipc = rt > 0 ? 1.0 / rt : 0.0;
  trust.overhead = tput.overhead_fraction;
  if (lat.cycles.samples > 0) trust.latency_overhead = lat.overhead_fraction;
  trust.spread = r.throughput_stats.spread;
  trust.repeat_disagreement = repeat_disagreement;
  trust.length_disagreement = length_disagreement;
  trust.paired_disagreement = paired_disagreement;
  trust.latency_paired_disagreement = latency_paired_disagreement;
  trust.below_typical = std::max(detail::fast_mode_gap(lat), detail::fast_mode_gap(tput));
  trust.issue_width = m.issue_width;
  trust.emulator = m.cpu.emulator;
  trust.ruler_chain_ratio = m.ruler_chain_ratio();
  if (tput.paired) {
    const bool lat_worse = lat.paired && lat.clean_samples < tput.clean_samples;
    trust.clean_samples = lat_worse ? lat.clean_samples : tput.clean_samples;
    trust.slowed_samples = lat_worse ? lat.slowed_samples : tput.slowed_samples;
    trust.slowdown = lat_worse ? lat.slowdown : tput.slowdown;
  }
  std::vector<std::string> doubts = timing_doubts(trust, m.options);
  if (r.latency_cycles && *r.latency_cycles <= 0) doubts.push_back("latency timing came out non-positive");
  if (auto d = repeated_latency_doubt(r)) doubts.push_back(*d);
  if (auto d = self_repeated_latency_doubt(latency_repeats)) doubts.push_back(*d);
  // K chains through the destination cannot finish faster than one chain's latency over K.
  if (r.latency_cycles && chains_through_destination(r.latency_method) && best.stream &&
      best.stream->copies_continue_chains() && beats_chain_bound(rt, r.accumulators, *r.latency_cycles))
    doubts.push_back(fmt::format("{} chains ran faster ({:.3f} cycles each) than one chain's latency allows ({:.3f})",
                                 r.accumulators, rt, *r.latency_cycles / r.accumulators));
  else if (every_k_beat_bound)
    doubts.push_back(fmt::format("every number of chains timed faster than one chain's latency ({:.3f} cycles) over "
                                 "that number allows",
                                 r.latency_cycles ? *r.latency_cycles : 0.0));
  if (!doubts.empty()) {
    r.status = Status::mistrusted;
    r.reason = fmt::format("{}", fmt::join(doubts, "; "));
  } else if (!r.latency_cycles) {
    r.reason = "latency: " + r.latency_method;
  } else if (*r.latency_cycles < kEliminatedLatency) {
    // Not an error: a chain of moves the renamer eliminates really runs faster than a cycle per link.
    r.reason = "latency below one cycle: the chain's instructions are eliminated at register rename";
  }
  if (r.chains_limited_by_registers && r.status == Status::ok && r.reason.empty())
    r.reason = r.accumulators > 1
                   ? fmt::format("throughput limited by the register file: {} independent chains were still "
                                 "latency-bound",
                                 r.accumulators)
                   : "throughput limited by the register file: it allows one chain of this form, which was "
                     "latency-bound (the figure is that chain's latency; the hardware may be faster)";

  if (m.options.threads > 1) {
    m.run_threads(best, r.dtype, rt, repeat_disagreement, r);
    m.forget_calibration_moment();
  }
  m.note_probe_slowed((trust.clean_samples >= 0 && ran_slowed(trust.clean_samples)) || ruler_ran_slowed(trust));
  return r;
}

void ProbeRunner::Impl::note_probe_slowed(bool slowed) {
  busy_streak = slowed ? busy_streak + 1 : 0;
  if (busy_streak < kBusyStreak) return;
  busy_streak = 0;
  const std::string why = fmt::format("ran slowed for {} probes in a row", kBusyStreak);
  if (!move_to_quieter_core(why) && ranked_in_vain) relearn_in_place(why);
}

void ProbeRunner::Impl::relearn_in_place(const std::string& why) {
  const double before = clock->learned_wide_rate();
  const ClockCalibrator::Learned was = clock->relearn();
  const ClockSample s = clock->warm_up();
  const double after = s.ghz > 0 ? clock->learned_wide_rate() : 0.0;
  if (!detail::keeps_new_steady_state(before, after)) {
    clock->restore(was);
    spdlog::debug("CPU {} {}, and no core is quieter; learned afresh, its wide stream {} against {:.2f}: "
                  "the ruler keeps what it had",
                  pinned_cpu, why,
                  after > 0 ? fmt::format("ran at {:.2f} adds a cycle", after) : std::string("confirmed no rate"),
                  before);
    return;
  }
  note_calibration(s);
  // Judged against the ranking just taken, as after a move: a window well below it ran shared (that
  // check then says so, and the samples read as slowed against the ranking's rate).
  if (!check_ruler_window()) return;
  spdlog::info("CPU {} {}, and no core is quieter: the machine moved to another steady state, its wide reference "
               "stream now {:.2f} adds a cycle against {:.2f} learned before ({:+.1f}%); the ruler learned it afresh",
               pinned_cpu, why, after, before, (after / before - 1) * 100);
}

bool ProbeRunner::Impl::move_to_quieter_core(const std::string& why_move) {
  ranked_in_vain = false;
  if (options.cpu >= 0) return false;  // pinned by hand
  const double now = std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
  if (!moves.room(now)) {  // moved enough for this minute
    spdlog::debug("CPU {} {}; {} moves in the last {:.0f} s already, staying", pinned_cpu, why_move, kMaxCoreMoves,
                  kCoreMoveWindowSeconds);
    return false;
  }
  if (now - fruitless_ranking_at < kFruitlessRankingPauseSeconds) {  // ranked a moment ago, in vain
    spdlog::trace("CPU {} {}; the last ranking found no core to move to {:.1f} s ago, staying", pinned_cpu, why_move,
                  now - fruitless_ranking_at);
    return false;
  }
  const std::vector<CoreQuietness> q = measure_core_quietness(cpu);
  forget_calibration_moment();  // the ranking ran on every core
  note_widest_rates(q, cpu);  // the new core's window is judged against this ranking
  const auto here = std::find_if(q.begin(), q.end(), [&](const CoreQuietness& c) { return c.cpu == pinned_cpu; });
  // Another program taking turns on a CPU is what the ratios miss (taken_share): a core quieter by
  // its ratio but taken is no move; this core taken, the quietest other core that is free is.
  std::vector<int> taken;
  const auto is_taken = [&](int c) {
    if (!core_taken(c)) return false;
    taken.push_back(c);
    return true;
  };
  int to = quieter_core(q, pinned_cpu);
  if (to >= 0 && is_taken(to)) to = -1;
  if (to < 0 && is_taken(pinned_cpu)) {
    std::vector<int> order;
    std::vector<double> ratio;
    for (const auto& c : q)
      if (c.cpu != pinned_cpu && std::find(taken.begin(), taken.end(), c.cpu) == taken.end())
        order.push_back(c.cpu), ratio.push_back(c.wide_ratio);
    const std::vector<int> ranked = quiet_cores_first(order, order.size(), ratio);
    // At most kTakenChecks more: each check spins a window. All of them taken: the order stands.
    const std::vector<int> free = free_core_first(ranked, kTakenChecks, is_taken);
    if (!free.empty() && std::find(taken.begin(), taken.end(), free.front()) == taken.end()) to = free.front();
  }
  const auto best = std::find_if(q.begin(), q.end(), [&](const CoreQuietness& c) { return c.cpu == to; });
  const int from = pinned_cpu;
  if (to < 0 || best == q.end()) {
    // No quieter core that is free: the ranking is not a move (a busy machine stays where it is at
    // the cost of a ranking, and of up to kTakenChecks + 2 windows of taken_share, at most every
    // kFruitlessRankingPauseSeconds).
    spdlog::debug("CPU {} {}; no clearly quieter core to move to{}; the next ranking in {:.0f} s at the soonest",
                  pinned_cpu, why_move,
                  taken.empty() ? "" : fmt::format(" (another program takes turns on CPU {})", fmt::join(taken, ", ")),
                  kFruitlessRankingPauseSeconds);
    fruitless_ranking_at = now;
    ranked_in_vain = true;
    return false;
  }
  if (std::string why; !repin(best->cpu, &why)) {
    spdlog::debug("CPU {} {}; staying: {}", pinned_cpu, why_move, why);
    return false;
  }
  moves.record(now);
  spdlog::info("CPU {} {} (wide/chain reference ratio {:.3f}{}); moving to CPU {} ({:.3f})", from, why_move,
               here != q.end() ? here->wide_ratio : 0.0,
               std::find(taken.begin(), taken.end(), from) != taken.end() ? "; another program takes turns on it" : "",
               best->cpu, best->wide_ratio);
  return true;
}

bool ProbeRunner::Impl::repin(int to, std::string* error) {
  std::string err;
  if (!pin_current_thread(to, &err)) {
    if (error) *error = err;
    return false;
  }
  // The same calibrator, its code where it was: only what it learned of the old core is forgotten.
  // (A new one's code landed elsewhere and read another clock: see isa::PageAlignedCode.)
  const ClockCalibrator::Learned old_core = clock->relearn();
  ClockSample s = clock->warm_up();
  if (s.ghz <= 0) {
    std::string back_err;
    if (!pin_current_thread(pinned_cpu, &back_err)) {
      // Cannot go back: the thread runs on `to`, so the runner says so (its repro lines name that
      // core) and tries once more to learn its clock there; the move itself is reported failed.
      spdlog::warn("CPU {}: the clock could not be calibrated there, and the thread cannot return to CPU {} ({}); "
                   "staying on CPU {}",
                   to, pinned_cpu, back_err, to);
      pinned_cpu = to;
      busy_streak = 0;
      if (const ClockSample again = clock->warm_up(); again.ghz > 0) note_calibration(again);
      if (error) *error = fmt::format("CPU {}: the clock could not be calibrated there, and the thread could not return", to);
      return false;
    }
    clock->restore(old_core);  // stay with what was learned there
    if (error) *error = fmt::format("CPU {}: the clock could not be calibrated there", to);
    return false;
  }
  pinned_cpu = to;
  note_calibration(s);
  check_ruler_window();  // judged, not moved from: this is already a move
  busy_streak = 0;  // the slowed probes were the old core's
  measure_issue_width();  // only ever raises it: a limit learned on a busy core may be too low
  return true;
}

bool ProbeRunner::Impl::check_ruler_window() {
  using detail::RulerWindowStep;
  const double ranked = quiet_wide_rate(cpu, pinned_cpu);
  const double first = clock->learned_wide_rate();
  spdlog::trace("CPU {}: the ruler's window learned a wide stream of {:.2f} adds a cycle; {:.2f} quiet at the ranking",
                pinned_cpu, first, ranked);
  if (detail::ruler_window_step(first, ranked, false) != RulerWindowStep::retake) return true;
  spdlog::debug("CPU {}: the ruler learned a wide stream of {:.2f} adds a cycle against {:.2f} at the ranking; taking "
                "its window again over {:.2f} s",
                pinned_cpu, first, ranked, ClockCalibrator::kLongRatioWindowSeconds);
  const ClockCalibrator::Learned was = clock->relearn();
  clock->set_ratio_window(ClockCalibrator::kLongRatioWindowSeconds);
  const auto window_start = std::chrono::steady_clock::now();
  const ClockSample s = clock->warm_up();
  const double window_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - window_start).count();
  clock->set_ratio_window(ClockCalibrator::kRatioWindowSeconds);
  const double second = s.ghz > 0 ? clock->learned_wide_rate() : 0.0;
  if (s.ghz > 0) note_calibration(s);
  if (detail::ruler_window_step(second, ranked, true) == RulerWindowStep::keep) return true;
  // The first window's lessons rather than none where the second learned nothing (its chain-side ratios,
  // from a shared window too, stand: the wide ratio below now marks the shared samples, and a runner
  // just started moves away).
  if (second <= 0) clock->restore(was);
  clock->assume_wide_rate(ranked);
  spdlog::info("CPU {}: its wide reference stream ran at {} over {:.2f} s, against {:.2f} adds a cycle on a quiet "
               "core of its kind at the ranking: something runs beside it (its other hardware thread, or the host); "
               "its samples are judged against the ranking's rate, so they read as slowed",
               pinned_cpu, second > 0 ? fmt::format("{:.2f} adds a cycle", second) : std::string("no confirmed rate"),
               window_seconds, ranked);
  return false;
}

bool ProbeRunner::move_to(int cpu, std::string* error) {
  if (cpu == impl_->pinned_cpu) return true;
  if (impl_->options.cpu >= 0) {
    if (error) *error = fmt::format("the runner was pinned to CPU {} by hand (--cpu)", impl_->options.cpu);
    return false;
  }
  return impl_->repin(cpu, error);
}

}  // namespace peakprobe
