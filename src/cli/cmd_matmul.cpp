// `peakprobe matmul`: the bundled f32 GEMM, checked against a plain reference, timed as the
// benchmark spec asks (warm-up, repetitions, mean/min/max/std) and scored against the FMA ceiling
// measured on the same cores.
#include <chrono>
#include <cmath>
#include <iostream>
#include <random>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "cli/commands.hpp"
#include "cli/measure.hpp"
#include "cpu/cpu_info.hpp"
#include "harness/probe_runner.hpp"
#include "harness/stats.hpp"
#include "matmul/gemm.hpp"
#include "report/json_report.hpp"
#include "report/output_file.hpp"

namespace peakprobe::cli {
namespace {

bool parse_shape(const std::string& s, int64_t& m, int64_t& n, int64_t& k) {
  std::stringstream in(s);
  char c1 = 0, c2 = 0;
  in >> m >> c1 >> n >> c2 >> k;
  return in && c1 == ',' && c2 == ',' && in.peek() == EOF && m > 0 && n > 0 && k > 0 && m <= 65536 && n <= 65536 &&
         k <= 65536;
}

x86::HostIsa isa_of(const CpuInfo& cpu) {
  x86::HostIsa isa;
  isa.avx = cpu.has("avx");
  isa.avx2 = cpu.has("avx2") && cpu.has("fma");
  isa.avx512f = cpu.has("avx512_f");
  return isa;
}

}  // namespace

void add_matmul_command(CLI::App& app, GlobalOptions& g) {
  auto* cmd = app.add_subcommand("matmul", "The bundled f32 GEMM: checked, timed and scored on the roofline");
  auto shape = std::make_shared<std::string>();
  cmd->add_option("--shape", *shape, "M,N,K: C[MxN] = A[MxK] x B[KxN], row-major f32")->required();
  cmd->footer(
      "The result is checked against a plain double-accumulating reference (max_rel_error), then timed:\n"
      "2 warm-up runs, at least 5 repetitions and 0.5 s; mean, min, max and std in ms; GFLOP/s from the\n"
      "best run with FLOPs = 2MNK; efficiency against the FMA peak measured on the same --threads cores.\n"
      "Example: peakprobe matmul --shape 1024,1024,1024 --threads 1\n");
  cmd->callback([&g, shape] {
    g.action = [&g, shape] {
      int64_t m = 0, n = 0, k = 0;
      if (!parse_shape(*shape, m, n, k)) {
        spdlog::error("--shape '{}': expected M,N,K with whole numbers from 1 to 65536", *shape);
        return void(g.exit_code = kExitUsage);
      }
      CpuInfo cpu = detect_cpu_info();
      if (int rc = check_placement(g, cpu)) return void(g.exit_code = rc);
      std::string err;
      if (!check_output_paths(g.out, err)) {
        spdlog::error("{}", err);
        return void(g.exit_code = kExitOutput);
      }
      const double bytes = 4.0 * double(m * k + k * n + m * n);
      if (bytes > 0.8 * 1e12) {
        spdlog::error("matrices of {:.1f} GB do not fit", bytes / 1e9);
        return void(g.exit_code = kExitUsage);
      }
      Gemm gemm(cpu, isa_of(cpu));
      if (gemm.shape().mr == 0) {
        spdlog::error("the f32 GEMM needs AVX-512F or AVX2 with FMA, not available on this CPU");
        return void(g.exit_code = kExitMeasure);
      }
      std::mt19937 rng(42);
      std::uniform_real_distribution<float> d(-1, 1);
      std::vector<float> a(size_t(m * k)), b(size_t(k * n)), c(size_t(m * n)), ref(size_t(m * n));
      for (auto& x : a) x = d(rng);
      for (auto& x : b) x = d(rng);
      const GemmBlocking blocking = choose_blocking(cpu, gemm.shape(), m, n, k, g.threads);
      auto run = [&] { return gemm.run(m, n, k, a.data(), k, b.data(), n, c.data(), n, blocking); };
      if (auto ok = run(); !ok) {
        spdlog::error("{}", ok.error());
        return void(g.exit_code = kExitMeasure);
      }
      // Check every row of small problems, 64 spread rows of large ones (the reference is O(MNK)).
      const int64_t step = double(m) * double(n) * double(k) > 2e9 ? std::max<int64_t>(1, m / 64) : 1;
      double worst = 0, scale = 1e-30;
      for (int64_t i = 0; i < m; i += step) {
        reference_gemm(m, n, k, a.data(), b.data(), ref.data(), i, i + 1);
        for (int64_t j = 0; j < n; ++j) {
          worst = std::max(worst, double(std::fabs(c[size_t(i * n + j)] - ref[size_t(i * n + j)])));
          scale = std::max(scale, double(std::fabs(ref[size_t(i * n + j)])));
        }
      }
      const double max_rel_error = worst / scale;
      run();
      std::vector<double> ms;
      double total = 0;
      while ((ms.size() < 5 || total < 500) && ms.size() < 200) {
        const auto t0 = std::chrono::steady_clock::now();
        run();
        ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
        total += ms.back();
      }
      Stats st = summarize(ms);
      double mean = 0, var = 0;
      for (double x : ms) mean += x / double(ms.size());
      for (double x : ms) var += (x - mean) * (x - mean) / double(ms.size());
      const double flops = 2.0 * double(m) * double(n) * double(k);
      const double gflops = flops / (st.min * 1e-3) / 1e9;
      // The roof: the FMA this kernel uses, measured on the same number of pinned cores.
      ProbeOptions opt;
      opt.cpu = g.cpu;
      opt.threads = g.threads;
      auto runner = ProbeRunner::create(cpu, opt);
      std::optional<double> ceiling;
      ClockReading clock;
      std::string fma = gemm.shape().vec_bits == 512 ? "vfmadd231ps zmm, zmm, zmm" : "vfmadd231ps ymm, ymm, ymm";
      if (runner) {
        ProbeSpec s;
        s.text = fma;
        s.ops_per_instruction = gemm.shape().vec_bits / 32 * 2;
        s.dtype = "f32";
        ProbeResult p = (*runner)->run(s);
        ceiling = g.threads > 1 ? p.total_gflops : p.gflops;
        clock = p.clock;
      }
      const double ai = flops / bytes;
      nlohmann::json j = {
          {"shape", {m, n, k}}, {"dtype", "f32"}, {"threads", g.threads},
          {"kernel", fmt::format("matmul_{}_f32_{}x{}", gemm.shape().vec_bits == 512 ? "avx512" : "avx2",
                                 gemm.shape().mr, gemm.shape().nr)},
          {"config", {{"mc", blocking.mc}, {"kc", blocking.kc}, {"nc", blocking.nc}, {"mr", gemm.shape().mr},
                      {"nr", gemm.shape().nr}}},
          {"max_rel_error", max_rel_error}, {"rows_checked", (m + step - 1) / step},
          {"timing_ms", {{"mean", mean}, {"min", st.min}, {"max", st.max}, {"std", std::sqrt(var)},
                         {"repetitions", ms.size()}, {"warmup", 2}}},
          {"gflops", gflops}, {"arithmetic_intensity", ai},
          {"ceiling_gflops", json_number(ceiling)}, {"ceiling_source", fma},
          {"bound_by", fmt::format("compute f32 {}", gemm.shape().vec_bits)},
          {"efficiency", ceiling ? json_number(gflops / *ceiling) : nlohmann::json(nullptr)},
          {"clock", to_json(clock)}};
      if (!g.out.json.empty()) {
        nlohmann::json doc = {{"schema", kSchema}, {"host", to_json(cpu)}, {"matmul", j}};
        try {
          write_output_file(g.out.json, [&](std::ostream& o) { o << doc.dump(2) << "\n"; });
        } catch (const OutputError& e) {
          spdlog::error("{}", e.what());
          return void(g.exit_code = kExitOutput);
        }
      }
      if (!g.out.writes_stdout())
        std::cout << fmt::format(
            "matmul f32 {}x{}x{} on {} thread(s), kernel {}, blocks mc={} kc={} nc={}\n"
            "  max_rel_error {:.2e} ({} rows checked)\n"
            "  time ms: mean {:.3f} min {:.3f} max {:.3f} std {:.3f} ({} reps)\n"
            "  {:.1f} GFLOP/s, AI {:.1f} FLOP/byte, ceiling {} GFLOP/s ({}), efficiency {}\n",
            m, n, k, g.threads, j["kernel"].get<std::string>(), blocking.mc, blocking.kc, blocking.nc, max_rel_error,
            (m + step - 1) / step, mean, st.min, st.max, std::sqrt(var), ms.size(), gflops, ai,
            ceiling ? fmt::format("{:.1f}", *ceiling) : "-", fma,
            ceiling ? fmt::format("{:.1f}%", 100 * gflops / *ceiling) : "-");
      g.exit_code = max_rel_error < 1e-4 ? kExitOk : kExitResultErrors;
      if (max_rel_error >= 1e-4) spdlog::error("result differs from the reference: max_rel_error {:.2e}", max_rel_error);
    };
  });
}

}  // namespace peakprobe::cli
