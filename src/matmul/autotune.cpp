#include "matmul/autotune.hpp"

#include "matmul/packing.hpp"
#include "matmul/reference.hpp"

#include <algorithm>
#include <set>
#include <tuple>

namespace peakprobe {
namespace {

int64_t round_up(int64_t v, int64_t to) { return (v + to - 1) / to * to; }

}  // namespace

std::vector<MatmulConfig> autotune_grid(const MachineModel& machine, const MatmulProblem& p, int model_top) {
  const auto ranked = rank_configs(machine, p);
  // k values a packed word holds (widened kernels hold fewer: bf16 as f32, int8 as int16 pairs).
  const int kg = packed_k_group(element_bytes(p.dtype), machine.widened);
  const int lanes = machine.vector_bits / 32;
  std::vector<MatmulConfig> out;
  std::set<ConfigKey> seen;
  auto add = [&](MatmulConfig c) {
    // Clamp to the problem the way the GEMM would use it, so equal runs are not measured twice.
    c.kc = int(std::min<int64_t>(c.kc, round_up(p.k, kg)));
    c.mc = int(std::min<int64_t>(c.mc, round_up(p.m, c.mr)));
    c.nc = int(std::min<int64_t>(c.nc, round_up(p.n, c.nr)));
    if (seen.insert(config_key(c)).second) out.push_back(c);
  };
  // Register blocks: the model's favourite few, in the order it ranks them.
  std::vector<std::pair<int, int>> blocks;
  for (const auto& c : ranked)
    if (std::find(blocks.begin(), blocks.end(), std::pair{c.config.mr, c.config.nv}) == blocks.end() &&
        blocks.size() < 3)
      blocks.emplace_back(c.config.mr, c.config.nv);
  // Thread grids on every count the model plans with (thread_counts), and with a batch the splits
  // into groups that each run their own items (K is not split in the grid: the model's best, added
  // below, bring K parts where they pay).
  const auto grids = thread_splits_up_to(p.threads, p.batch, 1);
  for (auto [mr, nv] : blocks)
    for (int steps : {128, 256, 512})
      for (int mc_rows : {48, 144, 288})
        for (int nc_cols : {512, 2048, 8192})
          for (auto [groups, parts, rows, cols] : grids) {
            MatmulConfig c;
            c.mr = mr, c.nv = nv, c.nr = nv * lanes;
            c.kc = steps * kg;
            c.mc = int(round_up(mc_rows, mr));
            c.nc = int(round_up(nc_cols, c.nr));
            c.threads = groups * rows * cols, c.thread_rows = rows, c.thread_cols = cols, c.batch_threads = groups;
            c.k_threads = parts;
            add(c);
          }
  // The model's best, each also with the operands it reads in place packed instead (the grid packs
  // both): whether reading in place pays is what the model is least sure of.
  for (int i = 0; i < model_top && i < int(ranked.size()); ++i) {
    const MatmulConfig& c = ranked[size_t(i)].config;
    add(c);
    for (bool pack_a : {true, false})
      for (bool pack_b : {true, false}) {
        if (!pack_a && !a_in_place_pays(machine, p, c.mr)) continue;
        if (!pack_b && !b_in_place_pays(machine, p, c.mr, c.thread_rows)) continue;
        MatmulConfig v = c;
        v.pack_a = pack_a, v.pack_b = pack_b;
        add(v);
      }
  }
  return out;
}

Expected<AutotuneResult> autotune(const MachineModel& machine, const MatmulProblem& problem,
                                  const MeasureConfig& measure, int model_top) {
  AutotuneResult r;
  const CandidateCost pick = choose_config(machine, problem);
  auto measure_point = [&](const MatmulConfig& c) -> Expected<AutotunePoint> {
    auto ms = measure(c);
    if (!ms) return make_error(ms.error());
    return AutotunePoint{c, predict(machine, problem, c).seconds * 1e3, *ms};
  };
  for (const MatmulConfig& c : autotune_grid(machine, problem, model_top)) {
    auto point = measure_point(c);
    if (!point) return make_error(point.error());
    r.points.push_back(*point);
    if (config_key(c) == config_key(pick.config)) r.model_pick = *point;
  }
  if (r.model_pick.measured_ms == 0) {
    auto point = measure_point(pick.config);
    if (!point) return make_error(point.error());
    r.model_pick = *point;
    r.points.push_back(*point);
  }
  std::sort(r.points.begin(), r.points.end(),
            [](const AutotunePoint& a, const AutotunePoint& b) { return a.measured_ms < b.measured_ms; });
  r.best = r.points.front();
  r.model_gap = r.model_pick.measured_ms / r.best.measured_ms - 1.0;
  return r;
}

}  // namespace peakprobe
