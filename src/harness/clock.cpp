#include "harness/clock.hpp"

#include "asm/target.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include <spdlog/spdlog.h>

#include "harness/stats.hpp"
#include "harness/timing.hpp"

namespace peakprobe {

namespace {
constexpr int kShortCopies = 64;
constexpr int kRounds = 7;
// At most this many tries in the first calibration's window (ClockCalibrator::kRatioWindowSeconds),
// and how many other tries must confirm the best ratio among that many (two odd tries among
// thousands can agree by chance).
constexpr int kMaxFirstTries = 4000;  // per kRatioWindowSeconds of window
constexpr size_t kWindowConfirmations = 4;
}  // namespace

Expected<std::unique_ptr<ClockCalibrator>> ClockCalibrator::create(const CycleCounter& counter, double tsc_hz,
                                                                   const CpuInfo& cpu) {
  const isa::Target& target = isa::host_target();
  const isa::Target::RulerForms forms = target.ruler_forms();
  auto form = target.probe_form(forms.one_cycle, cpu);
  if (!form) return make_error(form.error());
  auto plan = form.value()->plan_latency("-");
  if (!plan) return make_error(plan.error());
  const isa::StreamHandle& chain = plan.value();
  std::unique_ptr<ClockCalibrator> c(new ClockCalibrator(counter, tsc_hz));
  const isa::PageAlignedCode same_place_every_time;  // (isa::PageAlignedCode says why)
  auto s = chain->compile(kShortCopies);
  auto l = chain->compile(2 * kShortCopies);
  if (!s) return make_error(s.error());
  if (!l) return make_error(l.error());
  c->short_ = std::move(s.value());
  c->long_ = std::move(l.value());
  if (!c->buffer_.ok()) return make_error("cannot map the probe buffer");
  const isa::BufferFill fill = chain->prepare(c->consts_, "-");
  c->buffer_.fill(fill.pattern, fill.chase_bits, fill.chase_byteswap);
  // The wide reference: every register the planner can give the add, each its own chain.
  const int k = form.value()->max_chains();
  auto wide = form.value()->plan_throughput(k, "-");
  if (!wide) return make_error(wide.error());
  const int copies = std::max(1, kShortCopies / k);
  auto ws = wide.value()->compile(copies);
  auto wl = wide.value()->compile(2 * copies);
  if (!ws) return make_error(ws.error());
  if (!wl) return make_error(wl.error());
  c->wide_short_ = std::move(ws.value());
  c->wide_long_ = std::move(wl.value());
  c->wide_short_units_ = double(copies * wide.value()->measured_per_copy());
  c->wide_long_units_ = 2 * c->wide_short_units_;
  auto slow_form = target.probe_form(forms.multi_cycle, cpu);
  if (!slow_form) return make_error(slow_form.error());
  auto slow_plan = slow_form.value()->plan_latency("-");
  if (!slow_plan) return make_error(slow_plan.error());
  auto slow = slow_plan.value()->compile(2 * kShortCopies);
  if (!slow) return make_error(slow.error());
  c->slow_ = std::move(slow.value());
  c->ruler_.slow = c->slow_.fn();
  c->ruler_.chain = c->long_.fn();
  c->ruler_.wide = c->wide_long_.fn();
  c->ruler_.buffer = c->buffer_.data();
  c->ruler_.consts = &c->consts_;
  return c;
}

ClockSample ClockCalibrator::measure(int rounds, bool clock_only) {
  if (rounds <= 0) rounds = kRounds;
  // Several short rounds; each round's estimate comes from its best calls (an interrupt or a stolen
  // time slice only ever adds time), and the clock is the median across rounds, so one disturbed
  // round cannot move it.
  TimingBudget budget;
  budget.target_call_ticks = 20000;
  budget.min_samples = 4;
  budget.max_samples = 8;
  budget.max_ticks = 6e5;
  std::vector<double> tpc, tsc_per_cycle, fixed, iters;
  for (int round = 0; round < rounds; ++round) {
    PairTiming t;
    std::string err;
    if (!time_pair(short_.fn(), long_.fn(), kShortCopies, 2 * kShortCopies, buffer_.data(), &consts_, counter_,
                   budget, t, err))
      return ClockSample{};
    tpc.push_back(t.per_unit.min);
    tsc_per_cycle.push_back(t.tsc_per_unit_min);
    fixed.push_back(std::max(0.0, 2 * t.short_min_ticks - t.long_min_ticks));
    iters.push_back(double(t.iterations));
  }
  ClockSample s;
  s.ticks_per_cycle = median(tpc);
  // The ruler's calls last about a third of a probe call: enough to read the clock, cheap to repeat.
  // Sized once: the wide/chain ratio that judges contention is only comparable at fixed lengths.
  if (ruler_.chain_iters == 0) {
    ruler_.chain_iters = std::max<uint64_t>(1, uint64_t(median(iters) * 0.4));
    // The same number of instructions as a chain call: about three times as long on most cores,
    // enough that the TSC's steps do not blur the ratio.
    ruler_.slow_iters = ruler_.chain_iters;
  }
  ruler_.chain_units = 2.0 * kShortCopies * double(ruler_.chain_iters);
  // Call overhead is a few hundred cycles; a larger estimate is a disturbed pair, not overhead.
  ruler_.chain_fixed_ticks = std::min(median(fixed), 0.03 * ruler_.chain_units * s.ticks_per_cycle);
  // The wide reference is sized once, like the chain, from one timed pair of its own.
  if (ruler_.wide_iters == 0 && s.ticks_per_cycle > 0) {
    PairTiming w;
    std::string err;
    if (time_pair(wide_short_.fn(), wide_long_.fn(), wide_short_units_, wide_long_units_, buffer_.data(), &consts_,
                  counter_, budget, w, err) &&
        w.per_unit.min > 0) {
      ruler_.wide_iters = std::max<uint64_t>(1, uint64_t(double(w.iterations) * 0.4));
      ruler_.wide_units = wide_long_units_ * double(ruler_.wide_iters);
    }
  }
  if (ruler_.wide_iters > 0 && !clock_only) {
    // The undisturbed ratios of the reference calls: a few tries, each the three calls back to back
    // as time_pair takes them (each warmed by an untimed call).
    struct Try {
      double chain = 0, slow = 0, wide = 0;  // ticks of each whole call
      double chain_half = 0;  // the chain of half the copies at the same iterations (the fixed cost below)
    };
    std::vector<Try> tries;
    // The first calibration sets the undisturbed wide/chain ratio for the whole run, so it takes its
    // tries over a window long enough to meet a quiet moment (kRatioWindowSeconds), not 7 tries back
    // to back (about 0.1 ms). On a Zen 3 VM the host's other hardware thread ran the wide stream at
    // 2.0-3.5 adds a cycle for stretches of 100 ms to a second, with quiet moments (3.9) between
    // within most 20 ms; 7 tries taken inside such a stretch set a ratio 30% above the quiet one,
    // every slowed sample of the run then looked undisturbed, and the 1-cycle add stream came out `ok` at
    // 0.28-0.31 cycles (its 4 ALUs: 0.25) in 6 of 25 runs.
    // Once only: a window that found no confirmed ratio does not run again at every later calibration
    // (those follow a probe's code, which the ratio must not be learned after).
    const bool first = ruler_.best_wide_ratio <= 0 && learn_ratio_ && !window_taken_;
    if (first) window_taken_ = true;
    const uint64_t window_start = tsc_now();
    const double window_ticks = first ? ratio_window_seconds_ * tsc_hz_ : 0.0;
    // The cap on tries grows with the window, so that a longer window lasts as long as it says (a try is
    // about 15 us on the Zen 3 VM: 4000 end a window after some 60 ms).
    const int max_tries = int(kMaxFirstTries * std::max(1.0, ratio_window_seconds_ / kRatioWindowSeconds));
    for (int i = 0; i < 7 || (double(tsc_now() - window_start) < window_ticks && i < max_tries); ++i) {
      Try t;
      ruler_.chain(1, ruler_.buffer, ruler_.consts);
      uint64_t t0 = counter_.now();
      ruler_.chain(ruler_.chain_iters, ruler_.buffer, ruler_.consts);
      t.chain = double(counter_.now() - t0);
      // Right after the whole chain call (already warm: the same code, half the copies), before the
      // multi-cycle call, which then follows an add chain as before.
      t0 = counter_.now();
      short_.fn()(ruler_.chain_iters, ruler_.buffer, ruler_.consts);
      t.chain_half = double(counter_.now() - t0);
      ruler_.slow(1, ruler_.buffer, ruler_.consts);
      t0 = counter_.now();
      ruler_.slow(ruler_.slow_iters, ruler_.buffer, ruler_.consts);
      t.slow = double(counter_.now() - t0);
      ruler_.wide(1, ruler_.buffer, ruler_.consts);
      t0 = counter_.now();
      ruler_.wide(ruler_.wide_iters, ruler_.buffer, ruler_.consts);
      t.wide = double(counter_.now() - t0);
      tries.push_back(t);
    }
    // What a whole chain call takes beyond its adds: its call, set-up and timer, and the loop's own
    // cost per iteration, which an N/2N difference cancels but a single call does not (about a cycle
    // per iteration of 128 adds on Zen 3: the ruler read 0.6% slow before). Each try times the chain
    // of half the copies at the same iterations right after the whole one, so the clock of that
    // moment cancels: a = i(64 c + L) + d and b = i(128 c + L) + d give 2a - b = iL + d.
    // Until 2026-11-28 the cost was the whole call less its adds at the clock the rounds measured a
    // moment before: that also took in how far the clock moved between them (1% of a call is about
    // 90 ticks), single calibrations of one process read 49-256 ticks on the Zen 4 VM, and the probe
    // after one that read 148 gave every figure 1-1.3% high (a 4-cycle FMA chain at 4.05). The median
    // of the tries, since a disturbance only adds time to one call or the other; then the median of
    // the last calibrations' (kFixedCostHistory): the cost belongs to the code, not to the moment.
    // Kept in core cycles, the code's own measure, and converted at this calibration's clock.
    std::vector<double> extra;
    for (const Try& t : tries) extra.push_back(2 * t.chain_half - t.chain);
    const double this_cost = std::clamp(median(extra), 0.0, 0.03 * ruler_.chain_units * s.ticks_per_cycle);
    if (s.ticks_per_cycle > 0) {
      fixed_cost_cycles_.push_back(this_cost / s.ticks_per_cycle);
      if (fixed_cost_cycles_.size() > kFixedCostHistory) fixed_cost_cycles_.erase(fixed_cost_cycles_.begin());
      ruler_.chain_fixed_ticks = median(fixed_cost_cycles_) * s.ticks_per_cycle;
    }
    // A chain call that was interrupted or preempted would make the wide stream look fast.
    const double expected = ruler_.chain_units * s.ticks_per_cycle + ruler_.chain_fixed_ticks;
    std::erase_if(tries, [&](const Try& t) { return t.chain <= 0 || t.chain > expected * 1.02; });
    std::vector<double> ratios;
    for (const Try& t : tries) ratios.push_back(t.wide / t.chain);
    // The best ratio that a second try confirms: one try whose chain call was slowed within the 2%
    // let through, or whose wide call was timed wrongly, once set 0.69 against an undisturbed 1.02
    // on a Zen 3 VM and left every later probe of the run looking slowed.
    const size_t confirmations = ratios.size() > 50 ? kWindowConfirmations : 1;
    double confirmed = confirmed_min(ratios, 0.01, confirmations);
    if (confirmed <= 0 && confirmations > 1) confirmed = confirmed_min(ratios, 0.01);
    const double best_ratio = confirmed > 0 ? confirmed : 1e300;
    spdlog::trace("ruler: chain {} x {} adds, wide {} x {}, best wide/chain ratio {} of {} tries (so far {:.4f}); "
                  "clock {:.4f} ticks/cycle, chain call fixed cost {:.0f} ticks (this calibration's estimate {:.0f})",
                  ruler_.chain_iters, 2 * kShortCopies, ruler_.wide_iters, wide_long_units_,
                  best_ratio < 1e300 ? fmt::format("{:.4f}", best_ratio) : "none", ratios.size(), ruler_.best_wide_ratio,
                  s.ticks_per_cycle, ruler_.chain_fixed_ticks, this_cost);
    // Only the first calibration sets the undisturbed ratio; after that the timings teach it, from
    // their own samples (time_pair). A calibration runs the references back to back, a timing runs
    // them after the probe's code, and the wide stream's rate can depend on what ran before it: on an
    // Emerald Rapids VM, calibrations after 512-bit FMA code read 0.61 for the rest of the run (1.01
    // before it) while the timings' own samples stayed at 1.02-1.06, so a ratio learned there left
    // every later sample looking 60-70% slowed.
    if (best_ratio < 1e300 && ruler_.best_wide_ratio <= 0 && learn_ratio_) {
      ruler_.best_wide_ratio = best_ratio;
      ruler_.wide_ratio_floor = best_ratio * (1 - kRulerCleanLimit / 2);
    }
    // The add/multi-cycle ratio only from tries whose wide stream ran undisturbed: a busy sibling can slow
    // the multi-cycle call too, which would make the add chain look faster than it can run.
    // Nor from a multi-cycle call slower than the fastest of its 3 neighbours on either side (all of
    // the 7 tries of a later calibration; nearby ones of a window, over which the clock may move).
    std::vector<double> slow_calls;
    for (const Try& t : tries) slow_calls.push_back(t.slow);
    const std::vector<bool> slow_fine = multi_cycle_calls_fine(slow_calls, std::min<size_t>(slow_calls.size(), 3));
    // (The search for the multi-cycle chain's own modes looks at every such try, slow ones included:
    // they are what it looks for.)
    std::vector<double> chain_ratios, chain_ticks, fine_ratios, quietest_ratios;
    for (size_t i = 0; i < tries.size(); ++i)
      if (const Try& t = tries[i];
          ruler_.best_wide_ratio > 0 && ratios[i] <= ruler_.best_wide_ratio * (1 + kRulerCleanLimit)) {
        chain_ratios.push_back(t.chain / t.slow);
        chain_ticks.push_back(t.chain);
        if (slow_fine[i]) fine_ratios.push_back(t.chain / t.slow);
        if (slow_fine[i] && ratios[i] <= ruler_.best_wide_ratio * 1.01) quietest_ratios.push_back(t.chain / t.slow);
      }
    if (!ruler_.slow_unsteady && multi_cycle_chain_unsteady(chain_ticks, chain_ratios)) {
      ruler_.slow_unsteady = true;
      // Its slow mode only lowers the ratio; the typical ratio still marks an undisturbed add chain.
      ruler_.best_chain_ratio = median(chain_ratios);
      spdlog::debug("ruler: the multi-cycle chain moves on its own on this core (add/multi-cycle ratios {:.4f}-{:.4f}, add "
                    "chain steady); the add chain alone is the clock, judged against the typical ratio {:.4f}",
                    percentile(chain_ratios, 0.1), percentile(chain_ratios, 0.9), ruler_.best_chain_ratio);
    }
    // Once the multi-cycle chain is known to move on its own, its faster moments are its own slow mode
    // (a lower ratio), not a faster add chain: the typical ratio learned above stays the reference.
    double chain_ratio = 0.0;
    if (!ruler_.slow_unsteady) {
      // A window's thousand tries: the low quartile of the quietest moments' ratios (the wide stream
      // within 1% of its best), not the least of all. Over a window the least was a stretch in which
      // the host's other thread slowed the multi-cycle chain (its calls alike, so their neighbours
      // passed them): the clock then read up to 3% fast for the whole run, and on the Zen 3 VM one
      // run of 20 read a 4-cycle FMA, a 1-cycle add and a 3-cycle multiply chain 2.6-3.3% slow.
      // Seven tries have too few such moments.
      if (quietest_ratios.size() >= 20) chain_ratio = percentile(quietest_ratios, 0.25);
      else chain_ratio = confirmed_min(fine_ratios, 0.005);
    }
    spdlog::trace("ruler: multi-cycle chain {} x {}, best add/multi-cycle chain ratio {:.4f} (so far {:.4f})", ruler_.slow_iters,
                  2 * kShortCopies, chain_ratio, ruler_.best_chain_ratio);
    if (chain_ratio > 0) {
      if (ruler_.chain_ratio_floor <= 0) ruler_.chain_ratio_floor = chain_ratio * (1 - kRulerSteadyChainLimit / 2);
      ruler_.teach_chain_ratio(chain_ratio);
    }
  }
  const double tsc_cycle = median(tsc_per_cycle);
  s.ghz = tsc_cycle > 0 ? tsc_hz_ / tsc_cycle / 1e9 : 0.0;
  Stats per_round = summarize(tpc);
  s.spread = per_round.min > 0 ? (per_round.max - per_round.min) / per_round.min : 0.0;
  return s;
}

ClockReading clock_reading(const char* source, const ClockSample& before, const ClockSample& after) {
  ClockReading c;
  c.source = source;
  c.ghz = 0.5 * (before.ghz + after.ghz);
  c.ghz_before = before.ghz;
  c.ghz_after = after.ghz;
  c.drift = before.ghz > 0 ? std::fabs(after.ghz - before.ghz) / before.ghz : 0.0;
  return c;
}

void ClockCalibrator::assume_wide_rate(double adds_per_cycle) {
  const double ratio = ruler_.ratio_for_wide_rate(adds_per_cycle);
  if (ratio <= 0) return;
  ruler_.best_wide_ratio = ratio;
  ruler_.wide_ratio_floor = ratio * (1 - kRulerCleanLimit / 2);
}

ClockCalibrator::Learned ClockCalibrator::relearn() {
  const Learned was{ruler_.best_wide_ratio, ruler_.best_chain_ratio, ruler_.wide_ratio_floor,
                    ruler_.chain_ratio_floor, ruler_.slow_unsteady,   window_taken_,
                    fixed_cost_cycles_};
  restore(Learned{});
  return was;
}

void ClockCalibrator::restore(const Learned& l) {
  ruler_.best_wide_ratio = l.best_wide_ratio;
  ruler_.best_chain_ratio = l.best_chain_ratio;
  ruler_.wide_ratio_floor = l.wide_ratio_floor;
  ruler_.chain_ratio_floor = l.chain_ratio_floor;
  ruler_.slow_unsteady = l.slow_unsteady;
  window_taken_ = l.window_taken;
  fixed_cost_cycles_ = l.fixed_cost_cycles;
}

ClockSample ClockCalibrator::warm_up(double max_seconds) {
  // The undisturbed wide/chain ratio is learned once the clock has settled, not while it ramps: in
  // a window of tries the later call of each try (the wide one) then runs at a higher clock than the
  // chain before it. On the Zen 3 VM a window taken at the start (0.94 TSC ticks a cycle against
  // 0.75 once warm) set the ratio 4.5% low, and most samples of the run then looked slowed.
  learn_ratio_ = false;
  const uint64_t start = tsc_now();
  ClockSample prev = measure();
  while (double(tsc_now() - start) / tsc_hz_ < max_seconds) {
    ClockSample cur = measure();
    const bool settled = prev.ghz > 0 && std::fabs(cur.ghz - prev.ghz) / prev.ghz < 0.01;
    prev = cur;
    if (settled) break;
  }
  learn_ratio_ = true;
  if (ruler_.best_wide_ratio > 0) return prev;
  const ClockSample learned = measure();
  return learned.ghz > 0 ? learned : prev;
}

}  // namespace peakprobe
