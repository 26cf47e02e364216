#include "pairs/mix_layout.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

namespace peakprobe {
namespace {

// A mix within this fraction of what its parts alone allow ran at their rate (one mix's run-to-run
// spread is a few percent).
constexpr double kAtRate = 1.03;
// A mix within this factor of its chain floor may be bound by its chains. Chains slow a stream
// beyond their floor too (five adds a cycle on six chains ran 1.56 times theirs), but so does a
// shared pipe: two 3-cycle multiplies a group on their three pipes ran 0.667 cycles, 1.33 times the
// floor of their twelve chains, and are told apart by this bound.
constexpr double kNearFloor = 1.2;
// ... and from this factor of it: a mix well below its chains' floor was not bound by them (the floor
// or a latency is wrong).
constexpr double kBelowFloor = 0.97;
// Floors this close count as equal (measured latencies carry a little noise): fewer rounds, and the
// plain layout, win a tie.
constexpr double kFloorTie = 0.01;
// Rounds a layout may take (what max_rounds tries at most).
constexpr int kMostRounds = 32;

bool positive(double x) { return x > 0 && std::isfinite(x); }

}  // namespace

double group_rate(const std::vector<int>& weights, const std::vector<PartTiming>& parts) {
  double g = 0;
  for (size_t i = 0; i < parts.size() && i < weights.size(); ++i) {
    if (!positive(parts[i].recip) || weights[i] < 1) return 0;
    g = std::max(g, weights[i] * parts[i].recip);
  }
  return g;
}

int busiest_chain_links(int limit, int weight, int rounds) {
  const int instances = weight * rounds;
  const int chains = limit > 0 ? std::min(limit, instances) : instances;
  return chains > 0 ? (instances + chains - 1) / chains : 0;
}

double part_chain_floor(double latency, int limit, int weight, int rounds) {
  if (!positive(latency) || rounds < 1) return 0;
  return latency * busiest_chain_links(limit, weight, rounds) / rounds;
}

int chains_needed(double latency, int weight, double group) {
  if (!(latency > 0) || !(group > 0) || !std::isfinite(latency)) return 0;
  return std::max(1, int(std::ceil(kChainMargin * latency * weight / group)));
}

double destination_chain_latency(const ProbeResult& r) {
  auto through_destination = [](const std::string& method) {
    return method.rfind("chain through the destination", 0) == 0;  // the method text of both ISAs
  };
  double l = 0;
  for (const auto& o : r.latencies)
    if (through_destination(o.method)) l = o.cycles;
  if (l <= 0 && r.latency_cycles && through_destination(r.latency_method)) l = *r.latency_cycles;
  return std::isfinite(l) && l > 0 ? l : 0.0;
}

double chain_floor(const MixLayout& layout, const std::vector<int>& weights, const std::vector<PartTiming>& parts) {
  if (layout.rounds < 1) return 0;
  double f = 0;
  for (size_t i = 0; i < parts.size() && i < weights.size(); ++i)
    f = std::max(f, part_chain_floor(parts[i].chain_latency, i < layout.chains.size() ? layout.chains[i] : 0,
                                     weights[i], layout.rounds));
  return f;
}

MixLayout plan_mix_layout(const std::vector<int>& weights, const std::vector<PartTiming>& parts,
                          const std::function<int(const std::vector<int>&)>& rounds_with,
                          const std::vector<PartRules>& rules) {
  const size_t n = parts.size();
  MixLayout plain;
  plain.chains.assign(n, 0);
  plain.rounds = rounds_with(plain.chains);
  const double group = group_rate(weights, parts);
  if (n == 0 || weights.size() != n || !(group > 0)) return plain;
  // Without a plain plan (one round needs more registers than there are: sixteen multiplies and
  // sixteen more a group) only rotating instances through fewer chains can run the mix.
  const double plain_floor = plain.rounds < 1 ? std::numeric_limits<double>::infinity()
                                              : chain_floor(plain, weights, parts);
  if (kChainMargin * plain_floor <= group) return plain;

  // What each chained part needs at the mix's rate; the rounds that give every chain about one link.
  std::vector<int> need(n, 0);
  for (size_t i = 0; i < n; ++i)
    need[i] = i < rules.size() && rules[i].fixed ? 0 : chains_needed(parts[i].chain_latency, weights[i], group);
  auto want_rounds = [&](const std::vector<int>& chains) {
    int r = 1;
    for (size_t i = 0; i < n; ++i)
      if (chains[i] > 0) r = std::max(r, (chains[i] + weights[i] - 1) / weights[i]);
    return r;
  };
  auto fits = [&](const std::vector<int>& chains) { return rounds_with(chains) >= want_rounds(chains); };
  MixLayout limited;
  limited.chains = need;
  if (!fits(limited.chains)) {
    // The registers cannot hold them all. Each chained part starts from one round's worth (its
    // weight), and the next register goes to the part whose chains bind most (latency x weight /
    // chains: its floor once the rounds are many), while it fits. A part without a chain rotates
    // through the fewest its stream was measured to keep its rate on; where not measured it keeps
    // what the planner gives it.
    std::vector<bool> done(n, false);
    for (size_t i = 0; i < n; ++i) {
      const int fewest = i < rules.size() && !rules[i].fixed ? rules[i].fewest : 0;
      limited.chains[i] = need[i] == 0 ? fewest : std::min(need[i], weights[i]);
      done[i] = need[i] == 0 || limited.chains[i] >= need[i];
    }
    // Where even one round's worth does not fit, from one chain each.
    if (!fits(limited.chains))
      for (size_t i = 0; i < n; ++i)
        if (need[i] > 0) limited.chains[i] = 1, done[i] = need[i] <= 1;
    if (!fits(limited.chains)) return plain;
    for (;;) {
      size_t pick = n;
      double worst = 0;
      for (size_t i = 0; i < n; ++i) {
        if (done[i]) continue;
        const double f = parts[i].chain_latency * weights[i] / limited.chains[i];
        if (pick == n || f > worst) pick = i, worst = f;
      }
      if (pick == n) break;
      ++limited.chains[pick];
      if (!fits(limited.chains)) {
        --limited.chains[pick];
        done[pick] = true;
      } else if (limited.chains[pick] >= need[pick]) {
        done[pick] = true;
      }
    }
  }
  // Instances rotate unevenly where the chains do not divide them (twelve on ten chains put two links
  // on the busiest): the fewest rounds from the wanted ones that cover the latencies with the margin,
  // or else the rounds with the lowest floor.
  const int wanted = want_rounds(limited.chains), most = std::min(kMostRounds, rounds_with(limited.chains));
  double best = 0;
  for (int r = wanted; r <= most; ++r) {
    MixLayout at{r, limited.chains};
    const double f = chain_floor(at, weights, parts);
    if (limited.rounds == 0 || f < best * (1 - kFloorTie)) best = f, limited.rounds = r;
    if (kChainMargin * f <= group) break;
  }
  return limited.rounds > 0 && best < plain_floor * (1 - kFloorTie) ? limited : plain;
}

std::optional<std::string> chain_bound_doubt(const MixLayout& layout, const std::vector<int>& weights,
                                             const std::vector<PartTiming>& parts, double cycles_per_group,
                                             double alone_floor) {
  const double floor = chain_floor(layout, weights, parts);
  const double group = group_rate(weights, parts);
  if (!(floor > 0) || !(group > 0) || !(cycles_per_group > 0)) return std::nullopt;
  // Chains that cover the mix's rate with the margin do not bind; a mix at its parts' own rate was not
  // bound by them; one beyond the margin over its floor was bound by something else.
  if (kChainMargin * floor <= group || cycles_per_group <= kAtRate * group || cycles_per_group > kNearFloor * floor ||
      cycles_per_group < kBelowFloor * floor || floor <= alone_floor * (1 + kFloorTie))
    return std::nullopt;
  // The part whose chains bind: the one with the highest floor.
  size_t worst = 0;
  double worst_floor = -1;
  for (size_t i = 0; i < parts.size() && i < weights.size(); ++i) {
    if (!positive(parts[i].chain_latency)) continue;
    const double f = part_chain_floor(parts[i].chain_latency, i < layout.chains.size() ? layout.chains[i] : 0,
                                      weights[i], layout.rounds);
    if (f > worst_floor) worst_floor = f, worst = i;
  }
  const int limit = worst < layout.chains.size() ? layout.chains[worst] : 0;
  const int instances = weights[worst] * layout.rounds;
  return fmt::format(
      "its own chains may bind it: part {} has {} chains of {:.2f} cycles for {} instances a copy of {} groups, at "
      "least {:.3f} cycles a group, and a stream that close to its chains' floor runs slower than it; its parts "
      "alone allow {:.3f}",
      worst + 1, limit > 0 ? std::min(limit, instances) : instances, parts[worst].chain_latency, instances,
      layout.rounds, floor, group);
}

}  // namespace peakprobe
