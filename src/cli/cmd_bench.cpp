// `peakprobe bench matmul`: the benchmark spec's parameter matrix for the bundled GEMM (shapes,
// dtypes, batch sizes) in one run: JSON rows that `peakprobe compare` matches by name against a
// stored baseline (benchmarks/baselines/), and a Markdown table for people.
#include <cmath>
#include <iostream>
#include <map>
#include <optional>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "cli/commands.hpp"
#include "cli/matmul_common.hpp"
#include "cli/measure.hpp"
#include "matmul/autotune.hpp"
#include "matmul/matmul_run.hpp"
#include "report/json_report.hpp"
#include "report/matmul_report.hpp"
#include "report/output_file.hpp"

namespace peakprobe::cli {
namespace {

struct BenchOptions {
  std::string shapes = "128,1024,4096,127,513";
  std::string dtypes = "f32,bf16";
  std::string batches = "1,4,16";
  std::string baselines = "onednn,openblas,blis";
  double max_gflop = 200;  // per call; bigger combinations are listed as skipped
  bool quick = false;
  bool model_gap = false;  // autotune each batch-1 shape and report how far the model's pick is
  std::string isa;         // --isa level, "" for the widest
  int rounds = 2;          // of the side by side with the baselines (MatmulRequest::rounds)
  std::string widen = "auto";  // --widen (WidenChoice)
};

template <typename T>
Expected<std::vector<T>> parse_list(const std::string& text, const char* what, T lo, T hi) {
  std::vector<T> out;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');) {
    size_t used = 0;
    long long v = 0;
    try {
      v = std::stoll(item, &used);
    } catch (...) {
      used = 0;
    }
    if (used != item.size() || item.empty() || v < lo || v > hi)
      return make_error(fmt::format("{} '{}': expected whole numbers from {} to {}", what, item, lo, hi));
    out.push_back(T(v));
  }
  if (out.empty()) return make_error(fmt::format("{}: empty list", what));
  return out;
}

int run_bench(GlobalOptions& g, const BenchOptions& o) {
  auto shapes = parse_list<int64_t>(o.shapes, "--shapes", 1, 65536);
  if (!shapes) return spdlog::error("{}", shapes.error()), kExitUsage;
  auto batches = parse_list<int64_t>(o.batches, "--batches", 1, 4096);
  if (!batches) return spdlog::error("{}", batches.error()), kExitUsage;
  std::vector<MatmulDtype> dtypes;
  {
    std::stringstream in(o.dtypes);
    for (std::string item; std::getline(in, item, ',');) {
      auto d = parse_dtype(item);
      if (!d) return spdlog::error("--dtypes: {}", d.error()), kExitUsage;
      dtypes.push_back(*d);
    }
  }
  if (dtypes.empty()) return spdlog::error("--dtypes: empty list (f32, bf16, int8)"), kExitUsage;
  auto parsed_baselines = parse_baselines(o.baselines);
  if (!parsed_baselines) return spdlog::error("{}", parsed_baselines.error()), kExitUsage;
  const std::vector<std::string> baselines = *parsed_baselines;
  auto widen = parse_widen(o.widen);
  if (!widen) return spdlog::error("{}", widen.error()), kExitUsage;
  if (!std::isfinite(o.max_gflop) || o.max_gflop <= 0 || o.max_gflop > kMaxMatmulFlop / 1e9)
    return spdlog::error("--max-gflop {}: expected a number above 0 and at most {:g}", o.max_gflop, kMaxMatmulFlop / 1e9),
           kExitUsage;
  CpuInfo host, cpu;
  std::string level;
  if (int rc = prepare_matmul_cpu(g, o.isa, host, cpu, level)) return rc;
  const uint64_t available = matmul_available_memory();

  std::vector<MatmulResult> results;
  size_t done = 0;
  std::map<std::string, double> mix_shares;  // each block's instruction mix, measured once (measure_kernel_mix)
  const size_t total = shapes->size() * dtypes.size() * batches->size();
  // A row for a combination that was not measured: skipped or failed, with the reason.
  auto not_measured = [&](MatmulDtype dt, int64_t s, int64_t b, Status status, std::string reason) {
    MatmulResult r;
    r.dtype = dt, r.threads = g.threads;
    r.m = r.n = r.k = s, r.batch = b;
    r.name = matmul_name(s, s, s, b, dt, g.threads, ColdCacheMode::none, level);
    r.isa_level = level;
    r.status = status;
    r.reason = std::move(reason);
    results.push_back(r);
  };
  // Every row of a dtype that cannot run, skipped with the reason (--quick leaves out the same shapes
  // as for a dtype that runs).
  auto skip_dtype = [&](MatmulDtype dt, const std::string& why) {
    for (int64_t s : *shapes) {
      if (o.quick && s > 2048) {
        done += batches->size();
        continue;
      }
      for (int64_t b : *batches) {
        not_measured(dt, s, b, Status::skipped, why);
        progress(g.out, ++done, total, results.back().name);
      }
    }
  };
  for (MatmulDtype dt : dtypes) {
    if (std::string why = gemm_unsupported(cpu, dt); !why.empty()) {
      skip_dtype(dt, why + ", not available on this CPU");
      continue;
    }
    if (std::string why = widen_problem(cpu, dt, *widen); !why.empty()) {
      skip_dtype(dt, why);
      continue;
    }
    CpuInfo kernels_cpu = cpu;  // this dtype's kernels may widen (measure_roof_choosing_kernels)
    const MatmulRoof roof = measure_roof_choosing_kernels(g, kernels_cpu, dt, g.threads, *widen);
    // The products run where their roof was measured.
    const CpuInfo on_roof = led_by_roof_core(kernels_cpu, roof);
    Gemm gemm(on_roof, dt);
    const MachineModel machine = machine_for(on_roof, roof, gemm);
    for (int64_t s : *shapes) {
      if (o.quick && s > 2048) {
        done += batches->size();
        continue;
      }
      for (int64_t b : *batches) {
        const std::string name = matmul_name(s, s, s, b, dt, g.threads, ColdCacheMode::none, level);
        progress(g.out, ++done, total, name);
        const double gflop = 2.0 * double(s) * double(s) * double(s) * double(b) / 1e9;
        if (gflop > o.max_gflop) {
          not_measured(dt, s, b, Status::skipped,
                       fmt::format("{:.4g} GFLOP per call is over --max-gflop {:.4g}", gflop, o.max_gflop));
          continue;
        }
        // Never allocated when it would not fit: the row says why instead.
        if (std::string why = matmul_size_problem(s, s, s, b, dt, ColdCacheMode::none, !baselines.empty(), available);
            !why.empty()) {
          not_measured(dt, s, b, Status::skipped, why);
          continue;
        }
        MatmulRequest rq;
        rq.m = rq.n = rq.k = s, rq.batch = b, rq.dtype = dt, rq.threads = g.threads;
        const MatmulProblem problem{s, s, s, b, dt, g.threads};
        const MatmulPlan plan = plan_matmul(on_roof, gemm, problem, rank_configs(machine, problem));
        rq.config = plan.config;
        rq.config_source = plan.source;
        rq.baselines = baselines;
        rq.rounds = o.rounds;
        rq.isa_level = level;
        // The model's first choice against the fastest of a measured grid, on one item of the shape.
        std::optional<double> gap;
        if (o.model_gap && b == 1) {
          auto at = autotune(machine, problem, [&](const MatmulConfig& c) { return time_matmul_config(gemm, s, s, s, c, problem.batch); });
          if (at) {
            gap = at->model_gap;
            spdlog::info("{}: the cost model's first choice ran {:.1f}% slower than the best of {} tilings ({})", name,
                         100 * at->model_gap, at->points.size(), config_text(at->best.config));
          } else {
            spdlog::warn("{}: autotune: {}", name, at.error());
          }
        }
        auto r = run_matmul(on_roof, gemm, rq);
        if (!r) {
          not_measured(dt, s, b, Status::error, r.error());
          continue;
        }
        score_matmul(*r, roof, machine);
        measure_kernel_mix(g, on_roof, roof, gemm.product_kernel_shape(r->config), *r,
                           &mix_shares);
        r->model_gap = gap;
        spdlog::info("{}: {:.1f} G{}/s{}", name, r->gflops, dt == MatmulDtype::i8 ? "OP" : "FLOP",
                     r->efficiency ? fmt::format(", {:.1f}% of the roof", 100 * *r->efficiency) : "");
        results.push_back(*r);
      }
    }
  }
  progress_done(g.out);

  std::vector<OutputJob> jobs;
  if (!g.out.json.empty())
    jobs.push_back({g.out.json, [&](std::ostream& os) {
                      nlohmann::json rows = nlohmann::json::array();
                      for (const auto& r : results) rows.push_back(to_json(r));
                      os << json_text(nlohmann::json{{"schema", kSchema}, {"host", to_json(host)}, {"benchmarks", rows}})
                         << "\n";
                    }});
  if (!g.out.csv.empty()) jobs.push_back({g.out.csv, [&](std::ostream& os) { write_matmul_csv(os, results); }});
  if (!g.out.markdown.empty())
    jobs.push_back({g.out.markdown, [&](std::ostream& os) { write_matmul_markdown(os, results); }});
  if (int rc = write_jobs(jobs)) return rc;
  if (!g.out.writes_stdout()) write_matmul_markdown(std::cout, results);
  for (const auto& r : results)
    if (r.status == Status::error) return kExitResultErrors;
  return kExitOk;
}

}  // namespace

void add_bench_command(CLI::App& app, GlobalOptions& g) {
  auto* bench = app.add_subcommand("bench", "Benchmark suites over a parameter matrix, for regression tracking");
  bench->require_subcommand(1);
  auto o = std::make_shared<BenchOptions>();
  auto* mm = bench->add_subcommand("matmul", "The bundled GEMM over shapes x dtypes x batch sizes");
  mm->add_option("--shapes", o->shapes, "Cube sizes S (S x S x S problems)")->capture_default_str();
  mm->add_option("--dtypes", o->dtypes, "f32, bf16, int8")->capture_default_str();
  mm->add_option("--batches", o->batches, "Batch sizes")->capture_default_str();
  mm->add_option("--baseline", o->baselines, "Libraries to run beside ours: onednn (every dtype), openblas and blis (f32 rows), none")
      ->capture_default_str();
  mm->add_option("--max-gflop", o->max_gflop, "Skip combinations with more work per call than this")
      ->capture_default_str();
  mm->add_flag("--quick", o->quick, "Leave out shapes above 2048");
  mm->add_flag("--model-gap", o->model_gap,
               "Also autotune every batch-1 shape and report how much slower the cost model's first choice ran\n"
               "than the fastest tiling measured (the model gap column; costs a grid search per shape)");
  mm->add_option("--rounds", o->rounds, rounds_option_help())->check(CLI::Range(1, 10))->capture_default_str();
  mm->add_option("--isa", o->isa, isa_option_help())->type_name("LEVEL");
  mm->add_option("--widen", o->widen, widen_option_help() + "\n(a dtype that cannot follow it is listed as skipped)")
      ->capture_default_str();
  mm->footer(
      "Each row is one `peakprobe matmul` run (cost-model tiling, checked, timed, scored). Rows are named\n"
      "\"matmul DTYPE MxNxK batch B, T thread(s)\" so `peakprobe compare OLD.json NEW.json` matches them.\n"
      "Examples:\n"
      "  peakprobe --threads 2 --json new.json bench matmul\n"
      "  peakprobe compare benchmarks/baselines/amd-zen4-kvm-2c.json new.json\n");
  mm->callback([&g, o] { g.action = [&g, o] { g.exit_code = run_bench(g, *o); }; });
}

}  // namespace peakprobe::cli
