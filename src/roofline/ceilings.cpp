#include "roofline/ceilings.hpp"

#include "asm/target.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>

#include <fmt/format.h>

namespace peakprobe {
namespace {

// Capacity of a data cache level available to `threads` threads pinned one per core.
uint64_t capacity(const CacheLevel& c, int threads) {
  if (c.shared_by_cpus <= 1) return c.size_bytes * uint64_t(std::max(1, std::min(threads, c.instances)));
  return c.size_bytes * uint64_t(std::max(1, c.instances));
}

std::vector<CacheLevel> data_levels(const std::vector<CacheLevel>& caches) {
  std::vector<CacheLevel> d;
  for (const auto& c : caches)
    if (c.type != "instruction") d.push_back(c);
  std::sort(d.begin(), d.end(), [](const CacheLevel& a, const CacheLevel& b) { return a.level < b.level; });
  return d;
}

// Groups whose ops set a roof: the arithmetic kernels are built from (adds, multiplies, FMAs, dot
// products). Compares, min/max, shifts, logic, conversions, square roots and the like count lanes
// too, but a roof drawn from them would promise throughput no numeric kernel gets. int8 peaks are
// dot products (the issue users care about for quantised inference), not byte adds.
// The ISA's matrix-engine groups (Target::matrix_groups) count as dot products.
bool sets_a_roof(const ProbeResult& r) {
  static const char* kGroups[] = {"fp.add", "fp.mul", "fp.fma", "fp.dot", "vec.int.add", "vec.int.mul",
                                  "vec.int.dot", "int.alu", "int.mul", "inst"};
  const std::vector<std::string> matrix = isa::host_target().matrix_groups();
  const bool is_matrix = std::find(matrix.begin(), matrix.end(), r.group) != matrix.end();
  const bool arithmetic = is_matrix || std::any_of(std::begin(kGroups), std::end(kGroups),
                                                   [&](const char* g) { return r.group == g; });
  if (!arithmetic) return false;
  if (r.dtype == "i8" || r.dtype == "u8") return r.group == "vec.int.dot" || is_matrix || r.group == "inst";
  return true;
}

}  // namespace

ThreadedRate threaded_rate(double total, int threads, double ops_per_unit, const std::vector<double>& per_thread_cycles,
                           double one_core_ghz) {
  ThreadedRate t;
  if (threads <= 0 || !(total > 0)) return t;
  double sum = 0;
  const bool cycles_known = ops_per_unit > 0 && per_thread_cycles.size() == size_t(threads) &&
                            std::all_of(per_thread_cycles.begin(), per_thread_cycles.end(),
                                        [](double c) { return c > 0 && std::isfinite(c); });
  if (cycles_known) {
    for (double c : per_thread_cycles) sum += ops_per_unit / c;
    t.ops_per_cycle = sum / threads;
    t.clock_ghz = total / threads / t.ops_per_cycle;
    if (std::isfinite(t.ops_per_cycle) && std::isfinite(t.clock_ghz) && t.clock_ghz > 0) return t;
    t = ThreadedRate{};
  }
  if (one_core_ghz > 0) {
    t.ops_per_cycle = total / one_core_ghz / threads;
    t.clock_ghz = one_core_ghz;
  }
  return t;
}

bool is_float_dtype(const std::string& d) { return d == "f64" || d == "f32" || d == "f16" || d == "bf16"; }

std::string isa_of_instruction(const std::string& text) { return isa::host_target().width_class(text); }

std::string mix_source(const FlopMixSearch& mix) {
  return fmt::format("mix {}:{} of {} + {}", mix.best_a, mix.best_b, mix.a, mix.b);
}

std::vector<ComputeCeiling> compute_ceilings(const std::vector<ProbeResult>& results,
                                             const std::vector<FlopMixSearch>& mixes) {
  std::map<std::tuple<std::string, std::string, int>, ComputeCeiling> best;
  auto offer = [&](ComputeCeiling c) {
    auto key = std::make_tuple(c.dtype, c.isa, c.threads);
    auto it = best.find(key);
    if (it == best.end() || c.gops > it->second.gops) best[key] = c;
  };
  for (const auto& r : results) {
    if (r.status != Status::ok || r.ops_per_instruction <= 0 || r.dtype == "-" || !sets_a_roof(r)) continue;
    const std::optional<double> rate = is_float_dtype(r.dtype) ? r.gflops : r.gops;
    if (!rate || r.clock.ghz <= 0) continue;
    ComputeCeiling c;
    c.dtype = r.dtype == "u8" ? "i8" : r.dtype;
    c.isa = isa_of_instruction(r.instruction);
    c.integer = !is_float_dtype(r.dtype);
    c.clock_ghz = r.clock.ghz;
    c.source = r.instruction;
    c.threads = 1;
    c.gops = *rate;
    c.ops_per_cycle = *rate / r.clock.ghz;
    offer(c);
    const std::optional<double> total = is_float_dtype(r.dtype) ? r.total_gflops : r.total_gops;
    if (r.threads > 1 && total && r.threads_status == Status::ok) {
      c.threads = r.threads;
      c.gops = *total;
      const ThreadedRate t =
          threaded_rate(*total, r.threads, r.ops_per_instruction, r.per_thread_recip_throughput, r.clock.ghz);
      c.ops_per_cycle = t.ops_per_cycle;
      c.clock_ghz = t.clock_ghz;
      offer(c);
    }
  }
  const auto singles = best;
  auto clears_margin = [&](const ComputeCeiling& c) {
    const auto single = singles.find(std::make_tuple(c.dtype, c.isa, c.threads));
    return single == singles.end() || c.gops > single->second.gops * (1 + kMixCeilingMargin);
  };
  for (const FlopMixSearch& mix : mixes) {
    if (mix.best_flops_per_cycle <= 0 || mix.best_a <= 0 || mix.best_b <= 0) continue;
    bool one_core = false;  // the mix cleared the margin on one core
    for (const auto& m : mix.tried) {
      if (m.status != Status::ok || !m.flops_per_cycle || *m.flops_per_cycle < mix.best_flops_per_cycle) continue;
      ComputeCeiling c;
      c.dtype = m.parts.front().dtype;
      c.isa = isa_of_instruction(mix.a);
      c.threads = 1;
      c.gops = m.gflops.value_or(0);
      c.ops_per_cycle = *m.flops_per_cycle;
      c.clock_ghz = m.clock.ghz;
      c.source = mix_source(mix);
      one_core = clears_margin(c);
      if (one_core) offer(c);
      break;
    }
    // The best ratio measured on every core at once: the all-cores ceiling of the mix, where the mix
    // is one on a single core too (a gain only on several cores would be noise, shown as more than
    // linear scaling beside the single instruction's one-core ceiling).
    if (const auto& all = mix.best_all_threads; all && all->threads > 1 && all->total_gflops && all->clock.ghz > 0) {
      ComputeCeiling c;
      c.dtype = all->parts.front().dtype;
      c.isa = isa_of_instruction(mix.a);
      c.threads = all->threads;
      c.gops = *all->total_gflops;
      double flops_per_group = 0;
      for (const auto& p : all->parts)
        if (is_float_dtype(p.dtype)) flops_per_group += p.weight * p.ops_per_instruction;
      const ThreadedRate t = threaded_rate(*all->total_gflops, all->threads, flops_per_group,
                                           all->per_thread_cycles_per_group, all->clock.ghz);
      c.ops_per_cycle = t.ops_per_cycle;
      c.clock_ghz = t.clock_ghz;
      c.source = mix_source(mix);
      if (one_core && clears_margin(c)) offer(c);
    }
  }
  std::vector<ComputeCeiling> out;
  for (auto& [k, c] : best) out.push_back(c);
  return out;
}

std::vector<size_t> mixes_setting_ceilings(const std::vector<ProbeResult>& results,
                                           const std::vector<FlopMixSearch>& mixes) {
  const auto ceilings = compute_ceilings(results, mixes);
  std::vector<size_t> out;
  for (size_t i = 0; i < mixes.size(); ++i) {
    const std::string source = mix_source(mixes[i]);
    if (std::any_of(ceilings.begin(), ceilings.end(),
                    [&](const ComputeCeiling& c) { return c.threads == 1 && c.source == source; }))
      out.push_back(i);
  }
  return out;
}

std::string level_for_size(uint64_t size, const std::vector<CacheLevel>& caches, int threads) {
  for (const auto& c : data_levels(caches))
    if (size <= capacity(c, threads)) return "L" + std::to_string(c.level);
  return "DRAM";
}

std::vector<std::pair<std::string, uint64_t>> level_sizes(const std::vector<CacheLevel>& caches, int threads) {
  std::vector<std::pair<std::string, uint64_t>> out;
  uint64_t last = 0;
  for (const auto& c : data_levels(caches)) {
    const uint64_t cap = capacity(c, threads);
    // Half the capacity, but clearly above the previous level so it does not fit there.
    const uint64_t size = std::max<uint64_t>(cap / 2, last * 2) / 4096 * 4096;
    if (size <= last || size > cap) continue;
    out.emplace_back("L" + std::to_string(c.level), size);
    last = cap;
  }
  out.emplace_back("DRAM", dram_working_set(caches, threads));
  return out;
}

// 8 x the last level cost 7 s more of the report for a VM's 480 MiB L3, and measured the same as 4 x
// (load 16.0-16.5 GB/s at 2, 4 and 8 x, Sapphire Rapids-class VM).
uint64_t dram_working_set(const std::vector<CacheLevel>& caches, int threads, uint64_t last_level_end) {
  constexpr uint64_t kFloor = 512ull << 20, kPage = 4096;
  uint64_t reported = 0;
  for (const auto& c : data_levels(caches)) reported = std::max(reported, capacity(c, threads));
  const uint64_t end = last_level_end > 0 ? std::min(last_level_end, reported) : reported;
  const uint64_t size = std::max({kFloor, end * 4, reported + reported / 16});
  return (size + kPage - 1) / kPage * kPage;
}

std::vector<CacheLevel> caches_as_shown(std::vector<CacheLevel> caches, const std::string& level,
                                        uint64_t one_thread_end) {
  for (auto& c : caches) {
    if (c.type == "instruction" || "L" + std::to_string(c.level) != level) continue;
    // One thread fills one instance, whatever the instances and the CPUs sharing each: that instance
    // holds what it showed. (A shared cache of several instances, a multi-die L3, keeps its count.)
    if (one_thread_end > 0 && one_thread_end < c.size_bytes) c.size_bytes = one_thread_end;
  }
  return caches;
}

uint64_t level_floor(const std::string& level, const std::vector<CacheLevel>& caches, int threads) {
  uint64_t before = 0;
  for (const auto& c : data_levels(caches)) {
    if ("L" + std::to_string(c.level) == level) return 2 * before;
    before = capacity(c, threads);
  }
  return 0;
}

PlateauSearch plateau_size(uint64_t planned, uint64_t floor, const std::function<double(uint64_t)>& load_gbps) {
  PlateauSearch p;
  p.size = planned;
  p.gbps = load_gbps(planned);
  p.tried.emplace_back(planned, p.gbps);
  // The level's own rate, read just past the level before (measured once, when first needed; 0: not
  // known). A size and its half that read alike may both lie past the level's end, in the next level.
  std::optional<double> inner;
  auto inner_rate = [&] {
    if (!inner) {
      double r = 0.0;
      if (floor > 0 && floor < planned) {
        r = load_gbps(floor);
        p.tried.emplace_back(floor, r);
      }
      inner = std::isfinite(r) && r > 0 ? r : 0.0;
    }
    return *inner;
  };
  // A walk moves down through sizes no faster than the one before while they read far under the
  // inner rate. It stands once a faster size leaves the rate where it began behind by the ratio that
  // started it (rate x (1 - kPastEndGap) at or above it: out of the next level, as the floor's rate
  // was), or a faster size whose half is still above the floor reads; a walk that never does returns
  // what the search had when it began (`before_walk`): the planned size, or after a faster size the
  // plateau found there (its half when that read alike).
  std::optional<PlateauSearch> before_walk;  // set while a walk is under way
  double walk_rate = 0;
  auto halve = [](uint64_t size) { return size / 2 / 4096 * 4096; };
  while (p.gbps > 0 && std::isfinite(p.gbps)) {
    const uint64_t half = halve(p.size);
    if (half < floor || half == 0) break;
    // Reached by a walk, the floor is no evidence: its rate is the inner rate the walk compares with
    // (the level before may show through there). The walk ends.
    if (before_walk && half <= floor) break;
    const double rate = load_gbps(half);
    p.tried.emplace_back(half, rate);
    if (!std::isfinite(rate)) break;
    if (rate > p.gbps * (1 + kPlateauGain)) {
      // Faster at half the size: the larger once more, in case it was a slowed moment.
      const double again = load_gbps(p.size);
      p.tried.emplace_back(p.size, again);
      if (std::isfinite(again)) p.gbps = std::max(p.gbps, again);
    }
    if (!(rate > p.gbps * (1 + kPlateauGain))) {
      const bool alike = rate >= p.gbps * (1 - kPlateauGain);
      // No faster at half the size, and the size far under the level's inner rate: both may be past
      // its end, in the next level. Walk on down, also when the half reads slower or a faster size
      // came before: past the end sizes read the next level's rate, and DRAM's moves by more than
      // kPlateauGain from one moment to the next. On a Zen 5 VM that reports 508 MiB of L3, 254 MiB
      // read 40.7 GB/s, 127 MiB 46.0 and its half slower; stopping there, or where a half first read
      // slower, left the L3 row at 127 or 254 MiB at DRAM's rate, and DRAM's set at 2 GiB.
      if (rate > 0 && p.gbps < inner_rate() * (1 - kPastEndGap)) {
        if (!before_walk) {
          before_walk = p;
          if (p.past_end && alike) before_walk->size = half, before_walk->gbps = rate;
          walk_rate = p.gbps;
        }
        p.size = half;
        p.gbps = rate;
        continue;
      }
      // Both on a plateau: the smaller stands further from where the level ends (the floor keeps it
      // out of the level before). A slower half is noise or the level before's end: keep the larger.
      if (alike) {
        p.size = half;
        p.gbps = rate;
      }
      break;
    }
    p.size = half;
    p.gbps = rate;
    p.past_end = true;
    // The walk ends on a faster size out of the next level by the ratio that started it, or on one
    // whose half still lies above the floor: the level before shows through only next to the floor
    // (a level a third or less faster than memory would otherwise be undone to memory's rate).
    if (before_walk && (rate * (1 - kPastEndGap) >= walk_rate || halve(half) > floor)) before_walk.reset();
  }
  // A walk that no faster size left behind: no plateau to stand on (the inner rate was the level
  // before showing through, or a faster size on the way only memory's rate moving). What the search
  // had when the walk began. (A Sapphire Rapids-class VM: 240 MiB 16.3 GB/s, 120 MiB 17.0, then 60
  // MiB 30.1 ends the walk, and 30 MiB stands, though its plateau reads under the floor's 45.)
  if (before_walk) {
    before_walk->tried = std::move(p.tried);
    p = std::move(*before_walk);
  }
  return p;
}

std::vector<MemoryCeiling> memory_ceilings(const std::vector<BandwidthResult>& rows,
                                           const std::vector<CacheLevel>& caches) {
  std::map<std::tuple<std::string, std::string, int>, MemoryCeiling> best;
  for (const auto& r : rows) {
    // An unsteady row still bounds what memory gave; an emulated one, or one whose threads waited for
    // their CPUs in every repetition, bounds nothing (bounds_memory): with another program pinned
    // beside a thread, 2-core L1 copy read 41 B/cycle against 125 on the Zen 5 VM.
    if (!bounds_memory(r)) continue;
    MemoryCeiling m;
    m.level = level_for_size(r.size_bytes, caches, r.threads);
    m.kernel = r.kernel;
    m.threads = r.threads;
    m.gbps = *r.gbps;
    m.bytes_per_cycle = r.bytes_per_cycle.value_or(0);
    m.size_bytes = r.size_bytes;
    auto key = std::make_tuple(m.level, m.kernel, m.threads);
    if (!best.count(key) || m.gbps > best[key].gbps) best[key] = m;
  }
  std::vector<MemoryCeiling> out;
  for (auto& [k, m] : best) out.push_back(m);
  // Order L1, L2, L3, ..., DRAM.
  std::stable_sort(out.begin(), out.end(), [](const MemoryCeiling& a, const MemoryCeiling& b) {
    auto rank = [](const std::string& l) { return l == "DRAM" ? 99 : std::atoi(l.c_str() + 1); };
    return std::tie(a.threads, a.kernel) < std::tie(b.threads, b.kernel) ||
           (std::tie(a.threads, a.kernel) == std::tie(b.threads, b.kernel) && rank(a.level) < rank(b.level));
  });
  return out;
}

std::vector<RidgePoint> ridge_points(const std::vector<ComputeCeiling>& compute, const std::vector<MemoryCeiling>& memory) {
  std::vector<RidgePoint> out;
  // Per thread count and dtype: the highest compute roof over all widths.
  std::map<std::pair<int, std::string>, const ComputeCeiling*> peak;
  for (const auto& c : compute) {
    auto key = std::make_pair(c.threads, c.dtype);
    if (!peak.count(key) || c.gops > peak[key]->gops) peak[key] = &c;
  }
  for (const auto& [key, c] : peak)
    for (const auto& m : memory) {
      if (m.threads != key.first || m.kernel != "load" || m.gbps <= 0) continue;
      RidgePoint r;
      r.dtype = c->dtype;
      r.isa = c->isa;
      r.level = m.level;
      r.kernel = m.kernel;
      r.threads = m.threads;
      r.ai = c->gops / m.gbps;
      out.push_back(r);
    }
  return out;
}

namespace {
// Bits of one element of a ceiling's dtype; 0 for a name it does not know.
int element_bits(const std::string& dtype) {
  if (dtype == "f64" || dtype == "i64") return 64;
  if (dtype == "f32" || dtype == "i32") return 32;
  if (dtype == "f16" || dtype == "bf16" || dtype == "i16") return 16;
  if (dtype == "i8" || dtype == "u8") return 8;
  return 0;
}

// The vector width in bits of a ceiling's isa ("128", "256", "512"); 0 for "scalar" and other names.
int vector_bits(const std::string& isa) {
  if (isa.empty() || !std::all_of(isa.begin(), isa.end(), [](char ch) { return ch >= '0' && ch <= '9'; })) return 0;
  return isa.size() > 5 ? 0 : std::stoi(isa);
}
}  // namespace

std::vector<NarrowShortfall> narrow_rates_short_of_wider(const std::vector<WidthRate>& rates) {
  auto per_lane = [](const WidthRate& r) {
    const int bits = element_bits(r.dtype), width = vector_bits(r.width);
    return bits > 0 && width >= bits && std::isfinite(r.ops_per_cycle) && r.ops_per_cycle > 0
               ? r.ops_per_cycle / double(width / bits)
               : 0.0;
  };
  std::vector<NarrowShortfall> out;
  for (size_t i = 0; i < rates.size(); ++i) {
    const WidthRate& n = rates[i];
    const double narrow = per_lane(n);
    if (narrow <= 0 || n.family.empty()) continue;
    NarrowShortfall worst{i, i, 0};
    for (size_t j = 0; j < rates.size(); ++j) {
      const WidthRate& w = rates[j];
      const double wide = per_lane(w);
      if (j == i || w.family != n.family || w.dtype != n.dtype || wide <= 0 || vector_bits(w.width) <= vector_bits(n.width))
        continue;
      const double shortfall = 1 - narrow / wide;
      if (shortfall > worst.shortfall) worst = {i, j, shortfall};
    }
    if (worst.shortfall > kNarrowShortfall) out.push_back(worst);
  }
  return out;
}

CeilingTable make_ceiling_table(const std::vector<ProbeResult>& results, const std::vector<FlopMixSearch>& mixes,
                                const std::vector<BandwidthResult>& bandwidth, const std::vector<CacheLevel>& caches) {
  CeilingTable t;
  t.compute = compute_ceilings(results, mixes);
  t.memory = memory_ceilings(bandwidth, caches);
  t.ridges = ridge_points(t.compute, t.memory);
  return t;
}

std::string score_request_problem(const ScoreRequest& req) {
  if (!(req.flops > 0) || !(req.bytes > 0) || !(req.seconds > 0) || !std::isfinite(req.flops + req.bytes + req.seconds))
    return "--flops, --bytes and --seconds must be positive numbers";
  // Bounds that keep every derived figure finite and printable (no 309-digit GFLOP/s).
  if (req.flops > kMaxScoreCount || req.bytes > kMaxScoreCount)
    return fmt::format("--flops and --bytes must be at most {:g}", kMaxScoreCount);
  if (req.seconds < kMinScoreSeconds || req.seconds > kMaxScoreSeconds)
    return fmt::format("--seconds must be from {:g} to {:g}", kMinScoreSeconds, kMaxScoreSeconds);
  if (req.threads < 1) return fmt::format("threads {}: must be 1 or more", req.threads);
  if (!(req.roof_gflops >= 0) || req.roof_gflops > kMaxScoreCount)
    return fmt::format("a kernel's own roof must be from 0 (none: the table's) to {:g} G/s", kMaxScoreCount);
  return "";
}

// The table's peak may read this much under a kernel's own roof of the same instruction (two
// measurements of one rate) and still be taken for the dtype's peak.
constexpr double kOwnRoofAgreement = 0.95;

Expected<KernelScore> score_kernel(const CeilingTable& t, const ScoreRequest& req) {
  if (std::string why = score_request_problem(req); !why.empty()) return make_error(why);
  // A saved table may say anything; a roof that is not a positive number would make every score a lie.
  for (const auto& c : t.compute)
    if (!(c.gops > 0) || !std::isfinite(c.gops) || c.gops > kMaxScoreCount)
      return make_error(fmt::format("the table's {} {} compute ceiling for {} thread(s) is {:g} G{}/s: a ceiling must "
                                    "be a positive number", c.dtype, c.isa, c.threads, c.gops, c.integer ? "OP" : "FLOP"));
  for (const auto& m : t.memory)
    if (!(m.gbps > 0) || !std::isfinite(m.gbps) || m.gbps > kMaxScoreCount)
      return make_error(fmt::format("the table's {} {} memory ceiling for {} thread(s) is {:g} GB/s: a ceiling must be "
                                    "a positive number", m.level, m.kernel, m.threads, m.gbps));
  const ComputeCeiling* peak = nullptr;
  for (const auto& c : t.compute)
    if (c.dtype == req.dtype && c.threads == req.threads && (!peak || c.gops > peak->gops)) peak = &c;
  if (!peak && req.roof_gflops <= 0)
    return make_error(fmt::format("no {} compute ceiling for {} thread(s) in the table", req.dtype, req.threads));
  const bool own_roof = req.roof_gflops > 0;
  const double compute_roof = own_roof ? req.roof_gflops : peak->gops;
  const std::string level = req.level.empty() ? "DRAM" : req.level;
  const MemoryCeiling* bw = nullptr;
  for (const auto& m : t.memory)
    if (m.level == level && m.threads == req.threads && (!bw || (m.kernel == "load") > (bw->kernel == "load") ||
                                                         ((m.kernel == "load") == (bw->kernel == "load") && m.gbps > bw->gbps)))
      bw = &m;
  if (!bw) return make_error(fmt::format("no {} memory ceiling for {} thread(s) in the table", level, req.threads));
  KernelScore s;
  s.name = req.name;
  s.dtype = req.dtype;
  s.flops = req.flops;
  s.bytes = req.bytes;
  s.seconds = req.seconds;
  s.threads = req.threads;
  s.level = level;
  s.ai = req.flops / req.bytes;
  s.achieved_gflops = req.flops / req.seconds / 1e9;
  const double memory_roof = s.ai * bw->gbps;
  s.attainable_gflops = std::min(compute_roof, memory_roof);
  s.bound_by = memory_roof < compute_roof ? fmt::format("memory {} {}", bw->level, bw->kernel)
               : own_roof                 ? "compute " + (req.roof_name.empty() ? req.dtype : req.roof_name)
                                          : fmt::format("compute {} {}", peak->dtype, peak->isa);
  s.efficiency = s.achieved_gflops / s.attainable_gflops;
  // A table whose highest ceiling of the dtype is under the kernel's own roof lacks the ceiling of
  // the kernel's width at these threads (an all-core run mistrusted on a busy host): no peak then,
  // rather than a share of it above 100%; so also when the kernel beat it (two moments of a clock).
  s.peak_gflops = peak && peak->gops >= s.achieved_gflops && (!own_roof || peak->gops >= kOwnRoofAgreement * compute_roof)
                      ? peak->gops
                      : 0;
  s.ridge_ai = compute_roof / bw->gbps;
  s.distance_to_ridge = s.ai / s.ridge_ai;
  return s;
}

}  // namespace peakprobe
