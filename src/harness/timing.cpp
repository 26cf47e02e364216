#include "harness/timing.hpp"

#include <algorithm>
#include <vector>

#include "harness/signal_guard.hpp"
#include "harness/stats.hpp"

namespace peakprobe {
namespace {

struct CallTime {
  uint64_t ticks = 0, tsc = 0;
};

CallTime time_call(x86::ProbeFn fn, uint64_t iters, void* buffer, const x86::ProbeConstants* c,
                   const CycleCounter& counter) {
  const uint64_t t0 = tsc_now();
  const uint64_t c0 = counter.now();
  fn(iters, buffer, c);
  const uint64_t c1 = counter.now();
  const uint64_t t1 = tsc_now();
  return {c1 - c0, t1 - t0};
}

}  // namespace

bool time_pair(x86::ProbeFn short_fn, x86::ProbeFn long_fn, double units_short, double units_long,
               void* buffer, const x86::ProbeConstants* consts, const CycleCounter& counter,
               const TimingBudget& budget, PairTiming& out, std::string& error) {
  return run_guarded(
      [&] {
        // Size the call: iterations grow until the long function runs for the target time.
        uint64_t iters = 4;
        for (int i = 0; i < 24; ++i) {
          CallTime t = time_call(long_fn, iters, buffer, consts, counter);
          if (double(t.ticks) >= budget.target_call_ticks) break;
          const double scale = t.ticks ? budget.target_call_ticks / double(t.ticks) : 8.0;
          iters = std::max<uint64_t>(iters + 1, uint64_t(double(iters) * std::clamp(scale * 1.1, 1.1, 8.0)));
        }
        out.iterations = iters;
        std::vector<double> a, b, ta, tb;
        double spent = 0, best_a = 1e300, best_b = 1e300;
        int since_improved = 0;
        for (int n = 0; n < budget.max_samples; ++n) {
          CallTime sa = time_call(short_fn, iters, buffer, consts, counter);
          CallTime sb = time_call(long_fn, iters, buffer, consts, counter);
          a.push_back(double(sa.ticks));
          b.push_back(double(sb.ticks));
          ta.push_back(double(sa.tsc));
          tb.push_back(double(sb.tsc));
          spent += double(sa.tsc + sb.tsc);
          // Noise only adds time: keep sampling while the minima still improve.
          const bool improved = a.back() < best_a * 0.998 || b.back() < best_b * 0.998;
          best_a = std::min(best_a, a.back());
          best_b = std::min(best_b, b.back());
          since_improved = improved ? 0 : since_improved + 1;
          if (n + 1 >= budget.min_samples && since_improved >= 6) break;
          if (spent > budget.max_ticks && n + 1 >= 3) break;
        }
        // Each long call minus the best short call: the short function's best time stands for the
        // fixed cost (call, loop set-up, timer), so every sample is one estimate of the per-unit cost
        // and min <= median <= max holds by construction.
        const double units = (units_long - units_short) * double(iters);
        const double base = best_a;
        std::vector<double> per_unit;
        for (double t : b) per_unit.push_back((t - base) / units);
        out.per_unit = summarize(per_unit);
        out.overhead_fraction = best_b > 0 ? (2 * base - best_b) / best_b : 0.0;
        out.tsc_per_unit_median = (median(tb) - median(ta)) / units;
        out.tsc_per_unit_min = (*std::min_element(tb.begin(), tb.end()) - *std::min_element(ta.begin(), ta.end())) / units;
      },
      error);
}

}  // namespace peakprobe
