#include "cpu/clock.hpp"

#include <cmath>

#include "asm/x86/inst_form.hpp"
#include "asm/x86/stream_plan.hpp"
#include "harness/timing.hpp"

namespace peakprobe {

namespace {
// Register-register add: an add with an immediate can run faster than one per cycle on some cores.
constexpr const char* kChainInst = "add r64, r64";
constexpr int kShortCopies = 64;
}  // namespace

Expected<std::unique_ptr<ClockCalibrator>> ClockCalibrator::create(const CycleCounter& counter, double tsc_hz,
                                                                   const x86::HostIsa& isa) {
  auto form = x86::resolve_inst(kChainInst);
  if (!form) return make_error(form.error());
  auto plan = x86::plan_latency(form.value(), isa, "-");
  if (!plan) return make_error(plan.error());
  std::unique_ptr<ClockCalibrator> c(new ClockCalibrator(counter, tsc_hz));
  auto s = x86::compile_stream(plan.value(), kShortCopies, isa);
  auto l = x86::compile_stream(plan.value(), 2 * kShortCopies, isa);
  if (!s) return make_error(s.error());
  if (!l) return make_error(l.error());
  c->short_ = std::move(s.value());
  c->long_ = std::move(l.value());
  x86::fill_constants(c->consts_, "-");
  if (!c->buffer_.ok()) return make_error("cannot map the probe buffer");
  return c;
}

ClockSample ClockCalibrator::measure() {
  TimingBudget budget;
  budget.target_call_ticks = 40000;
  budget.min_samples = 11;
  budget.max_samples = 31;
  budget.max_ticks = 4e6;
  PairTiming t;
  std::string err;
  ClockSample s;
  if (!time_pair(short_.fn(), long_.fn(), kShortCopies, 2 * kShortCopies, buffer_.data(), &consts_, counter_,
                 budget, t, err))
    return s;
  s.ticks_per_cycle = t.per_unit.median;
  s.ghz = t.tsc_per_unit_median > 0 ? tsc_hz_ / t.tsc_per_unit_median / 1e9 : 0.0;
  s.spread = t.per_unit.spread;
  return s;
}

ClockSample ClockCalibrator::warm_up(double max_seconds) {
  const uint64_t start = tsc_now();
  ClockSample prev = measure();
  while (double(tsc_now() - start) / tsc_hz_ < max_seconds) {
    ClockSample cur = measure();
    if (prev.ghz > 0 && std::fabs(cur.ghz - prev.ghz) / prev.ghz < 0.01) return cur;
    prev = cur;
  }
  return prev;
}

}  // namespace peakprobe
