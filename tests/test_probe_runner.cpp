// Tests for src/harness/probe_runner.cpp. Hardware tests: physical invariants of any core, with
// tolerances, on forms the target names (its clock's chains, its issue-width forms), so they hold for
// every ISA; nothing here is a value hard-coded for one CPU model. One ISA's forms on hardware
// (state, refusals, loads, stores, FMA) are checked in tests/<isa>/test_probe_form.cpp.
#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <thread>
#include <tuple>

#include "asm/target.hpp"
#include "cpu/cpu_info.hpp"
#include "hw_fixture.hpp"
#include "skip.hpp"
#include "harness/probe_runner.hpp"

using namespace peakprobe;

namespace {

const CpuInfo& cpu() { return test::this_cpu(); }
ProbeRunner& runner() { return test::shared_runner(); }
const isa::Target::RulerForms& ruler() {
  static const isa::Target::RulerForms forms = isa::host_target().ruler_forms();
  return forms;
}

ProbeResult measure(const std::string& text, double ops = 0, const std::string& dtype = "-") {
  return test::measure_form(text, ops, dtype);
}

}  // namespace

TEST_CASE("hw: the calibrated clock is a plausible core clock", "[hw][probe_runner]") {
  const ClockReading& c = runner().start_clock();
  CHECK(c.ghz > 0.4);
  CHECK(c.ghz < 7.0);
  CHECK_FALSE(c.source.empty());
}

TEST_CASE("hw: the clock's dependent register add takes one cycle", "[hw][probe_runner]") {
  // The premise of the calibration, measured as any form is: the clock's own chain, timed against
  // itself, must read one cycle per link.
  ProbeResult r = measure(ruler().one_cycle);
  REQUIRE_OK_OR_SKIP(r);
  REQUIRE(r.latency_cycles);
  CHECK(*r.latency_cycles == Approx(1.0).margin(0.07));
  CHECK(*r.recip_throughput_cycles <= 1.05);
}

TEST_CASE("hw: a multi-cycle chain's throughput is bounded by its own chains", "[hw][probe_runner]") {
  ProbeResult r = measure(ruler().multi_cycle);
  REQUIRE_OK_OR_SKIP(r);
  REQUIRE(r.latency_cycles);
  CHECK(*r.latency_cycles >= 1.9);  // the ruler's multi-cycle chain, by the target's word
  const double rt = *r.recip_throughput_cycles;
  // K chains cannot finish faster than one chain's latency over K, nor slower than one chain.
  CHECK(rt * r.accumulators >= 0.93 * *r.latency_cycles);
  CHECK(rt <= 1.07 * *r.latency_cycles);
  // The sweep went on while chains were the limit: either K covers latency x rate, or the
  // register file stopped it and the row says so.
  const bool enough_chains = r.accumulators * rt >= 0.85 * *r.latency_cycles * 0.999 &&
                             r.accumulators >= int(std::floor(*r.latency_cycles / rt * 0.9));
  CHECK((enough_chains || r.chains_limited_by_registers));
}

TEST_CASE("hw: a latency chain is never faster than the same instruction's throughput", "[hw][probe_runner]") {
  for (const std::string& text : {ruler().one_cycle, ruler().multi_cycle}) {
    ProbeResult r = measure(text);
    REQUIRE_OK_OR_SKIP(r);
    CHECK(*r.latency_cycles >= 0.93 * *r.recip_throughput_cycles);
  }
}

TEST_CASE("hw: no ok figure beats what this core was seen to issue", "[hw][probe_runner]") {
  // The widest rate of the target's issue-width forms is the core's own measured issue limit; every
  // other form must stay under it (or be mistrusted), whatever the clock did meanwhile.
  double widest = 0;
  const auto forms = isa::host_target().issue_width_forms();
  REQUIRE(forms.size() >= 2);
  for (const std::string& text : forms) {
    ProbeResult r = measure(text);
    if (r.status == Status::ok) widest = std::max(widest, *r.throughput_ipc);
  }
  if (widest <= 0) PP_SKIP("the issue-width forms stayed mistrusted on this machine");
  // Forms that are not issue-width forms themselves (one among them would be held to its own rate).
  int checked = 0;
  for (const std::string& text : {ruler().one_cycle, ruler().multi_cycle}) {
    if (std::find(forms.begin(), forms.end(), text) != forms.end()) continue;
    ProbeResult r = measure(text);
    if (r.status != Status::ok) continue;
    ++checked;
    INFO(text << ": " << *r.throughput_ipc << " instructions/cycle, widest " << widest);
    CHECK(*r.throughput_ipc <= widest * 1.05);
  }
  if (checked == 0) PP_SKIP("no form outside the issue-width set was measured ok on this machine");
}

TEST_CASE("hw: every result carries its repro line and clock", "[hw][probe_runner]") {
  ProbeResult r = measure(ruler().one_cycle);
  CHECK(r.repro.find("peakprobe inst \"" + r.instruction + "\" --cpu ") == 0);
  CHECK(r.clock.ghz > 0);
  // Both ends of the probe are reported; how far they differ is the host's doing (a paired row is
  // not judged by it), so only its form is checked.
  CHECK(r.clock.ghz_before > 0);
  CHECK(r.clock.ghz_after > 0);
  CHECK(std::isfinite(r.clock.drift));
  CHECK(r.clock.drift >= 0);
}

TEST_CASE("hw: threads run the same stream on several cores at once", "[hw][probe_runner]") {
  if (cpu().core_order.size() < 2) PP_SKIP("one core only");
  ProbeOptions o;
  o.threads = 2;
  auto made = ProbeRunner::create(cpu(), o);
  REQUIRE(made.ok());
  ProbeSpec s;
  s.text = ruler().multi_cycle;  // one multiplier-like unit per core
  s.ops_per_instruction = 1;
  s.dtype = "i64";
  ProbeResult r = (*made)->run(s);
  REQUIRE(r.status != Status::error);
  REQUIRE(r.threads_status != Status::error);
  CHECK(r.threads == 2);
  REQUIRE(r.per_thread_recip_throughput.size() == 2);
  CHECK(r.per_thread_core.size() == 2);  // one physical core per thread, -1 where unknown
  if (r.threads_status == Status::mistrusted) {
    // Interference that outlasted every re-measurement must be said, not hidden, and gives no total.
    CHECK(!r.threads_reason.empty());
    CHECK_FALSE(r.total_gops);
    PP_SKIP("the threaded run stayed mistrusted: " << r.threads_reason);
  }
  REQUIRE(r.total_gops);
  REQUIRE(r.threads_shortfall);
  // Separate cores do not share a multiplier: each keeps its single-core rate (within VM noise). Two
  // CPUs the OS shows as hardware threads of one core share it, and the judgement counts them as one
  // core, so an `ok` total near one core's rate is right for them and this cannot be checked. (CPUs
  // shown as separate cores that share a host core for real read `mistrusted` above, by their shortfall.)
  if (*r.total_gops <= 1.6 * *r.gops)
    PP_SKIP("the two CPUs are threads of one core and share its multiplier: " << *r.total_gops << " vs "
                                                                              << *r.gops << " GOP/s");
  for (double rt : r.per_thread_recip_throughput) CHECK(rt == Approx(*r.recip_throughput_cycles).epsilon(0.15));
}

// The trust rules themselves, on made-up inputs (no hardware involved).
#include "harness/probe_runner_impl.hpp"

TEST_CASE("a moving clock spoils an unpaired timing, not a paired one", "[probe_runner]") {
  ProbeOptions options;
  detail::TrustInputs in;
  in.before = {0.75, 3.20, 0.001};
  in.after = {0.78, 3.08, 0.001};  // 3.8% slower after the probe than before it
  in.ipc = 1.0;
  in.overhead = 0.05;
  auto unpaired = detail::timing_doubts(in, options);
  REQUIRE(unpaired.size() == 1);
  CHECK(unpaired[0].find("drifted") != std::string::npos);
  in.clean_samples = 40;  // paired: every sample carried its own clock
  in.slowed_samples = 2;
  CHECK(detail::timing_doubts(in, options).empty());
  // The ruler still judges the samples themselves.
  in.clean_samples = 3;
  in.slowed_samples = 30;
  in.slowdown = 0.4;
  auto slowed = detail::timing_doubts(in, options);
  REQUIRE(slowed.size() == 1);
  CHECK(slowed[0].find("slowed in 30 of 33") != std::string::npos);
  // Enough undisturbed samples carry the figure however many others ran slowed.
  in.clean_samples = 5;
  CHECK(detail::timing_doubts(in, options).empty());
  in.clean_samples = 4;
  CHECK(detail::timing_doubts(in, options).size() == 1);
  // Too few samples and none of them slowed: the time budget ran out, which is what it says (a form
  // of thousands of cycles a copy, a call that traps to the host).
  in.clean_samples = 3;
  in.slowed_samples = 0;
  in.slowdown = 0;
  auto few = detail::timing_doubts(in, options);
  REQUIRE(few.size() == 1);
  CHECK(few[0] == "only 3 samples fit its time budget, 5 undisturbed ones wanted");
}

TEST_CASE("a runner moves to a quieter core at most six times a minute, every minute of a long run", "[probe_runner]") {
  detail::RecentMoves moves;
  // A move is made when there is room, and recorded.
  auto move = [&](double t) {
    if (!moves.room(t)) return false;
    moves.record(t);
    return true;
  };
  for (int i = 0; i < detail::kMaxCoreMoves; ++i) CHECK(move(10.0 + i));
  CHECK_FALSE(move(20.0));  // a seventh move within the minute
  CHECK_FALSE(move(69.9));  // the first move is still under a minute old
  CHECK(move(70.0));        // it is not: a long run on a core that turned busy can still leave it
  CHECK_FALSE(move(70.5));
  CHECK(move(72.5));  // the moves at 11 and 12 s have aged out: 13, 14, 15, 70, 72.5
  // A ranking that found no quieter core, or a failed repin, records nothing and leaves the room.
  CHECK(moves.room(72.6));
  CHECK(moves.room(72.6));
  CHECK(move(72.6));  // six
  CHECK_FALSE(moves.room(72.7));
  CHECK(move(73.0));  // the move at 13 s ages out
  CHECK_FALSE(move(73.1));
}

TEST_CASE("a latency chain timed twice must agree with itself", "[probe_runner]") {
  ProbeResult r;
  r.latency_cycles = 3.877;
  r.latency_method = "chain through the destination";
  OperandLatency dest{1, "vec", 4.06, "chain through the destination", false};
  OperandLatency other{2, "vec", 4.30, "chain through operand 2", false};
  r.latencies = {other};
  CHECK_FALSE(detail::repeated_latency_doubt(r));  // another path may differ: no repeat
  r.latencies.push_back(dest);
  auto d = detail::repeated_latency_doubt(r);
  REQUIRE(d);
  CHECK(d->find("3.877 and 4.060 cycles through operand 1") != std::string::npos);
  r.latency_cycles = 4.00;  // within 3% of 4.06: the same chain, reproduced
  CHECK_FALSE(detail::repeated_latency_doubt(r));
  r.latency_cycles = 3.877;
  r.latencies.back().upper_bound = true;  // a bridge of unknown latency: not the same chain
  CHECK_FALSE(detail::repeated_latency_doubt(r));
  r.latencies.back().upper_bound = false;
  r.latency_cycles.reset();  // no headline latency: nothing to repeat
  CHECK_FALSE(detail::repeated_latency_doubt(r));
}

TEST_CASE("a single-path latency chain is timed again and voted on", "[probe_runner]") {
  // One timing: nothing to vote on, nothing doubted.
  CHECK(detail::vote_latency_repeats({3.386}).figure == 0);
  CHECK(detail::vote_latency_repeats({3.386}).nearest == 0);
  CHECK_FALSE(detail::self_repeated_latency_doubt({3.386}));
  // Two that agree: the first stays the figure.
  auto two = detail::vote_latency_repeats({4.012, 4.007});
  CHECK(two.figure == 0);
  CHECK(two.nearest == Approx(0.005 / 4.012));
  CHECK_FALSE(detail::self_repeated_latency_doubt({4.012, 4.007}));
  // Two that disagree (the third timing failed): doubted, both named.
  auto d2 = detail::self_repeated_latency_doubt({3.386, 4.000});
  REQUIRE(d2);
  CHECK(d2->find("timed 2 times") != std::string::npos);
  CHECK(d2->find("3.386, 4.000 cycles") != std::string::npos);
  // Three: the median is the figure, wherever it came; one odd timing is outvoted.
  auto three = detail::vote_latency_repeats({3.386, 4.010, 3.998});
  CHECK(three.figure == 2);
  CHECK(three.nearest == Approx(0.012 / 3.998));
  CHECK_FALSE(detail::self_repeated_latency_doubt({3.386, 4.010, 3.998}));
  CHECK(detail::vote_latency_repeats({4.010, 3.386, 3.998}).figure == 2);
  // No two of three within 3%: doubted.
  auto d3 = detail::self_repeated_latency_doubt({3.386, 4.000, 4.400});
  REQUIRE(d3);
  CHECK(d3->find("timed 3 times") != std::string::npos);
  CHECK(d3->find("none within 3% of the figure, 4.000") != std::string::npos);
  // A figure that is not positive has nothing near it (and is doubted for itself elsewhere).
  CHECK(detail::vote_latency_repeats({0.0, 1.0}).nearest == 0);
  CHECK_FALSE(detail::self_repeated_latency_doubt({0.0, 1.0}));
  // Either side of the limit.
  CHECK_FALSE(detail::self_repeated_latency_doubt({1.00, 1.029}));
  CHECK(detail::self_repeated_latency_doubt({1.00, 1.031}));
}

TEST_CASE("an issue rate beyond the core's widest is doubted whatever the clock", "[probe_runner]") {
  ProbeOptions options;
  detail::TrustInputs in;
  in.before = in.after = {0.75, 3.2, 0.001};
  in.overhead = 0.05;
  in.clean_samples = 40;
  in.issue_width = 4.0;
  in.ipc = 4.1;
  CHECK(detail::timing_doubts(in, options).empty());  // within the tolerance
  in.ipc = 4.6;
  REQUIRE(detail::timing_doubts(in, options).size() == 1);
}

TEST_CASE("a ruler window is judged against its core's rate at the ranking", "[probe_runner]") {
  using peakprobe::detail::kSharedWindowGap;
  using peakprobe::detail::ruler_window_step;
  using Step = peakprobe::detail::RulerWindowStep;
  // Emerald Rapids VM: the ranking saw a core's wide stream near 5 adds a cycle; a window during a
  // sibling's burst learned 3.4. The first time it is taken again; a second time, the ranking's rate stands.
  CHECK(ruler_window_step(3.4, 4.95, false) == Step::retake);
  CHECK(ruler_window_step(3.4, 4.95, true) == Step::assume);
  // Undisturbed windows agree with the ranking within a few percent, either way.
  CHECK(ruler_window_step(4.8, 4.95, false) == Step::keep);
  CHECK(ruler_window_step(4.02, 3.97, false) == Step::keep);
  CHECK(ruler_window_step(4.8, 4.95, true) == Step::keep);
  CHECK(ruler_window_step(4.95 * (1 - kSharedWindowGap) * 0.99, 4.95, false) == Step::retake);
  CHECK(ruler_window_step(4.95 * (1 - kSharedWindowGap) * 1.01, 4.95, false) == Step::keep);
  // A first window that confirmed no rate is left as it is (the ruler then waits for the samples); a
  // second that confirmed none does not leave the ruler without one.
  CHECK(ruler_window_step(0, 4.95, false) == Step::keep);
  CHECK(ruler_window_step(0, 4.95, true) == Step::assume);
  // No ranking (--cpu given by hand, one core): nothing to judge.
  CHECK(ruler_window_step(3.4, 0, false) == Step::keep);
  CHECK(ruler_window_step(0, 0, true) == Step::keep);
}

TEST_CASE("a ruler learned afresh where no core is quieter keeps a new steady state, not a shared core",
          "[probe_runner]") {
  using peakprobe::detail::keeps_new_steady_state;
  using peakprobe::detail::kSteadyStateShift;
  // Sapphire Rapids-class VM: 30-40 s into a whole table both cores' wide streams ran 4-6% slower
  // for good; the ruler keeps the rate it learns then.
  CHECK(keeps_new_steady_state(4.95, 4.95 * 0.95));
  CHECK(keeps_new_steady_state(4.95, 5.1));  // faster again
  CHECK(keeps_new_steady_state(4.95, 4.95 * (1 - kSteadyStateShift) * 1.01));
  // A sibling's co-tenant takes 10-50% (an Emerald Rapids VM read 44% slowed): what was learned stands.
  CHECK_FALSE(keeps_new_steady_state(4.95, 4.95 * (1 - kSteadyStateShift) * 0.99));
  CHECK_FALSE(keeps_new_steady_state(4.95, 4.95 * 0.56));
  // Nothing learned, before or after: nothing to keep.
  CHECK_FALSE(keeps_new_steady_state(4.95, 0));
  CHECK_FALSE(keeps_new_steady_state(0, 4.9));
}

// A paired timing with a steady clock, two instructions per cycle and every sample undisturbed.
TEST_CASE("throughput sweep: chains bind near latency over K, and two steps without gain end a sweep",
          "[probe_runner]") {
  using peakprobe::detail::chains_bind;
  using peakprobe::detail::sweep_goes_on;
  // A 4-cycle form: 8 chains at 0.5 cycles are rounds of exactly the latency; 12 chains at 0.5 are
  // held by the pipes (rounds of 6 cycles); 10 chains at 0.45 still bind (4.5 < 4.6).
  CHECK(chains_bind(0.5, 8, 4.0));
  CHECK(chains_bind(0.45, 10, 4.0));
  CHECK_FALSE(chains_bind(0.5, 12, 4.0));
  CHECK_FALSE(chains_bind(0.25, 6, 1.0));  // a 1-cycle ALU op at 4 per cycle from 6 chains
  CHECK_FALSE(chains_bind(0.5, 2, 0.0));   // no latency known: nothing binds
  CHECK(sweep_goes_on(1, false, false, 1));  // one chain is never the end
  CHECK(sweep_goes_on(4, true, false, 0));   // it improved
  CHECK(sweep_goes_on(4, false, true, 1));   // no gain, but still bound by its chains
  CHECK(sweep_goes_on(4, false, false, 1));  // one step without gain may be a slowed moment
  CHECK_FALSE(sweep_goes_on(6, false, false, 2));
  // A step slower than fewer chains ran is timed again; a plateau (the pipes' limit) is not.
  using peakprobe::detail::slower_than_fewer_chains;
  CHECK(slower_than_fewer_chains(0.345, 0.333));
  CHECK_FALSE(slower_than_fewer_chains(0.334, 0.333));
  CHECK_FALSE(slower_than_fewer_chains(0.25, 0.333));
  CHECK_FALSE(slower_than_fewer_chains(4.0, 1e300));  // the first step has nothing to be slower than
}

TEST_CASE("throughput sweep: a sweep that would end looks once at half as many chains again", "[probe_runner]") {
  using peakprobe::detail::look_ahead_index;
  const std::vector<int> ks = {1, 2, 3, 4, 6, 8, 10, 12, 16, 20, 24, 28, 32};
  // Ended at 8 (index 5): 12 chains, skipping 10.
  CHECK(look_ahead_index(ks, 5, 16) == 7);
  // Ended at 4: 6 chains, the next step anyway.
  CHECK(look_ahead_index(ks, 3, 16) == 4);
  // Ended at 3: half again is 4.5, so 6.
  CHECK(look_ahead_index(ks, 2, 16) == 4);
  // Ended at 12: half again is 18, beyond the bound of 16, so the most chains within it.
  CHECK(look_ahead_index(ks, 7, 16) == 8);
  CHECK(look_ahead_index(ks, 7, 32) == 9);  // a higher bound: 20
  // Ended at the bound: nothing beyond it.
  CHECK(look_ahead_index(ks, 8, 16) == -1);
  // The register file stops short of half again: its limit, the last K.
  const std::vector<int> few = {1, 2, 3, 4, 6, 8, 9};
  CHECK(look_ahead_index(few, 5, 16) == 6);
  // Ended at the register file's limit, or past the list: nothing beyond.
  CHECK(look_ahead_index(few, 6, 16) == -1);
  CHECK(look_ahead_index(ks, 12, 64) == -1);
  CHECK(look_ahead_index(ks, 40, 64) == -1);
  // The look is a short timing, shorter than a sweep step's least.
  using peakprobe::detail::look_ahead_budget;
  using peakprobe::detail::probe_budget;
  CHECK(look_ahead_budget().max_samples < probe_budget().min_samples);
  CHECK(look_ahead_budget().min_clean_samples <= look_ahead_budget().min_samples);
}

TEST_CASE("throughput sweep: only copies that chain are bound by the latency, and the register limit names them",
          "[probe_runner]") {
  using namespace peakprobe::detail;
  // A form whose copies chain through their destination: its latency bounds K copies.
  CHECK(copies_chain_latency("chain through the destination", 4.0) == 4.0);
  // A write-only destination: every copy is independent, whatever chain measured the latency.
  CHECK(copies_chain_latency("chain through source operand 2", 3.0) == 0.0);
  CHECK(copies_chain_latency("pointer chase through bridge (upper bound: includes the bridge)", 9.0) == 0.0);
  // So 16 independent loads at 0.5 cycles do not look bound by a 9-cycle chase (0.5 x 16 < 1.15 x 9).
  CHECK(chains_bind(0.5, 16, 9.0));
  CHECK_FALSE(chains_bind(0.5, 16, copies_chain_latency("pointer chase (load-to-use)", 9.0)));
  // The register limit: reached and still bound; a form of one chain is judged by its own latency.
  CHECK(limited_by_registers(16, 16, true, 0.3, 4.0));
  CHECK_FALSE(limited_by_registers(12, 16, true, 0.3, 4.0));   // the sweep stopped before the limit
  CHECK_FALSE(limited_by_registers(16, 16, false, 0.3, 4.0));  // the pipes held it at the limit
  CHECK(limited_by_registers(1, 1, false, 4.0, 4.0));          // one chain, running at its latency
  CHECK_FALSE(limited_by_registers(1, 1, false, 6.0, 4.0));    // one chain, held by its pipe, not its latency
}

namespace {
// A throughput sweep's points from (K, cycles an instruction, implied loop overhead), judged against
// a chain latency as measure_throughput judges them.
std::vector<peakprobe::detail::SweepPoint> sweep_points(const std::vector<std::tuple<int, double, double>>& kro,
                                                        double latency) {
  std::vector<peakprobe::detail::SweepPoint> p;
  for (const auto& [k, recip, overhead] : kro)
    p.push_back({k, recip, peakprobe::detail::beyond_chain_bound(recip, k, latency), overhead,
                 peakprobe::detail::at_chain_bound(recip, k, latency)});
  return p;
}
}  // namespace

TEST_CASE("throughput sweep: the fastest K beyond its chain bound gives way to more chains the bound explains",
          "[probe_runner]") {
  using peakprobe::detail::beyond_chain_bound;
  using peakprobe::detail::chosen_sweep_point;
  using peakprobe::detail::SweepPoint;
  // 10 chains of a 5-cycle link run at 0.5 an instruction at most: 0.49 is beyond, 0.5 is not.
  CHECK(beyond_chain_bound(0.49, 10, 5.0));
  CHECK_FALSE(beyond_chain_bound(0.5, 10, 5.0));
  CHECK_FALSE(beyond_chain_bound(0.497, 10, 5.0));  // within the noise of a chain at its bound
  CHECK_FALSE(beyond_chain_bound(0.49, 10, 0.0));   // no latency known: no bound
  const auto points = [](const std::vector<std::pair<int, double>>& kr, double latency) {
    std::vector<std::tuple<int, double, double>> kro;
    for (const auto& [k, recip] : kr) kro.emplace_back(k, recip, 0.002);
    return sweep_points(kro, latency);
  };
  // The sweep of a 512-bit FP16 FMA on the Sapphire Rapids-class VM (the impossible K left out):
  // 10 chains at 0.491 beat their bound, 12 and 16 ran 2% slower within it: the faster of those.
  const auto fp16 = points({{3, 1.7468}, {10, 0.4908}, {12, 0.5008}, {16, 0.5005}}, 5.21);
  CHECK(chosen_sweep_point(fp16) == 3);         // 16 chains, the faster of the two
  CHECK(chosen_sweep_point(fp16, false) == 1);  // the fastest
  // A fastest K within its bound but without slack gives way to the fastest larger K with slack
  // within kSlackLimit; with slack of its own it stays, however close a larger K comes.
  CHECK(chosen_sweep_point(points({{8, 0.5}, {10, 0.501}, {12, 0.502}}, 4.0)) == 1);
  CHECK(chosen_sweep_point(points({{8, 0.5}, {10, 0.501}, {12, 0.502}}, 3.5)) == 0);
  // A larger K more than kExplainedLimit slower is no explanation: the fastest stays (two larger K
  // that disagree by 5% among themselves do not pass over it either: unconfirmed_by_more_chains).
  CHECK(chosen_sweep_point(points({{3, 0.3254}, {4, 0.3425}, {6, 0.36}}, 1.004)) == 0);
  // Of several that qualify, the fastest; a larger K itself beyond its bound does not qualify.
  CHECK(chosen_sweep_point(points({{3, 0.3254}, {6, 0.3346}, {8, 0.3340}}, 1.004)) == 2);
  CHECK(chosen_sweep_point(points({{8, 0.46}, {10, 0.47}, {12, 0.475}}, 5.21)) == 2);
  // The fastest beyond its bound with nothing to give way to stays.
  CHECK(chosen_sweep_point(points({{3, 0.3254}, {4, 0.2480}, {6, 0.3346}}, 1.004)) == 1);
  // No chains to bind (latency 0): the fastest.
  CHECK(chosen_sweep_point(points({{2, 0.49}, {4, 0.5}}, 0.0)) == 0);
  // Within its bound, but its N and 2N copies imply an overhead far above the others': its short
  // calls ran slower per instruction than its long ones. The same sweep with a latency of 4.6
  // (every K with slack, so that only the overhead decides).
  auto odd = points({{3, 1.7468}, {10, 0.4908}, {12, 0.5008}, {16, 0.5005}}, 4.6);
  REQUIRE_FALSE(odd[1].beyond_bound);
  REQUIRE_FALSE(odd[1].at_bound);
  CHECK(chosen_sweep_point(odd) == 1);
  odd[1].overhead = 0.024;
  CHECK(chosen_sweep_point(odd) == 3);
  odd[1].overhead = 0.002 + peakprobe::detail::kOverheadExcess * 0.9;  // within the excess
  CHECK(chosen_sweep_point(odd) == 1);
  // The lowest overhead of the K that compete is the reference, but never below zero: a negative
  // fixed cost is the odd one (its long calls ran faster per instruction), not the others.
  odd[1].overhead = 0.012;
  odd[2].overhead = -0.015;
  CHECK(chosen_sweep_point(odd) == 1);
  odd[1].overhead = 0.017;
  CHECK(chosen_sweep_point(odd) == 3);  // 1.7 points above zero: 16 chains (+0.2%) are explained
  // A K far slower (one chain's short loop) does not compete, and does not set the reference.
  odd[1].overhead = 0.012;
  odd[2].overhead = 0.002;
  odd[0].overhead = -0.021;
  CHECK(chosen_sweep_point(odd) == 1);
  odd[0].overhead = 0.002;
  odd[1].overhead = 0.024;
  odd[2].overhead = 0.024;
  CHECK(chosen_sweep_point(odd) == 3);
  // The reference is the lowest of the K that compete, however high it is.
  odd[3].overhead = 0.024;
  odd[2].overhead = 0.024;
  odd[1].overhead = 0.060;
  CHECK(chosen_sweep_point(odd) == 3);  // 16 chains at +2.4% are within 1.5 points of the lowest
  // No other K is explained: the fastest stays.
  odd[3].beyond_bound = odd[2].beyond_bound = true;
  CHECK(chosen_sweep_point(odd) == 1);
  // The three layouts of a chosen K, judged alike: 10 chains of a 512-bit FP16 FMA at 0.501
  // (+0.6%), and two layouts in the short calls' slow mode.
  using peakprobe::detail::explained_points;
  const std::vector<SweepPoint> layouts = {{10, 0.5010, beyond_chain_bound(0.5010, 10, 4.927), 0.006},
                                           {10, 0.4954, beyond_chain_bound(0.4954, 10, 4.927), 0.024},
                                           {10, 0.4875, beyond_chain_bound(0.4875, 10, 4.927), 0.025}};
  CHECK(explained_points(layouts) == std::vector<bool>{true, false, false});
  CHECK(explained_points({}).empty());
}

TEST_CASE("throughput sweep: a K faster than every larger K by more than the explained limit is passed over",
          "[probe_runner]") {
  using peakprobe::detail::chosen_sweep_point;
  using peakprobe::detail::unconfirmed_by_more_chains;
  const auto points = [](const std::vector<std::pair<int, double>>& kr) {
    std::vector<std::tuple<int, double, double>> kro;
    for (const auto& [k, recip] : kr) kro.emplace_back(k, recip, 0.004);
    return sweep_points(kro, 1.004);
  };
  // The sweep of a 128-bit three-input logic form on the Zen 4 VM: a plateau at 4-8 chains, the
  // pipes at 12, and 16 chains (two copies a loop) beyond the four pipes, which 20 and 24 chains do
  // not confirm.
  const auto tern = points({{4, 0.2846}, {6, 0.2809}, {8, 0.2843}, {12, 0.2499}, {16, 0.2381}, {20, 0.2510}, {24, 0.2498}});
  CHECK(unconfirmed_by_more_chains(tern, 4));
  CHECK_FALSE(unconfirmed_by_more_chains(tern, 3));  // 24 chains ran as fast
  CHECK(chosen_sweep_point(tern) == 6);          // the fastest of the rest: 24 chains, 0.2498
  CHECK(chosen_sweep_point(tern, false) == 4);  // the fastest, whatever it implies
  // Within kExplainedLimit of a larger K: confirmed, and the fastest wins.
  const auto close = points({{12, 0.2499}, {16, 0.2420}, {20, 0.2510}, {24, 0.2498}});
  CHECK_FALSE(unconfirmed_by_more_chains(close, 1));
  CHECK(chosen_sweep_point(close) == 1);
  // One larger K is not enough to pass over it (a slowed moment), nor is the last K ever passed over.
  const auto one = points({{12, 0.2499}, {16, 0.2381}, {20, 0.2510}});
  CHECK_FALSE(unconfirmed_by_more_chains(one, 1));
  CHECK(chosen_sweep_point(one) == 1);
  CHECK_FALSE(unconfirmed_by_more_chains(tern, 6));
  CHECK_FALSE(unconfirmed_by_more_chains(tern, 9));  // out of range
  // Two passed over in turn: the next fastest is unconfirmed too.
  const auto two = points({{8, 0.300}, {10, 0.240}, {12, 0.238}, {16, 0.2500}, {20, 0.2510}});
  CHECK(chosen_sweep_point(two) == 3);
  // The larger K disagree among themselves by more than kExplainedLimit: a slowed stretch of the
  // host, not a rate; the fastest stays.
  const auto slowed = points({{8, 0.2500}, {10, 0.2620}, {12, 0.2750}});
  CHECK_FALSE(unconfirmed_by_more_chains(slowed, 0));
  CHECK(chosen_sweep_point(slowed) == 0);
  // The rest choose by the usual rules: here the fastest of them is beyond its chain bound (3 chains
  // of a 1-cycle link at 0.30) and gives way to the explained 16 chains within 4% of it.
  const auto rest = points({{3, 0.3000}, {12, 0.2380}, {16, 0.3080}, {20, 0.3090}});
  CHECK(unconfirmed_by_more_chains(rest, 1));
  CHECK(chosen_sweep_point(rest) == 2);
  // Mapped back by position, whatever the K (a repeated K, which a sweep never times, stays apart).
  const auto twice = points({{12, 0.2380}, {16, 0.2500}, {16, 0.2510}, {20, 0.2505}});
  CHECK(chosen_sweep_point(twice) == 1);
}

TEST_CASE("throughput sweep: K chains at their bound give way to more chains with slack", "[probe_runner]") {
  using peakprobe::detail::at_chain_bound;
  using peakprobe::detail::chosen_sweep_point;
  using peakprobe::detail::kSlackLimit;
  // K links per latency: 8 chains of a 4-cycle link at 0.5 have none to spare, 10 have a cycle.
  CHECK(at_chain_bound(0.5, 8, 4.0));
  CHECK(at_chain_bound(0.493, 8, 4.0));
  CHECK_FALSE(at_chain_bound(0.5, 10, 4.0));
  CHECK_FALSE(at_chain_bound(0.5, 8, 0.0));  // no latency known: no bound
  const auto sweep = sweep_points;
  // Sweeps of the 512-bit FMA (latency 4.0) on the Sapphire Rapids-class VM in which 8 chains won
  // and their other layouts read up to 4% slow: 10, then 12 chains instead.
  CHECK(chosen_sweep_point(sweep({{8, 0.4992, 0.018}, {10, 0.4996, 0.005}, {12, 0.5063, 0.004}}, 4.007)) == 1);
  CHECK(chosen_sweep_point(sweep({{8, 0.4997, 0.017}, {10, 0.5063, 0.003}, {12, 0.5060, 0.004}}, 4.007)) == 2);
  // Not when the chains with slack ran more than kSlackLimit slower: the bound K stays.
  const double slower = 0.5 * (1 + kSlackLimit) * 1.01;
  CHECK(chosen_sweep_point(sweep({{8, 0.5, 0.002}, {10, slower, 0.002}}, 4.0)) == 0);
  // Nor for a larger K whose overhead leaves it unexplained, or for fewer chains.
  CHECK(chosen_sweep_point(sweep({{8, 0.5, 0.002}, {10, 0.501, 0.040}}, 4.0)) == 0);
  CHECK(chosen_sweep_point(sweep({{6, 0.501, 0.002}, {8, 0.5, 0.002}}, 4.0)) == 1);
  // Two steps: the fastest beyond its bound gives way to an explained K at its bound, which gives way
  // to one with slack; never further than kExplainedLimit from the fastest.
  CHECK(chosen_sweep_point(sweep({{8, 0.485, 0.002}, {10, 0.500, 0.002}, {12, 0.502, 0.002}}, 5.0)) == 2);
  CHECK(chosen_sweep_point(sweep({{8, 0.485, 0.002}, {10, 0.500, 0.002}, {12, 0.505, 0.002}}, 5.0)) == 1);
  // The fastest, whatever it implies, when asked.
  CHECK(chosen_sweep_point(sweep({{8, 0.4992, 0.018}, {10, 0.4996, 0.005}}, 4.007), false) == 0);
}
TEST_CASE("throughput sweep: K chains through the destination never beat one chain's latency over K",
          "[probe_runner]") {
  using peakprobe::detail::beats_chain_bound;
  // A 3-cycle form: 2 chains cannot run faster than 1.5 cycles an instruction, 3 chains than 1.0.
  CHECK(beats_chain_bound(0.86, 2, 3.0));
  CHECK_FALSE(beats_chain_bound(1.48, 2, 3.0));
  CHECK_FALSE(beats_chain_bound(1.0, 3, 3.0));
  CHECK_FALSE(beats_chain_bound(0.97, 3, 3.0));  // within the noise of a chain at its bound
  CHECK(beats_chain_bound(0.9, 3, 3.0));
  CHECK_FALSE(beats_chain_bound(0.25, 8, 1.0));  // held by the pipes, far from the bound
  CHECK_FALSE(beats_chain_bound(0.5, 2, 0.0));   // no latency known: no bound
  CHECK_FALSE(beats_chain_bound(0.0, 2, 3.0));   // no figure: nothing to judge
  using peakprobe::detail::chains_through_destination;
  CHECK(chains_through_destination("chain through the destination"));
  CHECK(chains_through_destination("chain through the destination (it is also read)"));
  CHECK_FALSE(chains_through_destination("pointer chase"));
  CHECK_FALSE(chains_through_destination("chain through source operand 2"));
}

detail::TrustInputs steady_paired_inputs() {
  detail::TrustInputs in;
  in.before = in.after = {0.75, 3.2, 0.001};
  in.overhead = 0.05;
  in.ipc = 2.0;
  in.clean_samples = 40;
  return in;
}

TEST_CASE("timings of one stream that no second timing reproduces are doubted", "[probe_runner]") {
  ProbeOptions options;
  detail::TrustInputs in = steady_paired_inputs();
  in.repeat_disagreement = 0.04;  // the nearest other layout within 5%: one odd layout outvoted
  CHECK(detail::timing_doubts(in, options).empty());
  in.repeat_disagreement = 0.07;
  auto d = detail::timing_doubts(in, options);
  REQUIRE(d.size() == 1);
  CHECK(d[0].find("disagree") != std::string::npos);
}

TEST_CASE("a figure whose two clock conversions disagree is doubted", "[probe_runner]") {
  ProbeOptions options;
  detail::TrustInputs in = steady_paired_inputs();
  in.paired_disagreement = 0.01;  // jitter between the two conversions of one timing
  CHECK(detail::timing_doubts(in, options).empty());
  in.paired_disagreement = 0.105;  // the clock moved by a tenth during the timing
  auto d = detail::timing_doubts(in, options);
  REQUIRE(d.size() == 1);
  CHECK(d[0].find("the clock moved by 10.5% during its timing") != std::string::npos);
}

TEST_CASE("a figure its typical samples do not bear out is doubted", "[probe_runner]") {
  ProbeOptions options;
  detail::TrustInputs in = steady_paired_inputs();
  in.below_typical = 0.14;  // a busy host lifts the samples, not the fastest calls
  CHECK(detail::timing_doubts(in, options).empty());
  in.below_typical = 0.95;  // a 3-cycle chain read at 0.15 from a few fast calls
  auto d = detail::timing_doubts(in, options);
  REQUIRE(d.size() == 1);
  CHECK(d[0].find("fastest calls ran 95% faster than its typical sample") != std::string::npos);
  PairTiming t;
  t.paired = true;
  t.value = 0.15;
  t.cycles.median = 3.0;
  CHECK(detail::fast_mode_gap(t) == Approx(0.95));
  t.value = 3.1;  // above the median: no gap
  CHECK(detail::fast_mode_gap(t) == 0.0);
  t.fastest_not_positive = true;  // the samples' median stood in for a non-positive difference
  CHECK(detail::fast_mode_gap(t) == 1.0);
  t.paired = false;
  t.value = 0.15;
  CHECK(detail::fast_mode_gap(t) == 0.0);
}

TEST_CASE("a latency whose two clock conversions disagree is doubted, by a tighter limit", "[probe_runner]") {
  ProbeOptions options;
  detail::TrustInputs in = steady_paired_inputs();
  in.latency_paired_disagreement = 0.01;  // undisturbed chains agree within 1%
  CHECK(detail::timing_doubts(in, options).empty());
  // 3.5% apart: within the throughput's 4%, not the latency's.
  in.latency_paired_disagreement = 0.035;
  auto d = detail::timing_doubts(in, options);
  REQUIRE(d.size() == 1);
  CHECK(d[0].find("the clock moved by 3.5% during its latency chain's timing") != std::string::npos);
  in.latency_paired_disagreement = 0;
  in.paired_disagreement = 0.035;
  CHECK(detail::timing_doubts(in, options).empty());
}

TEST_CASE("a latency chain whose N and 2N copies ran at different rates is doubted", "[probe_runner]") {
  ProbeOptions options;
  detail::TrustInputs in = steady_paired_inputs();
  in.latency_overhead = 0.05;  // a chain of eliminated moves: its call costs a few percent of the long call
  CHECK(detail::timing_doubts(in, options).empty());
  // Short calls in a slow mode, long calls in a fast one: the fixed cost they imply is most of the call.
  in.latency_overhead = 0.58;
  auto d = detail::timing_doubts(in, options);
  REQUIRE(d.size() == 1);
  CHECK(d[0].find("latency chain's N and 2N copies disagree (implied loop overhead +58.0%") != std::string::npos);
  // The long calls slowed more than the short ones: a negative cost is no more possible for a chain.
  in.latency_overhead = -0.06;
  REQUIRE(detail::timing_doubts(in, options).size() == 1);
  // The throughput stream's overhead is judged on its own: a right one does not clear the chain's.
  in.overhead = 0.0;
  CHECK(detail::timing_doubts(in, options).size() == 1);
  in.latency_overhead = 0.0;  // no latency timed
  CHECK(detail::timing_doubts(in, options).empty());
}

TEST_CASE("a throughput timing whose short calls ran far slower than its long ones is doubted", "[probe_runner]") {
  ProbeOptions options;
  detail::TrustInputs in = steady_paired_inputs();
  in.overhead = 0.087;  // the far end of what a whole table's undisturbed loops imply
  CHECK(detail::timing_doubts(in, options).empty());
  CHECK_FALSE(detail::overhead_beyond_loop(in.overhead));
  // Three chains of a 128-bit shift from memory: +40%, a difference no pair of pipes gives.
  in.overhead = 0.40;
  CHECK(detail::overhead_beyond_loop(in.overhead));
  auto d = detail::timing_doubts(in, options);
  REQUIRE(d.size() == 1);
  CHECK(d[0].find("N and 2N copies disagree (implied loop overhead +40.0%: its short and long calls ran at different "
                  "rates)") != std::string::npos);
  // Below zero as before: the long calls ran slower per instruction.
  in.overhead = -0.05;
  d = detail::timing_doubts(in, options);
  REQUIRE(d.size() == 1);
  CHECK(d[0].find("implied loop overhead -5.0%") != std::string::npos);
}

TEST_CASE("throughput sweep: a step whose long calls ran slower than its short ones does not end the sweep",
          "[probe_runner]") {
  using peakprobe::detail::steps_without_gain;
  using peakprobe::detail::sweep_goes_on;
  CHECK(steps_without_gain(1, true, 0.002) == 0);    // it improved
  CHECK(steps_without_gain(0, false, 0.002) == 1);   // an ordinary step without gain counts
  CHECK(steps_without_gain(1, false, -0.14) == 1);   // long calls 14% slower per instruction: not counted
  CHECK(steps_without_gain(1, false, -0.03) == 2);   // at the limit it still counts
  // One chain at its latency, then 2 and 3 chains in a slow mode of their code: the sweep goes on.
  int steps = 0;
  steps = steps_without_gain(steps, false, -0.139);
  CHECK(sweep_goes_on(2, false, false, steps));
  steps = steps_without_gain(steps, false, -0.287);
  CHECK(sweep_goes_on(3, false, false, steps));
  // Two ordinary steps without gain still end it.
  steps = steps_without_gain(steps, false, 0.001);
  steps = steps_without_gain(steps, false, 0.002);
  CHECK_FALSE(sweep_goes_on(6, false, false, steps));
}

TEST_CASE("throughput streams: short loops of whole copies, and two more layouts of the chosen K whatever its copies",
          "[probe_runner]") {
  using peakprobe::detail::kThroughputUnits;
  using peakprobe::detail::layout_copies;
  using peakprobe::detail::throughput_copies;
  // Rounded down, so that the short loop never holds more than kThroughputUnits instructions.
  CHECK(throughput_copies(1) == kThroughputUnits);
  for (int per_copy = 1; per_copy <= 3 * kThroughputUnits; ++per_copy) {
    const int copies = throughput_copies(per_copy);
    CHECK(copies >= 1);
    if (per_copy <= kThroughputUnits) CHECK(copies * per_copy <= kThroughputUnits);
    if (per_copy <= kThroughputUnits) CHECK((copies + 1) * per_copy > kThroughputUnits);
    if (per_copy > kThroughputUnits) CHECK(copies == 1);
  }
  CHECK(throughput_copies(0) == kThroughputUnits);  // a pattern of nothing measured: no division by zero
  // 3/4 and 1/2 of the copies, never more; too few copies for two smaller counts: the same again.
  CHECK(layout_copies(32) == std::vector<int>{24, 16});
  CHECK(layout_copies(4) == std::vector<int>{3, 2});
  CHECK(layout_copies(3) == std::vector<int>{2, 3});
  CHECK(layout_copies(2) == std::vector<int>{1, 2});
  CHECK(layout_copies(1) == std::vector<int>{1, 1});
  for (int copies = 1; copies <= 40; ++copies) {
    const auto l = layout_copies(copies);
    REQUIRE(l.size() == 2);
    for (int c : l) CHECK((c >= 1 && c <= copies));
  }
}

TEST_CASE("under an emulator every figure is doubted first, whatever else holds", "[probe_runner]") {
  ProbeOptions options;
  detail::TrustInputs in = steady_paired_inputs();
  CHECK(detail::timing_doubts(in, options).empty());
  in.emulator = "MIDR implementer 0";
  auto d = detail::timing_doubts(in, options);
  REQUIRE(d.size() == 1);
  CHECK(d[0] == "emulated: MIDR implementer 0");
}

TEST_CASE("an illegal instruction the CPU claims to support is skipped, other faults stay errors", "[probe_runner]") {
  ProbeResult r;
  r.status = Status::error;
  r.reason = "throughput stream: illegal instruction (SIGILL): the CPU or OS does not support this form";
  ProbeResult s = detail::skip_if_blocked(r);
  CHECK(s.status == Status::skipped);
  CHECK(s.reason.find("blocks it") != std::string::npos);
  r.reason = "throughput stream: memory fault (SIGSEGV) in generated code";
  CHECK(detail::skip_if_blocked(r).status == Status::error);
  r.status = Status::ok;
  r.reason = "";
  CHECK(detail::skip_if_blocked(r).status == Status::ok);
}

TEST_CASE("retries: every item once, then the doubtful ones in rounds, and a stop keeps a prefix", "[probe_runner]") {
  struct Row {
    Status status = Status::ok;
    std::string reason;
  };
  // Item 1 is doubtful twice, then trusted; item 3 stays doubtful.
  std::vector<int> calls(4, 0);
  std::vector<std::pair<size_t, Status>> seen;
  auto once = [&](size_t i) {
    ++calls[i];
    Row r;
    if ((i == 1 && calls[i] < 3) || i == 3) r.status = Status::mistrusted;
    return r;
  };
  std::vector<size_t> order;
  auto rows = detail::measure_with_retries<Row>(
      4, once, [&](size_t i) { order.push_back(i); }, [&](size_t i, const Row& r) { seen.emplace_back(i, r.status); });
  REQUIRE(rows.size() == 4);
  CHECK(order == std::vector<size_t>{0, 1, 2, 3});  // first attempts in order, each started once
  CHECK(calls == std::vector<int>{1, 3, 1, detail::kAttempts});
  CHECK(rows[1].status == Status::ok);
  CHECK(rows[3].status == Status::mistrusted);
  CHECK(rows[3].reason.find(std::to_string(detail::kAttempts) + " attempts") != std::string::npos);
  CHECK(seen.size() == size_t(1 + 3 + 1 + detail::kAttempts));  // every attempt reported
  // The first pass ends before any retry: all four first attempts come first.
  for (size_t k = 0; k < 4; ++k) CHECK(seen[k].first == k);

  // Each retry round is announced before it starts (the runner calibrates afresh there), and only
  // while something is left to retry.
  std::fill(calls.begin(), calls.end(), 0);
  int rounds = 0;
  std::vector<int> calls_at_round;
  detail::measure_with_retries<Row>(4, once, {}, {}, {}, detail::kAttempts, [&] {
    ++rounds;
    calls_at_round.push_back(calls[3]);
  });
  CHECK(rounds == detail::kAttempts - 1);
  CHECK(calls_at_round == std::vector<int>{1, 2, 3});
  int quiet_rounds = 0;
  detail::measure_with_retries<Row>(2, [](size_t) { return Row{}; }, {}, {}, {}, detail::kAttempts, [&] { ++quiet_rounds; });
  CHECK(quiet_rounds == 0);

  // A stop after two first attempts: two rows, nothing retried.
  std::fill(calls.begin(), calls.end(), 0);
  int asked = 0;
  auto part = detail::measure_with_retries<Row>(4, once, {}, {}, [&] { return ++asked > 2; });
  CHECK(part.size() == 2);
  CHECK(calls == std::vector<int>{1, 1, 0, 0});
}

TEST_CASE("retries of one item: after items in a row stayed doubtful, one retry each until one is trusted", "[probe_runner]") {
  struct Row {
    Status status = Status::ok;
    std::string reason;
  };
  detail::RetryMemory memory;
  int calls = 0;
  auto always_doubtful = [&] {
    ++calls;
    return Row{Status::mistrusted, "slowed"};
  };
  // Three attempts an item here (pauses of 30 and 250 ms, not the 1 s of a fourth): still more
  // than the lasting disturbance's.
  constexpr int kTried = 3;
  static_assert(kTried > detail::kPersistentSingleAttempts, "the test needs fewer attempts once it lasts");
  for (int i = 0; i < detail::kPersistentSingleItems; ++i) {
    calls = 0;
    detail::measure_one_with_retries<Row>(always_doubtful, kTried, &memory);
    CHECK(calls == kTried);
  }
  CHECK(memory.exhausted_in_a_row == detail::kPersistentSingleItems);
  // Lasting: fewer attempts.
  calls = 0;
  CHECK(detail::measure_one_with_retries<Row>(always_doubtful, kTried, &memory).reason ==
        "slowed (" + std::to_string(detail::kPersistentSingleAttempts) + " attempts)");
  CHECK(calls == detail::kPersistentSingleAttempts);
  // A trusted item ends it: the next doubtful one gets every attempt again.
  calls = 0;
  detail::measure_one_with_retries<Row>([&] { ++calls; return Row{}; }, kTried, &memory);
  CHECK(calls == 1);
  CHECK(memory.exhausted_in_a_row == 0);
  calls = 0;
  detail::measure_one_with_retries<Row>(always_doubtful, kTried, &memory);
  CHECK(calls == kTried);
}

TEST_CASE("retries of one item: again while doubtful, pausing first, attempts counted, an error not retried", "[probe_runner]") {
  struct Row {
    Status status = Status::ok;
    std::string reason;
  };
  // Doubtful twice, then trusted: three calls, the trusted result returned as it came.
  int calls = 0;
  std::vector<std::chrono::steady_clock::time_point> at;
  auto cured_third = [&] {
    at.push_back(std::chrono::steady_clock::now());
    return ++calls < 3 ? Row{Status::mistrusted, "slowed"} : Row{Status::ok, ""};
  };
  const Row cured = detail::measure_one_with_retries<Row>(cured_third);
  CHECK(calls == 3);
  CHECK(cured.status == Status::ok);
  CHECK(cured.reason.empty());
  // Each retry waits its pause first (an item alone has no batch between its attempts).
  REQUIRE(at.size() == 3);
  CHECK(at[1] - at[0] >= std::chrono::milliseconds(detail::kRetryPauseMs[0]));
  CHECK(at[2] - at[1] >= std::chrono::milliseconds(detail::kRetryPauseMs[1]));
  // Doubtful every time: `attempts` calls, counted in the reason.
  calls = 0;
  const Row stays = detail::measure_one_with_retries<Row>([&] { ++calls; return Row{Status::mistrusted, "slowed"}; }, 2);
  CHECK(calls == 2);
  CHECK(stays.reason == "slowed (2 attempts)");
  // An error, or a first result already trusted, is final.
  calls = 0;
  CHECK(detail::measure_one_with_retries<Row>([&] { ++calls; return Row{Status::error, "fault"}; }).reason == "fault");
  CHECK(calls == 1);
  calls = 0;
  CHECK(detail::measure_one_with_retries<Row>([&] { ++calls; return Row{}; }).status == Status::ok);
  CHECK(calls == 1);
}

TEST_CASE("retries: a probe row whose threaded run alone is doubtful is measured again", "[probe_runner]") {
  // The one-core figures ok, the run on every core mistrusted twice, then ok.
  int calls = 0;
  auto once = [&](size_t) {
    ProbeResult r;
    r.threads = 2;
    if (++calls < 3) {
      r.threads_status = Status::mistrusted;
      r.threads_reason = "every core ran slowed";
    }
    return r;
  };
  auto rows = detail::measure_with_retries<ProbeResult>(1, once, {});
  CHECK(calls == 3);
  CHECK(rows[0].threads_status == Status::ok);
  // Doubtful to the end: the attempts are counted in the threaded reason, the row's stays empty.
  calls = -100;
  const ProbeResult stays = detail::measure_one_with_retries<ProbeResult>([&] { return once(0); }, 2);
  CHECK(stays.threads_reason == "every core ran slowed (2 attempts)");
  CHECK(stays.status == Status::ok);
  CHECK(stays.reason.empty());
}

TEST_CASE("retries: a round that cures almost nothing ends the retries of a large batch", "[probe_runner]") {
  struct Row {
    Status status = Status::ok;
    std::string reason;
  };
  // Every item doubtful every time (a sibling thread busy all along): one retry round tells.
  const size_t n = detail::kPersistentRoundItems;
  std::vector<int> calls(n, 0);
  auto always = [&](size_t i) {
    ++calls[i];
    return Row{Status::mistrusted, "slowed"};
  };
  auto rows = detail::measure_with_retries<Row>(n, always, {});
  for (size_t i = 0; i < n; ++i) CHECK(calls[i] == 2);
  CHECK(rows[0].reason.find("2 attempts") != std::string::npos);
  // A small batch (an `inst` of a few forms) keeps every attempt: one round says little there.
  std::vector<int> few(3, 0);
  auto small = detail::measure_with_retries<Row>(3, [&](size_t i) { ++few[i]; return Row{Status::mistrusted, ""}; }, {});
  CHECK(few == std::vector<int>(3, detail::kAttempts));
  // A round that cures enough goes on to the next.
  std::vector<int> some(n, 0);
  auto cured_some = detail::measure_with_retries<Row>(
      n, [&](size_t i) { return Row{++some[i] == 2 && i % 2 == 0 ? Status::ok : Status::mistrusted, ""}; }, {});
  CHECK(some[1] == detail::kAttempts);
  CHECK(some[0] == 2);
}

TEST_CASE("a code layout left alone by the filter answers to the layouts it left out", "[probe_runner]") {
  // Three layouts kept: the middle one is the figure, held to its nearest neighbour.
  CHECK(detail::layout_disagreement({0.49, 0.50, 0.52}, {0.49, 0.50, 0.52}) == Approx(0.02));
  // The Zen 3 case: a fast artefact with the least overhead is the only layout its chains explain;
  // the two that read the hardware's 0.50 were left out. It is 7% from the nearest of them (beyond
  // the layout limit), not unchecked.
  CHECK(detail::layout_disagreement({0.466}, {0.466, 0.500, 0.502}) == Approx(0.034 / 0.466));
  // Left out because they were faster than their chains explain, close to the figure: a small gap.
  CHECK(detail::layout_disagreement({0.501}, {0.501, 0.495, 0.488}) == Approx(0.006 / 0.501));
  // Two layouts that read the same value: the figure is not compared with itself, but with the other.
  CHECK(detail::layout_disagreement({0.5}, {0.5, 0.5}) == Approx(0.0));
  // Nothing else timed: nothing to disagree with.
  CHECK(detail::layout_disagreement({0.5}, {0.5}) == 0);
  CHECK(detail::layout_disagreement({}, {}) == 0);
}

TEST_CASE("a ruler whose add chain ran slowed is told by its multi-cycle ratio off every whole number",
          "[probe_runner]") {
  // Undisturbed: a 3-cycle multiply chain, its call's fixed cost a fraction of a percent.
  CHECK(detail::ruler_off_whole(0.3334) < detail::kRulerWholeLimit);
  CHECK(detail::ruler_off_whole(0.3367) < detail::kRulerWholeLimit);
  CHECK(detail::ruler_off_whole(0.25) == Approx(0.0).margin(1e-12));  // a 4-cycle chain
  // The Zen 4 VM's runs whose other hardware thread stayed busy: 2.86 links.
  CHECK(detail::ruler_off_whole(0.3502) > detail::kRulerWholeLimit);
  CHECK(detail::ruler_off_whole(0.3476) > detail::kRulerWholeLimit);
  CHECK(detail::ruler_off_whole(0) == 0);  // not learned: not judged
  // Each figure of such a run is doubted, and says why.
  const auto said = [](double ratio, const std::string& emulator) {
    detail::TrustInputs in;
    in.ruler_chain_ratio = ratio;
    in.emulator = emulator;
    for (const std::string& d : detail::timing_doubts(in, ProbeOptions{}))
      if (d.find("the clock's add chain ran slowed") == 0) return d;
    return std::string();
  };
  CHECK(said(0.3502, "").find("a multi-cycle link took 2.86 of its adds") != std::string::npos);
  CHECK(said(0.3340, "").empty());
  CHECK(said(0.3502, "qemu").empty());  // an emulator's rows are doubted for that, not for this
}
