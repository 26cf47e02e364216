#include "pairs/pair_runner.hpp"

#include <algorithm>
#include <numeric>
#include <set>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "pairs/classify.hpp"
#include "pairs/cluster.hpp"
#include "pairs/mix_layout.hpp"
#include "pairs/pipe_groups.hpp"

namespace peakprobe {
namespace {

bool measured(const MixResult& m) { return m.status == Status::ok || m.status == Status::mistrusted; }

double flops_of(const MixResult& m) { return m.flops_per_cycle.value_or(0.0); }

// Keeps the faster of two measurements of the same stream. A busy neighbour (another guest's thread
// on the host core's SMT sibling) slows throughput streams for milliseconds at a time while the
// latency-bound clock chain does not notice, so alone figures are re-measured apart in time and the
// minimum kept: noise only adds time.
void keep_faster(MixResult& kept, const MixResult& again) {
  if (!measured(again)) return;
  if (!measured(kept) || *again.cycles_per_group < *kept.cycles_per_group) kept = again;
}

void set_alone(PairResult& p, const MixResult& a, const MixResult& b) {
  if (p.mix.parts.size() != 2) return;
  p.mix.parts[0].alone_cycles = measured(a) ? a.cycles_per_group : std::nullopt;
  p.mix.parts[1].alone_cycles = measured(b) ? b.cycles_per_group : std::nullopt;
}

}  // namespace

MixResult measure_alone(ProbeRunner& runner, const ProbeSpec& spec) { return runner.run_mix({{spec, 1}}); }

bool at_issue_width(const PairResult& p, double issue_width) {
  // The rule of `table --pipes` (judge_contention): the width leaves less than a quarter of the
  // faster part between co-issue and one shared pipe.
  const MixResult& m = p.mix;
  if (m.parts.size() != 2 || !m.parts[0].alone_cycles || !m.parts[1].alone_cycles || !m.cycles_per_group) return false;
  return judge_contention(*m.cycles_per_group, 1, m.parts[0].weight, m.parts[1].weight, {*m.parts[0].alone_cycles, 0},
                          {*m.parts[1].alone_cycles, 0}, issue_width)
             .contention == Contention::issue_width;
}

void classify(PairResult& p) {
  const MixResult& m = p.mix;
  if (!measured(m) || m.parts.size() != 2 || !m.parts[0].alone_cycles || !m.parts[1].alone_cycles) return;
  const double a = m.parts[0].weight * *m.parts[0].alone_cycles;
  const double b = m.parts[1].weight * *m.parts[1].alone_cycles;
  p.same_port = same_port_measure(*m.cycles_per_group, a, b);
  p.classification = classify_pair(*p.same_port);
  p.penalty = slower_than_serial(*m.cycles_per_group, a, b);
}

namespace {

// Chains a part without a chain of its own is tried on alone before a layout may rotate it through
// that few.
constexpr int kFewChains = 2;
// The weight at which a part's rounds with and without a chain limit are compared.
constexpr int kProbeWeight = 8;

// A mix laid out for its parts' chains (pairs/mix_layout.hpp), with what its doubt needs.
struct LaidOut {
  MixResult mix;
  MixLayout layout;
  std::vector<int> weights;
  std::vector<PartTiming> timings;
  double alone_floor = 0;  // the highest chain floor of a part's own stream alone
};

// The mix laid out for its parts' chains: `alone` holds each part's one-part mix (its cycles per
// instruction); each part's chain latency comes from `inst`.
LaidOut run_laid_out(ProbeRunner& runner, const std::vector<MixSpec>& parts, const std::vector<const MixResult*>& alone) {
  LaidOut out;
  std::vector<PartRules> rules(parts.size());
  for (size_t i = 0; i < parts.size(); ++i) {
    out.weights.push_back(parts[i].weight);
    PartTiming t;
    if (i < alone.size() && alone[i] && measured(*alone[i])) t.recip = *alone[i]->cycles_per_group;
    if (t.recip > 0 && parts.size() > 1) t.chain_latency = destination_chain_latency(runner.run(parts[i].probe));
    out.timings.push_back(t);
    // A part whose chain limit the planner ignores (it writes memory) fits no more rounds with a
    // limit of one than without. Asked at a weight of kProbeWeight, where one chain per instance
    // cannot reach the planner's cap on rounds (24 on AArch64, where a part alone often reaches it).
    rules[i].fixed = t.chain_latency > 0 && runner.mix_rounds({{parts[i].probe, kProbeWeight, 1}}) <=
                                                runner.mix_rounds({{parts[i].probe, kProbeWeight}});
    // Its own stream alone: latency / rounds a group of this part's weight.
    if (const int own = runner.mix_rounds({{parts[i].probe, 1}}); own > 0)
      out.alone_floor = std::max(out.alone_floor, parts[i].weight * t.chain_latency / own);
  }
  auto rounds_with = [&](const std::vector<int>& chains) {
    std::vector<MixSpec> limited = parts;
    for (size_t i = 0; i < limited.size() && i < chains.size(); ++i) limited[i].chains = chains[i];
    return runner.mix_rounds(limited);
  };
  out.layout = plan_mix_layout(out.weights, out.timings, rounds_with, rules);
  // Still short of chains: a part without a chain may give up registers where its stream alone on
  // kFewChains chains runs as fast (within 3%; a false dependency on the old destination would slow
  // it). Asked only then, and only of a part whose register use a limit changes (not a store).
  if (chain_floor(out.layout, out.weights, out.timings) * kChainMargin > group_rate(out.weights, out.timings)) {
    bool asked = false;
    for (size_t i = 0; i < parts.size(); ++i) {
      if (out.timings[i].chain_latency > 0 || !(out.timings[i].recip > 0)) continue;
      if (runner.mix_rounds({{parts[i].probe, 1, kFewChains}}) <= runner.mix_rounds({{parts[i].probe, 1}})) continue;
      const MixResult few = runner.run_mix({{parts[i].probe, 1, kFewChains}});
      asked = true;
      if (few.status == Status::ok && few.cycles_per_group && *few.cycles_per_group <= 1.03 * out.timings[i].recip)
        rules[i].fewest = kFewChains;
    }
    if (asked) out.layout = plan_mix_layout(out.weights, out.timings, rounds_with, rules);
  }
  const bool plain = std::all_of(out.layout.chains.begin(), out.layout.chains.end(), [](int c) { return c == 0; });
  std::vector<MixSpec> laid = parts;
  for (size_t i = 0; i < laid.size() && i < out.layout.chains.size(); ++i) laid[i].chains = out.layout.chains[i];
  std::vector<std::string> each;
  for (size_t i = 0; spdlog::should_log(spdlog::level::debug) && i < parts.size() && i < out.layout.chains.size(); ++i)
    each.push_back(fmt::format("{} on {} ({:.2f}-cycle chain)", parts[i].probe.text,
                               out.layout.chains[i] == 0 ? std::string("the planner's chains")
                                                         : fmt::format("{} chains", out.layout.chains[i]),
                               out.timings[i].chain_latency));
  spdlog::debug("mix layout: {} rounds; {}; chain floor {:.3f} cycles a group", out.layout.rounds, fmt::join(each, ", "),
                chain_floor(out.layout, out.weights, out.timings));
  out.mix = runner.run_mix(plain ? parts : laid, false, plain ? 0 : out.layout.rounds);
  return out;
}

// Marks the mix mistrusted when its own chains may bind it, judged against the parts' final alone
// figures (the faster of their two passes).
void doubt_chains(LaidOut& l, const std::vector<const MixResult*>& alone) {
  MixResult& m = l.mix;
  if (m.status != Status::ok || !m.cycles_per_group) return;
  for (size_t i = 0; i < l.timings.size() && i < alone.size(); ++i)
    if (alone[i] && measured(*alone[i])) l.timings[i].recip = *alone[i]->cycles_per_group;
  if (auto doubt = chain_bound_doubt(l.layout, l.weights, l.timings, *m.cycles_per_group, l.alone_floor)) {
    m.status = Status::mistrusted;
    m.reason = *doubt;
  }
}

}  // namespace

MixResult measure_mix(ProbeRunner& runner, const std::vector<MixSpec>& parts) {
  std::vector<MixResult> alone;
  for (const auto& p : parts) alone.push_back(measure_alone(runner, p.probe));
  std::vector<const MixResult*> refs;
  for (const auto& a : alone) refs.push_back(&a);
  LaidOut l = run_laid_out(runner, parts, refs);
  for (size_t i = 0; i < parts.size(); ++i) keep_faster(alone[i], measure_alone(runner, parts[i].probe));
  doubt_chains(l, refs);
  for (size_t i = 0; i < parts.size() && i < l.mix.parts.size(); ++i)
    if (measured(alone[i])) l.mix.parts[i].alone_cycles = alone[i].cycles_per_group;
  return std::move(l.mix);
}

PairResult measure_pair(ProbeRunner& runner, const ProbeSpec& a, const ProbeSpec& b, int wa, int wb,
                        const MixResult* alone_a, const MixResult* alone_b) {
  MixResult own_a, own_b;
  const bool measure_own = !alone_a || !alone_b;
  if (measure_own) {
    own_a = measure_alone(runner, a);
    own_b = measure_alone(runner, b);
    alone_a = &own_a;
    alone_b = &own_b;
  }
  LaidOut l = run_laid_out(runner, {{a, wa}, {b, wb}}, {alone_a, alone_b});
  if (measure_own) {
    keep_faster(own_a, measure_alone(runner, a));
    keep_faster(own_b, measure_alone(runner, b));
  }
  doubt_chains(l, {alone_a, alone_b});
  return pair_from(std::move(l.mix), *alone_a, *alone_b);
}

PairResult pair_from(MixResult mix, const MixResult& alone_a, const MixResult& alone_b) {
  PairResult p;
  p.mix = std::move(mix);
  set_alone(p, alone_a, alone_b);
  if (p.mix.status == Status::ok && (!measured(alone_a) || !measured(alone_b))) {
    const MixResult& missing = measured(alone_a) ? alone_b : alone_a;
    // A part refused alone (pop needs its push) leaves the pair without a reference: nothing broke.
    p.mix.status = missing.status == Status::skipped ? Status::skipped : Status::error;
    p.mix.reason = "an instruction of the pair could not be measured alone: " + missing.reason;
  }
  if (p.mix.status == Status::ok && (alone_a.status == Status::mistrusted || alone_b.status == Status::mistrusted)) {
    p.mix.status = Status::mistrusted;
    p.mix.reason = "an alone measurement is mistrusted: " +
                   (alone_a.status == Status::mistrusted ? alone_a.reason : alone_b.reason);
  }
  classify(p);
  return p;
}

PairMatrix measure_pair_matrix(ProbeRunner& runner, const std::vector<ProbeSpec>& specs,
                               const PairProgress& progress) {
  const size_t n = specs.size();
  const size_t total = n + n * (n + 1) / 2;  // the second alone pass is not counted
  size_t done = 0;
  PairMatrix m;
  // Every alone stream, then every pair, as one batch: doubtful ones are measured again after the
  // others (one pause per round, not per mix).
  std::vector<std::vector<MixSpec>> jobs;
  std::vector<std::string> names;
  for (const auto& s : specs) {
    jobs.push_back({{s, 1}});
    names.push_back(s.text + " alone");
  }
  std::vector<std::vector<size_t>> index(n, std::vector<size_t>(n));
  for (size_t i = 0; i < n; ++i)
    for (size_t j = i; j < n; ++j) {
      index[i][j] = index[j][i] = jobs.size() - n;
      jobs.push_back({{specs[i], 1}, {specs[j], 1}});
      names.push_back(specs[i].text + " + " + specs[j].text);
    }
  std::vector<MixResult> measured_mixes = runner.run_mix_batch(jobs, [&](size_t k) {
    if (progress) progress(++done, total, names[k]);
  });
  std::vector<MixResult> alone(measured_mixes.begin(), measured_mixes.begin() + long(n));
  for (size_t i = 0; i < n; ++i) {
    m.instructions.push_back(alone[i].parts.empty() ? specs[i].text : alone[i].parts[0].instruction);
    m.alone_cycles.push_back(alone[i].cycles_per_group.value_or(0.0));
  }
  for (size_t i = 0; i < n; ++i)
    for (size_t j = i; j < n; ++j)
      m.pairs.push_back(pair_from(std::move(measured_mixes[n + index[i][j]]), alone[i], alone[j]));
  // Alone figures again, now that time has passed, and from each self-pair (A with A is A's own
  // stream with twice the chains): the fastest of the three stands.
  const std::vector<MixResult> again = runner.run_mix_batch(std::vector<std::vector<MixSpec>>(jobs.begin(), jobs.begin() + long(n)));
  for (size_t i = 0; i < n; ++i) {
    keep_faster(alone[i], again[i]);
    const MixResult& self = m.pairs[index[i][i]].mix;
    if (measured(self) && measured(alone[i]) && *self.cycles_per_group / 2 < *alone[i].cycles_per_group)
      alone[i].cycles_per_group = *self.cycles_per_group / 2;
    m.alone_cycles[i] = alone[i].cycles_per_group.value_or(0.0);
  }
  // The issue width this core was seen to sustain: the most instructions per cycle of any mix here.
  for (const auto& a : alone)
    if (a.status == Status::ok && a.ipc) m.issue_width = std::max(m.issue_width, *a.ipc);
  for (const auto& p : m.pairs)
    if (p.mix.status == Status::ok && p.mix.ipc) m.issue_width = std::max(m.issue_width, *p.mix.ipc);
  m.same_port.assign(n, std::vector<std::optional<double>>(n));
  for (size_t i = 0; i < n; ++i)
    for (size_t j = i; j < n; ++j) {
      PairResult& p = m.pairs[index[i][j]];
      set_alone(p, alone[i], alone[j]);
      classify(p);
      // A form with itself shares its pipes by definition, whatever the width or the time; a pair
      // far beyond its parts in sequence is a penalty first (it hides the width too).
      if (i == j) p.penalty = false;
      p.at_issue_width = i != j && !p.penalty && p.same_port && at_issue_width(p, m.issue_width);
      if (!p.at_issue_width && !p.penalty) m.same_port[i][j] = m.same_port[j][i] = p.same_port;
    }
  m.groups = name_groups(cluster_pipe_groups(m.same_port), m.instructions);
  return m;
}

FlopMixSearch search_flop_mix(ProbeRunner& runner, const ProbeSpec& a, const ProbeSpec& b, bool exhaustive,
                              const PairProgress& progress) {
  FlopMixSearch s;
  s.a = a.text;
  s.b = b.text;
  s.exhaustive = exhaustive;
  std::set<std::pair<int, int>> seen;
  auto reduce = [](int x, int y) {
    int g = std::gcd(x, y);
    return g ? std::make_pair(x / g, y / g) : std::make_pair(x, y);
  };
  auto run = [&](int x, int y) {
    auto key = reduce(x, y);
    if (!seen.insert(key).second) return;
    if (progress) progress(s.tried.size() + 1, 0, fmt::format("{}:{}", key.first, key.second));
    std::vector<MixSpec> parts;
    // A ratio with a zero side is that instruction alone; keep both parts' order for reporting.
    if (key.first) parts.push_back({a, key.first});
    if (key.second) parts.push_back({b, key.second});
    s.tried.push_back(runner.run_mix(parts));
    s.ratios.push_back(key);
    const MixResult& m = s.tried.back();
    if (m.status == Status::ok && flops_of(m) > s.best_flops_per_cycle) {
      s.best_flops_per_cycle = flops_of(m);
      s.best_gflops = m.gflops.value_or(0.0);
      s.best_a = key.first;
      s.best_b = key.second;
    }
  };
  if (exhaustive) {
    for (int x = 0; x <= 4; ++x)
      for (int y = 0; y <= 4; ++y)
        if (x || y) run(x, y);
    return s;
  }
  for (auto [x, y] : {std::pair{1, 0}, {0, 1}, {1, 1}, {2, 1}, {1, 2}, {3, 1}, {1, 3}}) run(x, y);
  // Refine between the best ratio and its neighbours on the a/(a+b) line (Farey mediants), as long
  // as a finer ratio improves and both sides stay small enough to unroll.
  for (int step = 0; step < 4 && s.best_flops_per_cycle > 0; ++step) {
    std::vector<std::pair<int, int>> ratios(seen.begin(), seen.end());
    auto share = [](const std::pair<int, int>& r) { return double(r.first) / double(r.first + r.second); };
    std::sort(ratios.begin(), ratios.end(), [&](auto& l, auto& r) { return share(l) < share(r); });
    const std::pair<int, int> best{s.best_a, s.best_b};
    auto it = std::find(ratios.begin(), ratios.end(), best);
    const double before = s.best_flops_per_cycle;
    std::vector<std::pair<int, int>> next;
    if (it != ratios.begin()) next.push_back(*(it - 1));
    if (it != ratios.end() && it + 1 != ratios.end()) next.push_back(*(it + 1));
    for (auto [x, y] : next)
      if (x + best.first <= 8 && y + best.second <= 8) run(x + best.first, y + best.second);
    if (s.best_flops_per_cycle <= before * 1.005) break;
  }
  return s;
}

void measure_best_mix_on_all_threads(ProbeRunner& team, const ProbeSpec& a, const ProbeSpec& b, FlopMixSearch& s) {
  if (team.threads() < 2 || s.best_flops_per_cycle <= 0) return;
  std::vector<MixSpec> parts;
  if (s.best_a) parts.push_back({a, s.best_a});
  if (s.best_b) parts.push_back({b, s.best_b});
  MixResult m = team.run_mix(parts, true);
  if (m.status == Status::ok && m.threads > 1) s.best_all_threads = std::move(m);
  // A threaded part that fails is named by run_mix itself; a doubtful one-core part runs no threads.
  else if (m.status != Status::ok)
    spdlog::warn("no {}-core ceiling from the mix {} (run with --threads {}): {} ({})", team.threads(), m.repro,
                 team.threads(), to_string(m.status), m.reason);
}

}  // namespace peakprobe
