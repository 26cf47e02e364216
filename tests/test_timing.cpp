#include <catch2/catch.hpp>
#include <algorithm>

#include "harness/timing.hpp"

using namespace peakprobe;

// Readings of the paired ruler (add chain ticks per link, add/multi-cycle ratio of the same moment)
// copied from `peakprobe inst <the one-cycle add> -vv` traces (Target::ruler_forms).

TEST_CASE("a multi-cycle chain with modes of its own is found unsteady", "[timing]") {
  // Emerald Rapids VM (family 6 model 0xcf): the add chain held at 0.698-0.700 ticks per link while
  // the multi-cycle chain switched between two modes; its fast-looking ratio 0.316 is that chain's
  // slow mode.
  const std::vector<double> add = {0.7003, 0.7001, 0.7003, 0.7001, 0.6996, 0.6999, 0.6986, 0.7001, 0.6984, 0.7001};
  const std::vector<double> ratio = {0.3349, 0.3348, 0.3349, 0.3175, 0.3346, 0.3348, 0.3354, 0.3165, 0.3165, 0.3349};
  CHECK(multi_cycle_chain_unsteady(add, ratio));
}

TEST_CASE("a slowed add chain beside a steady multi-cycle chain is not the chain's fault", "[timing]") {
  // Zen 3 VM with a light co-tenant: the add chain read 0.750-0.777 ticks per link, the multi-cycle chain
  // held within 0.5%, so the ratio spread with the add chain. The multi-cycle chain stays the witness.
  const std::vector<double> add = {0.750, 0.777, 0.752, 0.770, 0.751, 0.775, 0.760, 0.774, 0.753, 0.768};
  std::vector<double> ratio;
  for (double a : add) ratio.push_back(a / 2.25);
  CHECK_FALSE(multi_cycle_chain_unsteady(add, ratio));
}

TEST_CASE("steady chains on a quiet core are left alone", "[timing]") {
  const std::vector<double> add = {0.7500, 0.7504, 0.7498, 0.7502, 0.7501, 0.7499, 0.7503, 0.7500};
  const std::vector<double> ratio = {0.3333, 0.3335, 0.3332, 0.3334, 0.3336, 0.3333, 0.3334, 0.3335};
  CHECK_FALSE(multi_cycle_chain_unsteady(add, ratio));
}

TEST_CASE("too few moments, or mismatched ones, decide nothing", "[timing]") {
  const std::vector<double> add = {0.70, 0.70, 0.70, 0.70, 0.70};
  const std::vector<double> ratio = {0.335, 0.316, 0.335, 0.316, 0.335};
  CHECK_FALSE(multi_cycle_chain_unsteady(add, ratio));
  CHECK_FALSE(multi_cycle_chain_unsteady({0.70, 0.70, 0.70, 0.70, 0.70, 0.70}, {0.335, 0.316}));
  CHECK_FALSE(multi_cycle_chain_unsteady({}, {}));
}

TEST_CASE("a few multi-cycle calls slowed by different amounts are disturbances, not a mode", "[timing]") {
  // Zen 3 VM: an interrupted multi-cycle call lowers its moment's ratio by 5-30%, each time by another amount.
  const std::vector<double> add = {0.7500, 0.7504, 0.7498, 0.7502, 0.7501, 0.7499, 0.7503, 0.7500, 0.7501, 0.7502};
  const std::vector<double> ratio = {0.3335, 0.2287, 0.3334, 0.2931, 0.3336, 0.3333, 0.3120, 0.3335, 0.3334, 0.3336};
  CHECK_FALSE(multi_cycle_chain_unsteady(add, ratio));
  // One slow call alone is never a mode, however close to another value.
  const std::vector<double> one = {0.3335, 0.3160, 0.3334, 0.3336, 0.3335, 0.3333, 0.3334, 0.3335, 0.3336, 0.3334};
  CHECK_FALSE(multi_cycle_chain_unsteady(add, one));
}

TEST_CASE("a learned best ratio falls in steps, never at once", "[timing]") {
  CHECK(lower_best_ratio(0, 1.008) == Approx(1.008));           // the first lesson sets it
  CHECK(lower_best_ratio(1.008, 1.02) == Approx(1.008));        // a slower moment teaches nothing
  CHECK(lower_best_ratio(1.008, 0.99) == Approx(0.99));         // a little faster: taken
  // Emerald Rapids VM, right after 512-bit code: 0.80 against 1.008 is at most one step down.
  CHECK(lower_best_ratio(1.008, 0.80) == Approx(1.008 * (1 - kRulerCleanLimit)));
  CHECK(lower_best_ratio(1.008, 0) == Approx(1.008));           // no reading
}

TEST_CASE("a wide/chain ratio converts to the wide stream's adds per cycle and back", "[timing]") {
  Ruler r;
  CHECK(r.wide_rate(1.0) == 0);  // calls not yet sized
  r.chain_units = 88 * 128;      // sized as on the Zen 3 VM
  r.wide_units = 379 * 120;
  // The wide call does 4.04 times the adds of the chain call; at ratio 1.02 it took 2% longer.
  CHECK(r.wide_rate(1.02) == Approx(45480.0 / 11264.0 / 1.02));
  CHECK(r.wide_rate(1.02) == Approx(3.958).epsilon(0.001));
  CHECK(r.ratio_for_wide_rate(r.wide_rate(0.8)) == Approx(0.8));
  CHECK(r.wide_rate(0) == 0);
  CHECK(r.wide_rate(-1) == 0);
  CHECK(r.ratio_for_wide_rate(0) == 0);
}

TEST_CASE("only multi-cycle calls at their own fastest may teach the ratio", "[timing]") {
  // Sapphire Rapids-class VM: the 3-cycle chain's calls (ticks of whole calls, in the order taken)
  // ran 1-20% slow now and then, each time by another amount.
  const std::vector<double> ticks = {23900, 23910, 29600, 23905, 27400, 23900, 23920, 25300, 23899, 23915};
  const std::vector<bool> fine = multi_cycle_calls_fine(ticks, 3);
  const std::vector<bool> want = {true, true, false, true, false, true, true, false, true, true};
  CHECK(fine == want);
  // A clock that moves slowly moves every call alike: nothing is left out.
  std::vector<double> drifting;
  for (int i = 0; i < 10; ++i) drifting.push_back(23900 * (1 + 0.002 * i));
  const std::vector<bool> all = multi_cycle_calls_fine(drifting, 3);
  CHECK(std::count(all.begin(), all.end(), true) == 10);
  CHECK(multi_cycle_calls_fine({}, 3).empty());
  CHECK_FALSE(multi_cycle_calls_fine({0.0}, 3)[0]);  // no reading is never fine
}

TEST_CASE("the paired clock is never faster than the add chain allows", "[timing]") {
  // The multi-cycle estimate may correct a slightly slowed add chain ...
  CHECK(paired_ticks_per_cycle(0.650, 0.640) == Approx(0.640));
  // ... but never by more than the judge's limit: a ratio learned from slowed multi-cycle calls once
  // read the clock 27% fast (0.6126 against an add chain steady at 0.649).
  CHECK(paired_ticks_per_cycle(0.649, 0.490) == Approx(0.649 / (1 + kRulerChainLimit)));
  CHECK(paired_ticks_per_cycle(0.649, 0.700) == Approx(0.649));  // a slower estimate changes nothing
}

TEST_CASE("the add to multi-cycle ratio learns in small steps", "[timing]") {
  // After 512-bit code a Sapphire Rapids-class VM read the ratio at 0.298 against a quiet 0.334: one
  // lesson moves it by kRulerSteadyChainLimit at most.
  CHECK(lower_best_ratio(0.334, 0.298, kRulerSteadyChainLimit) == Approx(0.334 * (1 - kRulerSteadyChainLimit)));
  CHECK(lower_best_ratio(0.334, 0.333, kRulerSteadyChainLimit) == Approx(0.333));
}

TEST_CASE("the fastest calls are converted with the fastest clock of their samples", "[timing]") {
  size_t at = 99;
  CHECK(fastest_calls_at_fastest_clock(4.0, {}, &at) == 0.0);
  CHECK(at == 0);
  // No reading of a clock: no figure, and no sample named.
  CHECK(fastest_calls_at_fastest_clock(4.0, {0.0, -1.0}, &at) == 0.0);
  CHECK(at == 2);
  // A steady clock: the fastest calls over it.
  CHECK(fastest_calls_at_fastest_clock(2.4, {0.6, 0.6, 0.6}) == Approx(4.0));
  // The clock moved by a tenth during the timing: the fastest calls ran at its fast moments, and
  // over the median clock they would read 10% fast (3.6 cycles for a 4-cycle chain).
  CHECK(fastest_calls_at_fastest_clock(2.4, {0.66, 0.66, 0.6, 0.66, 0.6}, &at) == Approx(4.0));
  CHECK(at == 2);
  // Readings of no clock are skipped.
  CHECK(fastest_calls_at_fastest_clock(2.4, {0.0, 0.8, 0.6}, &at) == Approx(4.0));
  CHECK(at == 2);
}


// ---- on this machine ----
#include <cstdlib>

#include "harness/clock.hpp"
#include "hw_fixture.hpp"

TEST_CASE("hw: with the TSC as the counter, a paired timing's GHz is its own clock in TSC ticks", "[hw][timing]") {
  // Counter ticks are TSC ticks here, so the clock a figure is converted with (ticks per cycle) and the
  // GHz it reports are one number: a GHz read from whole reference calls held the timer reads' cost
  // and sat 0.8% below it (Zen 4 VM), and with it every GFLOP/s.
  ::setenv("PEAKPROBE_NO_PERF", "1", 1);
  const CycleCounter counter;
  ::unsetenv("PEAKPROBE_NO_PERF");  // the other tests of this process keep whatever counter they get
  REQUIRE_FALSE(counter.counts_cycles());
  const CpuInfo& cpu = test::this_cpu();
  REQUIRE(cpu.tsc_hz > 0);
  auto cal = ClockCalibrator::create(counter, cpu.tsc_hz, cpu);
  REQUIRE(cal);
  (*cal)->warm_up();
  (*cal)->measure();
  const Ruler& ruler = (*cal)->ruler();
  if (!ruler.ready()) PP_SKIP("the ruler learned no undisturbed ratio on this core (a busy host)");
  // Any pair of functions will do: the add chain as the short call, the multi-cycle chain (the same
  // number of links, each several cycles) as the long one.
  PairTiming t;
  std::string error;
  REQUIRE(time_pair(ruler.chain, ruler.slow, 1.0, 2.0, ruler.buffer, ruler.consts, counter, TimingBudget{}, t, error,
                    &ruler, cpu.tsc_hz));
  REQUIRE(t.paired);
  REQUIRE(t.ticks_per_cycle > 0);
  CHECK(t.ghz == Approx(cpu.tsc_hz / t.ticks_per_cycle / 1e9).epsilon(1e-12));
}
