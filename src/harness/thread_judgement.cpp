#include "harness/thread_judgement.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include <fmt/format.h>

#include "harness/probe_runner_impl.hpp"

namespace peakprobe::detail {

namespace {

struct CoreLoad {
  double rate = 0;        // units per cycle, all its threads together
  int threads = 0;
  std::vector<int> cpus;  // logical CPUs of its threads
};

std::string cpu_list(const std::vector<int>& cpus) {
  return fmt::format("{} {}", cpus.size() == 1 ? "CPU" : "CPUs", fmt::join(cpus, "+"));
}

ThreadJudgement doubt(ThreadJudgement j, std::string why) {
  j.status = Status::mistrusted;
  j.reason = std::move(why);
  return j;
}

}  // namespace

ThreadJudgement judge_threads(const ThreadRun& run) {
  ThreadJudgement j;
  j.shortfall = std::numeric_limits<double>::quiet_NaN();
  const size_t n = run.cycles.size();
  const auto cpu_of = [&](size_t i) { return i < run.cpu.size() ? run.cpu[i] : int(i); };
  if (n == 0) return doubt(j, "no thread ran");
  if (!(run.one_core_cycles > 0) || !std::isfinite(run.one_core_cycles))
    return doubt(j, "no one-core figure of the same code to judge the threaded run by");
  for (size_t i = 0; i < n; ++i)
    if (!(run.cycles[i] > 0) || !std::isfinite(run.cycles[i]))
      return doubt(j, fmt::format("CPU {} gave no timing in the {}-thread run", cpu_of(i), n));

  // Physical cores, keyed by core id; a thread of unknown core is a core of its own (negative keys).
  std::map<long, CoreLoad> cores;
  for (size_t i = 0; i < n; ++i) {
    const int c = i < run.core.size() ? run.core[i] : -1;
    CoreLoad& load = cores[c >= 0 ? long(c) : -1 - long(i)];
    load.rate += 1.0 / run.cycles[i];
    ++load.threads;
    load.cpus.push_back(cpu_of(i));
  }
  const double noise = std::isfinite(run.one_core_noise) ? std::max(0.0, run.one_core_noise) : 0.0;
  j.tolerance = std::max(kRepeatLimit, std::min(noise, kThreadImbalanceLimit));
  const double one_rate = 1.0 / run.one_core_cycles;

  // Cores with as many threads each: identical work, so like rates.
  std::map<int, std::pair<const CoreLoad*, const CoreLoad*>> extremes;  // threads -> (slowest, fastest)
  for (const auto& [key, load] : cores) {
    auto [it, fresh] = extremes.try_emplace(load.threads, &load, &load);
    if (fresh) continue;
    if (load.rate < it->second.first->rate) it->second.first = &load;
    if (load.rate > it->second.second->rate) it->second.second = &load;
  }
  // The cores holding the fewest threads against the one-core figure (recorded whatever the verdict).
  const int fewest = extremes.begin()->first;
  double sum = 0;
  int count = 0;
  for (const auto& [key, load] : cores)
    if (load.threads == fewest) sum += load.rate, ++count;
  const double mean = sum / count;
  j.shortfall = 1 - mean / one_rate;

  for (const auto& [threads, ends] : extremes) {
    const double gap = ends.second->rate / ends.first->rate - 1;
    if (gap > kThreadImbalanceLimit)
      return doubt(j, fmt::format("cores disagree: {} ran {:.0f}% behind {} with the same stream (interference)",
                                  cpu_list(ends.first->cpus), 100 * gap, cpu_list(ends.second->cpus)));
  }
  const double allowed = j.tolerance + (fewest > 1 ? kSharedCoreAllowance : 0.0);
  if (j.shortfall > allowed)
    return doubt(j, fmt::format("the {}-thread run fell {:.1f}% short of the same code alone on one core ({:.3f} "
                                "against {:.3f} cycles a core{}; allowed {:.1f}%): every core ran slowed, as when the "
                                "host or other tenants are busy",
                                n, 100 * j.shortfall, 1 / mean, run.one_core_cycles,
                                fewest > 1 ? fmt::format(", {} threads on each core", fewest) : std::string(),
                                100 * allowed));
  if (fewest == 1) {
    const CoreLoad& fastest = *extremes.begin()->second.second;
    const double excess = fastest.rate / one_rate - 1;
    if (excess > j.tolerance)
      return doubt(j, fmt::format("{} ran {:.1f}% faster than the same code alone on one core ({:.3f} against {:.3f} "
                                  "cycles; allowed {:.1f}%): one of the two timings is wrong",
                                  cpu_list(fastest.cpus), 100 * excess, 1 / fastest.rate, run.one_core_cycles,
                                  100 * j.tolerance));
  }
  return j;
}

}  // namespace peakprobe::detail
