#include "harness/quiet_core.hpp"

#include <algorithm>
#include <chrono>
#include <numeric>
#include <set>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "harness/clock.hpp"
#include "harness/cycle_counter.hpp"
#include "harness/pin.hpp"
#include "harness/run_delay.hpp"
#include "harness/stats.hpp"

namespace peakprobe {

namespace {
constexpr size_t kMaxCandidates = 64;
constexpr int kPasses = 2;
constexpr int kMinTries = 8;
}  // namespace

double drift_free_ratio(const std::function<double()>& time_chain, const std::function<double()>& time_wide) {
  const double c1 = time_chain();
  const double w1 = time_wide();
  const double w2 = time_wide();
  const double c2 = time_chain();
  return c1 + c2 > 0 ? (w1 + w2) / (c1 + c2) : 0;
}

double quietest_ratio(const std::vector<double>& ratios, const std::vector<double>& chain_ticks) {
  if (ratios.size() != chain_ticks.size() || ratios.empty()) return 0;
  double fastest = 0;
  for (double c : chain_ticks)
    if (c > 0 && (fastest == 0 || c < fastest)) fastest = c;
  std::vector<double> kept;
  for (size_t i = 0; i < ratios.size(); ++i)
    if (chain_ticks[i] > 0 && chain_ticks[i] <= fastest * (1 + kChainSlowedLimit)) kept.push_back(ratios[i]);
  return confirmed_min(kept, 0.01);
}

std::vector<int> quiet_cores_first(const std::vector<int>& order, size_t n, const std::vector<double>& ratio) {
  n = std::min({n, order.size(), ratio.size()});
  double best = 0;
  for (size_t i = 0; i < n; ++i)
    if (ratio[i] > 0 && (best == 0 || ratio[i] < best)) best = ratio[i];
  std::vector<size_t> idx(n);
  std::iota(idx.begin(), idx.end(), 0);
  // Rank 0: tied with the quietest; 1: measured, by ratio; 2: not measured.
  auto rank = [&](size_t i) { return ratio[i] <= 0 ? 2 : ratio[i] <= best * (1 + kQuietTie) ? 0 : 1; };
  std::stable_sort(idx.begin(), idx.end(), [&](size_t a, size_t b) {
    if (rank(a) != rank(b)) return rank(a) < rank(b);
    return rank(a) == 1 && ratio[a] < ratio[b];
  });
  std::vector<int> out;
  for (size_t i : idx) out.push_back(order[i]);
  out.insert(out.end(), order.begin() + long(n), order.end());
  return out;
}

std::vector<int> chosen_cpu_first(const std::vector<int>& order, const std::vector<int>& cpu_core, int chosen) {
  if (std::find(order.begin(), order.end(), chosen) == order.end()) return order;
  // A CPU the map does not name: a core of its own (numbers below 0 never meet a real core).
  const auto core_of = [&](int cpu) {
    return cpu >= 0 && size_t(cpu) < cpu_core.size() && cpu_core[size_t(cpu)] >= 0 ? cpu_core[size_t(cpu)] : -1 - cpu;
  };
  std::vector<int> out{chosen};
  std::set<int> cores{core_of(chosen)};
  for (int cpu : order)
    if (cpu != chosen && cores.insert(core_of(cpu)).second) out.push_back(cpu);
  for (int cpu : order)
    if (std::find(out.begin(), out.end(), cpu) == out.end()) out.push_back(cpu);
  return out;
}

int quieter_core(const std::vector<CoreQuietness>& cores, int here) {
  const CoreQuietness* best = nullptr;
  const CoreQuietness* current = nullptr;
  for (const auto& c : cores) {
    if (c.cpu == here) current = &c;
    if (c.wide_ratio > 0 && (!best || c.wide_ratio < best->wide_ratio)) best = &c;
  }
  if (!best || best->cpu == here) return -1;
  if (current && current->wide_ratio > 0 && best->wide_ratio > current->wide_ratio * (1 - kQuietTie)) return -1;
  return best->cpu;
}

std::vector<CoreQuietness> measure_core_quietness(const CpuInfo& cpu, double seconds_per_core) {
  const size_t n = std::min({size_t(std::max(1, cpu.physical_cores)), cpu.core_order.size(), kMaxCandidates});
  std::vector<CoreQuietness> out;
  if (n == 0 || cpu.tsc_hz <= 0) return out;
  AffinityGuard restore;
  if (!pin_current_thread(cpu.core_order.front())) return out;
  CycleCounter counter;
  auto cal = ClockCalibrator::create(counter, cpu.tsc_hz, cpu);
  if (!cal) return out;
  (*cal)->set_ratio_window(0);  // its ratio is not used: no window of tries
  (*cal)->measure();             // sizes the reference calls
  const Ruler& r = (*cal)->ruler();
  if (r.chain_iters == 0 || r.wide_iters == 0) return out;
  std::vector<std::vector<double>> pass_medians(n), pass_quietest(n);
  const double ticks_per_pass = seconds_per_core / kPasses * cpu.tsc_hz;
  // Passes over all cores in turn, so a core must be quiet at two moments some time apart.
  for (int pass = 0; pass < kPasses; ++pass)
    for (size_t i = 0; i < n; ++i) {
      if (!pin_current_thread(cpu.core_order[i])) continue;
      std::vector<double> ratios;
      // The first calls after a migration find cold caches and predictors, and a core that sat idle
      // a slow clock: run the chain untimed for as long as a pass measures, so the clock has ramped.
      const uint64_t warm = tsc_now();
      do r.chain(r.chain_iters, r.buffer, r.consts);
      while (double(tsc_now() - warm) < ticks_per_pass);
      auto time_chain = [&] {
        r.chain(1, r.buffer, r.consts);
        const uint64_t t0 = counter.now();
        r.chain(r.chain_iters, r.buffer, r.consts);
        return double(counter.now() - t0);
      };
      auto time_wide = [&] {
        r.wide(1, r.buffer, r.consts);
        const uint64_t t0 = counter.now();
        r.wide(r.wide_iters, r.buffer, r.consts);
        return double(counter.now() - t0);
      };
      std::vector<double> chains;  // each sample's two chain calls, in ticks
      const uint64_t start = tsc_now();
      while (ratios.size() < size_t(kMinTries) || double(tsc_now() - start) < ticks_per_pass) {
        double chain_ticks = 0;
        const double ratio = drift_free_ratio(
            [&] {
              const double t = time_chain();
              chain_ticks += t;
              return t;
            },
            time_wide);
        if (ratio > 0) ratios.push_back(ratio), chains.push_back(chain_ticks);
        if (ratios.size() > 4096) break;
        // A counter that stopped advancing gives no ratio at all: the pass ends on time, not never.
        if (double(tsc_now() - start) > 20 * ticks_per_pass) break;
      }
      pass_medians[i].push_back(median(ratios));
      if (const double quietest = quietest_ratio(ratios, chains); quietest > 0) pass_quietest[i].push_back(quietest);
    }
  for (size_t i = 0; i < n; ++i) {
    CoreQuietness q;
    q.cpu = cpu.core_order[i];
    if (pass_medians[i].size() == size_t(kPasses))
      q.wide_ratio = *std::max_element(pass_medians[i].begin(), pass_medians[i].end());
    if (!pass_quietest[i].empty())
      q.widest = r.wide_rate(*std::min_element(pass_quietest[i].begin(), pass_quietest[i].end()));
    out.push_back(q);
  }
  return out;
}

double quiet_wide_rate(const CpuInfo& cpu, int here) {
  const auto seen = [&](int c) {
    return c >= 0 && size_t(c) < cpu.wide_rate_seen.size() ? cpu.wide_rate_seen[size_t(c)] : 0.0;
  };
  // Every core one kind (0) when no kinds are named; -1: a CPU the kinds leave out, compared with nobody.
  const auto kind = [&](int c) {
    if (cpu.cpu_kind.empty()) return 0;
    return c >= 0 && size_t(c) < cpu.cpu_kind.size() ? cpu.cpu_kind[size_t(c)] : -1;
  };
  const double own = seen(here);
  if (kind(here) < 0) return own;
  std::vector<double> peers;
  for (size_t c = 0; c < cpu.wide_rate_seen.size(); ++c)
    if (cpu.wide_rate_seen[c] > 0 && kind(int(c)) == kind(here)) peers.push_back(cpu.wide_rate_seen[c]);
  return std::max(own, peers.empty() ? 0.0 : median(peers));
}

std::optional<double> taken_share(int cpu, double seconds) {
  AffinityGuard restore;
  if (!pin_current_thread(cpu)) return std::nullopt;
  const int tid = current_tid();
  const auto before = run_delay_ns(tid);
  if (!before) return std::nullopt;
  const auto start = std::chrono::steady_clock::now();
  volatile uint64_t spin = 0;
  while (std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() < seconds) spin = spin + 1;
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const auto after = run_delay_ns(tid);
  if (!after || wall <= 0) return std::nullopt;
  return *after > *before ? double(*after - *before) * 1e-9 / wall : 0.0;
}

bool core_taken(int cpu, double* share) {
  const auto waited = taken_share(cpu);
  if (share) *share = waited.value_or(0);
  return waited && *waited > kRunDelayLimit;
}

std::vector<int> free_core_first(const std::vector<int>& order, size_t n, const std::function<bool(int)>& taken,
                                 std::vector<int>* found) {
  n = std::min(n, order.size());
  std::vector<int> busy;
  for (size_t i = 0; i < n; ++i) {
    if (taken(order[i])) {
      busy.push_back(order[i]);
      continue;
    }
    if (found) found->insert(found->end(), busy.begin(), busy.end());
    std::vector<int> out{order[i]};
    for (size_t j = 0; j < n; ++j)
      if (j != i && std::find(busy.begin(), busy.end(), order[j]) == busy.end()) out.push_back(order[j]);
    out.insert(out.end(), busy.begin(), busy.end());
    out.insert(out.end(), order.begin() + long(n), order.end());
    return out;
  }
  if (found) found->insert(found->end(), busy.begin(), busy.end());
  return order;
}

void note_widest_rates(const std::vector<CoreQuietness>& cores, CpuInfo& cpu) {
  for (const CoreQuietness& c : cores) {
    if (c.cpu < 0 || c.widest <= 0) continue;
    if (size_t(c.cpu) >= cpu.wide_rate_seen.size()) cpu.wide_rate_seen.resize(size_t(c.cpu) + 1, 0.0);
    cpu.wide_rate_seen[size_t(c.cpu)] = c.widest;
  }
}

std::string order_cores_quietest_first(CpuInfo& cpu) {
  if (cpu.physical_cores < 2 || cpu.core_order.size() < 2) return "";
  const auto q = measure_core_quietness(cpu);
  if (q.empty()) return "";
  note_widest_rates(q, cpu);
  std::vector<double> ratio;
  for (const auto& c : q) ratio.push_back(c.wide_ratio);
  const int before = cpu.core_order.front();
  cpu.core_order = quiet_cores_first(cpu.core_order, q.size(), ratio);
  // The quietest by the ratios, unless another program takes it by turns: then the next one free.
  std::vector<int> taken;
  std::vector<std::string> taken_said;
  cpu.core_order = free_core_first(
      cpu.core_order, std::min(q.size(), kTakenChecks),
      [&](int c) {
        double share = 0;
        if (!core_taken(c, &share)) return false;
        taken_said.push_back(fmt::format("CPU {} {:.0f}%", c, share * 100));
        return true;
      },
      &taken);
  // Every core checked taken: the order stands, and the note says so.
  const bool all_taken = taken.size() == std::min(q.size(), kTakenChecks);
  const std::string taken_note =
      taken.empty() ? ""
                    : fmt::format("; another program takes turns on {} (the share of {:.0f} ms a thread spinning there "
                                  "waited for its CPU: {}){}",
                                  all_taken && taken.size() > 1 ? std::string("every core checked")
                                  : taken.size() == 1           ? fmt::format("CPU {}", taken.front())
                                                                : fmt::format("CPUs {}", fmt::join(taken, ", ")),
                                  kTakenWindowSeconds * 1e3, fmt::join(taken_said, ", "),
                                  all_taken ? "" : ", measured there last");
  const auto chosen = std::find_if(q.begin(), q.end(), [&](const CoreQuietness& c) { return c.cpu == cpu.core_order.front(); });
  const auto first = std::find_if(q.begin(), q.end(), [&](const CoreQuietness& c) { return c.cpu == before; });
  std::vector<double> measured;
  for (double x : ratio)
    if (x > 0) measured.push_back(x);
  if (measured.empty() || chosen == q.end() || first == q.end()) return "";
  const auto [lo, hi] = std::minmax_element(measured.begin(), measured.end());
  if (cpu.core_order.front() == before)
    return fmt::format("CPU {} is among the quietest of {} cores (wide/chain reference ratio {:.3f}; {:.3f}-{:.3f} "
                       "over all; its wide stream at {:.2f} adds a cycle at its quietest){}",
                       before, q.size(), first->wide_ratio, *lo, *hi, first->widest, taken_note);
  if (std::find(taken.begin(), taken.end(), before) != taken.end())
    return fmt::format("measuring on CPU {} (its wide stream at {:.2f} adds a cycle at its quietest): another program "
                       "takes turns on CPU {} (the share of {:.0f} ms a thread spinning there waited for its CPU: {}); "
                       "--cpu N picks a core by hand",
                       chosen->cpu, chosen->widest, before, kTakenWindowSeconds * 1e3, fmt::join(taken_said, ", "));
  return fmt::format("measuring on CPU {}, the quietest of {} cores (its wide stream at {:.2f} adds a cycle at its "
                     "quietest): its wide/chain reference ratio {:.3f} against {:.3f} on CPU {} (something else runs "
                     "beside that one; --cpu N picks a core by hand){}",
                     chosen->cpu, q.size(), chosen->widest, chosen->wide_ratio, first->wide_ratio, before, taken_note);
}

}  // namespace peakprobe
