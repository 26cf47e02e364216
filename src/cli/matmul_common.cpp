#include "cli/matmul_common.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <sstream>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <spdlog/spdlog.h>

#include "cli/measure.hpp"
#include "harness/core_availability.hpp"
#include "matmul/autotune.hpp"
#include "harness/pin.hpp"
#include "matmul/bandwidth_calibration.hpp"
#include "harness/probe_runner.hpp"
#include "matmul/call_calibration.hpp"
#include "matmul/matmul_run.hpp"
#include "asm/target.hpp"
#include "matmul/reference.hpp"
#include "memory/sizes.hpp"
#include "roofline/ceilings.hpp"

namespace peakprobe::cli {

std::string roof_instruction(const CpuInfo& cpu, MatmulDtype dtype) {
  return isa::host_target().matmul_roof(cpu, dtype).instruction;
}

bool widened_roof_faster(const MatmulRoof& native, const MatmulRoof& widened) {
  const bool teams = native.gflops && widened.gflops;
  const std::optional<double> a = teams ? native.gflops : native.per_core_gflops;
  const std::optional<double> b = teams ? widened.gflops : widened.per_core_gflops;
  if (!a || !b || *a <= 0) return false;
  return *b > *a * (1 + kWidenGain);
}

Expected<WidenChoice> parse_widen(const std::string& text) {
  if (text == "auto") return WidenChoice::automatic;
  if (text == "yes") return WidenChoice::yes;
  if (text == "no") return WidenChoice::no;
  return make_error(fmt::format("--widen '{}': expected auto, yes or no", text));
}

const char* to_string(WidenChoice c) {
  switch (c) {
    case WidenChoice::automatic: return "auto";
    case WidenChoice::yes: return "yes";
    case WidenChoice::no: return "no";
  }
  return "auto";
}

std::string widen_problem(const CpuInfo& cpu, MatmulDtype dtype, WidenChoice choice) {
  if (choice == WidenChoice::automatic) return "";
  const auto& target = isa::host_target();
  const bool widens = target.gemm_widened(cpu, dtype);
  if (choice == WidenChoice::yes && !widens && !target.gemm_widened_alternative(cpu, dtype))
    return fmt::format("--widen yes: the {} kernels have no widened form to run on this CPU{}", to_string(dtype),
                       dtype == MatmulDtype::f32 ? " (f32 is not widened)"
                                                 : " (they run on its dot product, or on tiles: --isa may hold them "
                                                   "to a level with the choice)");
  if (choice == WidenChoice::no && widens)
    return fmt::format("--widen no: this CPU has no {} dot product at the kernels' width; they must widen",
                       to_string(dtype));
  return "";
}

MatmulRoof measure_roof_choosing_kernels(const GlobalOptions& g, CpuInfo& cpu, MatmulDtype dtype, int threads,
                                         WidenChoice choice) {
  const auto alternative = isa::host_target().gemm_widened_alternative(cpu, dtype);
  // Quiet only where it is the roof not taken: without a choice it is the one the row keeps.
  MatmulRoof native = measure_roof(g, cpu, dtype, threads, alternative && choice == WidenChoice::yes);
  if (!alternative) return native;
  MatmulRoof widened = measure_roof(g, *alternative, dtype, threads, choice != WidenChoice::yes);
  auto keeping = [](MatmulRoof taken, const MatmulRoof& other) {
    taken.alternative_source = other.source;
    taken.alternative_gflops = other.gflops;
    return taken;
  };
  auto rate = [](const MatmulRoof& r) { return r.gflops ? fmt::format("{:.1f}", *r.gflops) : std::string("unmeasured"); };
  if (choice == WidenChoice::no || (choice == WidenChoice::automatic && !widened_roof_faster(native, widened))) {
    spdlog::debug("matmul {}: {} {} GFLOP/s, widened to {} on {} {}: the dot product stays{}", to_string(dtype),
                  native.source, rate(native), widened.widened_to, widened.source, rate(widened),
                  choice == WidenChoice::no ? " (--widen no)" : "");
    return keeping(std::move(native), widened);
  }
  if (choice == WidenChoice::yes)
    spdlog::info("matmul {}: --widen yes: the kernels widen {} to {} when packing and run on {} ({} GFLOP/s on {} "
                 "thread{}; {} {})", to_string(dtype), to_string(dtype), widened.widened_to, widened.source,
                 rate(widened), threads, threads == 1 ? "" : "s", native.source, rate(native));
  else
    spdlog::info("matmul {}: {} runs {} GFLOP/s on {} thread{} here, {} {}{}: the kernels widen {} to {} when "
                 "packing and run on it", to_string(dtype), native.source, rate(native), threads,
                 threads == 1 ? "" : "s", widened.source, rate(widened),
                 native.gflops && widened.gflops ? "" : " (compared on one core each)", to_string(dtype),
                 widened.widened_to);
  cpu = *alternative;
  return keeping(std::move(widened), native);
}

CpuInfo led_by_roof_core(const CpuInfo& cpu, const MatmulRoof& roof) {
  CpuInfo led = cpu;
  if (roof.threads != 1 || roof.cpu < 0) return led;
  auto at = std::find(led.core_order.begin(), led.core_order.end(), roof.cpu);
  if (at != led.core_order.end()) std::rotate(led.core_order.begin(), at, at + 1);
  return led;
}

MatmulRoof measure_roof(const GlobalOptions& g, const CpuInfo& cpu, MatmulDtype dtype, int threads, bool quiet) {
  const auto warn = quiet ? spdlog::level::debug : spdlog::level::warn;
  const auto info = quiet ? spdlog::level::debug : spdlog::level::info;
  MatmulRoof roof;
  const isa::MatmulRoof what = isa::host_target().matmul_roof(cpu, dtype);
  roof.source = what.instruction;
  roof.vector_bits = what.vector_bits;
  roof.tiles = what.tiles;
  roof.threads = threads;
  roof.dtype = dtype;
  if (isa::host_target().gemm_widened(cpu, dtype)) roof.widened_to = dtype == MatmulDtype::bf16 ? "f32" : "int16";
  AffinityGuard caller_affinity;  // the probe pins this thread; BLAS threads started later must not inherit it
  ProbeOptions opt;
  opt.cpu = g.cpu;
  opt.threads = threads;
  auto runner = ProbeRunner::create(cpu, opt);
  if (!runner) {
    roof.missing = runner.error();
    spdlog::log(warn, "no ceiling: {}", roof.missing);
    return roof;
  }
  ProbeSpec s;
  s.text = roof.source;
  s.ops_per_instruction = what.ops;
  s.dtype = what.dtype;
  s.origin = "matmul roof";
  // A mistrusted roof is measured again: its doubts are mostly moments (a busy sibling or host, the
  // vector unit's power-up), and without a ceiling the row has no efficiency. Sapphire Rapids-class
  // VM: 1 run in 8 of the 512-bit FMA roof read "the core ran slowed", the next one was clean.
  constexpr int kRoofAttempts = 3;
  ProbeResult p;
  for (int attempt = 1; attempt <= kRoofAttempts; ++attempt) {
    p = (*runner)->run(s);
    if (p.status != Status::mistrusted && p.threads_status != Status::mistrusted) break;
    spdlog::log(info, "matmul roof {} mistrusted ({}){}", s.text,
                 p.status == Status::mistrusted ? p.reason : fmt::format("{} threads: {}", threads, p.threads_reason),
                 attempt < kRoofAttempts ? ": measuring it again" : "");
  }
  roof.clock = p.clock;
  if (threads == 1) roof.cpu = p.cpu;
  // The cost model takes the rates even from a mistrusted reading: it only ranks tilings, and a
  // reading near the truth ranks them better than a default of one instruction per cycle.
  if (p.recip_throughput_cycles && *p.recip_throughput_cycles > 0) roof.per_cycle = 1.0 / *p.recip_throughput_cycles;
  if (p.latency_cycles && *p.latency_cycles > 0) roof.latency = *p.latency_cycles;
  if (p.status != Status::ok) {
    roof.missing = fmt::format("{} {}: {}", s.text, to_string(p.status), p.reason);
    spdlog::log(warn, "no ceiling: {}", roof.missing);
    return roof;
  }
  const auto per_core = dtype == MatmulDtype::i8 ? p.gops : p.gflops;
  roof.per_core_gflops = per_core;
  if (threads > 1 && p.threads_status != Status::ok) {
    roof.missing = fmt::format("{} on {} threads {}: {}", s.text, threads, to_string(p.threads_status), p.threads_reason);
    spdlog::log(warn, "no ceiling: {}", roof.missing);
    return roof;
  }
  const auto total = dtype == MatmulDtype::i8 ? p.total_gops : p.total_gflops;
  roof.gflops = threads > 1 ? total : per_core;
  if (!roof.gflops) roof.missing = s.text + " gave no rate";
  else if (threads > 1 && p.per_thread_recip_throughput.size() == size_t(threads))
    roof.team_clock_ghz =
        threaded_rate(*total, threads, p.ops_per_instruction, p.per_thread_recip_throughput, 0.0).clock_ghz;
  // One thread: its rate when run without pause, read against the clock as the product's calls are
  // (score_matmul scales the roof by it where the core slows under such a load). A roof of several
  // threads is never scaled to the product's clock, so it is not needed there.
  if (roof.gflops && threads == 1)
    roof.sustained = measure_sustained_share(cpu, s.text, s.dtype, roof.per_cycle, p.cpu);
  return roof;
}

MachineModel machine_for(const CpuInfo& cpu, const MatmulRoof& roof) {
  return machine_model_from(cpu, roof.clock.ghz > 0 ? roof.clock.ghz : 3.0, roof.per_cycle, roof.latency,
                            roof.dtype);
}

MachineModel machine_for(const CpuInfo& cpu, const MatmulRoof& roof, Gemm& gemm) {
  MachineModel machine = machine_for(cpu, roof);
  if (std::string missing = calibrate_machine(machine, gemm); !missing.empty())
    spdlog::warn("matmul: the cost model prices by its formula what it could not measure ({})", missing);
  if (std::string missing = calibrate_bandwidth(machine, cpu, roof.threads); !missing.empty())
    spdlog::debug("matmul: cache bandwidths left at their defaults: {}", missing);
  spdlog::debug("matmul: bandwidth per thread on {} threads: L2 {:.0f} GB/s ({}), L3 {:.0f} GB/s ({})", roof.threads,
                machine.l2_gbps, machine.l2_measured_set ? "measured" : "default", machine.l3_gbps,
                machine.l3_measured_set ? "measured" : "default");
  if (roof.threads > 1) {
    if (std::string missing = calibrate_team(machine, gemm, roof.threads); !missing.empty())
      spdlog::debug("matmul team on {} threads: not measured, priced by the formula: {}", roof.threads, missing);
    spdlog::debug("matmul team on {} threads: wake-up and join {:.2f} us", roof.threads,
                  fork_join_cost(machine, roof.threads) * 1e6);
  }
  const MeasuredCalls& c = machine.calls;
  if (c.mr > 0 && machine.tiles)
    spdlog::debug("matmul tile calls of the {}x{} block: k step {:.2f} cycles in L1, {:.0f} a call beyond it; a row "
                  "streaming B from L2 {:.2f} a step and {:.0f} a panel; packing A {:.1f} GB/s, B {:.1f} GB/s",
                  c.mr, c.nv * machine.vector_bits / 32, c.step_cycles, c.call_l1, c.step_cycles_b_l2,
                  c.row_panel_cycles, machine.pack_a_gbps, machine.pack_b_gbps);
  else if (c.mr > 0)
    spdlog::debug("matmul calls of the {}x{} block: k step {:.2f} cycles ({} with B from L2); beyond the k loop "
                  "{:.0f} cycles with C in L1, {:.0f} in L2, {:.0f} in L3; packing A {:.1f} GB/s, B {:.1f} GB/s",
                  c.mr, c.nv * machine.vector_bits / 32, c.step_cycles,
                  b_panel_l2_measured(machine) ? fmt::format("{:.2f}", c.step_cycles_b_l2) : std::string("not measured"),
                  c.call_l1, c.call_l2, c.call_l3, machine.pack_a_gbps, machine.pack_b_gbps);
  return machine;
}

std::vector<MatmulConfig> plan_candidates(const CpuInfo& cpu, Gemm& gemm, const MatmulProblem& p,
                                          const std::vector<CandidateCost>& ranked) {
  std::vector<MatmulConfig> shortlist;
  if (ranked.empty()) return shortlist;
  // Whether the kernels can read A in place for `c` on this problem.
  const auto a_in_place_fits = [&](const MatmulConfig& c) {
    MatmulConfig in_place = c;
    in_place.pack_a = false;
    return c.mr <= a_in_place_rows(cpu, p.dtype) && a_in_place_depth_refusal(cpu, p.dtype, in_place, p.k).empty();
  };
  std::vector<std::pair<int, int>> blocks;
  for (const auto& c : ranked) {
    if (blocks.size() == 3) break;
    if (std::find(blocks.begin(), blocks.end(), std::pair{c.config.mr, c.config.nv}) != blocks.end()) continue;
    blocks.emplace_back(c.config.mr, c.config.nv);
    shortlist.push_back(c.config);
  }
  // With a batch on several threads: the best of the other way to share them (items spread over
  // thread groups, or every item on all threads), whichever the model ranked first.
  for (const auto& c : ranked)
    if (c.config.batch_threads != shortlist.front().batch_threads) {
      shortlist.push_back(c.config);
      break;
    }
  // Likewise with K shared by threads, or not.
  for (const auto& c : ranked)
    if (c.config.k_threads != shortlist.front().k_threads) {
      shortlist.push_back(c.config);
      break;
    }
  // And the best on each other number of threads the model puts within kOtherThreadsWithin of its
  // first choice: the team's measured wake-up and join is priced, its helpers' cold caches and a busy
  // core beside them are not, and a small product may finish sooner on a few threads than on all.
  constexpr double kOtherThreadsWithin = 2.0;
  for (const auto& c : ranked) {
    if (c.seconds > kOtherThreadsWithin * ranked.front().seconds) break;
    if (std::none_of(shortlist.begin(), shortlist.end(), [&](const MatmulConfig& s) { return s.threads == c.config.threads; }))
      shortlist.push_back(c.config);
  }
  // The model's first choice with an A block of a few register blocks (the autotune grid's smallest
  // mc): the model prices A from L2 alike at every mc, and some cores reward an A block that L1
  // holds. Sapphire Rapids-class VM, f32 1024^3: 203.8 GFLOP/s at mc 48 against 172.6 at the model's 516.
  constexpr int kSmallAblockRows = 48;
  MatmulConfig small_a = shortlist.front();
  small_a.mc = std::min(small_a.mc, std::max(small_a.mr, kSmallAblockRows / small_a.mr * small_a.mr));
  if (small_a.mc < shortlist.front().mc) shortlist.push_back(small_a);
  // And with a narrow C panel over a deep K: the same A block of a few register blocks, kc 512 and nc
  // 512, so that a thread's C panel (mc x nc) stays in L2 between two visits of a tile and every call
  // runs long. The model prices C's wait and the packing as measured (call_calibration.hpp), but not
  // how a C panel streaming through L2 evicts the A block there: on a Sapphire Rapids-class VM at
  // 2048^3 this point ran 358 GFLOP/s on 2 threads (1 thread: 100.6 ms) against 316-343 (109 ms)
  // for the model's own first choices.
  constexpr int kDeepKc = 512, kNarrowNc = 512;
  const auto add_unless_listed = [&shortlist](const MatmulConfig& config) {
    const std::string text = config_text(config);
    if (std::none_of(shortlist.begin(), shortlist.end(), [&](const MatmulConfig& c) { return config_text(c) == text; }))
      shortlist.push_back(config);
  };
  {
    MatmulConfig narrow_c = small_a;
    const int kg = gemm.micro_kernel_shape(narrow_c.mr, narrow_c.nv, !narrow_c.pack_a).k_group();
    const int64_t k_all = (p.k + kg - 1) / kg * kg, n_all = (p.n + narrow_c.nr - 1) / narrow_c.nr * narrow_c.nr;
    narrow_c.kc = int(std::min<int64_t>(k_all, kDeepKc / kg * kg));
    narrow_c.nc = int(std::min<int64_t>(n_all, std::max(narrow_c.nr, kNarrowNc / narrow_c.nr * narrow_c.nr)));
    add_unless_listed(narrow_c);
  }
  // The first choice with kc doubled and nc halved: a B block of the same bytes (fewer when K cuts
  // kc short), half the passes over C (each loads and stores all of the thread's C), for twice the
  // packing of A and an A block twice as deep. The model prices C's passes as streams the kernels
  // hide, and a C far beyond L3 is not hidden: on the Zen 5 VM at 2048^3 (f32, 1 thread) kc 1024 x
  // nc 1024 ran 82-84 ms against 86 for the model's first choice, kc 512 x nc 2048, both a 4 MiB B
  // block. Not with K split among threads: each part's depth is its own.
  {
    const MatmulConfig first = shortlist.front();
    const int kg = gemm.micro_kernel_shape(first.mr, first.nv, !first.pack_a).k_group();
    const int64_t k_all = (p.k + kg - 1) / kg * kg;
    if (first.k_threads == 1 && first.kc < k_all && first.nc >= 2 * first.nr) {
      MatmulConfig deep_k = first;
      deep_k.kc = int(std::min<int64_t>(k_all, int64_t(first.kc) * 2));
      deep_k.nc = first.nc / 2 / first.nr * first.nr;
      add_unless_listed(deep_k);
    }
  }
  // A first choice that packs B on the way, with B packed ahead instead: the model prices the packing
  // pass against the kernels' reads of B's rows ldb apart, a trade the timing settles (b_in_place_pays
  // in cost_model.hpp says when the model packs on the way at all).
  if (!shortlist.front().pack_b) {
    MatmulConfig other_b = shortlist.front();
    other_b.pack_b = true;
    add_unless_listed(other_b);
  }
  // And the first choice with A the other way: read in place where it packs A and the kernels can,
  // packed where it reads A in place. The model packs an A larger than half of L2 whose blocks serve
  // few B panels (a_in_place_pays), which on the Sapphire Rapids-class VM streamed from L3 at half
  // speed with nc 64; on the Zen 4 VM at 1024^3 f32 the model's 9x48 block (mc 117, kc 1024, nc 528)
  // ran 111.1-112.0 GFLOP/s with A in place against 109.0-110.1 packed, in turns.
  if (!shortlist.front().pack_a || a_in_place_fits(shortlist.front())) {
    MatmulConfig other_a = shortlist.front();
    other_a.pack_a = !other_a.pack_a;
    add_unless_listed(other_a);
  }
  // The first choice on every other grid of its threads: the model prices a B block shared by a
  // column of threads as one read of it from L3, and a mesh of many cores does not (16-vCPU Emerald
  // Rapids VM, 1024^3 f32 on 16 threads, the model's blocks: 16 x 1 1.92 ms, 8 x 2 1.82, 4 x 4 2.09,
  // 2 x 8 2.27, 1 x 16 2.84).
  {
    const MatmulConfig first = shortlist.front();  // a copy: the shortlist grows below
    const int per_grid = first.threads / std::max(1, first.batch_threads * first.k_threads);
    for (const auto& [groups, parts, rows, cols] : thread_splits(per_grid, 1, 1)) {
      if (rows == first.thread_rows && cols == first.thread_cols) continue;
      MatmulConfig other = first;
      other.thread_rows = rows, other.thread_cols = cols;
      add_unless_listed(other);
    }
  }
  MatmulConfig analytic = default_config(cpu, p.dtype, p.m, p.n, p.k, p.threads);
  // A in place, where the kernels can read it so: measured faster at every size on a Zen 4 (f32), and
  // at 1024^3 for bf16 and int8 too.
  analytic.pack_a = !a_in_place_fits(analytic);
  shortlist.push_back(analytic);
  // One thread has no team at all and every operand in its own caches: for the smallest problems it
  // can still win, so the first choice's block is checked on it too.
  if (p.threads > 1) {
    MatmulConfig single = shortlist.front();
    single.threads = single.thread_rows = single.thread_cols = single.batch_threads = single.k_threads = 1;
    add_unless_listed(single);
  }
  return shortlist;
}

MatmulPlan plan_matmul(const CpuInfo& cpu, Gemm& gemm, const MatmulProblem& p,
                       const std::vector<CandidateCost>& ranked) {
  MatmulPlan plan{ranked.front().config, "cost model", {}};
  constexpr double kCheckBelowSeconds = 0.2;  // beyond this, checking would cost more than it can gain
  if (ranked.front().seconds / double(std::max<int64_t>(1, p.batch)) > kCheckBelowSeconds) return plan;
  const std::vector<MatmulConfig> shortlist = plan_candidates(cpu, gemm, p, ranked);
  // A host busy in stretches slows whichever candidate it meets: a small problem's candidates are
  // timed in kRounds turns, each a quarter of the budget, and each keeps its best turn, so that no
  // single stretch decides (on the Zen 4 VM candidates the model put within 1% read 1.48-1.76 ms one
  // after the other). Beyond kRoundsBelowSeconds a call is long enough to see a stretch pass.
  constexpr int kRounds = 4;
  constexpr double kRoundsBelowSeconds = 5e-3, kBudgetMs = 100;
  const int rounds = ranked.front().seconds < kRoundsBelowSeconds ? kRounds : 1;
  const std::vector<double> fastest = time_in_turns(shortlist.size(), rounds, [&](size_t i) {
    return time_matmul_config(gemm, p.m, p.n, p.k, shortlist[i], p.batch, kBudgetMs / rounds);
  });
  double best = 1e300;
  for (size_t i = 0; i < shortlist.size(); ++i) {
    if (fastest[i] <= 0) continue;
    plan.checked.emplace_back(shortlist[i], fastest[i]);
    if (fastest[i] < best) best = fastest[i], plan.config = shortlist[i];
  }
  if (plan.checked.size() > 1) plan.source = fmt::format("cost model, best of {} checked", plan.checked.size());
  return plan;
}

void score_matmul(MatmulResult& r, const MatmulRoof& roof, const MachineModel& machine) {
  r.ceiling_source = roof.source;
  r.ceiling_alternative_source = roof.alternative_source;
  r.ceiling_alternative_gflops = roof.alternative_gflops;
  r.ceiling_gflops = roof.gflops;
  r.ceiling_measured_gflops = roof.gflops;
  // Several threads: the clock of the team's run (the mean of their own), not the first thread's alone.
  r.ceiling_clock_ghz = !roof.gflops ? 0.0 : roof.threads > 1 && roof.team_clock_ghz > 0 ? roof.team_clock_ghz : roof.clock.ghz;
  r.ceiling_missing = roof.gflops ? "" : roof.missing;
  // The compute roof at the clock the product ran at: the roof probe read its own clock moments
  // before, and the clock moves under load (Zen 5 VM, 1024^3 f32 on one core: 3.52-3.70 GHz right
  // before the timed calls, 3.46-3.49 right after, the roof read at 3.44-3.51). One thread only: a
  // roof of several threads sums each thread's own clock in the run of all of them, while its
  // clock reading is the first thread's alone, and the product's is the caller's core alone.
  // Scaled, it is also scaled by what the roof instruction keeps when run without pause, against a
  // clock read as the product's is: where the core slows under that load (Sapphire Rapids-class VM:
  // share 0.94 for the 512-bit FMA), the probe read its rate at the slower clock, but the clock
  // between the calls is read after the core is back at speed. Unscaled (several threads, a clock
  // unknown), the roof stays at its probe's clock, the slower one, and the share is not applied.
  r.ceiling_sustained_share = 0;
  if (roof.gflops && roof.threads == 1 && r.threads == 1 && roof.clock.ghz > 0 && r.clock.ghz > 0) {
    r.ceiling_gflops = *roof.gflops * r.clock.ghz / roof.clock.ghz;
    r.ceiling_sustained_share = roof.sustained.share;
    if (roof.sustained.lowers_roof()) {
      // What this core was seen to keep bounds the share from below: the product's calls and its
      // kernel's k loop alone run the roof instruction without pause too. A share that puts the roof
      // under either (by more than the share's own noise) was read while the host slowed all of its
      // runs, not the core: on the Zen 4 VM, 0.901 under a busy host, with the product at 111.9 and
      // the k loop alone at 118.8 GFLOP/s against a lowered roof of 105.6 (efficiency 106%).
      const double lowered = *r.ceiling_gflops * roof.sustained.share;
      // The k loop alone as it ran, where its clock reading was the slower one: read right after wide
      // code, as the roof's probe reads its own, it saw the clock such code runs at, and taken to the
      // clock between the product's calls it would claim a rate no wide code reached on this core.
      // On the Emerald Rapids VM: 179.0 GFLOP/s at 2.90 GHz, 185.1 at the product's 3.00, against
      // a lowered roof of 177.0 (the 512-bit FMA's probe: 178.9 at 2.81 GHz): the share, a licence
      // the core keeps under wide code, was left out in every full report.
      const bool loop_slower_clock = loop_clock_slower(r.kernel_l1_ghz, r.clock.ghz);
      double loop = r.kernel_l1_gflops.value_or(0.0);
      if (loop_slower_clock) loop *= r.kernel_l1_ghz / r.clock.ghz;
      const double witnessed = std::max(r.gflops, loop);
      if (witnessed > lowered * (1 + kSustainedDrop)) {
        spdlog::info("matmul: the roof's sustained share {:.3f} is left out: this core ran the product at {:.1f} and its "
                     "k loop alone at {:.1f} GFLOP/s, above the {:.1f} it would set (the host slowed its runs)",
                     roof.sustained.share, r.gflops, loop, lowered);
        r.ceiling_sustained_share = 0;
      } else {
        // Within that noise above the lowered roof, the share is what they were seen to keep: a
        // roof is never under what this core ran (Emerald Rapids VM, bf16 on its dot product: share
        // 0.916, the product 92.0 GFLOP/s against a lowered 90.2, efficiency 102.0%).
        // Raised to within kSustainedDrop of 1, it lowers nothing, as a share measured there.
        if (witnessed > lowered) r.ceiling_sustained_share = witnessed / *r.ceiling_gflops;
        if (sustained_share_applies(r.ceiling_sustained_share)) {
          *r.ceiling_gflops *= r.ceiling_sustained_share;
          // Against the lowered ceiling the loop stands at the rate it ran, as in the check above (the
          // console, the kernel mix's comparison and the JSON all read this one figure).
          if (loop_slower_clock && r.kernel_l1_gflops) r.kernel_l1_gflops = loop;
        }
      }
    }
  }
  // Several threads: the ceiling stays at its roof's clock, and the loop alone (taken to the
  // product's clock by matmul_run) is taken there too.
  if (r.kernel_l1_gflops && loop_rate_at_roof_clock(r.config.threads, r.threads, r.ceiling_clock_ghz, r.kernel_l1_ghz, r.clock.ghz))
    r.kernel_l1_gflops = *r.kernel_l1_gflops * r.ceiling_clock_ghz / r.clock.ghz;
  const int bits = roof.vector_bits > 0 ? roof.vector_bits : machine.vector_bits;
  r.bound_by = fmt::format("compute {} {}", roof.widened_to.empty() ? to_string(r.dtype) : roof.widened_to,
                           roof.tiles ? isa::host_target().tiles_name() : std::to_string(bits));
  if (roof.gflops) {
    // The memory roof from the model's DRAM figure: only a problem too big for the caches and too
    // thin to reuse its operands (small AI) sits under it.
    const double dram = r.threads > 1 ? machine.dram_total_gbps : machine.dram_gbps;
    const double bytes = matmul_bytes(r.m, r.n, r.k, r.batch, r.dtype);
    const double caches = double(machine.l3_bytes) + double(machine.l2_bytes) * machine.cores;
    if (bytes > caches && r.arithmetic_intensity * dram < *r.ceiling_gflops) {
      r.ceiling_gflops = r.arithmetic_intensity * dram;
      r.ceiling_source = fmt::format("DRAM {:.1f} GB/s (model estimate) x AI {:.2f}", dram, r.arithmetic_intensity);
      r.bound_by = "memory DRAM";
    }
    r.efficiency = r.gflops / *r.ceiling_gflops;
    // A call of milliseconds pays the interruptions of its core that it spans; the roof's short
    // probe samples mostly run between them. Without those, the product is judged like the roof.
    // Several threads wait for the slowest at each join: their call pays at least the stops of the
    // team's least available core, which is what was kept of their scans (matmul_run).
    if (r.bound_by.rfind("compute", 0) == 0 && r.availability.scanned_ms > 0 &&
        r.timing.min_ms > 0) {
      const UnavoidableStops stops = unavoidable_interruptions(r.availability, r.timing.min_ms);
      if (stops.count > 0 && stops.ms < r.timing.min_ms)
        r.efficiency_while_running = *r.efficiency * r.timing.min_ms / (r.timing.min_ms - stops.ms);
    }
  }
}

KernelMixParts kernel_mix_parts(const std::vector<isa::StepInstruction>& step) {
  KernelMixParts parts;
  for (const auto& i : step)
    if (i.count > 0) parts.divisor = std::gcd(parts.divisor, i.count);
  if (parts.divisor == 0) return parts;
  for (const auto& i : step)
    if (i.count > 0) {
      parts.weights.push_back({i.text, i.count / parts.divisor});
      parts.multiply_add.push_back(i.multiply_add);
    }
  return parts;
}

std::optional<double> kernel_mix_share(double ops_per_step, int divisor, double cycles_per_group, double mix_ghz,
                                       double roof_before, double roof_after) {
  if (!(ops_per_step > 0) || divisor < 1 || !(cycles_per_group > 0) || !(mix_ghz > 0) || !(roof_before > 0) ||
      !(roof_after > 0))
    return std::nullopt;
  if (std::abs(roof_before / roof_after - 1) > kMixRoofAgreement) return std::nullopt;
  // A k step is `divisor` groups: its operations over their seconds, in G a second.
  const double rate = ops_per_step * mix_ghz / (divisor * cycles_per_group);
  return rate / ((roof_before + roof_after) / 2);
}

bool stream_bounds_loop(double stream, double loop) { return stream > 0 && loop <= stream * (1 + kLoopAboveStream); }

std::optional<int> stream_rounds(std::vector<MixSpec>& parts, const std::vector<bool>& multiply_add, int needed,
                                 const std::function<int(const std::vector<MixSpec>&)>& rounds_for) {
  int most = 0;
  for (size_t i = 0; i < parts.size() && i < multiply_add.size(); ++i)
    if (multiply_add[i]) most = std::max(most, parts[i].weight);
  if (most == 0) return 0;  // no multiply-add named: the stream as it comes
  needed = std::max(1, needed);
  const int first = (needed + 2 + most - 1) / most;
  if (rounds_for(parts) >= first) return 0;
  std::vector<MixSpec> fewest = parts;
  for (auto& part : fewest) part.chains = 1;
  if (rounds_for(fewest) == 0) return 0;  // not a matter of registers: run_mix says what
  for (int rounds = first; rounds < first + kMoreStreamRounds; ++rounds) {
    for (size_t i = 0; i < parts.size(); ++i)
      if (i >= multiply_add.size() || !multiply_add[i])
        parts[i].chains = std::min(parts[i].weight * rounds, kFewStreamChains);
    // With slack first (the busiest chain's links leave room for two more chains' worth), then at
    // the chains' bound, at the fewest rounds either allows: each round lengthens the loop.
    for (const int room : {needed + 2, needed})
      for (int chains = most * rounds; chains >= needed; --chains) {
        if (!chains_keep_up(most * rounds, chains, room)) continue;
        for (size_t i = 0; i < parts.size() && i < multiply_add.size(); ++i)
          if (multiply_add[i]) parts[i].chains = chains;
        if (rounds_for(parts) >= rounds) return rounds;
      }
  }
  return std::nullopt;
}

bool chains_keep_up(int instances, int chains, int needed) {
  if (instances < 1 || chains < 1 || needed < 1) return false;
  // Instance j goes on chain j mod chains: the busiest chain has ceil(instances / chains) links a
  // copy, which must take no longer than the copy at the rate (instances / needed latencies).
  const int busiest = (instances + chains - 1) / chains;
  return busiest * needed <= instances;
}

void measure_kernel_mix(const GlobalOptions& g, const CpuInfo& cpu, const MatmulRoof& roof,
                        const isa::MicroKernelShape& shape, MatmulResult& r, std::map<std::string, double>* shares) {
  // Set against the ceiling as the kernel alone is: only where the plan runs the threads the ceiling counts.
  if (!r.kernel_l1_gflops || !r.ceiling_gflops || r.bound_by.rfind("compute", 0) != 0 || roof.tiles ||
      r.config.threads != r.threads)
    return;
  const std::vector<isa::StepInstruction> step = isa::host_target().kernel_step(shape);
  const KernelMixParts parts = kernel_mix_parts(step);
  if (parts.divisor == 0) return;
  // The roof's core (one thread), else where the product's first thread ran: pinned by hand, so that
  // the roof's two runs and the stream between them run on one core.
  const int core = roof.cpu >= 0                ? roof.cpu
                   : g.cpu >= 0                 ? g.cpu
                   : !cpu.core_order.empty()    ? cpu.core_order.front()
                                                : -1;
  const std::string key = fmt::format("{} {}x{} {}{}{}{} on {}", to_string(shape.dtype), shape.mr, shape.nv,
                                      shape.vec_bits, shape.widened ? " widened" : "", shape.signed_a ? " signed" : "",
                                      shape.a_direct ? " A in place" : "", core);
  // A ceiling the loop itself beats is none: the stream then does not stand for the loop on this core.
  const auto keep = [&](double share) {
    const double stream = *r.ceiling_gflops * share;
    if (!stream_bounds_loop(stream, *r.kernel_l1_gflops))
      return spdlog::info("matmul: the {}x{} kernel's instruction mix is not reported: as a stream it ran {:.1f}, the "
                          "kernel's own loop {:.1f} ({:+.1f}%), so the stream does not stand for the loop on this core",
                          shape.mr, shape.nr(), stream, *r.kernel_l1_gflops, (*r.kernel_l1_gflops / stream - 1) * 100);
    r.kernel_mix_share = share;
    r.kernel_mix_gflops = stream;
    r.kernel_mix_step.clear();
    for (const auto& i : step) r.kernel_mix_step.push_back({i.text, i.count});
  };
  if (shares != nullptr)
    if (auto at = shares->find(key); at != shares->end()) return keep(at->second);

  AffinityGuard caller_affinity;  // the runner pins this thread
  ProbeOptions opt;
  opt.cpu = core;
  opt.threads = 1;
  auto runner = ProbeRunner::create(cpu, opt);
  if (!runner) return spdlog::info("matmul: the kernel's instruction mix was not measured: {}", runner.error());
  const isa::MatmulRoof what = isa::host_target().matmul_roof(cpu, shape.dtype);
  ProbeSpec roof_spec;
  roof_spec.text = what.instruction;
  roof_spec.ops_per_instruction = what.ops;
  roof_spec.dtype = what.dtype;
  roof_spec.origin = "matmul roof";
  std::vector<MixSpec> mix_parts;
  for (const auto& [text, weight] : parts.weights) {
    ProbeSpec s;
    s.text = text;
    s.origin = "matmul kernel step";
    mix_parts.push_back({s, weight});
  }
  // The multiply-adds' chains: their latency times their rate, as the roof measured them (within 3%).
  const int needed = int(std::ceil(roof.latency * roof.per_cycle / 1.03));
  const auto fixed_rounds = stream_rounds(mix_parts, parts.multiply_add, needed, [&](const std::vector<MixSpec>& p) {
    return (*runner)->mix_rounds(p);
  });
  if (!fixed_rounds)
    return spdlog::info("matmul: the {}x{} kernel's instruction mix was not measured: its multiply-adds need {} chains, "
                        "and the registers left hold fewer",
                        shape.mr, shape.nr(), needed);
  if (*fixed_rounds > 0)
    spdlog::debug("matmul: the {}x{} kernel's stream on {} rounds, the parts but its multiply-adds on at most {} chains",
                  shape.mr, shape.nr(), *fixed_rounds, kFewStreamChains);
  const double ops_per_step = 2.0 * shape.mr * shape.nr() * shape.k_group();
  const bool integer = shape.dtype == MatmulDtype::i8;
  const auto rate = [&](const ProbeResult& p) {
    const auto v = integer ? p.gops : p.gflops;
    return p.status == Status::ok && v ? *v : 0.0;
  };
  // Twice at most: a host that moves the clock between the roof's two runs gets one more try.
  constexpr int kAttempts = 2;
  std::string why;
  for (int attempt = 1; attempt <= kAttempts; ++attempt) {
    const ProbeResult before = (*runner)->run(roof_spec);
    const MixResult mix = (*runner)->run_mix(mix_parts, false, *fixed_rounds);
    const ProbeResult after = (*runner)->run(roof_spec);
    if (mix.status != Status::ok || !mix.cycles_per_group) {
      why = fmt::format("the stream {}: {}", to_string(mix.status), mix.reason);
      continue;
    }
    const double r0 = rate(before), r1 = rate(after);
    if (!(r0 > 0) || !(r1 > 0)) {
      why = fmt::format("the roof instruction beside it: {}", r0 > 0 ? after.reason : before.reason);
      continue;
    }
    if (!(mix.clock.ghz > 0)) {
      why = "the stream's clock was not read";
      continue;
    }
    if (before.cpu != mix.cpu || mix.cpu != after.cpu) {
      why = fmt::format("the roof and the stream ran on different CPUs ({}, {}, {})", before.cpu, mix.cpu, after.cpu);
      continue;
    }
    const auto share = kernel_mix_share(ops_per_step, parts.divisor, *mix.cycles_per_group, mix.clock.ghz, r0, r1);
    if (!share) {
      why = fmt::format("the roof read {:.1f} before the stream and {:.1f} after: the clock moved", r0, r1);
      continue;
    }
    spdlog::debug("matmul: the {}x{} kernel's k step as a stream: {:.3f} cycles a group of 1/{} step at {:.3f} GHz, "
                  "{:.1f}% of the roof instruction's rate ({:.1f} and {:.1f} around it)",
                  shape.mr, shape.nr(), *mix.cycles_per_group, parts.divisor, mix.clock.ghz, 100 * *share, r0, r1);
    if (shares != nullptr) (*shares)[key] = *share;
    return keep(*share);
  }
  spdlog::info("matmul: the {}x{} kernel's instruction mix was not measured: {}", shape.mr, shape.nr(), why);
}

// The largest value a --config key (or a grid's thread count) may have.
constexpr int kMaxConfigValue = 1 << 20;

Expected<MatmulConfig> parse_config(const std::string& text, const MatmulConfig& base, int vector_bits,
                                    int a_in_place_rows) {
  MatmulConfig c = base;
  std::stringstream in(text);
  std::string item;
  bool nr_given = false, mc_given = false, nc_given = false, grid_given = false, batch_given = false, k_given = false;
  bool pack_a_given = false, pack_b_given = false;
  while (std::getline(in, item, ',')) {
    const auto eq = item.find('=');
    if (eq == std::string::npos)
      return make_error(fmt::format("--config '{}': expected key=value items (mr, nv, nr, mc, kc, nc, grid, batch_threads, k_threads, pack_a, pack_b)", item));
    const std::string key = item.substr(0, eq), value = item.substr(eq + 1);
    if (key == "pack_a" || key == "pack_b") {
      if (value != "0" && value != "1") return make_error(fmt::format("--config {} '{}': expected 0 or 1", key, value));
      (key == "pack_a" ? c.pack_a : c.pack_b) = value == "1";
      (key == "pack_a" ? pack_a_given : pack_b_given) = true;
      continue;
    }
    if (key == "grid") {
      int rows = 0, cols = 0;
      char x = 0;
      std::stringstream g(value);
      if (!(g >> rows >> x >> cols) || x != 'x' || g.peek() != EOF || rows < 1 || cols < 1)
        return make_error(fmt::format("--config grid '{}': expected ROWSxCOLS, e.g. 2x1", value));
      // The product must fit an int: rows x cols is the thread count.
      if (int64_t(rows) * cols > kMaxConfigValue)
        return make_error(fmt::format("--config grid '{}': more than {} threads", value, kMaxConfigValue));
      c.thread_rows = rows, c.thread_cols = cols, grid_given = true;
      continue;
    }
    int v = 0;
    size_t used = 0;
    try {
      v = std::stoi(value, &used);
    } catch (...) {
      used = 0;
    }
    if (used != value.size() || value.empty() || v < 1)
      return make_error(fmt::format("--config {}: '{}' is not a positive whole number", key, value));
    // Far above any real block, and low enough that rounding to whole panels cannot overflow an int.
    if (v > kMaxConfigValue)
      return make_error(fmt::format("--config {}: {} is too large (at most {})", key, value, kMaxConfigValue));
    if (key == "mr") c.mr = v;
    else if (key == "nv") c.nv = v;
    else if (key == "nr") c.nr = v, nr_given = true;
    else if (key == "mc") c.mc = v, mc_given = true;
    else if (key == "kc") c.kc = v;
    else if (key == "nc") c.nc = v, nc_given = true;
    else if (key == "batch_threads") c.batch_threads = v, batch_given = true;
    else if (key == "k_threads") c.k_threads = v, k_given = true;
    else return make_error(fmt::format("--config: unknown key '{}' (known: mr, nv, nr, mc, kc, nc, grid, batch_threads, k_threads, pack_a, pack_b)", key));
  }
  // The thread split given replaces the model's whole split: a grid alone runs every item on it, over
  // all of K; batch groups or K parts given without a grid run on a 1x1 grid.
  if (grid_given || batch_given || k_given) {
    if (!batch_given) c.batch_threads = 1;
    if (!k_given) c.k_threads = 1;
    if (!grid_given) c.thread_rows = c.thread_cols = 1;
  }
  if (int64_t(c.batch_threads) * c.k_threads * c.thread_rows * c.thread_cols > kMaxConfigValue)
    return make_error(fmt::format("--config: more than {} threads", kMaxConfigValue));
  c.threads = c.batch_threads * c.k_threads * c.thread_rows * c.thread_cols;
  const int lanes = vector_bits / 32;
  if (nr_given) {
    if (c.nr % lanes) return make_error(fmt::format("--config nr {} is not a multiple of {} lanes", c.nr, lanes));
    c.nv = c.nr / lanes;
  }
  c.nr = c.nv * lanes;
  // Operands the model read in place where the blocks given no longer let them be (a taller block)
  // are packed; what the user gave is checked as given.
  if (!pack_a_given && c.mr > a_in_place_rows) c.pack_a = true;
  // Blocks the user did not give follow a changed register block: whole micro-panels.
  if (!mc_given) c.mc = std::max(c.mr, (c.mc + c.mr - 1) / c.mr * c.mr);
  if (!nc_given) c.nc = std::max(c.nr, (c.nc + c.nr - 1) / c.nr * c.nr);
  return c;
}

std::string config_text(const MatmulConfig& c) {
  return fmt::format("mr={},nv={},mc={},kc={},nc={},grid={}x{}{}{}{}{}", c.mr, c.nv, c.mc, c.kc, c.nc, c.thread_rows,
                     c.thread_cols, c.batch_threads > 1 ? fmt::format(",batch_threads={}", c.batch_threads) : "",
                     c.k_threads > 1 ? fmt::format(",k_threads={}", c.k_threads) : "", c.pack_a ? "" : ",pack_a=0",
                     c.pack_b ? "" : ",pack_b=0");
}

Expected<MatmulDtype> parse_dtype(const std::string& text) {
  if (text == "f32") return MatmulDtype::f32;
  if (text == "bf16") return MatmulDtype::bf16;
  if (text == "int8" || text == "i8" || text == "u8s8") return MatmulDtype::i8;
  return make_error(fmt::format("--dtype '{}': expected f32, bf16 or int8", text));
}

std::vector<std::string> isa_level_names() { return isa::host_target().isa_levels(); }

namespace {
std::string joined_levels() {
  std::string out;
  for (const auto& l : isa_level_names()) out += (out.empty() ? "" : ", ") + l;
  return out;
}
}  // namespace

Expected<std::string> parse_isa_level(const std::string& text) {
  if (text.empty()) return text;
  const auto levels = isa::host_target().isa_levels();
  if (std::find(levels.begin(), levels.end(), text) == levels.end())
    return make_error(fmt::format("--isa '{}': one of {}", text, joined_levels()));
  return text;
}

Expected<CpuInfo> kernel_cpu(const CpuInfo& cpu, const std::string& level) {
  if (level.empty()) return cpu;
  return isa::host_target().limit_isa(cpu, level);
}

int prepare_matmul_cpu(const GlobalOptions& g, const std::string& isa_text, CpuInfo& host, CpuInfo& cpu,
                       std::string& level) {
  auto parsed = parse_isa_level(isa_text);
  if (!parsed) return spdlog::error("{}", parsed.error()), kExitUsage;
  if (int rc = prepare_measuring(g, host)) return rc;
  auto held = kernel_cpu(host, *parsed);
  if (!held) return spdlog::error("{}", held.error()), kExitMeasure;
  cpu = std::move(*held);
  level = *parsed;
  return 0;
}

std::string isa_option_help() {
  return "Hold the kernels, the roof and the baseline libraries to this vector ISA level: " + joined_levels() +
         "\n(default: the widest this CPU runs). A library that cannot be held gets an error row";
}

std::string widen_option_help() {
  return "Where bf16 can run on its dot product or widened to the f32 multiply-add (elements widened\n"
         "when packed): auto measures both roofs and widens where the multiply-add's is more than 10%\n"
         "faster; yes widens, no keeps the dot product. Either is an error where the dtype's kernels\n"
         "cannot follow it (f32 never widens; a dtype without a dot product at this width must).\n"
         "Where there is a choice, both roofs are measured and the one not taken is reported";
}

std::string rounds_option_help() {
  return "Rounds of the side by side with the baselines: ours then each library, then the libraries in\n"
         "reverse and ours, and so on; each side's time is its best round, so that a burst of the host\n"
         "that slows one side's round is dropped (1: each timed once, half the time)";
}

Expected<std::vector<std::string>> parse_baselines(const std::string& text) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (true) {
    const std::size_t comma = text.find(',', start);
    const std::string item = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    const bool path = item.find('/') != std::string::npos || item.find(".so") != std::string::npos;
    if (item != "onednn" && item != "openblas" && item != "blis" && item != "none" && !path)
      return make_error(fmt::format("--baseline '{}': expected onednn, openblas, blis, none or a library path (with '/' or "
                                    "'.so'), comma-separated", item));
    // dlopen() would wait forever on a FIFO and read a device: a path must be a regular file (one that
    // does not exist is left to the loader, which says so).
    struct stat st {};
    if (item.find('/') != std::string::npos && ::stat(item.c_str(), &st) == 0 && !S_ISREG(st.st_mode))
      return make_error(fmt::format("--baseline '{}': not a regular file (a shared library is one)", item));
    if (item != "none") out.push_back(item);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

uint64_t matmul_available_memory() {
  if (const uint64_t a = available_memory_bytes(); a > 0) return a;
  const long pages = sysconf(_SC_AVPHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
  return pages > 0 && page > 0 ? uint64_t(pages) * uint64_t(page) : 0;
}

std::string matmul_size_problem(int64_t m, int64_t n, int64_t k, int64_t batch, MatmulDtype dtype, ColdCacheMode cold,
                                bool with_baseline, uint64_t available_bytes) {
  // In doubles: 65536^3 x a large batch overflows every integer type.
  const double flop = 2.0 * double(m) * double(n) * double(k) * double(batch);
  if (flop > kMaxMatmulFlop)
    return fmt::format("{}x{}x{} batch {} is {:.3g} FLOP a call, more than the {:.0e} one call may do (at least 7 "
                       "calls are timed); give a smaller shape or batch",
                       m, n, k, batch, flop, kMaxMatmulFlop);
  const double es = element_bytes(dtype);
  const double a = double(batch) * es * double(m) * double(k), b = double(batch) * es * double(k) * double(n),
               c = double(batch) * 4.0 * double(m) * double(n);
  const double rotated = cold == ColdCacheMode::none ? 0 : cold == ColdCacheMode::wei ? b : a + b + c;
  const double ours = a + b + c + 2 * rotated;
  const bool baseline = with_baseline;  // oneDNN runs every dtype
  const double need = baseline ? 2 * ours : ours;
  if (available_bytes == 0 || need <= 0.8 * double(available_bytes)) return "";
  std::string what = "the operands";
  if (rotated > 0 && baseline) what += ", their cold-cache copies and the BLAS baseline's own copy";
  else if (rotated > 0) what += " and their cold-cache copies";
  else if (baseline) what += " and the BLAS baseline's own copy";
  return fmt::format("{} need {:.2f} GB, more than 80% of the {:.2f} GB of free memory{}", what, need / 1e9,
                     double(available_bytes) / 1e9, baseline ? " (--baseline none leaves the baseline out)" : "");
}

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');)
    if (!item.empty() && item != "none") out.push_back(item);
  return out;
}

bool parse_shape(const std::string& s, int64_t& m, int64_t& n, int64_t& k) {
  std::stringstream in(s);
  char c1 = 0, c2 = 0;
  in >> m >> c1 >> n >> c2 >> k;
  return in && c1 == ',' && c2 == ',' && in.peek() == EOF && m > 0 && n > 0 && k > 0 && m <= 65536 && n <= 65536 &&
         k <= 65536;
}

}  // namespace peakprobe::cli
