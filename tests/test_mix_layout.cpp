#include <catch2/catch.hpp>

#include <algorithm>

#include "pairs/mix_layout.hpp"

using namespace peakprobe;

namespace {

// A register file of `registers`: at R rounds a part holds weight x R chains, or its limit where
// lower; a part marked `capped` (it only writes its destination) at most 4 without a limit, as
// plan_mix gives it; a part marked `elsewhere` takes its registers from another file.
struct Registers {
  int registers;
  std::vector<int> weights;
  std::vector<bool> capped;
  std::vector<bool> elsewhere = {};
  int asked = 0;
  int operator()(const std::vector<int>& limits) {
    ++asked;
    auto held = [&](int r) {
      int n = 0;
      for (size_t i = 0; i < weights.size(); ++i) {
        if (i < elsewhere.size() && elsewhere[i]) continue;
        const int instances = weights[i] * r;
        n += limits[i] > 0 ? std::min(limits[i], instances) : capped[i] ? std::min(4, instances) : instances;
      }
      return n;
    };
    int r = 0;
    while (r < 32 && held(r + 1) <= registers) ++r;
    return r;
  }
};

}  // namespace

TEST_CASE("mix layout: a long chain beside parts that need no registers of their own gets them", "[mix]") {
  // Three 3-cycle multiplies and three loads a group in twelve registers: one chain per instance
  // gives two rounds, six multiply chains, at least 1.5 cycles a group where the parts allow 1.0.
  const std::vector<int> w = {3, 3};
  const std::vector<PartTiming> t = {{1.0 / 3, 3.0}, {0.25, 0}};
  Registers regs{12, w, {false, true}};
  const MixLayout plain{regs({0, 0}), {0, 0}};
  REQUIRE(plain.rounds == 2);
  CHECK(chain_floor(plain, w, t) == Approx(1.5));

  const MixLayout l = plan_mix_layout(w, t, std::ref(regs));
  REQUIRE(l.chains.size() == 2);
  CHECK(l.chains[1] == 0);  // the loads keep what the planner gives them (4 registers)
  CHECK(l.chains[0] == 8);  // the multiplies get what is left
  CHECK(l.rounds == 8);     // 24 instances on 8 chains: three links each, no busier chain
  CHECK(chain_floor(l, w, t) == Approx(1.125));
  CHECK(regs({l.chains[0], l.chains[1]}) >= l.rounds);

  // A part whose limit the planner ignores (it writes memory) is never limited.
  const MixLayout fixed = plan_mix_layout(w, t, std::ref(regs), {{true, 0}, {}});
  CHECK(fixed.chains == std::vector<int>{0, 0});
  CHECK(fixed.rounds == 2);

  // Loads measured to keep their rate on two chains rotate through two: the multiplies get ten.
  const MixLayout two = plan_mix_layout(w, t, std::ref(regs), {{}, {false, 2}});
  CHECK(two.chains == std::vector<int>{10, 2});
  CHECK(two.rounds == 10);  // 30 instances on 10 chains
  CHECK(chain_floor(two, w, t) == Approx(0.9));
}

TEST_CASE("mix layout: two chained parts short of registers share them by what binds", "[mix]") {
  // Four 1-cycle adds and two 3-cycle multiplies a group (0.75 cycles alone) in twelve registers:
  // one chain per instance gives two rounds, four multiply chains, 1.5 cycles a group. The adds
  // want 8 chains and the multiplies 18; the twelve registers go 5 : 7.
  const std::vector<int> w = {4, 2};
  const std::vector<PartTiming> t = {{0.1875, 1.0}, {1.0 / 3, 3.0}};
  Registers regs{12, w, {false, false}};
  const MixLayout l = plan_mix_layout(w, t, std::ref(regs));
  CHECK(l.chains == std::vector<int>{5, 7});
  CHECK(l.rounds == 7);  // each part's busiest chain then carries 6 and 2 links: 0.857 cycles a group
  CHECK(chain_floor(l, w, t) == Approx(6.0 / 7));
}

TEST_CASE("mix layout: parts whose chains cover their latency keep one chain per instance", "[mix]") {
  // Six 1-cycle adds and two vector adds (of another register file).
  const std::vector<int> w = {6, 2};
  const std::vector<PartTiming> t = {{0.1875, 1.0}, {0.5, 0}};
  Registers regs{12, w, {false, true}, {false, true}};
  const MixLayout l = plan_mix_layout(w, t, std::ref(regs));
  CHECK(l.rounds == 2);
  CHECK(l.chains == std::vector<int>{0, 0});
}

TEST_CASE("mix layout: no timing, no plan or no better layout leaves the plain one", "[mix]") {
  const std::vector<int> w = {1, 1};
  Registers regs{12, w, {false, false}};
  SECTION("a part without a timing") {
    const MixLayout l = plan_mix_layout(w, {{0, 3.0}, {1.0, 3.0}}, std::ref(regs));
    CHECK(l.rounds == 6);
    CHECK(l.chains == std::vector<int>{0, 0});
  }
  SECTION("no plain plan: more chained instances a group than registers rotate through fewer chains") {
    const std::vector<int> heavy = {8, 8};
    Registers few{12, heavy, {false, false}};
    const std::vector<PartTiming> mul = {{1.0 / 3, 3.0}, {1.0 / 3, 3.0}};
    REQUIRE(few({0, 0}) == 0);
    const MixLayout l = plan_mix_layout(heavy, mul, std::ref(few));
    REQUIRE(l.rounds >= 1);
    CHECK(l.chains[0] + l.chains[1] == 12);
    CHECK(few(l.chains) >= l.rounds);
  }
  SECTION("no plan at all") {
    int asked = 0;
    const MixLayout l = plan_mix_layout(w, {{1.0, 3.0}, {1.0, 3.0}}, [&](const std::vector<int>&) {
      ++asked;
      return 0;
    });
    CHECK(l.rounds == 0);
    CHECK(asked <= 4);  // plain, what they need, a round's worth, one chain each: then it gives up
  }
  SECTION("a 30-cycle chain no layout covers") {
    const MixLayout l = plan_mix_layout(w, {{1.0, 30.0}, {1.0, 30.0}}, std::ref(regs));
    CHECK(chain_floor(l, w, {{1.0, 30.0}, {1.0, 30.0}}) <= 30.0 / 6 + 1e-9);
  }
}

TEST_CASE("mix layout: a mix slower than its parts and near its chains' floor is doubted", "[mix]") {
  const std::vector<int> w = {3, 3};
  const std::vector<PartTiming> t = {{1.0 / 3, 3.0}, {0.25, 0}};
  const MixLayout plain{2, {0, 0}};  // floor 1.5 cycles a group, the parts allow 1.0
  CHECK_FALSE(chain_bound_doubt(plain, w, t, 1.0));   // at its parts' rate
  CHECK_FALSE(chain_bound_doubt(plain, w, t, 1.45));  // below its floor: the floor is wrong, not binding
  // No more bound than the multiplies' own stream alone: 3 a group x 3 cycles / 6 rounds alone.
  CHECK_FALSE(chain_bound_doubt(plain, w, t, 1.51, 1.5));
  const auto at_floor = chain_bound_doubt(plain, w, t, 1.51);
  REQUIRE(at_floor);
  CHECK(at_floor->find("part 1 has 6 chains of 3.00 cycles") != std::string::npos);
  CHECK(at_floor->find("1.500") != std::string::npos);
  CHECK(chain_bound_doubt(plain, w, t, 1.79));       // within 1.2 times its floor: chains may explain it
  CHECK_FALSE(chain_bound_doubt(plain, w, t, 1.81));  // beyond: something else (a shared pipe) bound it too
  const MixLayout wide{10, {10, 0}};                 // floor 0.9: not covered with the margin (1.35)
  CHECK_FALSE(chain_bound_doubt(wide, w, t, 1.02));  // ... but the mix ran at its parts' own rate
  CHECK(chain_bound_doubt(wide, w, t, 1.07));
  CHECK_FALSE(chain_bound_doubt(wide, w, t, 1.09));
  const MixLayout covered{20, {20, 0}};              // floor 0.45 x 1.5 below 1.0: covered
  CHECK_FALSE(chain_bound_doubt(covered, w, t, 1.2));
  CHECK_FALSE(chain_bound_doubt(MixLayout{}, w, t, 1.0));
}

TEST_CASE("mix layout: chain arithmetic", "[mix]") {
  CHECK(busiest_chain_links(0, 5, 2) == 1);
  CHECK(busiest_chain_links(8, 5, 5) == 4);  // 25 instances on 8 chains
  CHECK(busiest_chain_links(3, 0, 4) == 0);
  CHECK(chains_needed(3.0, 3, 1.0) == 14);   // 1.5 x 3 cycles x 3 a cycle, rounded up
  CHECK(chains_needed(0, 3, 1.0) == 0);
  ProbeResult r;
  r.latency_cycles = 4.0;
  r.latency_method = "chain through the destination";
  CHECK(destination_chain_latency(r) == Approx(4.0));
  r.latency_method = "chain through operand 2";
  CHECK(destination_chain_latency(r) == 0);
}
