// Pipe groups (src/pairs/pipe_groups.cpp): the weights of a pair, the verdict from its time and the
// two floors, the basis from a seed matrix, the target's seeds; and on this machine, a basis whose
// members each share a pipe with themselves.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <vector>

#include "asm/target.hpp"
#include "hw_fixture.hpp"
#include "pairs/pipe_groups.hpp"
#include "skip.hpp"

using namespace peakprobe;

namespace {

using Matrix = std::vector<std::vector<std::optional<double>>>;

Matrix matrix(const std::vector<std::vector<double>>& v) {
  Matrix m;
  for (const auto& row : v) {
    std::vector<std::optional<double>> r;
    for (double x : row) r.push_back(x < 0 ? std::nullopt : std::optional<double>(x));
    m.push_back(r);
  }
  return m;
}

}  // namespace

TEST_CASE("pipes: balanced weights give both parts about the same time per group", "[pipes]") {
  CHECK(balanced_weights(0.5, 0.5) == std::pair{1, 1});
  CHECK(balanced_weights(0.25, 1.0) == std::pair{4, 1});
  CHECK(balanced_weights(1.0, 0.25) == std::pair{1, 4});
  CHECK(balanced_weights(0.33, 1.0) == std::pair{3, 1});
  // A divider 24 times slower than an add: the most the group allows, never more.
  const auto [a, b] = balanced_weights(0.25, 6.0);
  CHECK(a == 7);
  CHECK(b == 1);
  CHECK(balanced_weights(0.25, 6.0, 4) == std::pair{3, 1});
  // Broken inputs: 1:1, never a division by zero.
  CHECK(balanced_weights(0, 1) == std::pair{1, 1});
  CHECK(balanced_weights(-1, 1) == std::pair{1, 1});
  CHECK(balanced_weights(1, 1, 1) == std::pair{1, 1});
}

TEST_CASE("pipes: a pair is judged between its co-issue floor and its shared ceiling", "[pipes]") {
  const PartTiming half{0.5, 0}, quarter{0.25, 0};
  SECTION("as fast as each alone: none") {
    PipeVerdict v = judge_contention(0.5, 4, 1, 1, half, half, 0);
    CHECK(v.contention == Contention::none);
    REQUIRE(v.same_port);
    CHECK(*v.same_port == Approx(0));
    CHECK(*v.ipc == Approx(4.0));
    CHECK(v.weight_form == 1);
    CHECK(v.weight_basis == 1);
  }
  SECTION("as slow as both in sequence: shared") {
    PipeVerdict v = judge_contention(1.0, 4, 1, 1, half, half, 0);
    CHECK(v.contention == Contention::shared);
    CHECK(*v.same_port == Approx(1));
  }
  SECTION("in between: partial, and the measure is the position on the scale") {
    PipeVerdict v = judge_contention(0.75, 4, 1, 1, half, half, 0);
    CHECK(v.contention == Contention::partial);
    CHECK(*v.same_port == Approx(0.5));
  }
  SECTION("weights scale the parts: 4 quarter-cycle adds beside one 1-cycle multiply") {
    const PartTiming one{1.0, 0};
    CHECK(judge_contention(1.0, 3, 4, 1, quarter, one, 0).contention == Contention::none);
    CHECK(judge_contention(2.0, 3, 4, 1, quarter, one, 0).contention == Contention::shared);
  }
  SECTION("a part short of chains sets the co-issue floor, not contention") {
    // A 4-cycle chain on 2 rounds: at least 2 cycles per group whatever the pipes do. Measured at
    // 2.0 with a partner alone at 1.0: no room left to tell (the floor meets the ceiling).
    const PartTiming muladd{1.0, 4.0}, add{0.25, 0};
    PipeVerdict bound = judge_contention(2.0, 2, 1, 4, muladd, add, 0);
    CHECK(bound.contention == Contention::unmeasured);
    CHECK_THAT(bound.reason, Catch::Contains("chains"));
    // With enough rounds the chains do not bind, and the same time is contention.
    CHECK(judge_contention(2.0, 8, 1, 4, muladd, add, 0).contention == Contention::shared);
  }
  SECTION("a part on fewer chains than instances is bound by its busiest chain") {
    // Five adds and one 3-cycle multiply a group, 5 rounds. One chain per instance would leave the
    // multiply at 3/5 cycle a group; on two chains, 3 links of 3 cycles per 5 groups bound it at 1.8.
    const PartTiming mul{1.0, 3.0}, add5{0.2, 1.0};
    CHECK(judge_contention(1.8, 5, 1, 5, mul, add5, 0, 2, 0).contention == Contention::unmeasured);
    CHECK(judge_contention(1.8, 5, 1, 5, mul, add5, 0, 0, 0).contention == Contention::shared);
    // Its own five chains: 3/5 cycle a group, below its pipe time; 1.5 is then contention.
    const PipeVerdict v = judge_contention(1.5, 5, 1, 5, mul, add5, 0, 5, 8);
    CHECK(v.contention == Contention::partial);
    CHECK(*v.same_port == Approx(0.5));
    // Two rounds with a chain per instance: 1.5 cycles a group is the multiply's own chains.
    CHECK(judge_contention(1.5, 2, 1, 5, mul, add5, 0).contention == Contention::none);
  }
  SECTION("a one-pipe form among a wide part's pipes is partial from half what containment shows") {
    // One 1-cycle multiply beside five 0.2-cycle adds: on one of the adds' five pipes it adds a fifth
    // of a cycle to a group (0.2 on the scale); separate pipes add nothing.
    const PartTiming one{1.0, 0}, add5{0.2, 0};
    CHECK(contained_same_port(1.0, 2.0, 1, 5, one, add5) == Approx(0.2));
    CHECK(contained_same_port(1.0, 2.0, 5, 1, add5, one) == Approx(0.2));
    CHECK(judge_contention(1.15, 4, 1, 5, one, add5, 0).contention == Contention::partial);
    CHECK(judge_contention(1.15, 4, 5, 1, add5, one, 0).contention == Contention::partial);
    CHECK(judge_contention(1.07, 4, 1, 5, one, add5, 0).contention == Contention::none);
    // Parts at one rate: containment is a shared pipe, and the bound stays at kCoIssueBelow.
    CHECK(contained_same_port(1.0, 2.0, 1, 1, one, one) == Approx(1.0));
    CHECK(judge_contention(0.575, 4, 1, 1, half, half, 0).contention == Contention::none);  // 0.15
    CHECK(judge_contention(0.65, 4, 1, 1, half, half, 0).contention == Contention::partial);  // 0.30
    // However lopsided the rates, noise below kPartialFloor is no contention.
    const PartTiming slow{7.0, 0};
    CHECK(contained_same_port(7.0, 14.0, 1, 35, slow, add5) == Approx(1.0 / 35));
    CHECK(judge_contention(7.0 * 1.08, 4, 1, 35, slow, add5, 0).contention == Contention::none);
    CHECK(judge_contention(7.0 * 1.12, 4, 1, 35, slow, add5, 0).contention == Contention::partial);
  }
  SECTION("where a chain brings the floors close, partial also needs the pair 3% slower than co-issue") {
    // A 3.4-cycle chain on 2 rounds: co-issue 1.7 cycles a group, sharing 2.0. A tenth of that gap
    // (0.03 cycle) is inside one mix's spread; 3% of 1.7 is 0.051, 0.17 of the gap.
    const PartTiming mul{1.0, 3.4}, add5{0.2, 0};
    CHECK(judge_contention(1.74, 2, 1, 5, mul, add5, 0).contention == Contention::none);
    CHECK(judge_contention(1.80, 2, 1, 5, mul, add5, 0).contention == Contention::partial);
  }
  SECTION("at the core's issue width a slow pair is no evidence of a shared pipe") {
    // Two 6-per-cycle forms 1:1 on a 6-wide core: co-issue would still take 2/6 cycles per group,
    // which is what sharing would cost too.
    const PartTiming fast{1.0 / 6, 0};
    PipeVerdict v = judge_contention(1.0 / 3, 4, 1, 1, fast, fast, 6.0);
    CHECK(v.contention == Contention::issue_width);
    CHECK_FALSE(v.same_port);
    CHECK_THAT(v.reason, Catch::Contains("issue"));
    // A wider core leaves room again: the same time is now a shared pipe.
    CHECK(judge_contention(1.0 / 3, 4, 1, 1, fast, fast, 12.0).contention == Contention::shared);
  }
  SECTION("the issue width raises the co-issue floor without hiding contention above it") {
    // 4+4 quarter-cycle forms on a 6-wide core: together at best 8/6 cycles, sharing would take 2.
    CHECK(judge_contention(8.0 / 6, 4, 4, 4, quarter, quarter, 6.0).contention == Contention::none);
    CHECK(judge_contention(2.0, 4, 4, 4, quarter, quarter, 6.0).contention == Contention::shared);
  }
  SECTION("far slower than both in sequence: a penalty, not a pipe") {
    // Both in sequence take 1.0 per group; 340 is what mixing two register-state rules cost on a
    // Zen 3 VM (a fault at every switch).
    PipeVerdict v = judge_contention(340.0, 4, 1, 1, half, half, 0);
    CHECK(v.contention == Contention::penalty);
    CHECK_FALSE(v.same_port);
    CHECK_THAT(v.reason, Catch::Contains("340.0 cycles per group") && Catch::Contains("340.0x"));
    // A shared pipe served badly (1.4x) is still a shared pipe; from 1.5x on it is a penalty.
    CHECK(judge_contention(1.4, 4, 1, 1, half, half, 0).contention == Contention::shared);
    CHECK(judge_contention(1.51, 4, 1, 1, half, half, 0).contention == Contention::penalty);
    // The bound is the slower of the pipes in sequence and the parts' own chains: a part on one
    // chain of 8-cycle links (4 links a copy of 4 groups) takes 8 cycles a group whatever the pipes
    // do, so 10 is no penalty, though it is 10 times the pipes in sequence.
    const PartTiming chained{0.5, 8.0};
    const PipeVerdict bound = judge_contention(10.0, 4, 1, 1, chained, half, 0, 1, 0);
    CHECK(bound.contention == Contention::unmeasured);
    CHECK_THAT(bound.reason, Catch::Contains("chains bound"));
    CHECK(judge_contention(12.5, 4, 1, 1, chained, half, 0, 1, 0).contention == Contention::penalty);
    // At the issue width too: a penalty is told apart first, as it hides the width as well.
    const PartTiming fast{1.0 / 6, 0};
    CHECK(judge_contention(10.0, 4, 1, 1, fast, fast, 6.0).contention == Contention::penalty);
  }
  SECTION("broken inputs give no verdict") {
    CHECK(judge_contention(0, 4, 1, 1, half, half, 0).contention == Contention::unmeasured);
    CHECK(judge_contention(1, 0, 1, 1, half, half, 0).contention == Contention::unmeasured);
    CHECK(judge_contention(1, 4, 1, 1, PartTiming{0, 0}, half, 0).contention == Contention::unmeasured);
    CHECK(judge_contention(std::numeric_limits<double>::infinity(), 4, 1, 1, half, half, 0).contention ==
          Contention::unmeasured);
  }
}

TEST_CASE("pipes: a pair keeps its layout unless a part's latency needs more chains", "[pipes]") {
  // A register file of 14: each part's chains at R rounds are weight x R, or its limit where lower.
  int asked = 0;
  auto rounds_with = [&](int wa, int wb) {
    return [&asked, wa, wb](int la, int lb) {
      ++asked;
      auto chains = [](int limit, int w, int r) { return limit > 0 ? std::min(limit, w * r) : w * r; };
      int r = 0;
      while (r < 32 && chains(la, wa, r + 1) + chains(lb, wb, r + 1) <= 14) ++r;
      return r;
    };
  };
  SECTION("a 3-cycle chain beside five adds gets the chains its rate needs, and the rounds for them") {
    const PairLayout l = plan_pair_layout(5, 1, {0.2, 1.0}, {1.0, 3.0}, rounds_with(5, 1));
    CHECK(l.rounds == 5);    // the fewest that give the multiply its 5 chains (1.5 x 3 cycles x 1 a cycle)
    CHECK(l.chains_b == 5);
    // The adds need 8 (1.5 x 1 cycle x 5 a cycle), but 25 instances on 8 chains put 4 links on the
    // busiest, 0.8 cycle a group: 9 chains keep it at 3 links, 0.6, within the margin.
    CHECK(l.chains_a == 9);
    CHECK(equivalent_chains(l.chains_a, 5, l.rounds) == 8);
  }
  SECTION("parts whose chains cover their latency keep one chain per instance and the most rounds") {
    const PairLayout l = plan_pair_layout(1, 1, {0.5, 2.0}, {0.5, 2.0}, rounds_with(1, 1));
    CHECK(l.rounds == 7);
    CHECK(l.chains_a == 0);
    CHECK(l.chains_b == 0);
    // No chain through the destination (a load, a move out of a vector register): never starved.
    const PairLayout loads = plan_pair_layout(5, 2, {0.2, 1.0}, {0.5, 0}, rounds_with(5, 2));
    CHECK(loads.rounds == 2);
    CHECK(loads.chains_a == 0);
    CHECK(loads.chains_b == 0);
  }
  SECTION("limits that win no rounds leave the layout as it was") {
    // A 30-cycle chain: the limits cannot fit more rounds than one chain per instance does.
    const PairLayout l = plan_pair_layout(1, 1, {1.0, 30.0}, {1.0, 30.0}, rounds_with(1, 1));
    CHECK(l.rounds == 7);
    CHECK(l.chains_a == 0);
  }
  SECTION("evening out is dropped where the registers cannot hold it") {
    auto tight = [](int la, int lb) {  // 13 registers: 9 + 5 does not fit, 8 + 5 does
      auto chains = [](int limit, int w, int r) { return limit > 0 ? std::min(limit, w * r) : w * r; };
      int r = 0;
      while (r < 32 && chains(la, 5, r + 1) + chains(lb, 1, r + 1) <= 13) ++r;
      return r;
    };
    const PairLayout l = plan_pair_layout(5, 1, {0.2, 1.0}, {1.0, 3.0}, tight);
    CHECK(l.rounds == 5);
    CHECK(l.chains_a == 8);
    CHECK(l.chains_b == 5);
  }
  SECTION("no plan at all stays no plan") {
    asked = 0;
    const PairLayout l = plan_pair_layout(1, 1, {1.0, 3.0}, {1.0, 3.0}, [&](int, int) { ++asked; return 0; });
    CHECK(l.rounds == 0);
    CHECK(asked == 1);
  }
}

TEST_CASE("pipes: a part's fewest-chains reference is as bound as its busiest chain in the pair", "[pipes]") {
  CHECK(equivalent_chains(0, 5, 2) == 10);  // one chain per instance
  CHECK(equivalent_chains(8, 5, 5) == 6);   // 25 on 8 chains: 4 links on the busiest
  CHECK(equivalent_chains(5, 1, 5) == 5);
  CHECK(equivalent_chains(40, 1, 4) == 4);  // a limit above the instances is none
  CHECK(equivalent_chains(3, 0, 4) == 0);
}

TEST_CASE("pipes: the basis is one representative per cluster, the fastest that holds its cluster", "[pipes]") {
  // 0 add (0.25) and 1 popcnt (0.25) share; 2 a slow ALU op shares with both; 3 muladd and 4 mul share;
  // 5 spreads over both pipe kinds (0.5 with everything) and must stand alone.
  const std::vector<std::string> seeds = {"add", "popcnt", "slow-alu", "muladd", "mul", "spread"};
  const std::vector<PartTiming> t = {{0.25, 0}, {0.25, 0}, {1.0, 0}, {0.5, 4}, {0.5, 0}, {0.25, 0}};
  const Matrix m = matrix({{1, 1, 1, 0, 0, 0.5},
                           {1, 1, 0.9, 0, 0, 0.5},
                           {1, 0.9, 1, 0, 0, 0.5},
                           {0, 0, 0, 1, 1, 0.5},
                           {0, 0, 0, 1, 1, 0.5},
                           {0.5, 0.5, 0.5, 0.5, 0.5, 1}});
  const auto basis = choose_basis(seeds, t, m);
  REQUIRE(basis.size() == 3);
  CHECK(basis[0].members == std::vector<std::string>{"add", "popcnt", "slow-alu"});
  CHECK(basis[0].instruction == "add");  // as fast as popcnt and purer (1.0 with slow-alu, not 0.9)
  CHECK(basis[0].recip_throughput == Approx(0.25));
  CHECK(basis[1].members == std::vector<std::string>{"muladd", "mul"});
  CHECK(basis[1].instruction == "muladd");  // as fast as mul, equally pure: the first
  CHECK(basis[2].members == std::vector<std::string>{"spread"});
  CHECK(basis[2].instruction == "spread");
}

TEST_CASE("pipes: a clearly purer seed stands for its cluster, one purer by noise does not", "[pipes]") {
  // x and y share their pipes and run as fast; z is apart. x also contends with z: by 0.3 it is
  // clearly the less pure, by 0.02 (the noise of one pair measure) the two tie and x, listed first, stays.
  const std::vector<std::string> seeds = {"x", "y", "z"};
  const std::vector<PartTiming> t = {{0.5, 0}, {0.5, 0}, {1.0, 0}};
  for (const auto& [x_with_z, member] : std::vector<std::pair<double, std::string>>{{0.3, "y"}, {0.02, "x"}}) {
    const auto basis = choose_basis(seeds, t, matrix({{1, 1, x_with_z}, {1, 1, 0}, {x_with_z, 0, 1}}));
    REQUIRE(basis.size() == 2);
    CHECK(basis[0].members == std::vector<std::string>{"x", "y"});
    CHECK(basis[0].instruction == member);
  }
}

TEST_CASE("pipes: seeds never measured together stay apart", "[pipes]") {
  const std::vector<std::string> seeds = {"a", "b"};
  const auto basis = choose_basis(seeds, {{1, 0}, {1, 0}}, matrix({{1, -1}, {-1, 1}}));
  REQUIRE(basis.size() == 2);
  CHECK(basis[0].instruction == "a");
  CHECK(basis[1].instruction == "b");
  CHECK(choose_basis({}, {}, {}).empty());
}

TEST_CASE("pipes: a seed pair measured in several passes keeps the median of the passes that judged it",
          "[pipes]") {
  using P = std::vector<std::optional<double>>;
  CHECK(*median_of_passes(P{0.2, 0.9, 0.3}) == Approx(0.3));  // one noisy pass moves nothing
  CHECK(*median_of_passes(P{0.2, std::nullopt, 0.4}) == Approx(0.3));
  CHECK(*median_of_passes(P{0.7}) == Approx(0.7));
  // Most passes without a verdict (issue width, doubted): no value, as in a single pass.
  CHECK_FALSE(median_of_passes(P{std::nullopt, 0.5, std::nullopt}));
  CHECK_FALSE(median_of_passes(P{std::nullopt}));
  CHECK_FALSE(median_of_passes(P{}));
  CHECK_FALSE(median_of_passes(P{std::nan(""), std::nan(""), 0.5}));
}

TEST_CASE("pipes: every seed candidate of the target resolves, and this CPU gets one seed per kind it runs",
          "[pipes]") {
  const isa::Target& target = isa::host_target();
  const auto candidates = target.pipe_seed_candidates();
  REQUIRE(candidates.size() >= 12);  // ALU, multiplier, divider, loads, stores, FP and vector kinds
  for (const auto& alternatives : candidates) {
    REQUIRE_FALSE(alternatives.empty());
    for (const auto& text : alternatives) {
      INFO(text);
      auto form = target.resolve(text);
      CHECK(form);
    }
  }
  const auto seeds = pipe_seeds(test::this_cpu());
  CHECK(seeds.size() <= candidates.size());
  CHECK(seeds.size() >= candidates.size() / 2);  // a CPU with no vector unit at all is no host of ours
  for (const auto& s : seeds) CHECK(std::count(seeds.begin(), seeds.end(), s) == 1);
}

TEST_CASE("hw: each member of this CPU's pipe basis shares a pipe with itself", "[hw][pipes]") {
  ProbeRunner& runner = test::shared_runner();
  std::vector<ProbeSpec> seeds;
  for (const auto& text : pipe_seeds(test::this_cpu())) seeds.push_back(test::spec(text));
  // An instruction interleaved with itself runs as slowly as both copies in sequence: a shared pipe,
  // on any core. The first and last members are checked against the whole basis, themselves
  // included. A basis measured while the core was slowed (the runner then moves to a quieter core,
  // and the pairs run there) can make a self-pair look partial: an undisturbed attempt shows it.
  PipeGroups g;
  std::vector<std::vector<PipeVerdict>> verdicts;
  size_t judged = 0;
  test::in_one_of(3, [&] {
    g = find_pipe_basis(runner, seeds);
    if (g.basis.size() < 2) return false;
    std::vector<ProbeResult> alone = runner.run_batch({test::spec(g.basis.front().instruction),
                                                       test::spec(g.basis.back().instruction)});
    std::vector<PipeSubject> subjects;
    for (size_t i = 0; i < alone.size(); ++i)
      subjects.push_back({test::spec(i == 0 ? g.basis.front().instruction : g.basis.back().instruction), &alone[i]});
    verdicts = classify_against_basis(runner, g, subjects);
    if (verdicts.size() != 2) return false;
    judged = 0;
    for (size_t i = 0; i < 2; ++i) {
      const size_t self = i == 0 ? 0 : g.basis.size() - 1;
      if (verdicts[i].size() != g.basis.size()) return false;
      const PipeVerdict& v = verdicts[i][self];
      if (v.contention == Contention::unmeasured || v.contention == Contention::issue_width) continue;
      ++judged;
      if (v.contention != Contention::shared) return false;
    }
    return true;
  });
  INFO("skipped seeds: " << g.skipped_seeds.size());
  if (g.basis.size() < 2) PP_SKIP("fewer than two basis members could be measured on this machine");
  // Every seed measured lands in exactly one member's cluster.
  size_t members = 0;
  for (const auto& b : g.basis) {
    members += b.members.size();
    CHECK(std::find(b.members.begin(), b.members.end(), b.instruction) != b.members.end());
    CHECK(b.recip_throughput > 0);
  }
  CHECK(members == g.seeds.size());
  CHECK(g.issue_width >= 1);
  REQUIRE(verdicts.size() == 2);
  for (size_t i = 0; i < 2; ++i) {
    const size_t self = i == 0 ? 0 : g.basis.size() - 1;
    REQUIRE(verdicts[i].size() == g.basis.size());
    for (size_t k = 0; k < g.basis.size(); ++k) CHECK(verdicts[i][k].basis == g.basis[k].instruction);
    const PipeVerdict& v = verdicts[i][self];
    INFO(g.basis[self].instruction << " with itself: " << to_string(v.contention) << " " << v.reason);
    if (v.contention == Contention::unmeasured || v.contention == Contention::issue_width) continue;
    CHECK(v.contention == Contention::shared);
  }
  if (judged == 0) PP_SKIP("neither self-pair could be judged here (mistrusted or at the issue width)");
}

TEST_CASE("hw: pairs measured after the runner moves to another core are judged with that core's references",
          "[hw][pipes]") {
  const CpuInfo& cpu = test::this_cpu();
  if (cpu.core_order.size() < 2) PP_SKIP("one logical CPU: the runner has nowhere to move");
  ProbeRunner& runner = test::shared_runner();
  const int start = runner.cpu();
  const int other = cpu.core_order[0] == start ? cpu.core_order[1] : cpu.core_order[0];
  const std::vector<std::string> seeds = pipe_seeds(cpu);
  REQUIRE(seeds.size() >= 2);
  // A basis of the first two seeds (one kind of pipe each on every core so far), each also a subject:
  // its pair with itself shares its pipe on any core.
  std::vector<ProbeResult> alone = runner.run_batch({test::spec(seeds[0]), test::spec(seeds[1])});
  REQUIRE(alone.size() == 2);
  for (const auto& a : alone)
    if (!a.recip_throughput_cycles) PP_SKIP(a.instruction << " could not be measured alone: " << a.reason);
  PipeGroups g;
  for (size_t i = 0; i < 2; ++i) {
    g.basis.push_back({seeds[i], {seeds[i]}, *alone[i].recip_throughput_cycles});
    // The widest issue seen (as find_pipe_basis takes it): a pair of the slower seed runs far below it.
    g.issue_width = std::max(g.issue_width, alone[i].throughput_ipc.value_or(0.0));
  }
  std::vector<PipeSubject> subjects = {{test::spec(seeds[0]), &alone[0]}, {test::spec(seeds[1]), &alone[1]}};
  std::vector<std::vector<PipeVerdict>> verdicts;
  std::string moved;
  test::in_one_of(3, [&] {
    std::string err;
    if (!runner.move_to(start, &err)) return false;
    moved.clear();
    // The move comes as soon as the first verdict is in: the references measured so far are from
    // the first core, every pair after it runs on the other.
    verdicts = classify_against_basis(runner, g, subjects, {}, {}, [&](size_t, const std::vector<PipeVerdict>&) {
      if (moved.empty()) moved = runner.move_to(other, &err) ? "yes" : "no: " + err;
    });
    size_t self_judged = 0;
    for (size_t i = 0; i < 2; ++i) {
      const PipeVerdict& self = verdicts[i][i];
      if (self.contention == Contention::unmeasured || self.contention == Contention::issue_width) continue;
      if (self.contention != Contention::shared) return false;
      ++self_judged;
    }
    return self_judged > 0;  // a doubted pair (a busy moment) gets another attempt
  });
  runner.move_to(start);
  if (moved != "yes") PP_SKIP("the runner could not move to CPU " << other << ": " << moved);
  REQUIRE(verdicts.size() == 2);
  size_t judged = 0;
  for (size_t i = 0; i < 2; ++i)
    for (size_t k = 0; k < 2; ++k) {
      const PipeVerdict& v = verdicts[i][k];
      INFO(seeds[i] << " against " << v.basis << ": " << to_string(v.contention) << " " << v.reason);
      // Every pair was brought together with references from its own core: none is left waiting.
      CHECK(v.reason.find("was not measured on CPU") == std::string::npos);
      CHECK(v.reason.find("the run stopped before this pair") == std::string::npos);
      if (i != k || v.contention == Contention::unmeasured || v.contention == Contention::issue_width) continue;
      ++judged;
      CHECK(v.contention == Contention::shared);
    }
  if (judged == 0) PP_SKIP("neither self-pair could be judged here (mistrusted or at the issue width)");
}
