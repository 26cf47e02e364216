// Measuring instruction mixes (pairs are two-part mixes): same harness, clock and trust checks as a
// single probe, with the stream built by plan_mix.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <thread>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "harness/probe_runner.hpp"
#include "harness/probe_runner_impl.hpp"
#include "asm/target.hpp"

namespace peakprobe {
using namespace detail;

namespace {

// Why a mix of these forms must not run, or "" when it may. The same forms `inst` refuses are refused
// here (a pair with `syscall` would make real system calls). A form that moves the stack pointer or
// a flag the harness stands on runs only beside its balancing companion with the same weight (push
// with pop, std with cld); `order` then puts a companion that must come first (push before pop) first.
std::string state_refusal(const std::vector<std::unique_ptr<isa::ProbeForm>>& forms, const std::vector<MixSpec>& parts,
                          std::vector<size_t>& order) {
  const isa::Target& target = isa::host_target();
  for (const auto& f : forms)
    if (auto why = f->refusal()) return "refused before running: " + *why;
  for (size_t i = 0; i < forms.size(); ++i) {
    auto companion = forms[i]->companion();
    if (!companion) continue;
    auto other = target.resolve(companion->text);
    size_t j = forms.size();
    if (other)
      for (size_t k = 0; k < forms.size(); ++k)
        if (k != i && forms[k]->display() == other->display && parts[k].weight == parts[i].weight) j = k;
    if (j == forms.size())
      return fmt::format("refused before running: '{}' changes state the harness stands on and runs only "
                         "beside '{}' with the same weight ({}); 'peakprobe inst \"{}\"' measures it balanced",
                         forms[i]->display(), companion->text, companion->why, forms[i]->display());
    const auto pos_i = std::find(order.begin(), order.end(), i), pos_j = std::find(order.begin(), order.end(), j);
    if (companion->first == (pos_j > pos_i)) std::iter_swap(pos_i, pos_j);
  }
  return "";
}

std::string mix_repro(const std::vector<MixSpec>& parts, int cpu) {
  std::string cmd = "peakprobe mix";
  for (const auto& p : parts) cmd += fmt::format(" \"{}:{}\"", p.probe.text, p.weight);
  return cmd + fmt::format(" --cpu {}", cpu);
}

}  // namespace

MixResult ProbeRunner::Impl::run_mix_once(const std::vector<MixSpec>& parts, bool on_all_threads, int forced_rounds) {
  MixResult r;
  r.repro = mix_repro(parts, pinned_cpu);
  r.cpu = pinned_cpu;
  r.clock.source = counter.source();
  std::vector<std::unique_ptr<isa::ProbeForm>> forms;
  std::vector<std::string> needed;
  std::string dtype = "-";
  for (const auto& p : parts) {
    MixPart part;
    part.instruction = p.probe.text;
    part.weight = p.weight;
    part.ops_per_instruction = p.probe.ops_per_instruction;
    part.dtype = p.probe.dtype;
    r.parts.push_back(part);
    auto form = target.probe_form(p.probe.text, cpu);
    if (!form) {
      r.status = Status::error;
      r.reason = form.error();
      return r;
    }
    r.parts.back().instruction = form.value()->display();
    if (part.dtype == "-") r.parts.back().dtype = form.value()->default_dtype();
    if (dtype == "-" && is_float(r.parts.back().dtype)) dtype = r.parts.back().dtype;
    needed.insert(needed.end(), form.value()->features().begin(), form.value()->features().end());
    needed.insert(needed.end(), p.probe.requires_features.begin(), p.probe.requires_features.end());
    forms.push_back(std::move(form.value()));
  }
  if (auto missing = missing_features(cpu, needed); !missing.empty()) {
    r.status = Status::skipped;
    r.reason = fmt::format("needs {}, not available on this CPU", fmt::join(missing, ", "));
    return r;
  }
  std::vector<size_t> order(forms.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  if (std::string why = state_refusal(forms, parts, order); !why.empty()) {
    r.status = Status::skipped;
    r.reason = why;
    return r;
  }
  std::vector<isa::MixPart> entries;
  int group = 0;
  for (size_t i : order) {
    entries.push_back({forms[i].get(), parts[i].weight, parts[i].chains});
    group += parts[i].weight;
  }
  // Every part gets as many independent chains as the registers allow (up to its own limit, where it
  // has one): enough to cover latency x pipes for any common form, so the mix is limited by issue,
  // not by its own dependencies.
  const int most = target.max_rounds(entries);
  if (forced_rounds > most && most >= 1) {
    r.status = Status::error;
    r.reason = fmt::format("{} rounds of this mix need more registers than the ISA has (at most {})", forced_rounds, most);
    return r;
  }
  const int rounds = forced_rounds > 0 && most >= 1 ? forced_rounds : most;
  if (rounds < 1) {
    // No plan at any size: one round says why (registers, or forms that run only on their own).
    auto one = target.plan_mix(entries, 1, dtype);
    r.status = Status::error;
    r.reason = one ? "these forms together need more registers than the ISA has" : one.error();
    return r;
  }
  auto plan = target.plan_mix(entries, rounds, dtype);
  if (!plan) {
    r.status = Status::error;
    r.reason = plan.error();
    return r;
  }
  r.rounds = rounds;
  const int per_copy = plan.value()->measured_per_copy();
  auto compiled = compile_pair(plan.value(), throughput_copies(per_copy));
  if (!compiled) {
    r.status = Status::error;
    r.reason = compiled.error();
    return r;
  }
  ClockSample before = calibrate_before();
  PairTiming first, second;
  std::string err;
  if (!time(compiled.value(), dtype, first, err) || !time(compiled.value(), dtype, second, err)) {
    r.status = Status::error;
    r.reason = "mix stream: " + err;
    return r;
  }
  ClockSample after = calibrate();
  const double tpc = 0.5 * (before.ticks_per_cycle + after.ticks_per_cycle);
  if (tpc <= 0) {
    r.status = Status::error;
    r.reason = "clock calibration failed around this mix";
    return r;
  }
  const PairTiming& best = second.value < first.value ? second : first;
  Stats per_inst = best.cycles;
  r.stats = per_inst;
  r.stats.min *= group;
  r.stats.median *= group;
  r.stats.max *= group;
  r.clock = clock_reading(counter.source(), before, after);
  if (best.ghz > 0) r.clock.ghz = best.ghz;  // the clock the samples were converted with
  const double cpg = best.value * group;
  r.cycles_per_group = cpg;
  if (cpg > 0) r.ipc = group / cpg;
  double flops = 0, iops = 0;
  for (const auto& p : r.parts) (is_float(p.dtype) ? flops : iops) += p.weight * p.ops_per_instruction;
  if (cpg > 0 && flops > 0) {
    r.flops_per_cycle = flops / cpg;
    r.gflops = *r.flops_per_cycle * r.clock.ghz;
  }
  if (cpg > 0 && iops > 0) {
    r.ops_per_cycle = iops / cpg;
    r.gops = *r.ops_per_cycle * r.clock.ghz;
  }
  TrustInputs trust;
  trust.before = before;
  trust.after = after;
  trust.ipc = r.ipc.value_or(0);
  trust.overhead = best.overhead_fraction;
  // The spread of the samples the figure was taken from, as for a probe: with the ruler, the
  // undisturbed ones (the disturbed ones are judged by their count, below).
  trust.spread = best.paired ? best.cycles.spread : best.per_unit.spread;
  trust.repeat_disagreement =
      std::fabs(first.value - second.value) / std::min(first.value, second.value);
  // The checks a probe's figure gets (timing_doubts): its clock did not move during the timing, and
  // no few fast calls set it.
  trust.paired_disagreement = detail::chain_disagreement(best);
  trust.below_typical = std::max(detail::fast_mode_gap(first), detail::fast_mode_gap(second));
  trust.issue_width = issue_width;
  trust.emulator = cpu.emulator;
  trust.ruler_chain_ratio = ruler_chain_ratio();
  if (best.paired) {
    trust.clean_samples = best.clean_samples;
    trust.slowed_samples = best.slowed_samples;
    trust.slowdown = best.slowdown;
  }
  auto doubts = timing_doubts(trust, options);
  if (!doubts.empty()) {
    r.status = Status::mistrusted;
    r.reason = fmt::format("{}", fmt::join(doubts, "; "));
  }
  // The repro line runs the parts as `peakprobe mix` does, which lays them out by their latencies
  // (pairs/mix_layout.hpp): a mix run here with other rounds or limits (a pair matrix, flopmix, a
  // table's pairs) may be laid out differently there; this run's are logged beside it.
  std::string limits;
  for (size_t i = 0; i < parts.size(); ++i)
    if (parts[i].chains > 0) limits += fmt::format(", part {} on at most {} chains", i + 1, parts[i].chains);
  spdlog::debug("mix {}: {:.3f} cycles/group, {} rounds{}, {}", r.repro, cpg, rounds, limits, to_string(r.status));
  if (on_all_threads && options.threads > 1 && r.status == Status::ok && cpg > 0) {
    // The same stream on every core at once: run_threads sums each core's rate at its own clock. A
    // disturbed threaded run is tried again as a mistrusted probe is (pausing longer each time): on a
    // busy 2-vCPU host one slowed moment used to drop the all-cores FLOP-mix ceiling from the report.
    // The one-core figure above stands either way; an error is not retried (it would recur).
    auto threaded = [&] {
      ProbeResult one;
      one.dtype = dtype;  // the first floating-point part's, or "-": total_gflops or total_gops
      one.ops_per_instruction = (flops > 0 ? flops : iops) / group;
      run_threads(compiled.value(), dtype, best.value, trust.repeat_disagreement, one);
      forget_calibration_moment();
      return one;
    };
    // (Under an emulator no one-core mix is ok, so this never runs there.)
    const ProbeResult all = measure_one_with_retries<ProbeResult>(threaded, kAttempts, &threaded_retries);
    if (all.threads_status == Status::ok && (all.total_gflops || all.total_gops)) {
      r.threads = all.threads;
      r.total_gflops = all.total_gflops;
      r.total_gops = all.total_gops;
      for (double c : all.per_thread_recip_throughput) r.per_thread_cycles_per_group.push_back(c * group);
    } else {
      spdlog::warn("no {}-core ceiling from the mix {} (run with --threads {}): {} ({})", options.threads, r.repro,
                   options.threads, to_string(all.threads_status), all.threads_reason);
    }
  }
  note_probe_slowed((best.paired && ran_slowed(best.clean_samples)) || ruler_ran_slowed(trust));
  return r;
}

MixResult ProbeRunner::run_mix(const std::vector<MixSpec>& parts, bool on_all_threads, int rounds) {
  return measure_one_with_retries<MixResult>([&] { return impl_->run_mix_once(parts, on_all_threads, rounds); },
                                             detail::kAttempts, &impl_->single_retries);
}

int ProbeRunner::mix_rounds(const std::vector<MixSpec>& parts) const {
  std::vector<std::unique_ptr<isa::ProbeForm>> forms;
  std::vector<isa::MixPart> entries;
  for (const auto& p : parts) {
    auto form = impl_->target.probe_form(p.probe.text, impl_->cpu);
    if (!form || p.weight < 1) return 0;
    forms.push_back(std::move(form.value()));
    entries.push_back({forms.back().get(), p.weight, p.chains});
  }
  return impl_->target.max_rounds(entries);
}

std::vector<MixResult> ProbeRunner::run_mix_batch(const std::vector<std::vector<MixSpec>>& mixes,
                                                  const std::function<void(size_t)>& on_start,
                                                  const std::function<void(size_t, const MixResult&)>& on_result,
                                                  const std::function<bool()>& stop, const std::vector<int>& rounds) {
  return measure_with_retries<MixResult>(
      mixes.size(),
      [&](size_t i) { return impl_->run_mix_once(mixes[i], false, i < rounds.size() ? rounds[i] : 0); }, on_start,
      on_result, stop, impl_->cpu.emulator.empty() ? kAttempts : 1, [&] { impl_->forget_calibration_moment(); });
}

}  // namespace peakprobe
