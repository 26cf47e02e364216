#include "pairs/pipe_groups.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <tuple>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "asm/target.hpp"
#include "pairs/classify.hpp"
#include "pairs/cluster.hpp"
#include "pairs/core_results.hpp"

namespace peakprobe {
namespace {

// A pair is judged only when its shared floor stands at least this fraction of the faster part's
// pipe time above its co-issue floor: a narrower gap is inside the run-to-run spread of one mix.
constexpr double kMinJudgedGap = 0.25;
// A pair is `partial` from this share of the same-port measure a containment (the narrow part's pipes
// all among the wide part's) would show, and never below kPartialFloor: two parts on separate pipes
// measure 0.00-0.05, a one-pipe form among the integer adds' five 0.17-0.45 (Intel VM, held-out set).
constexpr double kContainedShare = 0.5;
constexpr double kPartialFloor = 0.1;
// ... and the pair at least this share of its co-issue time slower than co-issue (one mix's
// run-to-run spread is a few percent).
constexpr double kNoiseShare = 0.03;
// Clusters of the seed matrix join while their members contend at least this much on average:
// above the middle of the scale, so that an instruction spread over several pipes (a vector integer
// add on all four FP pipes of a Zen core measures 0.5 against each of them) stands alone instead of
// chaining two pipe kinds into one cluster.
constexpr double kClusterThreshold = 0.6;
// Rates this close count as equal when the representative is chosen.
constexpr double kRateTie = 0.03;
// ... and purity scores (mean contention inside the cluster less outside) this close: the seed listed
// first (Target::pipe_seed_candidates) then stands for the cluster. On the Zen 4 VM the FP add and
// the vector shift seeds scored 0.891 and 0.908, the FP multiply and the vector integer multiply
// 0.912 and 0.915, and which one of each pair became the member changed from run to run with that noise.
constexpr double kScoreTie = 0.05;
// Passes over the seed matrix (the median of each pair is kept).
constexpr int kSeedPasses = 3;
// Rounds of re-measuring pairs whose references are from another core (a move during one round
// leaves work for the next).
constexpr int kSettleRounds = 2;

bool has_figures(const ProbeResult& r) {
  return (r.status == Status::ok || r.status == Status::mistrusted) && r.recip_throughput_cycles &&
         *r.recip_throughput_cycles > 0;
}


double mean(const std::vector<double>& v) {
  if (v.empty()) return 0;
  double s = 0;
  for (double x : v) s += x;
  return s / double(v.size());
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

}  // namespace

std::optional<double> median_of_passes(const std::vector<std::optional<double>>& passes) {
  std::vector<double> values;
  for (const auto& p : passes)
    if (p && std::isfinite(*p)) values.push_back(*p);
  if (values.empty() || 2 * values.size() < passes.size()) return std::nullopt;
  return median(values);
}

const char* to_string(Contention c) {
  switch (c) {
    case Contention::none: return "none";
    case Contention::partial: return "partial";
    case Contention::shared: return "shared";
    case Contention::issue_width: return "issue-width";
    case Contention::penalty: return "penalty";
    case Contention::unmeasured: return "unmeasured";
  }
  return "?";
}

std::pair<int, int> balanced_weights(double recip_a, double recip_b, int max_total) {
  if (!(recip_a > 0) || !(recip_b > 0) || max_total < 2) return {1, 1};
  std::pair<int, int> best{1, 1};
  double best_gap = std::numeric_limits<double>::infinity();
  // Smallest weights first: among equally balanced choices the shorter group keeps more chains.
  for (int total = 2; total <= max_total; ++total)
    for (int a = 1; a < total; ++a) {
      const int b = total - a;
      const double gap = std::fabs(std::log(a * recip_a / (b * recip_b)));
      if (gap < best_gap - 1e-9) {
        best_gap = gap;
        best = {a, b};
      }
    }
  return best;
}

double contained_same_port(double co_issue, double shared, int wa, int wb, const PartTiming& a, const PartTiming& b) {
  if (!(shared > co_issue)) return 1.0;
  // The part with fewer instructions per cycle alone is the narrow one: if all its pipes are among
  // the wide part's, each of its instructions takes a wide pipe for the wide part's cycles per
  // instruction (1 / its pipes), on top of the wide part's own pipe time.
  const bool a_narrow = a.recip >= b.recip;
  const double wide_pipe = a_narrow ? wb * b.recip : wa * a.recip;
  const int narrow_weight = a_narrow ? wa : wb;
  const double wide_recip = a_narrow ? b.recip : a.recip;
  const double contained = std::max(co_issue, wide_pipe + narrow_weight * wide_recip);
  return std::clamp((contained - co_issue) / (shared - co_issue), 0.0, 1.0);
}

PipeVerdict judge_contention(double cycles_per_group, int rounds, int wa, int wb, const PartTiming& a,
                             const PartTiming& b, double issue_width, int chains_a, int chains_b) {
  PipeVerdict v;
  v.weight_form = wa;
  v.weight_basis = wb;
  auto finite_positive = [](double x) { return x > 0 && std::isfinite(x); };
  if (!finite_positive(cycles_per_group) || rounds < 1 || wa < 1 || wb < 1 || !finite_positive(a.recip) ||
      !finite_positive(b.recip) || !std::isfinite(a.chain_latency) || !std::isfinite(b.chain_latency) ||
      !std::isfinite(issue_width)) {
    v.reason = "no valid timing of the pair or of a part alone";
    return v;
  }
  v.ipc = (wa + wb) / cycles_per_group;
  const double pipe_a = wa * a.recip, pipe_b = wb * b.recip;  // pipe time per group, each alone
  // Each part's weight x rounds instances per copy rotate through its chains (weight x rounds of
  // them unless the part has fewer): the busiest chain carries ceil(instances / chains) links a
  // copy, so a group takes at least chain latency x that / rounds, whatever the pipes do.
  const double part_a = std::max(pipe_a, part_chain_floor(a.chain_latency, chains_a, wa, rounds));
  const double part_b = std::max(pipe_b, part_chain_floor(b.chain_latency, chains_b, wb, rounds));
  const double width_floor = issue_width > 0 ? (wa + wb) / issue_width : 0.0;
  const double co_issue = std::max({part_a, part_b, width_floor});
  const double shared = std::max(co_issue, pipe_a + pipe_b);
  // Beyond both parts in sequence (their chains included) no pipe explains the time: the pair pays a
  // cost only together (kPenaltyAbove), and says nothing about pipes. Checked first: it hides the
  // issue width as well.
  if (cycles_per_group > kPenaltyAbove * shared) {
    v.contention = Contention::penalty;
    v.reason = fmt::format(
        "{:.1f} cycles per group, {:.1f}x its parts one after the other ({:.2f}): a cost paid only together (a "
        "penalty at every switch, or a rate a part reaches alone only), not a shared pipe",
        cycles_per_group, cycles_per_group / shared, shared);
    return v;
  }
  if (shared - co_issue < kMinJudgedGap * std::min(pipe_a, pipe_b)) {
    if (width_floor >= std::max(part_a, part_b)) {
      v.contention = Contention::issue_width;
      v.reason = fmt::format(
          "{} instructions per group at the {:.2f} per cycle this core issues at most leave no room between "
          "co-issue and a shared pipe",
          wa + wb, issue_width);
    } else {
      v.reason = "the parts' own chains bound the mix: no room between co-issue and a shared pipe";
    }
    return v;
  }
  v.same_port = std::clamp((cycles_per_group - co_issue) / (shared - co_issue), 0.0, 1.0);
  // A form whose one pipe is among the five of an integer add shows at most a fifth of a shared
  // pipe's slowdown beside it (uops.info: a blocking instruction on those ports): the pair is
  // `partial` once it shows half of what that containment would, never below kPartialFloor (noise).
  // Where the floors stand close (a chain or the issue width raised co-issue), a tenth of the gap is
  // less than the pair's run-to-run spread: `partial` also needs the pair kNoiseShare slower than
  // co-issue.
  const double noise = kNoiseShare * co_issue / (shared - co_issue);
  const double none_below = std::min(
      kCoIssueBelow,
      std::max({kContainedShare * contained_same_port(co_issue, shared, wa, wb, a, b), kPartialFloor, noise}));
  v.contention = *v.same_port < none_below ? Contention::none
                 : *v.same_port > kSharedAbove ? Contention::shared
                                               : Contention::partial;
  return v;
}

PairLayout plan_pair_layout(int wa, int wb, const PartTiming& a, const PartTiming& b,
                             const std::function<int(int, int)>& rounds_with) {
  PairLayout plain;
  plain.rounds = rounds_with(0, 0);
  const double group = std::max(wa * a.recip, wb * b.recip);
  if (plain.rounds < 1 || wa < 1 || wb < 1 || !(group > 0) || !std::isfinite(group)) return plain;
  auto starved = [&](const PartTiming& t) { return kChainMargin * t.chain_latency / plain.rounds > group; };
  if (!starved(a) && !starved(b)) return plain;
  PairLayout limited;
  limited.chains_a = chains_needed(a.chain_latency, wa, group);
  limited.chains_b = chains_needed(b.chain_latency, wb, group);
  int want = 1;
  if (limited.chains_a > 0) want = std::max(want, (limited.chains_a + wa - 1) / wa);
  if (limited.chains_b > 0) want = std::max(want, (limited.chains_b + wb - 1) / wb);
  limited.rounds = std::min(want, rounds_with(limited.chains_a, limited.chains_b));
  if (limited.rounds <= plain.rounds) return plain;
  // At the rounds taken, instances rotate unevenly where the chains do not divide them, and the
  // busiest chain binds: each limited part gets the fewest chains whose busiest one carries no more
  // links a copy than its latency leaves room for at the margin, where the registers allow.
  const int r = limited.rounds;
  auto evened = [&](int limit, int w, double latency) {
    if (limit <= 0) return 0;
    const int links = std::max(1, int(std::floor(r * group / (kChainMargin * latency))));
    return std::min(w * r, (w * r + links - 1) / links);
  };
  PairLayout even = limited;
  even.chains_a = evened(limited.chains_a, wa, a.chain_latency);
  even.chains_b = evened(limited.chains_b, wb, b.chain_latency);
  return rounds_with(even.chains_a, even.chains_b) >= r ? even : limited;
}

int equivalent_chains(int limit, int weight, int rounds) {
  const int instances = weight * rounds;
  if (instances < 1) return 0;
  return instances / busiest_chain_links(limit, weight, rounds);
}

std::vector<PipeBasisMember> choose_basis(const std::vector<std::string>& seeds,
                                          const std::vector<PartTiming>& timings,
                                          const std::vector<std::vector<std::optional<double>>>& same_port) {
  std::vector<PipeBasisMember> basis;
  const auto clusters = cluster_pipe_groups(same_port, kClusterThreshold);
  auto value = [&](int i, int j) -> std::optional<double> {
    if (size_t(i) >= same_port.size() || size_t(j) >= same_port[size_t(i)].size()) return std::nullopt;
    return same_port[size_t(i)][size_t(j)];
  };
  auto recip_of = [&](int m) {
    return size_t(m) < timings.size() && timings[size_t(m)].recip > 0 ? timings[size_t(m)].recip
                                                                       : std::numeric_limits<double>::infinity();
  };
  for (const auto& c : clusters) {
    // The representative blocks the cluster's pipes best: it contends with the rest of its cluster
    // at least as much as the cluster holds together, and runs fastest (it keeps those pipes busiest
    // in a pair); among equally fast ones, the purest (most contention inside, least outside) by more
    // than kScoreTie, else the first in seed order (c is sorted), so that noise does not pick it.
    std::vector<double> inside_mean, score;
    for (int m : c) {
      std::vector<double> inside, outside;
      for (size_t o = 0; o < seeds.size(); ++o) {
        if (int(o) == m) continue;
        auto v = value(m, int(o));
        if (!v || !std::isfinite(*v)) continue;
        (std::find(c.begin(), c.end(), int(o)) != c.end() ? inside : outside).push_back(*v);
      }
      inside_mean.push_back(inside.empty() ? 1.0 : mean(inside));
      score.push_back(mean(inside) - mean(outside));
    }
    const bool any_holds = std::any_of(inside_mean.begin(), inside_mean.end(),
                                       [](double v) { return v >= kClusterThreshold; });
    int best = -1;
    size_t best_k = 0;
    for (size_t k = 0; k < c.size(); ++k) {
      if (any_holds && inside_mean[k] < kClusterThreshold) continue;
      const double r = recip_of(c[k]);
      const bool faster = best < 0 || r < recip_of(best) * (1 - kRateTie);
      const bool as_fast = best >= 0 && !faster && r <= recip_of(best) * (1 + kRateTie);
      if (faster || (as_fast && score[k] > score[best_k] + kScoreTie)) {
        best = c[k];
        best_k = k;
      }
    }
    PipeBasisMember b;
    b.instruction = size_t(best) < seeds.size() ? seeds[size_t(best)] : fmt::format("#{}", best);
    for (int m : c) b.members.push_back(size_t(m) < seeds.size() ? seeds[size_t(m)] : fmt::format("#{}", m));
    if (size_t(best) < timings.size()) b.recip_throughput = timings[size_t(best)].recip;
    basis.push_back(std::move(b));
  }
  return basis;
}

std::vector<std::string> pipe_seeds(const CpuInfo& cpu) {
  std::vector<std::string> seeds;
  const isa::Target& target = isa::host_target();
  for (const auto& alternatives : target.pipe_seed_candidates())
    for (const auto& text : alternatives) {
      auto form = target.resolve(text);
      if (!form || !missing_features(cpu, form->features).empty()) continue;
      seeds.push_back(form->display);
      break;
    }
  return seeds;
}

namespace {

// A part stream slower with its fewest chains than with all of them by more than this has chains
// that bind (its chain latency is used); below it, the difference is noise.
constexpr double kChainsBind = 1.03;

struct Part {
  ProbeSpec spec;
  double hint = 0;  // cycles per instruction from `inst`: sets the pair's weights
  // The chains `inst`'s throughput stream needed for that rate (its K; 0: unknown). A part whose
  // pairs all give it at least this many is not measured again with fewer: its chains cannot bind.
  int chains = 0;
  // Cycles of its chain through the destination from `inst` (0: none or unknown): sets the chains
  // the part needs in a pair.
  double latency = 0;
};

// Pairs measured the same way in both stages: every part alone as a one-part mix (all the chains
// the registers allow, and again with the fewest chains any of its pairs gives it), every pair at
// balanced weights with its rounds fixed in advance. `on_ready(q)` runs whenever pair q and both its
// parts' references are measured on the pair's core (again, after a retry). References are kept per
// core (pairs/core_results.hpp): after the runner moves to another core, the references its pairs
// need are measured there too, and pairs left with references from another core only are measured
// again, so no verdict compares two cores.
class PairBatch {
 public:
  PairBatch(ProbeRunner& runner, std::vector<Part> parts, const std::vector<std::pair<size_t, size_t>>& pairs)
      : runner_(runner), parts_(std::move(parts)) {
    const size_t n = parts_.size();
    fewest_.assign(n, std::numeric_limits<int>::max());
    pairs_of_.assign(n, {});
    for (auto [a, b] : pairs) {
      Planned p;
      p.a = a;
      p.b = b;
      std::tie(p.wa, p.wb) = balanced_weights(parts_[a].hint, parts_[b].hint);
      const ProbeSpec &spec_a = parts_[a].spec, &spec_b = parts_[b].spec;  // (clang 14 captures no bindings)
      const PairLayout layout = plan_pair_layout(
          p.wa, p.wb, {parts_[a].hint, parts_[a].latency}, {parts_[b].hint, parts_[b].latency}, [&](int ca, int cb) {
            return runner_.mix_rounds({{spec_a, p.wa, ca}, {spec_b, p.wb, cb}});
          });
      p.rounds = layout.rounds;
      p.ca = layout.chains_a;
      p.cb = layout.chains_b;
      if (p.rounds > 0) {
        // The part alone with this many chains, one link each, is as bound by its chains as the pair.
        fewest_[a] = std::min(fewest_[a], equivalent_chains(p.ca, p.wa, p.rounds));
        fewest_[b] = std::min(fewest_[b], equivalent_chains(p.cb, p.wb, p.rounds));
      }
      pairs_of_[a].push_back(planned_.size());
      pairs_of_[b].push_back(planned_.size());
      planned_.push_back(p);
    }
    // Jobs: each part's references just before the first pair that needs them.
    full_job_.assign(n, kNone);
    few_job_.assign(n, kNone);
    std::vector<bool> emitted(n, false);
    auto emit_alone = [&](size_t p) {
      if (emitted[p]) return;
      emitted[p] = true;
      full_job_[p] = add_job({{parts_[p].spec, 1}}, 0, Job::full, p);
      const int all = runner_.mix_rounds({{parts_[p].spec, 1}});
      if (fewest_[p] != std::numeric_limits<int>::max() && fewest_[p] < all &&
          (parts_[p].chains <= 0 || fewest_[p] < parts_[p].chains))
        few_job_[p] = add_job({{parts_[p].spec, 1}}, fewest_[p], Job::few, p);
    };
    for (size_t q = 0; q < planned_.size(); ++q) {
      emit_alone(planned_[q].a);
      emit_alone(planned_[q].b);
      planned_[q].job = add_job(specs_of(planned_[q]), planned_[q].rounds, Job::pair, q);
    }
    results_.reset(jobs_.size());
    for (size_t q = 0; q < planned_.size(); ++q) {
      PairJobs pj;
      pj.pair = planned_[q].job;
      for (size_t part : {planned_[q].a, planned_[q].b})
        for (size_t r : {full_job_[part], few_job_[part]})
          if (r != kNone) pj.references.push_back(r);
      pair_jobs_.push_back(std::move(pj));
    }
  }

  void run(const PipeProgress& progress, const std::function<bool()>& stop, const std::function<void(size_t)>& on_ready) {
    results_.reset(jobs_.size());  // a second run is a new pass: nothing is ready yet
    auto kept = [&](size_t k, const MixResult& m) { keep(k, m, stop, on_ready); };
    runner_.run_mix_batch(
        mixes_,
        [&](size_t k) {
          if (progress) progress(k + 1, mixes_.size(), describe(k));
        },
        kept, stop, rounds_);
    // Pairs measured before a move whose references were retried after it, or the other way round.
    for (int round = 0; round < kSettleRounds; ++round) {
      if (stop && stop()) return;
      const SettlePlan plan = plan_settle(results_, pair_jobs_, runner_.cpu());
      if (plan.empty()) return;
      spdlog::info("pairs: {} pairs had their references on another core; measuring {} mixes again on CPU {}",
                   plan.pairs.size(), plan.jobs.size(), runner_.cpu());
      run_jobs(plan.jobs, stop, [&](size_t k, const MixResult& m) { keep(k, m, stop, on_ready); });
    }
  }

  size_t pairs() const { return planned_.size(); }
  size_t jobs() const { return mixes_.size(); }
  const MixResult* pair_mix(size_t q) const { return results_.latest(planned_[q].job); }
  int weight_a(size_t q) const { return planned_[q].wa; }
  int weight_b(size_t q) const { return planned_[q].wb; }
  size_t part_a(size_t q) const { return planned_[q].a; }
  size_t part_b(size_t q) const { return planned_[q].b; }

  // Part p alone on logical CPU `cpu` (-1: on the core it last ran on), or why not (not measured
  // there; its reference stream failed, was refused or is mistrusted). A reference that was only
  // doubted (mistrusted) may be trusted another time: its reason starts with kNotMeasured, which
  // `table --resume` measures again.
  Expected<PartTiming> timing(size_t p, int cpu = -1) const {
    const size_t f = full_job_[p];
    const MixResult* latest = f == kNone ? nullptr : results_.latest(f);
    if (!latest) return make_error(std::string(kNotMeasured) + parts_[p].spec.text + " alone was not reached");
    if (cpu < 0) cpu = latest->cpu;
    const MixResult* on_core = results_.on(f, cpu);
    if (!on_core)
      return make_error(fmt::format("{}{} alone was not measured on CPU {}, where the pair ran (the run moved between cores)",
                                    kNotMeasured, parts_[p].spec.text, cpu));
    const MixResult& full = *on_core;
    if (full.status != Status::ok || !full.cycles_per_group || !(*full.cycles_per_group > 0) ||
        !std::isfinite(*full.cycles_per_group))
      return make_error(fmt::format("{}{} alone: {}{}{}", full.status == Status::mistrusted ? kNotMeasured : "",
                                    parts_[p].spec.text, to_string(full.status), full.reason.empty() ? "" : ": ",
                                    full.reason));
    PartTiming t;
    t.recip = *full.cycles_per_group;
    // With fewer chains: a reference that is missing or doubted leaves the chains taken as enough.
    const size_t w = few_job_[p];
    if (w != kNone && !results_.on(w, cpu))
      return make_error(fmt::format("{}{} alone with fewer chains was not measured on CPU {}, where the pair ran",
                                    kNotMeasured, parts_[p].spec.text, cpu));
    if (const MixResult* few_on_core = w == kNone ? nullptr : results_.on(w, cpu)) {
      const MixResult& few = *few_on_core;
      if (few.status == Status::ok && few.cycles_per_group && std::isfinite(*few.cycles_per_group) &&
          *few.cycles_per_group > kChainsBind * t.recip)
        t.chain_latency = *few.cycles_per_group * fewest_[p];
    }
    return t;
  }

  // Most instructions per cycle any `ok` mix of the batch ran at.
  double widest_ipc() const {
    double w = 0;
    for (size_t k = 0; k < results_.jobs(); ++k)
      if (const MixResult* m = results_.latest(k); m && m->status == Status::ok && m->ipc) w = std::max(w, *m->ipc);
    return w;
  }

  // The verdict on pair q at issue width `width` (the pair's own status, or its parts', when they
  // leave none).
  PipeVerdict verdict(size_t q, double width) const {
    PipeVerdict v;
    v.weight_form = planned_[q].wa;
    v.weight_basis = planned_[q].wb;
    const MixResult* m = pair_mix(q);
    if (m == nullptr) {
      v.reason = std::string(kNotMeasured) + "the run stopped before this pair";
      return v;
    }
    if ((m->status != Status::ok && m->status != Status::mistrusted) || !m->cycles_per_group) {
      v.reason = fmt::format("{}{}{}", to_string(m->status), m->reason.empty() ? "" : ": ", m->reason);
      return v;
    }
    auto ta = timing(planned_[q].a, m->cpu), tb = timing(planned_[q].b, m->cpu);
    if (!ta || !tb) {
      v.reason = !ta ? ta.error() : tb.error();
      return v;
    }
    // The width is at least what this pair and its parts ran at: a seed set that never reached the
    // core's width must not make a faster pair look bound by it.
    width = std::max({width, m->ipc.value_or(0.0), 1 / ta->recip, 1 / tb->recip});
    v = judge_contention(*m->cycles_per_group, m->rounds, planned_[q].wa, planned_[q].wb, *ta, *tb, width, planned_[q].ca,
                         planned_[q].cb);
    if (m->status == Status::mistrusted) {
      v.contention = Contention::unmeasured;
      v.same_port.reset();
      v.reason = std::string(kNotMeasured) + "the pair's timing is mistrusted: " + m->reason;
    }
    return v;
  }

 private:
  static constexpr size_t kNone = std::numeric_limits<size_t>::max();
  struct Planned {
    size_t a = 0, b = 0;
    int wa = 1, wb = 1, rounds = 0;
    int ca = 0, cb = 0;  // each part's chain limit (0: one chain per instance)
    size_t job = 0;
  };

  std::vector<MixSpec> specs_of(const Planned& p) const {
    return {{parts_[p.a].spec, p.wa, p.ca}, {parts_[p.b].spec, p.wb, p.cb}};
  }
  struct Job {
    enum Kind { full, few, pair } kind;
    size_t index;  // the part (full, few) or the pair
  };

  size_t add_job(std::vector<MixSpec> parts, int rounds, Job::Kind kind, size_t index) {
    mixes_.push_back(std::move(parts));
    rounds_.push_back(rounds);
    jobs_.push_back({kind, index});
    return mixes_.size() - 1;
  }

  // Pair q and its references measured, the references on the pair's core.
  bool ready(size_t q) const {
    const MixResult* m = results_.latest(planned_[q].job);
    if (!m) return false;
    return std::all_of(pair_jobs_[q].references.begin(), pair_jobs_[q].references.end(),
                       [&](size_t r) { return results_.on(r, m->cpu) != nullptr; });
  }

  // Pair q just ran on the runner's core: its references not measured on this core yet (the runner
  // moved since they were) are measured now, so the pairs that follow here have them too.
  void measure_missing_references(size_t q, const std::function<bool()>& stop,
                                  const std::function<void(size_t)>& on_ready) {
    const int here = runner_.cpu();
    std::vector<size_t> missing;
    for (size_t r : pair_jobs_[q].references)
      if (results_.latest(r) && !results_.on(r, here)) missing.push_back(r);
    if (missing.empty()) return;
    spdlog::info("pairs: the run moved to CPU {}; measuring {} references again there", here, missing.size());
    run_jobs(missing, stop, [&](size_t k, const MixResult& m) { keep(k, m, stop, on_ready, q); });
  }

  // Keeps job k's result and calls `on_ready` for every pair it completes, except `skip` (the pair
  // whose references are being measured: its caller judges it next). A pair that ran on the runner's
  // core first gets the references it lacks there.
  void keep(size_t k, const MixResult& m, const std::function<bool()>& stop,
            const std::function<void(size_t)>& on_ready, size_t skip = kNone) {
    results_.store(k, m);
    const Job& j = jobs_[k];
    if (j.kind == Job::pair) {
      if (j.index == skip) return;
      if (m.cpu == runner_.cpu()) measure_missing_references(j.index, stop, on_ready);
      if (ready(j.index)) on_ready(j.index);
      return;
    }
    for (size_t q : pairs_of_[j.index])
      if (q != skip && ready(q)) on_ready(q);
  }

  // Jobs `ks` as one batch of mixes (with its retries); `on_result(k, m)` for each result.
  void run_jobs(const std::vector<size_t>& ks, const std::function<bool()>& stop,
                const std::function<void(size_t, const MixResult&)>& on_result) {
    std::vector<std::vector<MixSpec>> mixes;
    std::vector<int> rounds;
    for (size_t k : ks) {
      mixes.push_back(mixes_[k]);
      rounds.push_back(rounds_[k]);
    }
    runner_.run_mix_batch(mixes, {}, [&](size_t i, const MixResult& m) { on_result(ks[i], m); }, stop, rounds);
  }

  std::string describe(size_t k) const {
    const auto& m = mixes_[k];
    if (m.size() == 1) return m[0].probe.text + " alone";
    return m[0].probe.text + " + " + m[1].probe.text;
  }

  ProbeRunner& runner_;
  std::vector<Part> parts_;
  std::vector<Planned> planned_;
  std::vector<int> fewest_;
  std::vector<std::vector<size_t>> pairs_of_;
  std::vector<size_t> full_job_, few_job_;
  std::vector<std::vector<MixSpec>> mixes_;
  std::vector<int> rounds_;
  std::vector<Job> jobs_;
  std::vector<PairJobs> pair_jobs_;  // per pair: its job and its references' jobs
  ResultsByCore results_;
};

}  // namespace

PipeGroups find_pipe_basis(ProbeRunner& runner, const std::vector<ProbeSpec>& seeds, const PipeProgress& progress,
                           const std::function<bool()>& stop) {
  const auto t0 = std::chrono::steady_clock::now();
  PipeGroups g;
  const size_t n = seeds.size();
  // Each seed as `inst` measures it first: its rate sets the weights of its pairs.
  const std::vector<ProbeResult> alone = runner.run_batch(
      seeds, [&](size_t i, const ProbeSpec& s) { if (progress) progress(i + 1, n, s.text + " alone"); }, {}, stop);
  if (alone.size() < n) return g;
  std::vector<Part> parts;
  for (size_t i = 0; i < n; ++i) {
    // A mistrusted figure still sets the weights well enough: the references the verdicts use are
    // the one-part mixes below, judged on their own.
    if (has_figures(alone[i])) {
      parts.push_back({seeds[i], *alone[i].recip_throughput_cycles, 0, destination_chain_latency(alone[i])});
      if (alone[i].status == Status::ok) g.issue_width = std::max(g.issue_width, alone[i].throughput_ipc.value_or(0.0));
    } else {
      g.skipped_seeds.push_back(fmt::format("{}: {}{}{}", seeds[i].text, to_string(alone[i].status),
                                            alone[i].reason.empty() ? "" : ": ", alone[i].reason));
    }
  }
  std::vector<std::pair<size_t, size_t>> pairs;
  for (size_t i = 0; i < parts.size(); ++i)
    for (size_t j = i + 1; j < parts.size(); ++j) pairs.emplace_back(i, j);
  PairBatch batch(runner, parts, pairs);
  // The matrix is measured kSeedPasses times and each pair gets the median: one noisy pair near the
  // cluster threshold would otherwise move a seed between clusters, and the basis with it, from run
  // to run. The passes cost seconds against the minutes of classifying the table.
  std::vector<std::vector<double>> recips(parts.size()), chain_latencies(parts.size());
  std::vector<std::string> why_not(parts.size());
  std::vector<std::vector<std::optional<double>>> pair_passes(batch.pairs());
  for (int pass = 1; pass <= kSeedPasses; ++pass) {
    batch.run(
        [&](size_t i, size_t total, const std::string& what) {
          if (progress) progress(i, total, fmt::format("pass {}/{}: {}", pass, kSeedPasses, what));
        },
        stop, [](size_t) {});
    if (stop && stop()) return g;
    g.issue_width = std::max(g.issue_width, batch.widest_ipc());
    for (size_t i = 0; i < parts.size(); ++i) {
      auto t = batch.timing(i);
      if (!t) {
        why_not[i] = t.error();
        continue;
      }
      recips[i].push_back(t->recip);
      chain_latencies[i].push_back(t->chain_latency);
    }
    for (size_t q = 0; q < batch.pairs(); ++q) {
      const PipeVerdict v = batch.verdict(q, g.issue_width);
      pair_passes[q].push_back(v.contention != Contention::unmeasured && v.contention != Contention::issue_width &&
                                       v.contention != Contention::penalty
                                   ? v.same_port
                                   : std::nullopt);
    }
  }
  // Seeds without a trusted reference alone in most passes cannot be judged: they leave the matrix.
  std::vector<size_t> kept;
  std::vector<PartTiming> timings;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (2 * recips[i].size() < size_t(kSeedPasses)) {
      g.skipped_seeds.push_back(why_not[i]);
      continue;
    }
    kept.push_back(i);
    timings.push_back({median(recips[i]), median(chain_latencies[i])});
    g.seeds.push_back(parts[i].spec.text);
  }
  std::vector<size_t> row_of(parts.size(), kept.size());
  for (size_t r = 0; r < kept.size(); ++r) row_of[kept[r]] = r;
  g.seed_same_port.assign(kept.size(), std::vector<std::optional<double>>(kept.size()));
  for (size_t q = 0; q < batch.pairs(); ++q) {
    const size_t i = row_of[batch.part_a(q)], j = row_of[batch.part_b(q)];
    if (i == kept.size() || j == kept.size()) continue;
    g.seed_same_port[i][j] = g.seed_same_port[j][i] = median_of_passes(pair_passes[q]);
  }
  for (size_t i = 0; i < kept.size(); ++i) g.seed_same_port[i][i] = 1.0;
  g.basis = choose_basis(g.seeds, timings, g.seed_same_port);
  for (auto& b : g.basis) {
    const auto at = std::find(g.seeds.begin(), g.seeds.end(), b.instruction);
    if (at != g.seeds.end()) b.latency = parts[kept[size_t(at - g.seeds.begin())]].latency;
  }
  g.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  spdlog::info("pipe basis: {} members from {} seeds in {:.1f} s; issue width seen {:.2f}/cycle", g.basis.size(),
               kept.size(), g.seconds, g.issue_width);
  return g;
}

std::vector<std::vector<PipeVerdict>> classify_against_basis(
    ProbeRunner& runner, const PipeGroups& groups, const std::vector<PipeSubject>& subjects,
    const PipeProgress& progress, const std::function<bool()>& stop,
    const std::function<void(size_t, const std::vector<PipeVerdict>&)>& on_done) {
  const size_t nb = groups.basis.size();
  std::vector<std::vector<PipeVerdict>> out(subjects.size(), std::vector<PipeVerdict>(nb));
  for (auto& row : out)
    for (size_t b = 0; b < nb; ++b) row[b].basis = groups.basis[b].instruction;
  // Parts: the basis members first, then the subjects that have figures alone.
  std::vector<Part> parts;
  for (const auto& b : groups.basis) {
    ProbeSpec s;
    s.text = b.instruction;
    s.origin = "pipe basis";
    parts.push_back({s, b.recip_throughput, 0, b.latency});
  }
  std::vector<std::pair<size_t, size_t>> pairs;
  std::vector<size_t> subject_of_part(nb, subjects.size());
  for (size_t i = 0; i < subjects.size(); ++i) {
    const ProbeResult* r = subjects[i].alone;
    if (!r || !has_figures(*r)) {
      const std::string why =
          !r ? "no figure alone"
             : fmt::format("no throughput alone ({}{}{})", to_string(r->status), r->reason.empty() ? "" : ": ",
                           r->reason);
      for (auto& v : out[i]) v.reason = why;
      if (on_done) on_done(i, out[i]);
      continue;
    }
    parts.push_back({subjects[i].spec, *r->recip_throughput_cycles, r->accumulators, destination_chain_latency(*r)});
    subject_of_part.push_back(i);
    for (size_t b = 0; b < nb; ++b) {
      pairs.emplace_back(parts.size() - 1, b);
      out[i][b].reason = std::string(kNotMeasured) + "the run stopped before this pair";
    }
  }
  PairBatch batch(runner, parts, pairs);
  auto judge = [&](size_t q) {
    const size_t i = subject_of_part[batch.part_a(q)], b = batch.part_b(q);
    PipeVerdict v = batch.verdict(q, groups.issue_width);
    v.basis = groups.basis[b].instruction;
    out[i][b] = std::move(v);
    if (on_done) on_done(i, out[i]);
  };
  batch.run(progress, stop, judge);
  // A pair that ran but never had its references on its own core (the runner moved again while they
  // were measured) says so, instead of keeping "the run stopped before this pair".
  for (size_t q = 0; q < batch.pairs(); ++q) {
    if (!batch.pair_mix(q)) continue;
    const PipeVerdict& now = out[subject_of_part[batch.part_a(q)]][batch.part_b(q)];
    if (now.reason.rfind(std::string(kNotMeasured) + "the run stopped", 0) == 0) judge(q);
  }
  return out;
}

}  // namespace peakprobe
