#include <catch2/catch.hpp>

#include <algorithm>

#include "cpu/cpu_info.hpp"
#include "harness/quiet_core.hpp"
#include "harness/run_delay.hpp"
#include "busy_loop_child.hpp"
#include "skip.hpp"

using namespace peakprobe;

TEST_CASE("quiet_cores_first: the quietest core leads, ties keep the usual order", "[quiet_core]") {
  const std::vector<int> order = {0, 1, 2, 3, 4, 5};  // 4 and 5: SMT siblings, not candidates
  SECTION("a busy first core moves behind a quiet one") {
    CHECK(quiet_cores_first(order, 4, {1.60, 1.02, 2.30, 1.01}) == std::vector<int>{1, 3, 0, 2, 4, 5});
  }
  SECTION("all quiet within the tie: nothing moves") {
    CHECK(quiet_cores_first(order, 4, {1.03, 1.00, 1.04, 1.02}) == order);
  }
  SECTION("a core that could not be timed goes last among the candidates") {
    CHECK(quiet_cores_first(order, 4, {0.0, 1.5, 1.0, 1.2}) == std::vector<int>{2, 3, 1, 0, 4, 5});
  }
  SECTION("nothing measured: nothing moves") {
    CHECK(quiet_cores_first(order, 4, {0, 0, 0, 0}) == order);
  }
  SECTION("fewer ratios than candidates: only those are ranked") {
    CHECK(quiet_cores_first(order, 4, {1.5, 1.0}) == std::vector<int>{1, 0, 2, 3, 4, 5});
  }
}

TEST_CASE("chosen_cpu_first: a CPU chosen by hand leads, and a team still gets a core per thread", "[quiet_core]") {
  // 4 cores of 2 hardware threads: CPUs 0-3 the first of each core, 4-7 their siblings.
  const std::vector<int> order = {0, 1, 2, 3, 4, 5, 6, 7};
  const std::vector<int> core = {0, 1, 2, 3, 0, 1, 2, 3};
  SECTION("a first hardware thread moves to the front, the others keep their order") {
    CHECK(chosen_cpu_first(order, core, 2) == std::vector<int>{2, 0, 1, 3, 4, 5, 6, 7});
  }
  SECTION("a sibling chosen: the other cores' first threads follow, its own core's first thread after them") {
    CHECK(chosen_cpu_first(order, core, 5) == std::vector<int>{5, 0, 2, 3, 1, 4, 6, 7});
  }
  SECTION("the usual first CPU: nothing moves") { CHECK(chosen_cpu_first(order, core, 0) == order); }
  SECTION("a CPU not in the order: nothing moves") { CHECK(chosen_cpu_first(order, core, 9) == order); }
  SECTION("cores of uneven width (CPUs 0, 1 and 5 allowed: a core of one, a core of two)") {
    // The order lists the first thread of each core, then the sibling: 0, 1, 5. Chosen 5, the second
    // thread goes to the other core (0), not to 5's sibling 1.
    const std::vector<int> uneven_core = {0, 1, -1, -1, -1, 1};
    CHECK(chosen_cpu_first({0, 1, 5}, uneven_core, 5) == std::vector<int>{5, 0, 1});
  }
  SECTION("no topology known: every CPU a core of its own, a plain move to the front") {
    CHECK(chosen_cpu_first({3, 1, 0, 2}, {}, 0) == std::vector<int>{0, 3, 1, 2});
  }
  SECTION("every CPU once, whatever is chosen") {
    for (int c : order) {
      auto out = chosen_cpu_first(order, core, c);
      CHECK(out.front() == c);
      std::sort(out.begin(), out.end());
      CHECK(out == order);
    }
  }
}

TEST_CASE("quieter_core: move only to a clearly quieter core", "[quiet_core]") {
  const std::vector<CoreQuietness> q = {{0, 0.85}, {1, 0.59}, {2, 0.60}, {3, 0}};
  CHECK(quieter_core(q, 0) == 1);
  CHECK(quieter_core(q, 1) == -1);                       // already the quietest
  CHECK(quieter_core(q, 2) == -1);                       // within the tie: not worth a calibration
  CHECK(quieter_core(q, 3) == 1);                        // here was not measured
  CHECK(quieter_core(q, 7) == 1);                        // here is not a candidate (an SMT sibling)
  CHECK(quieter_core({{0, 0}, {1, 0}}, 0) == -1);        // nothing measured
  CHECK(quieter_core({}, 0) == -1);
}

TEST_CASE("drift_free_ratio: a clock that speeds up between the calls does not bias the ratio", "[quiet_core]") {
  // Fake calls on a core whose clock rises 5% per call (an idle core ramping up): each call's ticks
  // are its cycles over the clock at that moment. The true wide/chain ratio is 1.05.
  double clock = 1.0;
  auto call = [&](double cycles) {
    const double ticks = cycles / clock;
    clock *= 1.05;
    return ticks;
  };
  auto chain = [&] { return call(1000.0); };
  auto wide = [&] { return call(1050.0); };
  const double c = chain();
  CHECK(wide() / c < 1.01);  // timed chain-then-wide, the ramp alone makes the core look 5% quieter
  clock = 1.0;
  CHECK(drift_free_ratio(chain, wide) == Approx(1.05).epsilon(0.005));
  clock = 0.5;  // a slower start changes nothing
  CHECK(drift_free_ratio(chain, wide) == Approx(1.05).epsilon(0.005));
  CHECK(drift_free_ratio([] { return 0.0; }, wide) == 0);  // an untimed chain gives no ratio
}

TEST_CASE("quietest_ratio: samples whose chain was slowed are left out, the rest give a confirmed minimum",
          "[quiet_core]") {
  // Undisturbed samples at 1.02, a stretch of a busy sibling at 1.5, and two samples whose chain calls
  // were interrupted (twice the ticks): their ratios read the wide stream 2.5 times too fast.
  const std::vector<double> ratios = {1.5, 1.021, 0.40, 1.02, 1.5, 0.401, 1.023};
  const std::vector<double> chains = {17150, 17125, 34300, 17126, 17101, 34250, 17150};
  CHECK(quietest_ratio(ratios, chains) == Approx(1.02));
  // A lowest sample that no other comes within 1% of is not confirmed: the next one is.
  CHECK(quietest_ratio({0.9, 1.02, 1.021}, {17100, 17100, 17100}) == Approx(1.02));
  // Chains within 2% of the fastest all count.
  CHECK(quietest_ratio({0.9, 0.905}, {17100, 17400}) == Approx(0.9));
  // Nothing confirmed, nothing timed, or mismatched lists: no ratio.
  CHECK(quietest_ratio({1.0, 1.5}, {17100, 17100}) == 0);
  CHECK(quietest_ratio({}, {}) == 0);
  CHECK(quietest_ratio({1.0, 1.0}, {17100}) == 0);
}

TEST_CASE("note_widest_rates: each timed core's rate by CPU id, the others kept", "[quiet_core]") {
  CpuInfo cpu;
  cpu.wide_rate_seen = {3.9};
  note_widest_rates({CoreQuietness{3, 0.8, 4.95}, CoreQuietness{1, 0, 0}, CoreQuietness{0, 1.0, 3.97}}, cpu);
  REQUIRE(cpu.wide_rate_seen.size() == 4);
  CHECK(cpu.wide_rate_seen[0] == Approx(3.97));  // measured again: replaced
  CHECK(cpu.wide_rate_seen[1] == 0);              // not timed: nothing known
  CHECK(cpu.wide_rate_seen[2] == 0);
  CHECK(cpu.wide_rate_seen[3] == Approx(4.95));
}

TEST_CASE("quiet_wide_rate: a core's own rate or its kind's median, whichever is higher", "[quiet_core]") {
  CpuInfo cpu;
  CHECK(quiet_wide_rate(cpu, 0) == 0);  // no ranking
  // Emerald Rapids VM: the chosen core read 4.20 at the ranking, the others 4.9-5.0.
  cpu.wide_rate_seen = {4.95, 4.20, 4.98, 0, 4.92};
  CHECK(quiet_wide_rate(cpu, 1) == Approx(4.935));  // the median of 4.20, 4.92, 4.95, 4.98
  CHECK(quiet_wide_rate(cpu, 2) == Approx(4.98));   // its own, higher than the median
  CHECK(quiet_wide_rate(cpu, 3) == Approx(4.935));  // not timed itself: its kind's
  CHECK(quiet_wide_rate(cpu, 9) == Approx(4.935));
  // A hybrid CPU: CPUs 0-1 of one kind, 2-4 of another; each compared with its own kind only.
  cpu.wide_rate_seen = {5.9, 5.8, 3.9, 3.2, 3.95};
  cpu.cpu_kind = {1, 1, 0, 0, 0};
  CHECK(quiet_wide_rate(cpu, 3) == Approx(3.9));   // the efficiency cores' median, not the machine's
  CHECK(quiet_wide_rate(cpu, 1) == Approx(5.85));  // the performance cores' median
  // A CPU the kinds do not name: only its own.
  cpu.cpu_kind = {1, 1, 0, 0, -1};
  CHECK(quiet_wide_rate(cpu, 4) == Approx(3.95));
  CHECK(quiet_wide_rate(cpu, 7) == 0);
}

TEST_CASE("hw: every core's reference streams are timed and the order stays a permutation", "[quiet_core][hw]") {
  CpuInfo cpu = detect_cpu_info();
  if (cpu.physical_cores < 2) PP_SKIP("one core: nothing to choose between");
  const auto q = measure_core_quietness(cpu, 0.001);
  REQUIRE(q.size() == std::min<size_t>(size_t(cpu.physical_cores), 64));
  for (const auto& c : q) {
    INFO("CPU " << c.cpu);
    // A wide call runs wide_iters x 120 adds on independent registers, a chain call chain_iters x 128
    // dependent adds sized to about the same time undisturbed: neither can be free.
    CHECK(c.wide_ratio > 0);
    // The same add on independent registers against the dependent chain at one add a cycle: any
    // superscalar core runs more than one at its quietest moment (0: no moment of a busy core confirmed).
    if (c.widest > 0) CHECK(c.widest > 1.0);
  }
  auto before = cpu.core_order;
  order_cores_quietest_first(cpu);
  auto after = cpu.core_order;
  // The ranking keeps each timed core's rate for the runner's check of its own window.
  // (Its own ranking, timed afresh: a core whose moments it could not confirm keeps 0.)
  const auto rated = std::count_if(cpu.wide_rate_seen.begin(), cpu.wide_rate_seen.end(), [](double r) { return r > 0; });
  if (rated == 0) PP_SKIP("no core had a moment quiet enough to confirm its wide rate");
  for (double r : cpu.wide_rate_seen)
    if (r > 0) CHECK(r > 1.0);
  std::sort(before.begin(), before.end());
  std::sort(after.begin(), after.end());
  CHECK(before == after);
}

TEST_CASE("free_core_first: the first core no other program takes leads, the taken ones go behind the others", "[quiet_core]") {
  const std::vector<int> order = {3, 1, 0, 2, 4, 5};  // 4 and 5: not candidates
  std::vector<int> asked, found;
  auto taken_of = [&](std::vector<int> busy) {
    return [&asked, busy](int c) {
      asked.push_back(c);
      return std::find(busy.begin(), busy.end(), c) != busy.end();
    };
  };
  SECTION("the first is free: one check, nothing moves") {
    CHECK(free_core_first(order, 4, taken_of({1}), &found) == order);
    CHECK(asked == std::vector<int>{3});
    CHECK(found.empty());
  }
  SECTION("the first two are taken: the third leads, they follow the unchecked one") {
    CHECK(free_core_first(order, 4, taken_of({3, 1}), &found) == std::vector<int>{0, 2, 3, 1, 4, 5});
    CHECK(asked == std::vector<int>{3, 1, 0});
    CHECK(found == std::vector<int>{3, 1});
  }
  SECTION("every candidate taken: the order stands, all are named") {
    CHECK(free_core_first(order, 4, taken_of({0, 1, 2, 3}), &found) == order);
    CHECK(asked == std::vector<int>{3, 1, 0, 2});
    CHECK(found == std::vector<int>{3, 1, 0, 2});
  }
}

TEST_CASE("hw: a CPU another program spins on is taken, by the share its thread waited there", "[quiet_core][hw]") {
  const CpuInfo cpu = detect_cpu_info();
  if (!cpu.emulator.empty()) PP_SKIP("emulated: " + cpu.emulator);
  const int where = cpu.core_order.front();
  if (const auto s = sched_stat(current_tid()); !s || s->on_cpu_ns == 0)
    PP_SKIP("this kernel keeps no scheduler accounts (/proc/self/task/TID/schedstat)");
  if (!taken_share(where, 0.001)) PP_SKIP("CPU " + std::to_string(where) + " cannot be pinned");
  const test::BusyLoopChild busy(where);
  REQUIRE(busy.started());
  // One default window, as the runner takes it.
  const double share = taken_share(where).value_or(0);
  INFO("CPU " << where << ": waited " << share * 100 << "% beside a busy loop");
  CHECK(share > kRunDelayLimit);
}
