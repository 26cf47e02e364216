#include "harness/timing.hpp"

#include <algorithm>
#include <vector>

#include "harness/signal_guard.hpp"
#include "harness/stats.hpp"
#include <spdlog/spdlog.h>

namespace peakprobe {
namespace {

struct CallTime {
  uint64_t ticks = 0, tsc = 0;
};

CallTime time_call(isa::ProbeFn fn, uint64_t iters, void* buffer, const isa::ProbeConstants* c,
                   const CycleCounter& counter) {
  const uint64_t t0 = tsc_now();
  const uint64_t c0 = counter.now();
  fn(iters, buffer, c);
  const uint64_t c1 = counter.now();
  const uint64_t t1 = tsc_now();
  return {c1 - c0, t1 - t0};
}

// Minimum of v[i-h .. i+h] (clipped at the ends): the clock of sample i's moment. Nothing makes a
// dependent add chain faster than one add per cycle, while an interrupt or a busy sibling thread
// makes it slower, so the fastest nearby chain is the clock. The core clock moves over milliseconds;
// a sample takes tens of microseconds.
std::vector<double> local_min(const std::vector<double>& v, size_t h) {
  std::vector<double> out(v.size());
  for (size_t i = 0; i < v.size(); ++i) {
    const size_t lo = i >= h ? i - h : 0, hi = std::min(v.size(), i + h + 1);
    out[i] = *std::min_element(v.begin() + long(lo), v.begin() + long(hi));
  }
  return out;
}

// A paired chain call this much slower than the fastest chain call around it was interrupted or
// preempted: a stolen share of the core slows the chain and the wide stream alike, which their ratio
// cannot see. Judged against its neighbours, not against the calibration before the probe: the
// clock itself moves by several percent within a probe (Zen 3 VM: 1.7% within one `inst` probe;
// Zen 5: 3.85-4.16 GHz), and a slower clock is not a disturbance (each sample is converted with
// the clock of its own moment).
constexpr double kChainDisturbedLimit = 0.02;
constexpr size_t kChainNeighbours = 3;

// The two ratios of a sample's reference calls within their limits of the best this core has shown:
// the wide stream not slowed beyond the chain, the add chain not slowed beyond the multi-cycle chain.
bool references_undisturbed(const Ruler& ruler, double wide_ratio, double chain_ratio) {
  return wide_ratio <= ruler.best_wide_ratio * (1 + kRulerCleanLimit) &&
         chain_ratio <= ruler.best_chain_ratio * (1 + kRulerChainLimit);
}

double relative_spread(const std::vector<double>& v) {
  const double lo = percentile(v, 0.1);
  return lo > 0 ? percentile(v, 0.9) / lo - 1 : 0.0;
}

}  // namespace

double lower_best_ratio(double best, double seen, double step) {
  if (!(seen > 0)) return best;
  if (!(best > 0)) return seen;
  return std::min(best, std::max(seen, best * (1 - step)));
}

double fastest_calls_at_fastest_clock(double fastest_ticks_per_unit, const std::vector<double>& sample_tpc,
                                      size_t* index) {
  size_t best = sample_tpc.size();
  for (size_t i = 0; i < sample_tpc.size(); ++i)
    if (sample_tpc[i] > 0 && (best == sample_tpc.size() || sample_tpc[i] < sample_tpc[best])) best = i;
  if (index) *index = best;
  return best < sample_tpc.size() ? fastest_ticks_per_unit / sample_tpc[best] : 0.0;
}

bool multi_cycle_chain_unsteady(const std::vector<double>& add_tpc, const std::vector<double>& chain_ratio) {
  const size_t n = add_tpc.size();
  if (n < 6 || n != chain_ratio.size() || relative_spread(add_tpc) > kRulerSteadyChainLimit) return false;
  // The ratios well below the typical one: the multi-cycle chain slower than usual beside a steady
  // add chain. An interrupt or a busy sibling does that now and then by varying amounts; a mode of
  // the chain itself does it often and by the same amount each time.
  const double typical = median(chain_ratio);
  std::vector<double> low;
  for (double r : chain_ratio)
    if (r < typical * (1 - kRulerChainLimit)) low.push_back(r);
  if (low.size() < std::max<size_t>(2, (n + 4) / 5)) return false;
  const auto [lo, hi] = std::minmax_element(low.begin(), low.end());
  return *hi / *lo - 1 <= kRulerSteadyChainLimit;
}

void Ruler::teach_wide_ratio(double seen) const {
  best_wide_ratio = std::max(lower_best_ratio(best_wide_ratio, seen), wide_ratio_floor);
}

double Ruler::wide_rate(double wide_ratio) const {
  // Each call's fixed cost (a few hundred cycles of tens of thousands) is left in: it shifts the rate by
  // well under the gaps the rate is compared with (see detail::ruler_window_step).
  return wide_ratio > 0 && chain_units > 0 && wide_units > 0 ? wide_units / chain_units / wide_ratio : 0.0;
}

double Ruler::ratio_for_wide_rate(double adds_per_cycle) const {
  return adds_per_cycle > 0 && chain_units > 0 && wide_units > 0 ? wide_units / chain_units / adds_per_cycle : 0.0;
}

void Ruler::teach_chain_ratio(double seen) const {
  best_chain_ratio = std::max(lower_best_ratio(best_chain_ratio, seen, kRulerSteadyChainLimit), chain_ratio_floor);
}

std::vector<bool> multi_cycle_calls_fine(const std::vector<double>& call_ticks, size_t neighbours) {
  const std::vector<double> near = local_min(call_ticks, neighbours);
  std::vector<bool> fine(call_ticks.size());
  for (size_t i = 0; i < call_ticks.size(); ++i)
    fine[i] = call_ticks[i] > 0 && call_ticks[i] <= near[i] * (1 + kRulerSteadyChainLimit);
  return fine;
}

double paired_ticks_per_cycle(double add_chain_tpc, double multi_cycle_estimate_tpc) {
  return std::max(std::min(add_chain_tpc, multi_cycle_estimate_tpc), add_chain_tpc / (1 + kRulerChainLimit));
}

bool time_pair(isa::ProbeFn short_fn, isa::ProbeFn long_fn, double units_short, double units_long,
               void* buffer, const isa::ProbeConstants* consts, const CycleCounter& counter,
               const TimingBudget& budget, PairTiming& out, std::string& error, const Ruler* ruler,
               double tsc_hz) {
  const bool paired = ruler && ruler->ready();
  return run_guarded(
      [&] {
        // Size the call: iterations grow until the long function runs for the target time.
        uint64_t iters = 4;
        for (int i = 0; i < 24; ++i) {
          CallTime t = time_call(long_fn, iters, buffer, consts, counter);
          if (double(t.ticks) >= budget.target_call_ticks) break;
          // The timestamp bounds it too: a cycle counter that stopped advancing reads 0 at any length,
          // and growing by 8 each step would reach calls of 2^70 iterations.
          if (double(t.tsc) >= 64 * budget.target_call_ticks) break;
          const double scale = t.ticks ? budget.target_call_ticks / double(t.ticks) : 8.0;
          iters = std::max<uint64_t>(iters + 1, uint64_t(double(iters) * std::clamp(scale * 1.1, 1.1, 8.0)));
        }
        out.iterations = iters;
        const double units = (units_long - units_short) * double(iters);
        std::vector<double> a, b, ta, tb;
        // Paired references, per sample: the clock, the add chain's own reading, TSC ticks per counter
        // tick, and the two ratios that judge the moment.
        std::vector<double> chain_tpc, raw_chain_tpc, tsc_per_tick, wide_ratio, chain_ratio, slow_ticks;
        double spent = 0, best_a = 1e300, best_b = 1e300, best_x = 1e300;
        int since_improved = 0, clean = 0;
        for (int n = 0; n < budget.max_samples; ++n) {
          double x = 0;  // this sample's per-unit estimate, for the stopping rule only
          bool references_clean = false;  // counted clean once its calls are ordered too (below)
          if (paired) {
            // The references run right before the pair: the same moment of the clock, the same
            // state of the sibling hardware thread.
            // Each reference runs once untimed first: after the probe's code its entry is cold (i-cache,
            // op cache, predictors), a cost the calibration, which calls it back to back, did not see
            // and would charge to the clock (about 1% of a call on Zen 3).
            ruler->chain(1, ruler->buffer, ruler->consts);
            CallTime rc = time_call(ruler->chain, ruler->chain_iters, ruler->buffer, ruler->consts, counter);
            ruler->slow(1, ruler->buffer, ruler->consts);
            CallTime rs = time_call(ruler->slow, ruler->slow_iters, ruler->buffer, ruler->consts, counter);
            ruler->wide(1, ruler->buffer, ruler->consts);
            CallTime rw = time_call(ruler->wide, ruler->wide_iters, ruler->buffer, ruler->consts, counter);
            // The clock of this moment: the add chain, or what the multi-cycle chain says the add chain
            // would have taken undisturbed, whichever is faster, within bounds (paired_ticks_per_cycle).
            auto per_cycle = [&](double call_ticks) {
              return std::max(1e-9, (call_ticks - ruler->chain_fixed_ticks) / ruler->chain_units);
            };
            // The add chain's own call, for judging it: the multi-cycle estimate must not hide a
            // preempted chain call whose wide/chain ratio would then look impossibly good.
            raw_chain_tpc.push_back(per_cycle(double(rc.ticks)));
            const double slow_tpc = per_cycle(double(rs.ticks) * ruler->best_chain_ratio);
            // Counter ticks are TSC ticks unless the counter counts cycles: then the ratio is exactly
            // one. The chain call's TSC window also holds the counter reads (time_call), which a
            // whole-call ratio would charge to the clock: 0.8% low on a Zen 4 VM (a row at 3.663 GHz
            // where the calibration beside it read 3.694), and tens of percent with perf's read(2).
            // A cycle counter's ratio comes from the probe's own fastest calls after the samples.
            tsc_per_tick.push_back(1.0);
            chain_tpc.push_back(ruler->slow_unsteady ? raw_chain_tpc.back() : paired_ticks_per_cycle(raw_chain_tpc.back(), slow_tpc));
            slow_ticks.push_back(double(rs.ticks));
            // Wide call over chain call, both whole: a ratio of two adjacent moments, no overhead model.
            wide_ratio.push_back(rc.ticks ? double(rw.ticks) / double(rc.ticks) : 1e9);
            chain_ratio.push_back(rs.ticks ? double(rc.ticks) / double(rs.ticks) : 1e9);
            // While sampling, the neighbours are the chain calls just taken (the final judgement below
            // also looks at the ones after).
            const size_t first =
                raw_chain_tpc.size() > kChainNeighbours + 1 ? raw_chain_tpc.size() - kChainNeighbours - 1 : 0;
            const double near = *std::min_element(raw_chain_tpc.begin() + long(first), raw_chain_tpc.end());
            const bool chain_fine = raw_chain_tpc.back() <= near * (1 + kChainDisturbedLimit);
            references_clean = chain_fine && references_undisturbed(*ruler, wide_ratio.back(), chain_ratio.back());
            spent += double(rc.tsc + rw.tsc + rs.tsc);
          }
          // After the references (scalar adds), the probe's own code runs once untimed before its
          // short call: a core that powers its wide vector units down when idle runs the first
          // microseconds of vector code slowly, a cost that landed in the short call alone and made
          // every long-minus-short difference short. On an Emerald Rapids VM 256- and 512-bit FMAs
          // read 0.39-0.48 cycles from their samples (the hardware does 0.5) and 0.50 from their
          // fastest calls.
          if (paired) short_fn(iters, buffer, consts);
          CallTime sa = time_call(short_fn, iters, buffer, consts, counter);
          CallTime sb = time_call(long_fn, iters, buffer, consts, counter);
          a.push_back(double(sa.ticks));
          b.push_back(double(sb.ticks));
          ta.push_back(double(sa.tsc));
          tb.push_back(double(sb.tsc));
          spent += double(sa.tsc + sb.tsc);
          if (references_clean && b.back() > a.back()) ++clean;  // as the judgement below counts it
          x = paired ? (b.back() - a.back()) / units / chain_tpc.back() : b.back();
          // Noise only adds time: keep sampling while the minima still improve.
          const bool improved = a.back() < best_a * 0.998 || b.back() < best_b * 0.998 || x < best_x * 0.998;
          best_a = std::min(best_a, a.back());
          best_b = std::min(best_b, b.back());
          best_x = std::min(best_x, x);
          since_improved = improved ? 0 : since_improved + 1;
          const bool enough_clean = !paired || clean >= budget.min_clean_samples;
          if (n + 1 >= budget.min_samples && since_improved >= 6 && enough_clean) break;
          if (spent > budget.max_ticks && n + 1 >= 3) break;
        }
        // Each long call minus the best short call: the short function's best time stands for the
        // fixed cost (call, loop set-up, timer), so every sample is one estimate of the per-unit cost
        // and min <= median <= max holds by construction.
        const double base = best_a;
        std::vector<double> per_unit;
        for (double t : b) per_unit.push_back((t - base) / units);
        out.per_unit = summarize(per_unit);
        out.overhead_fraction = best_b > 0 ? (2 * base - best_b) / best_b : 0.0;
        out.short_min_ticks = best_a;
        out.long_min_ticks = best_b;
        out.tsc_per_unit_median = (median(tb) - median(ta)) / units;
        out.tsc_per_unit_min = (*std::min_element(tb.begin(), tb.end()) - *std::min_element(ta.begin(), ta.end())) / units;
        out.fastest_ticks_per_unit = (best_b - base) / units;
        if (!paired) return;
        // A cycle counter's ticks against the TSC: the fastest long call minus the fastest short one
        // in both, so that the timer reads and the call, the same in each, cancel, and an interrupt
        // (time the TSC counts and a user-mode cycle counter does not) cannot move it, since it only
        // ever slows a call. One ratio for the timing: per sample, an interrupt in a short call would
        // lower it and the nearby minimum below would pick that.
        if (counter.counts_cycles() && best_b > best_a) {
          const double tsc_span = *std::min_element(tb.begin(), tb.end()) - *std::min_element(ta.begin(), ta.end());
          if (tsc_span > 0) std::fill(tsc_per_tick.begin(), tsc_per_tick.end(), tsc_span / (best_b - best_a));
        }

        // A faster moment than any seen before is the new undisturbed rate (a low percentile, so a
        // single odd sample cannot set it). A busy sibling slows the wide stream far more than the
        // chain (measured on Zen 3: chain +1-3%, wide +15-100%), so the ratio only rises with it.
        const std::vector<double> near = local_min(raw_chain_tpc, kChainNeighbours);
        std::vector<bool> chain_ok(raw_chain_tpc.size(), true);
        const std::vector<bool> slow_fine = multi_cycle_calls_fine(slow_ticks, kChainNeighbours);
        // chain_ratio_ok / add_ok: the moments the search for the multi-cycle chain's own modes looks
        // at (its slow calls included: they are what it looks for); chain_ratio_fine: those that may
        // teach the ratio.
        std::vector<double> ratio_ok, chain_ratio_ok, add_ok, chain_ratio_fine;
        for (size_t i = 0; i < raw_chain_tpc.size(); ++i) {
          // The sample's own chain call, not the nearby minimum: a preempted chain call must not
          // make its ratio look like a faster wide stream.
          chain_ok[i] = raw_chain_tpc[i] <= near[i] * (1 + kChainDisturbedLimit);
          if (chain_ok[i]) ratio_ok.push_back(wide_ratio[i]);
          // Only a moment whose wide stream ran undisturbed may teach the chain ratio: a busy sibling
          // can slow the multi-cycle call too, which would make the add chain look faster than it can run.
          // Nor a moment whose wide stream ran well *faster* than its undisturbed best: the references
          // are then in an odd state of their own (on a Sapphire Rapids-class VM, right after 512-bit
          // code: wide/chain 0.945 against 1.02, add/multi-cycle 0.30 against 0.334, for tens of
          // samples), not in the quiet one the ratio stands for.
          if (chain_ok[i] && wide_ratio[i] <= ruler->best_wide_ratio * (1 + kRulerCleanLimit)) {
            chain_ratio_ok.push_back(chain_ratio[i]);
            add_ok.push_back(raw_chain_tpc[i]);
            if (slow_fine[i] && wide_ratio[i] >= ruler->best_wide_ratio * (1 - kRulerCleanLimit))
              chain_ratio_fine.push_back(chain_ratio[i]);
          }
        }
        if (!ruler->slow_unsteady && multi_cycle_chain_unsteady(add_ok, chain_ratio_ok)) {
          ruler->slow_unsteady = true;
          // The chain's slow mode only lowers the ratio, so the typical ratio still tells an add chain
          // that a sibling slowed (which the wide/chain ratio cannot see when both slow alike).
          ruler->best_chain_ratio = median(chain_ratio_ok);
          spdlog::debug("ruler: the multi-cycle chain moves on its own on this core (add/multi-cycle ratios {:.4f}-{:.4f} while "
                        "the add chain held within {:.1f}%); the add chain alone is the clock from now on",
                        percentile(chain_ratio_ok, 0.1), percentile(chain_ratio_ok, 0.9), 100 * kRulerSteadyChainLimit);
          chain_tpc = raw_chain_tpc;
        }
        // Paired conversion: each call in core cycles at the clock of its own moment.
        const std::vector<double> tpc = local_min(chain_tpc, 2);
        std::vector<double> chain_tsc_tpc(chain_tpc.size());
        for (size_t i = 0; i < chain_tpc.size(); ++i) chain_tsc_tpc[i] = chain_tpc[i] * tsc_per_tick[i];
        const std::vector<double> tsc_tpc_local = local_min(chain_tsc_tpc, 2);
        // A low quartile of several samples, never one sample: a single odd pair would otherwise
        // set a rate no later sample reaches and leave every later probe looking slowed. (A confirmed
        // low quartile: with few samples a plain percentile is the minimum.) Not the 10th percentile:
        // on an Emerald Rapids VM two thirds of 3049 samples sat at 0.99, a few percent at 0.93-0.98,
        // and a timing with more of those taught 0.94, after which the steady 0.99 looked slowed.
        if (ratio_ok.size() >= 5) {
          ruler->teach_wide_ratio(std::max(percentile(ratio_ok, 0.25), confirmed_min(ratio_ok, 0.01)));
          if (chain_ratio_fine.size() >= 5 && !ruler->slow_unsteady)
            ruler->teach_chain_ratio(std::max(percentile(chain_ratio_fine, 0.1), confirmed_min(chain_ratio_fine, 0.005)));
        }
        for (size_t i = 0; i < tpc.size(); ++i)
          spdlog::trace("    sample {:2}: add chain {:.4f} clock {:.4f} local {:.4f} wide/chain {:.4f} (best {:.4f}) "
                        "chain/slow {:.4f} (best {:.4f}) probe {:.4f} ticks/unit {:.4f}",
                        i, raw_chain_tpc[i], chain_tpc[i], tpc[i], wide_ratio[i], ruler->best_wide_ratio,
                        chain_ratio[i], ruler->best_chain_ratio, (b[i] - a[i]) / units / tpc[i], (b[i] - a[i]) / units);
        std::vector<bool> ok(tpc.size());
        std::vector<double> slow;
        for (size_t i = 0; i < tpc.size(); ++i) {
          // A short call that took as long as its long call was itself disturbed, whatever the
          // references beside it say: its sample (long minus short) would be zero or negative, and a
          // scatter row once reported a sample of -22.6 cycles among its `ok` ones.
          const bool calls_ordered = b[i] > a[i];
          ok[i] = calls_ordered && chain_ok[i] && references_undisturbed(*ruler, wide_ratio[i], chain_ratio[i]);
          if (!ok[i] && calls_ordered)
            slow.push_back(std::max(wide_ratio[i] / ruler->best_wide_ratio, chain_ratio[i] / ruler->best_chain_ratio) - 1);
        }
        out.clean_samples = int(std::count(ok.begin(), ok.end(), true));
        out.slowed_samples = int(ok.size()) - out.clean_samples;
        out.slowdown = median(slow);
        // Too few undisturbed samples: convert them all (the caller mistrusts the result).
        const bool use_all = out.clean_samples < 3;
        // The figure: the fastest calls over the fastest clock of the undisturbed samples
        // (fastest_calls_at_fastest_clock). The references judge the moments around the probe's
        // calls, not the calls themselves: the host can take time from a probe call and not from the
        // references beside it, and nothing makes a call faster than the hardware. On a Sapphire
        // Rapids-class VM with a busy host, the median of the samples (each long call minus its own
        // short call at its moment's clock, the figure until then) read a 4-cycle 512-bit FMA chain
        // at 3.78-4.16 cycles over 12 runs, an add chain at 1.00-1.08 (it runs in two modes there)
        // and the FMA stream at 0.44-0.59 per layout, where the fastest calls read 3.99-4.02,
        // 0.995-1.007 and 0.493-0.514. Over the median clock instead, a 4-cycle chain once read 2.82
        // (its clock readings moved by 41% within the timing); each call at its own moment's clock,
        // fastest first, read an add chain at 0.92 (a stretch of slow reference readings); the
        // fastest call that a second one confirms within 0.5% took a slow mode for the figure when
        // the fast one showed once (an add chain at 1.074 where the fastest call read 1.005).
        // A few calls of a rare fast mode can still set the figure: the caller holds it to the
        // typical sample (kFastModeLimit). The samples (each long call minus its own short call at
        // its moment's clock) give that, and the spread (`cycles`).
        std::vector<double> adj, used_tpc, used_tsc, used_long, used_short;
        for (size_t i = 0; i < b.size(); ++i) {
          if (!use_all && !ok[i]) continue;
          adj.push_back((b[i] - a[i]) / tpc[i] / units);
          used_tpc.push_back(tpc[i]);
          used_tsc.push_back(tsc_tpc_local[i]);
          used_long.push_back(b[i]);
          used_short.push_back(a[i]);
        }
        out.paired = true;
        out.cycles = summarize(adj);
        // The fastest calls of the same samples whose clocks are read (a disturbed sample's clock is
        // unknown, so its calls cannot be matched to one; the first version took the fastest calls of
        // every sample and read a 4-cycle chain at 3.86 where these read 3.97). The code-length line
        // and the loop overhead see these same calls.
        out.short_min_ticks = *std::min_element(used_short.begin(), used_short.end());
        out.long_min_ticks = *std::min_element(used_long.begin(), used_long.end());
        out.fastest_ticks_per_unit = (out.long_min_ticks - out.short_min_ticks) / units;
        if (out.long_min_ticks > 0)
          out.overhead_fraction = (2 * out.short_min_ticks - out.long_min_ticks) / out.long_min_ticks;
        out.median_ticks_per_cycle = median(used_tpc);
        if (counter.counts_cycles()) {
          // Ticks are core cycles already: the clock cannot move in them, and the fastest of the
          // readings (about 1) would only pick their most favourable noise.
          out.ticks_per_cycle = out.median_ticks_per_cycle;
          out.value = out.ticks_per_cycle > 0 ? out.fastest_ticks_per_unit / out.ticks_per_cycle : 0.0;
          const double tsc_tpc = median(used_tsc);
          out.ghz = tsc_hz > 0 && tsc_tpc > 0 ? tsc_hz / tsc_tpc / 1e9 : 0.0;
        } else {
          size_t fastest = 0;
          out.value = fastest_calls_at_fastest_clock(out.fastest_ticks_per_unit, used_tpc, &fastest);
          out.ticks_per_cycle = fastest < used_tpc.size() ? used_tpc[fastest] : 0.0;
          const double tsc_tpc = fastest < used_tsc.size() ? used_tsc[fastest] : 0.0;  // smoothed like tpc
          out.ghz = tsc_hz > 0 && tsc_tpc > 0 ? tsc_hz / tsc_tpc / 1e9 : 0.0;
        }
        // The fastest long call no slower than the fastest short one: a timer glitch or a fast mode
        // of the long function. The samples' median stands in, and the row is doubted
        // (fast_mode_gap) rather than left to pass on it.
        out.fastest_not_positive = !(out.value > 0);
        if (out.fastest_not_positive) out.value = out.cycles.median;
      },
      error);
}

}  // namespace peakprobe
