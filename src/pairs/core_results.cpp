#include "pairs/core_results.hpp"

#include <algorithm>
#include <set>

namespace peakprobe {

void ResultsByCore::reset(size_t jobs) {
  by_core_.assign(jobs, {});
  latest_.assign(jobs, -1);
}

void ResultsByCore::store(size_t job, const MixResult& m) {
  if (job >= by_core_.size()) return;
  auto& v = by_core_[job];
  const auto same = std::find_if(v.begin(), v.end(), [&](const MixResult& r) { return r.cpu == m.cpu; });
  if (same != v.end()) {
    // A trusted result stays: a batch retries what its first attempt doubted, and by then a
    // measurement on this core may already have trusted it (the references measured after a move).
    if (same->status != Status::ok || m.status == Status::ok) *same = m;
    latest_[job] = int(same - v.begin());
  } else {
    v.push_back(m);
    latest_[job] = int(v.size() - 1);
  }
}

const MixResult* ResultsByCore::latest(size_t job) const {
  if (job >= by_core_.size() || latest_[job] < 0) return nullptr;
  return &by_core_[job][size_t(latest_[job])];
}

const MixResult* ResultsByCore::on(size_t job, int cpu) const {
  if (job >= by_core_.size()) return nullptr;
  for (const auto& r : by_core_[job])
    if (r.cpu == cpu) return &r;
  return nullptr;
}

namespace {

bool measured(const MixResult* m) { return m && (m->status == Status::ok || m->status == Status::mistrusted); }

}  // namespace

SettlePlan plan_settle(const ResultsByCore& results, const std::vector<PairJobs>& pairs, int here) {
  std::set<size_t> refs, redo;
  SettlePlan plan;
  for (size_t q = 0; q < pairs.size(); ++q) {
    const PairJobs& p = pairs[q];
    const MixResult* m = results.latest(p.pair);
    if (!measured(m)) continue;
    const int core = m->cpu;
    auto all_present = [&](int cpu) {
      return std::all_of(p.references.begin(), p.references.end(), [&](size_t r) { return results.on(r, cpu); });
    };
    // Every reference `ok` on that core (or, with `or_missing`, not measured there yet).
    auto all_ok = [&](int cpu, bool or_missing) {
      return std::all_of(p.references.begin(), p.references.end(), [&](size_t r) {
        const MixResult* ref = results.on(r, cpu);
        return ref ? ref->status == Status::ok : or_missing;
      });
    };
    if (all_present(core) && (core == here || all_ok(core, false) || !all_ok(here, true))) continue;
    for (size_t r : p.references)
      if (!results.on(r, here)) refs.insert(r);
    if (core != here) redo.insert(p.pair);
    plan.pairs.push_back(q);
  }
  plan.jobs.assign(refs.begin(), refs.end());
  plan.jobs.insert(plan.jobs.end(), redo.begin(), redo.end());
  return plan;
}

}  // namespace peakprobe
