// `peakprobe matmul` and `peakprobe bench matmul`: the bundled GEMM, tiled by the cost model (or
// --autotune, or --config), checked against a plain reference, timed as the benchmark spec asks and
// scored against the roof measured on the same cores, with OpenBLAS / BLIS side by side.
#include <unistd.h>

#include <iostream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "asm/target.hpp"
#include "cli/commands.hpp"
#include "cli/matmul_common.hpp"
#include "cli/measure.hpp"
#include "matmul/autotune.hpp"
#include "matmul/blas_baseline.hpp"
#include "matmul/matmul_run.hpp"
#include "memory/cold_cache.hpp"
#include "report/json_report.hpp"
#include "report/matmul_report.hpp"
#include "report/output_file.hpp"

namespace peakprobe::cli {
namespace {

struct MatmulOptions {
  std::string shape;
  int64_t batch = 1;
  std::string dtype = "f32";
  std::string cold_cache = "none";
  std::string config;
  std::string baselines = "onednn,openblas,blis";
  bool explain = false;
  bool autotune = false;
  bool quick = false;  // bench: leave out 4096^3
  std::string isa;     // --isa level, "" for the widest
  int rounds = 2;      // of the side by side with the baselines (MatmulRequest::rounds)
  std::string widen = "auto";  // --widen (WidenChoice)
};

// "all+tlb" -> mode all with the TLB flushed before each run.
Expected<std::pair<ColdCacheMode, bool>> parse_cold(const std::string& text) {
  std::string mode = text;
  bool tlb = false;
  if (auto plus = text.find('+'); plus != std::string::npos) {
    if (text.substr(plus + 1) != "tlb")
      return make_error(fmt::format("--cold-cache '{}': the only extension is +tlb", text));
    mode = text.substr(0, plus);
    tlb = true;
  }
  auto m = parse_cold_cache_mode(mode);
  if (!m) return make_error(fmt::format("--cold-cache '{}': {}", text, m.error()));
  return std::make_pair(*m, tlb);
}

void print_autotune(std::ostream& out, const AutotuneResult& at) {
  out << fmt::format("autotune: {} configurations measured; the {} marked * were timed again in {} turns\n",
                     at.points.size(), at.finalists, kAutotuneFinalTurns);
  out << fmt::format("  {:<46} {:>10} {:>12}\n", "configuration", "measured", "predicted");
  for (size_t i = 0; i < at.points.size() && i < 10; ++i)
    out << fmt::format("  {} {:<44} {:>8.3f}ms {:>10.3f}ms\n", i < at.finalists ? '*' : ' ',
                       config_text(at.points[i].config), at.points[i].measured_ms, at.points[i].predicted_ms);
  out << fmt::format("  best measured: {} {:.3f} ms\n", config_text(at.best.config), at.best.measured_ms);
  out << fmt::format("  cost model's pick: {} {:.3f} ms, {:.1f}% slower than the best\n",
                     config_text(at.model_pick.config), at.model_pick.measured_ms, 100 * at.model_gap);
}

nlohmann::json autotune_json(const AutotuneResult& at) {
  nlohmann::json points = nlohmann::json::array();
  for (size_t i = 0; i < at.points.size(); ++i)
    points.push_back({{"config", config_text(at.points[i].config)}, {"measured_ms", at.points[i].measured_ms},
                      {"predicted_ms", at.points[i].predicted_ms}, {"finalist", i < at.finalists}});
  return {{"measured", at.points.size()},
          {"finalists", at.finalists},
          {"best", config_text(at.best.config)},
          {"best_ms", at.best.measured_ms},
          {"model_pick", config_text(at.model_pick.config)},
          {"model_pick_ms", at.model_pick.measured_ms},
          {"model_gap", at.model_gap},
          {"points", points}};
}

// The whole `matmul` run: plan, measure, score, report. Returns the exit code.
int run_matmul_command(GlobalOptions& g, const MatmulOptions& o) {
  int64_t m = 0, n = 0, k = 0;
  if (!parse_shape(o.shape, m, n, k)) {
    spdlog::error("--shape '{}': expected M,N,K with whole numbers from 1 to 65536", o.shape);
    return kExitUsage;
  }
  auto dtype = parse_dtype(o.dtype);
  if (!dtype) return spdlog::error("{}", dtype.error()), kExitUsage;
  auto cold = parse_cold(o.cold_cache);
  if (!cold) return spdlog::error("{}", cold.error()), kExitUsage;
  if (o.batch < 1 || o.batch > 1 << 20) return spdlog::error("--batch {}: expected 1 to 1048576", o.batch), kExitUsage;
  auto baselines = parse_baselines(o.baselines);
  if (!baselines) return spdlog::error("{}", baselines.error()), kExitUsage;
  auto widen = parse_widen(o.widen);
  if (!widen) return spdlog::error("{}", widen.error()), kExitUsage;
  if (o.explain && o.autotune) spdlog::info("--explain with --autotune: the model's ranking, then the measured search");
  // By work and by memory, before anything is allocated or measured.
  if (std::string why = matmul_size_problem(m, n, k, o.batch, *dtype, cold->first, !baselines->empty(),
                                            matmul_available_memory());
      !why.empty())
    return spdlog::error("{}", why), kExitUsage;
  // Everything below sees the CPU as held to --isa; the document's host stays the real one.
  CpuInfo host, cpu;
  std::string level;
  if (int rc = prepare_matmul_cpu(g, o.isa, host, cpu, level)) return rc;
  if (std::string why = gemm_unsupported(cpu, *dtype); !why.empty()) {
    spdlog::error("matmul {}: {}, not available on this CPU", to_string(*dtype), why);
    return kExitMeasure;
  }
  if (std::string why = widen_problem(cpu, *dtype, *widen); !why.empty())
    return spdlog::error("matmul {}: {}", to_string(*dtype), why), kExitUsage;
  const MatmulRoof roof = measure_roof_choosing_kernels(g, cpu, *dtype, g.threads, *widen);
  cpu = led_by_roof_core(cpu, roof);  // the product runs where its roof was measured
  Gemm gemm(cpu, *dtype);
  const MachineModel machine = machine_for(cpu, roof, gemm);
  const MatmulProblem problem{m, n, k, o.batch, *dtype, g.threads};
  const auto ranked = rank_configs(machine, problem);
  // With a document on stdout the explanation goes to stderr: stdout stays one document.
  std::ostream& explained = g.out.writes_stdout() ? std::cerr : std::cout;
  if (o.explain) write_explanation(explained, machine, problem, ranked);

  MatmulConfig config = ranked.front().config;
  std::string source = "cost model";
  auto use_plan = [&] {
    const MatmulPlan plan = plan_matmul(cpu, gemm, problem, ranked);
    config = plan.config;
    source = plan.source;
    if (o.explain && !plan.checked.empty()) {
      explained << "checked on this problem:\n";
      for (const auto& [c, ms] : plan.checked) explained << fmt::format("  {:<44} {:>9.3f} ms\n", config_text(c), ms);
      explained << fmt::format("using: {}\n", config_text(config));
    }
  };
  std::optional<AutotuneResult> tuned;
  if (!o.config.empty()) {
    auto c = parse_config(o.config, config, gemm_vector_bits(cpu), a_in_place_rows(cpu, *dtype));
    if (!c) return spdlog::error("{}", c.error()), kExitUsage;
    if (c->threads > g.threads) {
      spdlog::error("--config grid {}x{}{}{} makes {} threads; --threads is {}", c->thread_rows, c->thread_cols,
                    c->batch_threads > 1 ? fmt::format(" x batch_threads {}", c->batch_threads) : "",
                    c->k_threads > 1 ? fmt::format(" x k_threads {}", c->k_threads) : "", c->threads, g.threads);
      return kExitUsage;
    }
    if (std::string why = check_config(cpu, *dtype, *c); !why.empty())
      return spdlog::error("--config: {}", why), kExitUsage;
    if (std::string why = a_in_place_depth_refusal(cpu, *dtype, *c, problem.k); !why.empty())
      return spdlog::error("--config: {}", why), kExitUsage;
    // A group without an item would leave its threads idle while the result claimed them.
    if (c->batch_threads > o.batch)
      return spdlog::error("--config batch_threads {} is more than the {} batch item{}", c->batch_threads, o.batch,
                           o.batch == 1 ? "" : "s"),
             kExitUsage;
    // Likewise a K part without a k group (a word of the packed panels holds k_group k values).
    const int kg = gemm.micro_kernel_shape(c->mr, c->nv, !c->pack_a).k_group();
    if (c->k_threads > (k + kg - 1) / kg)
      return spdlog::error("--config k_threads {} is more than the {} k group{} of K = {}", c->k_threads,
                           (k + kg - 1) / kg, (k + kg - 1) / kg == 1 ? "" : "s", k),
             kExitUsage;
    config = *c;
    source = "--config";
    if (o.explain) write_config_explanation(explained, machine, problem, config);
  } else if (o.autotune) {
    auto at = autotune(machine, problem,
                       [&](const MatmulConfig& c) { return time_matmul_config(gemm, m, n, k, c, problem.batch); });
    if (!at) return spdlog::error("autotune: {}", at.error()), kExitMeasure;
    tuned = *at;
    config = at->best.config;
    source = "autotune";
    if (!g.out.writes_stdout()) print_autotune(std::cout, *at);
  } else {
    use_plan();
  }

  MatmulRequest rq;
  rq.m = m, rq.n = n, rq.k = k, rq.batch = o.batch, rq.dtype = *dtype, rq.threads = g.threads;
  rq.config = config;
  rq.config_source = source;
  rq.cold_cache = cold->first;
  rq.flush_tlb = cold->second;
  rq.baselines = *baselines;
  rq.rounds = o.rounds;
  rq.isa_level = level;
  auto result = run_matmul(cpu, gemm, rq);
  if (!result) return spdlog::error("{}", result.error()), kExitMeasure;
  score_matmul(*result, roof, machine);
  measure_kernel_mix(g, cpu, roof, gemm.product_kernel_shape(result->config), *result);
  if (tuned) result->model_gap = tuned->model_gap;
  if (result->status == Status::error) spdlog::error("{}", result->reason);

  std::vector<OutputJob> jobs;
  if (!g.out.json.empty())
    jobs.push_back({g.out.json, [&](std::ostream& os) {
                      nlohmann::json doc = {{"schema", kSchema},
                                            {"host", to_json(host)},
                                            {"matmul", nlohmann::json::array({to_json(*result)})}};
                      if (tuned) doc["autotune"] = autotune_json(*tuned);
                      if (o.explain) {
                        nlohmann::json candidates = nlohmann::json::array();
                        for (size_t i = 0; i < ranked.size() && i < 20; ++i)
                          candidates.push_back({{"config", config_text(ranked[i].config)},
                                                {"predicted_ms", ranked[i].seconds * 1e3}});
                        doc["cost_model"] = {{"candidates", ranked.size()}, {"top", candidates}};
                      }
                      os << json_text(doc) << "\n";
                    }});
  const std::vector<MatmulResult> rows{*result};
  if (!g.out.csv.empty()) jobs.push_back({g.out.csv, [&](std::ostream& os) { write_matmul_csv(os, rows); }});
  if (!g.out.markdown.empty())
    jobs.push_back({g.out.markdown, [&](std::ostream& os) { write_matmul_markdown(os, rows); }});
  if (int rc = write_jobs(jobs)) return rc;
  if (!g.out.writes_stdout()) write_matmul_console(std::cout, *result);
  return result->status == Status::error ? kExitResultErrors : kExitOk;
}

}  // namespace

void add_matmul_command(CLI::App& app, GlobalOptions& g) {
  auto o = std::make_shared<MatmulOptions>();
  auto* cmd = app.add_subcommand("matmul", "The bundled GEMM (f32, bf16, int8): checked, timed, scored on the roofline");
  cmd->add_option("--shape", o->shape, "M,N,K: C[MxN] = A[MxK] x B[KxN], row-major")->required();
  cmd->add_option("--batch", o->batch,
                  "Independent products of the same shape in one call (the plan may spread them over groups of threads)")
      ->capture_default_str();
  cmd->add_option("--dtype", o->dtype, "f32 | bf16 (C in f32) | int8 (u8 x s8 -> s32)")->capture_default_str();
  cmd->add_option("--cold-cache", o->cold_cache,
                  "none | wei | all, optionally +tlb: every run reads B (wei) or all operands (all) from a copy\n"
                  "that is not in cache; +tlb also evicts the TLB")
      ->capture_default_str();
  cmd->add_option("--config", o->config,
                  "Tiling to use instead of the model's: key=value list of mr, nv (or nr), mc, kc, nc, grid=RxC,\n"
                  "batch_threads=N (N groups of threads, each on its own batch items), k_threads=N (K split into\n"
                  "N parts whose sums are added), pack_a=0|1 and pack_b=0|1 (0: the kernels read that operand in\n"
                  "place: A of any dtype they take as it is, with K whole k groups; B in f32); keys left out keep\n"
                  "the model's values")
      ->type_name("LIST");
  cmd->add_option("--baseline", o->baselines, "Libraries to run the same problem: onednn (every dtype), openblas and blis (f32), a path, none")
      ->capture_default_str();
  cmd->add_option("--rounds", o->rounds, rounds_option_help())->check(CLI::Range(1, 10))->capture_default_str();
  cmd->add_option("--isa", o->isa, isa_option_help())->type_name("LEVEL");
  cmd->add_option("--widen", o->widen, widen_option_help())->capture_default_str();
  cmd->add_flag("--explain", o->explain, "Print the cost model's candidates, their predicted costs and its choice (with --config: also the model's "
                 "placement, split and prediction for that configuration)");
  cmd->add_flag("--autotune", o->autotune,
                "Measure a grid of tilings, use the fastest, and report how far the model's pick is from it");
  cmd->footer(
      "The tiling comes from the cost model (docs/matmul.md), built from the dot/FMA instruction measured\n"
      "on the same --threads cores. The result is checked against a double-accumulating reference\n"
      "(max_rel_error; exact for int8), then timed: 2 warm-up runs, at least 5 repetitions and 0.5 s;\n"
      "mean, min, max and std in ms; GFLOP/s from the best run with FLOPs = 2MNK x batch; efficiency\n"
      "against the roof that binds. Installed oneDNN (f32, bf16, int8), OpenBLAS and BLIS (f32) run the\n"
      "same problem in worker processes for a baseline, timed in turns with ours (--rounds); one whose\n"
      "result is wrong is mistrusted. Where the vector width has no bf16 or int8 dot product, or the f32\n"
      "multiply-add's roof measures more than 10% faster than the bf16 one's (both are measured), the elements\n"
      "are widened when packed (bf16 as f32, int8 as int16) and the roof is the instruction that then runs\n"
      "(--widen yes|no takes one side; where bf16 has both, the roof not taken is reported beside).\n"
      "Examples:\n"
      "  peakprobe matmul --shape 1024,1024,1024\n"
      "  peakprobe matmul --shape 2048,2048,2048 --threads 2 --explain\n"
      "  peakprobe matmul --shape 1024,1024,1024 --dtype bf16 --cold-cache all+tlb\n"
      "  peakprobe matmul --shape 513,513,513 --autotune --json -\n"
      "  peakprobe matmul --shape 32,32,32 --batch 64 --threads 2   # many small products at once\n" +
      fmt::format("  peakprobe matmul --shape 1024,1024,1024 --isa {}   # the narrowest kernels, on any CPU that has them\n",
                  isa::host_target().isa_levels().front()));
  cmd->callback([&g, o] { g.action = [&g, o] { g.exit_code = run_matmul_command(g, *o); }; });
}

}  // namespace peakprobe::cli
