// Measures one instruction form: latency chain, throughput with K swept upward, the core clock just
// before and after, and the trust checks that decide between ok and mistrusted.
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "peakprobe/cpu_info.hpp"
#include "peakprobe/expected.hpp"
#include "peakprobe/pair_result.hpp"
#include "peakprobe/probe_spec.hpp"
#include "peakprobe/result.hpp"

namespace peakprobe {

struct ProbeOptions {
  int cpu = -1;                 // logical CPU to pin to; -1 = first CPU of the core order
  int threads = 1;              // >1: the throughput stream also runs on this many pinned cores at once
  double drift_limit = 0.02;    // clock change across a probe that marks it mistrusted
  double spread_limit = 0.20;   // (median - min) / min of the per-instruction estimates: mistrusted above
  std::string repro_extra;      // options appended to each repro line
};

// One part of an instruction mix: a form and how many of it go into each group.
struct MixSpec {
  ProbeSpec probe;
  int weight = 1;
  // Chains its instances rotate through (0: one per instance, weight x rounds): a part that needs
  // few chains leaves registers to the others (src/pairs/pipe_groups.cpp and src/pairs/mix_layout.cpp
  // choose it; the planner may keep an instance per chain whatever the limit, for a form that writes memory).
  int chains = 0;
};

class ProbeRunner {
 public:
  static Expected<std::unique_ptr<ProbeRunner>> create(const CpuInfo& cpu, const ProbeOptions& options);
  ~ProbeRunner();
  ProbeResult run(const ProbeSpec& spec);
  // Measures all specs in order, then measures mistrusted ones again (up to 4 attempts in all),
  // pausing once per round: a large batch pays the pauses once, not once per form.
  // `on_start(i, spec)` is called before each first attempt (progress display), `on_result(i, r)`
  // after every attempt (checkpoints); `stop()` is asked before each attempt and ends the batch
  // early (a budget, Ctrl-C): the results then hold the specs measured at least once, in order.
  std::vector<ProbeResult> run_batch(const std::vector<ProbeSpec>& specs,
                                     const std::function<void(size_t, const ProbeSpec&)>& on_start = {},
                                     const std::function<void(size_t, const ProbeResult&)>& on_result = {},
                                     const std::function<bool()>& stop = {});
  // Runs the parts interleaved in the ratio of their weights, independent of each other and within
  // themselves; reports cycles per group, IPC and FLOP/s of the mix. Parts' alone figures are not
  // measured here. Doubtful results are measured again (up to 4 attempts).
  // With `on_all_threads` and --threads above 1, an undisturbed mix is then run on every core at once
  // as well (total_gflops / total_gops).
  // `rounds` above 0 fixes the rounds (as run_mix_batch's `rounds`).
  MixResult run_mix(const std::vector<MixSpec>& parts, bool on_all_threads = false, int rounds = 0);
  // Measures every mix in order, then the mistrusted ones again after the others, as run_batch
  // does: one pause per round for the whole batch instead of up to 1.3 s of pauses per mix.
  // `on_result` and `stop` as for run_batch. `rounds[i]`, where given and above 0, fixes the rounds
  // of mix i (each part then has weight x rounds instances, on that many chains or its MixSpec::chains)
  // instead of the most the registers allow.
  std::vector<MixResult> run_mix_batch(const std::vector<std::vector<MixSpec>>& mixes,
                                       const std::function<void(size_t)>& on_start = {},
                                       const std::function<void(size_t, const MixResult&)>& on_result = {},
                                       const std::function<bool()>& stop = {}, const std::vector<int>& rounds = {});
  // The most rounds a mix of these parts gets (what run_mix uses); 0 when it cannot be planned.
  int mix_rounds(const std::vector<MixSpec>& parts) const;
  // The calibration taken when the runner started (after warm-up).
  const ClockReading& start_clock() const;
  // The logical CPU the runner is pinned to now: it moves to a quieter core on its own when the one
  // it is on keeps running slowed (unless ProbeOptions::cpu pinned it).
  int cpu() const;
  int threads() const;
  // Pins the runner to logical CPU `cpu` now, with a fresh calibration of the clock there. False
  // (with the reason in `error`, when given) when the CPU cannot be pinned or timed, or the runner
  // was pinned by hand (ProbeOptions::cpu): the runner then stays where it was.
  bool move_to(int cpu, std::string* error = nullptr);

 private:
  struct Impl;
  explicit ProbeRunner(std::unique_ptr<Impl> impl);
  ProbeResult run_once(const ProbeSpec& spec);
  std::unique_ptr<Impl> impl_;
};

// The features in `needed` that `cpu` does not offer, canonical names; one the CPU has but the OS does not
// enable says so.
std::vector<std::string> missing_features(const CpuInfo& cpu, const std::vector<std::string>& needed);

}  // namespace peakprobe
