#include "cli/matmul_common.hpp"

#include <algorithm>
#include <sstream>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "harness/pin.hpp"
#include "harness/probe_runner.hpp"
#include "matmul/matmul_run.hpp"

namespace peakprobe::cli {

std::string roof_instruction(const CpuInfo& cpu, MatmulDtype dtype) {
  switch (dtype) {
    case MatmulDtype::f32: return gemm_vector_bits(cpu) == 512 ? "vfmadd231ps zmm, zmm, zmm" : "vfmadd231ps ymm, ymm, ymm";
    case MatmulDtype::bf16: return "vdpbf16ps zmm, zmm, zmm";
    case MatmulDtype::i8: return "vpdpbusd zmm, zmm, zmm";
  }
  return "";
}

MatmulRoof measure_roof(const GlobalOptions& g, const CpuInfo& cpu, MatmulDtype dtype, int threads) {
  MatmulRoof roof;
  roof.source = roof_instruction(cpu, dtype);
  roof.threads = threads;
  AffinityGuard caller_affinity;  // the probe pins this thread; BLAS threads started later must not inherit it
  ProbeOptions opt;
  opt.cpu = g.cpu;
  opt.threads = threads;
  auto runner = ProbeRunner::create(cpu, opt);
  if (!runner) {
    spdlog::warn("no ceiling: {}", runner.error());
    return roof;
  }
  ProbeSpec s;
  s.text = roof.source;
  const int lanes = (dtype == MatmulDtype::f32 ? gemm_vector_bits(cpu) : 512) / 32;
  s.ops_per_instruction = double(lanes) * 2 * (dtype == MatmulDtype::f32 ? 1 : dtype == MatmulDtype::bf16 ? 2 : 4);
  s.dtype = dtype == MatmulDtype::i8 ? "i8" : to_string(dtype);
  s.origin = "matmul roof";
  ProbeResult p = (*runner)->run(s);
  roof.clock = p.clock;
  if (p.status != Status::ok) {
    spdlog::warn("no ceiling: {} is {} ({})", s.text, to_string(p.status), p.reason);
    return roof;
  }
  if (p.recip_throughput_cycles && *p.recip_throughput_cycles > 0) roof.per_cycle = 1.0 / *p.recip_throughput_cycles;
  if (p.latency_cycles) roof.latency = *p.latency_cycles;
  const auto per_core = dtype == MatmulDtype::i8 ? p.gops : p.gflops;
  const auto total = dtype == MatmulDtype::i8 ? p.total_gops : p.total_gflops;
  roof.gflops = threads > 1 ? total : per_core;
  return roof;
}

MachineModel machine_for(const CpuInfo& cpu, const MatmulRoof& roof) {
  return machine_model_from(cpu, roof.clock.ghz > 0 ? roof.clock.ghz : 3.0, roof.per_cycle, roof.latency);
}

MatmulPlan plan_matmul(const CpuInfo& cpu, Gemm& gemm, const MatmulProblem& p,
                       const std::vector<CandidateCost>& ranked) {
  MatmulPlan plan{ranked.front().config, "cost model", {}};
  constexpr double kCheckBelowSeconds = 0.2;  // beyond this, checking would cost more than it can gain
  if (ranked.front().seconds / double(std::max<int64_t>(1, p.batch)) > kCheckBelowSeconds) return plan;
  std::vector<MatmulConfig> shortlist;
  std::vector<std::pair<int, int>> blocks;
  for (const auto& c : ranked) {
    if (blocks.size() == 3) break;
    if (std::find(blocks.begin(), blocks.end(), std::pair{c.config.mr, c.config.nv}) != blocks.end()) continue;
    blocks.emplace_back(c.config.mr, c.config.nv);
    shortlist.push_back(c.config);
  }
  MatmulConfig analytic = default_config(cpu, p.dtype, p.m, p.n, p.k, p.threads);
  analytic.pack_a = !a_in_place_possible(p.dtype, analytic.mr);  // in place measured faster here at every size
  shortlist.push_back(analytic);
  // Starting threads costs tens of microseconds a call, which the model does not price: for small
  // problems one thread can win, so its best block is checked too.
  if (p.threads > 1) {
    MatmulConfig single = shortlist.front();
    single.threads = single.thread_rows = single.thread_cols = 1;
    shortlist.push_back(single);
  }
  double best = 1e300;
  for (const MatmulConfig& c : shortlist) {
    auto ms = time_matmul_config(gemm, p.m, p.n, p.k, c);
    if (!ms) continue;
    plan.checked.emplace_back(c, *ms);
    if (*ms < best) best = *ms, plan.config = c;
  }
  if (plan.checked.size() > 1) plan.source = fmt::format("cost model, best of {} checked", plan.checked.size());
  return plan;
}

void score_matmul(MatmulResult& r, const MatmulRoof& roof, const MachineModel& machine) {
  r.ceiling_source = roof.source;
  r.ceiling_gflops = roof.gflops;
  const int bits = r.dtype == MatmulDtype::f32 ? machine.vector_bits : 512;
  r.bound_by = fmt::format("compute {} {}", to_string(r.dtype), bits);
  if (roof.gflops) {
    // The memory roof from the model's DRAM figure: only a problem too big for the caches and too
    // thin to reuse its operands (small AI) sits under it.
    const double dram = r.threads > 1 ? machine.dram_total_gbps : machine.dram_gbps;
    const double bytes = matmul_bytes(r.m, r.n, r.k, r.batch, r.dtype);
    const double caches = double(machine.l3_bytes) + double(machine.l2_bytes) * machine.cores;
    if (bytes > caches && r.arithmetic_intensity * dram < *roof.gflops) {
      r.ceiling_gflops = r.arithmetic_intensity * dram;
      r.ceiling_source = fmt::format("DRAM {:.1f} GB/s (model estimate) x AI {:.2f}", dram, r.arithmetic_intensity);
      r.bound_by = "memory DRAM";
    }
    r.efficiency = r.gflops / *r.ceiling_gflops;
  }
}

Expected<MatmulConfig> parse_config(const std::string& text, const MatmulConfig& base, int vector_bits) {
  MatmulConfig c = base;
  std::stringstream in(text);
  std::string item;
  bool nr_given = false, mc_given = false, nc_given = false;
  while (std::getline(in, item, ',')) {
    const auto eq = item.find('=');
    if (eq == std::string::npos)
      return make_error(fmt::format("--config '{}': expected key=value items (mr, nv, nr, mc, kc, nc, grid)", item));
    const std::string key = item.substr(0, eq), value = item.substr(eq + 1);
    if (key == "pack_a") {
      if (value != "0" && value != "1") return make_error(fmt::format("--config pack_a '{}': expected 0 or 1", value));
      c.pack_a = value == "1";
      continue;
    }
    if (key == "grid") {
      int rows = 0, cols = 0;
      char x = 0;
      std::stringstream g(value);
      if (!(g >> rows >> x >> cols) || x != 'x' || g.peek() != EOF || rows < 1 || cols < 1)
        return make_error(fmt::format("--config grid '{}': expected ROWSxCOLS, e.g. 2x1", value));
      c.thread_rows = rows, c.thread_cols = cols, c.threads = rows * cols;
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
    if (key == "mr") c.mr = v;
    else if (key == "nv") c.nv = v;
    else if (key == "nr") c.nr = v, nr_given = true;
    else if (key == "mc") c.mc = v, mc_given = true;
    else if (key == "kc") c.kc = v;
    else if (key == "nc") c.nc = v, nc_given = true;
    else return make_error(fmt::format("--config: unknown key '{}' (known: mr, nv, nr, mc, kc, nc, grid, pack_a)", key));
  }
  const int lanes = vector_bits / 32;
  if (nr_given) {
    if (c.nr % lanes) return make_error(fmt::format("--config nr {} is not a multiple of {} lanes", c.nr, lanes));
    c.nv = c.nr / lanes;
  }
  c.nr = c.nv * lanes;
  // Blocks the user did not give follow a changed register block: whole micro-panels.
  if (!mc_given) c.mc = std::max(c.mr, (c.mc + c.mr - 1) / c.mr * c.mr);
  if (!nc_given) c.nc = std::max(c.nr, (c.nc + c.nr - 1) / c.nr * c.nr);
  return c;
}

std::string config_text(const MatmulConfig& c) {
  return fmt::format("mr={},nv={},mc={},kc={},nc={},grid={}x{}{}", c.mr, c.nv, c.mc, c.kc, c.nc, c.thread_rows,
                     c.thread_cols, c.pack_a ? "" : ",pack_a=0");
}

Expected<MatmulDtype> parse_dtype(const std::string& text) {
  if (text == "f32") return MatmulDtype::f32;
  if (text == "bf16") return MatmulDtype::bf16;
  if (text == "int8" || text == "i8" || text == "u8s8") return MatmulDtype::i8;
  return make_error(fmt::format("--dtype '{}': expected f32, bf16 or int8", text));
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
