#include "cli/report_kernels.hpp"

#include <map>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "cli/common.hpp"
#include "cli/matmul_common.hpp"
#include "matmul/cost_model.hpp"
#include "matmul/gemm.hpp"
#include "matmul/matmul_run.hpp"

namespace peakprobe::cli {

ScoreRequest matmul_score_request(const MatmulResult& r) {
  ScoreRequest q;
  // The row's own name, so that a score and its row in report.json's `matmul` match.
  q.name = !r.name.empty() ? r.name : fmt::format("matmul {} {}x{}x{}{}, {} thread{}", to_string(r.dtype), r.m, r.n, r.k,
                       r.batch > 1 ? fmt::format(" batch {}", r.batch) : "", r.threads, r.threads == 1 ? "" : "s");
  q.dtype = r.dtype == MatmulDtype::i8 ? "i8" : to_string(r.dtype);
  q.flops = 2.0 * double(r.m) * double(r.n) * double(r.k) * double(r.batch);
  q.bytes = matmul_bytes(r.m, r.n, r.k, r.batch, r.dtype);
  q.seconds = r.timing.min_ms / 1e3;
  q.threads = r.threads;
  // bound_by "compute <dtype> <width>": the row's ceiling is its own instruction's roof. Under a
  // memory roof the row's ceiling is the model's DRAM estimate; the table's own roofs judge it then.
  const std::string compute = "compute ";
  if (r.ceiling_gflops && *r.ceiling_gflops > 0 && r.bound_by.rfind(compute, 0) == 0) {
    q.roof_gflops = *r.ceiling_gflops;
    q.roof_name = r.bound_by.substr(compute.size()) + (r.ceiling_source.empty() ? "" : " " + r.ceiling_source);
  }
  return q;
}

namespace {

// One thread count: the roof, the model fed with this core's figures, the plan, the checked and
// timed run, its score; what is not measured or not scored is logged.
void measure_one(const GlobalOptions& g, const CpuInfo& cpu, int64_t size, int threads, bool quick, RunDocument& doc,
                 std::map<std::string, double>& mix_shares) {
  const MatmulDtype dtype = MatmulDtype::f32;
  const MatmulRoof roof = measure_roof(g, cpu, dtype, threads);
  if (!roof.gflops) {
    spdlog::warn("no matmul on the {}-thread roofline: its roof was not measured ({})", threads, roof.missing);
    return;
  }
  const CpuInfo on_roof = led_by_roof_core(cpu, roof);  // the product runs where its roof was measured
  Gemm gemm(on_roof, dtype);
  const MachineModel machine = machine_for(on_roof, roof, gemm);
  const MatmulProblem problem{size, size, size, 1, dtype, threads};
  const MatmulPlan plan = plan_matmul(on_roof, gemm, problem, rank_configs(machine, problem));
  MatmulRequest rq;
  rq.m = rq.n = rq.k = size;
  rq.dtype = dtype;
  rq.threads = threads;
  rq.config = plan.config;
  rq.config_source = plan.source;
  // Shorter than `matmul`'s half second: the fastest of some 20 calls is what the score uses, and
  // the report's whole budget is about 30 s.
  rq.min_seconds = quick ? 0.1 : 0.25;
  auto r = run_matmul(on_roof, gemm, rq);
  if (!r) {
    spdlog::warn("no matmul on the {}-thread roofline: {}", threads, r.error());
    return;
  }
  score_matmul(*r, roof, machine);
  measure_kernel_mix(g, on_roof, roof, gemm.product_kernel_shape(r->config), *r, &mix_shares);
  if (r->status == Status::error) spdlog::error("{}", r->reason);
  doc.matmuls.push_back(*r);
  if (r->status != Status::ok) {
    spdlog::info("{}: not placed on the roofline: {}{}", r->name, to_string(r->status),
                 r->reason.empty() ? "" : " (" + r->reason + ")");
    return;
  }
  if (!doc.ceilings || !(r->timing.min_ms > 0)) return;
  auto score = score_kernel(*doc.ceilings, matmul_score_request(*r));
  if (!score) {
    spdlog::warn("{}: not placed on the roofline: {}", r->name, score.error());
    return;
  }
  doc.scores.push_back(*score);
}

}  // namespace

void measure_report_kernels(const GlobalOptions& g, const CpuInfo& cpu, bool quick, RunDocument& doc) {
  if (!cpu.emulator.empty()) {
    spdlog::info("no matmul on the roofline: under an emulator ({}) its timings mean nothing", cpu.emulator);
    return;
  }
  if (std::string why = gemm_unsupported(cpu, MatmulDtype::f32); !why.empty()) {
    spdlog::info("no matmul on the roofline: {}", why);
    return;
  }
  const int64_t size = quick ? kReportMatmulQuickSize : kReportMatmulSize;
  const int all = int(cpu.core_order.size());
  progress(g.out, 1, all > 1 && g.cpu < 0 ? 2 : 1, fmt::format("matmul f32 {}^3, 1 thread", size));
  std::map<std::string, double> mix_shares;  // a block's instruction mix, measured once (measure_kernel_mix)
  measure_one(g, cpu, size, 1, quick, doc, mix_shares);
  // --cpu pins the run to one core: the all-core row would not be on the cores asked for.
  if (all > 1 && g.cpu < 0) {
    progress(g.out, 2, 2, fmt::format("matmul f32 {}^3, {} threads", size, all));
    measure_one(g, cpu, size, all, quick, doc, mix_shares);
  }
}

}  // namespace peakprobe::cli
