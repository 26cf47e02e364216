#include "cli/measure.hpp"

#include <spdlog/spdlog.h>

#include "cpu/cpu_info.hpp"
#include "harness/pin.hpp"
#include "harness/probe_runner.hpp"
#include "harness/quiet_core.hpp"

namespace peakprobe::cli {

int check_placement(const GlobalOptions& g, const CpuInfo& cpu) {
  if (g.cpu < -1) {  // -1 is the default (not given); the option itself refuses negative numbers
    spdlog::error("--cpu {}: a logical CPU number is 0 or more", g.cpu);
    return kExitUsage;
  }
  if (g.cpu >= 0 && !cpu_allowed(g.cpu)) {
    spdlog::error("--cpu {}: this process may not run there (allowed CPUs: {} logical)", g.cpu, cpu.logical_cpus);
    return kExitUsage;
  }
  if (g.threads < 1 || g.threads > int(cpu.core_order.size())) {
    spdlog::error("--threads {}: must be between 1 and {} (the CPUs this process may use)", g.threads,
                  cpu.core_order.size());
    return kExitUsage;
  }
  return 0;
}

void prefer_quiet_core(const GlobalOptions& g, CpuInfo& cpu) {
  if (g.cpu >= 0) {  // the user chose: every thread started from the core order starts there
    cpu.core_order = chosen_cpu_first(cpu.core_order, cpu.cpu_core, g.cpu);
    return;
  }
  const int before = cpu.core_order.empty() ? -1 : cpu.core_order.front();
  const std::string line = order_cores_quietest_first(cpu);
  if (line.empty()) return;
  if (cpu.core_order.front() != before)
    spdlog::info("{}", line);
  else
    spdlog::debug("{}", line);
}

int prepare_measuring(const GlobalOptions& g, CpuInfo& cpu) {
  if (int rc = check_outputs(g.out)) return rc;
  cpu = detect_cpu_info();
  if (int rc = check_placement(g, cpu)) return rc;
  prefer_quiet_core(g, cpu);
  return 0;
}

ProbeOptions probe_options(const GlobalOptions& g, int threads) {
  ProbeOptions opt;
  opt.cpu = g.cpu;
  opt.threads = threads;
  if (threads > 1) opt.repro_extra = " --threads " + std::to_string(threads);
  return opt;
}

std::unique_ptr<ProbeRunner> start_runner(const GlobalOptions& g, const CpuInfo& cpu, RunDocument& doc) {
  auto runner = ProbeRunner::create(cpu, probe_options(g, g.threads));
  if (!runner) {
    spdlog::error("{}", runner.error());
    return nullptr;
  }
  doc = new_document(cpu, g.argc, g.argv);
  doc.clock = (*runner)->start_clock();
  return std::move(*runner);
}

int measure_and_report(GlobalOptions& g, const std::vector<ProbeSpec>& specs,
                       const std::function<void(const CpuInfo&, const RunDocument&)>& after) {
  CpuInfo cpu;
  if (int rc = prepare_measuring(g, cpu)) return rc;
  RunDocument doc;
  auto runner = start_runner(g, cpu, doc);
  if (!runner) return kExitMeasure;
  spdlog::info("core clock {:.3f} GHz on CPU {} ({}); measuring {} form{}", doc.clock.ghz, runner->cpu(),
               doc.clock.source, specs.size(), specs.size() == 1 ? "" : "s");
  doc.results = runner->run_batch(specs, [&](size_t i, const ProbeSpec& s) {
    progress(g.out, i + 1, specs.size(), s.text);
  });
  progress_done(g.out);
  const int rc = emit_outputs(doc, g.out);
  if (after) after(cpu, doc);
  return rc;
}

int measure_dual_issue(GlobalOptions& g, const std::function<void(ProbeRunner&, RunDocument&, ProbeRunner* team)>& body,
                       bool with_team) {
  CpuInfo cpu;
  if (int rc = prepare_measuring(g, cpu)) return rc;
  if (g.threads > 1 && !with_team)
    spdlog::warn("--threads applies to run, inst and flopmix; dual-issue probes use one core");
  std::unique_ptr<ProbeRunner> team;
  if (with_team && g.threads > 1) {
    auto t = ProbeRunner::create(cpu, probe_options(g, g.threads));
    if (!t) {
      spdlog::error("{}", t.error());
      return kExitMeasure;
    }
    team = std::move(*t);
  }
  ProbeOptions opt;
  opt.cpu = g.cpu;
  auto runner = ProbeRunner::create(cpu, opt);
  if (!runner) {
    spdlog::error("{}", runner.error());
    return kExitMeasure;
  }
  RunDocument doc = new_document(cpu, g.argc, g.argv);
  doc.clock = (*runner)->start_clock();
  body(**runner, doc, team.get());
  progress_done(g.out);
  return emit_outputs(doc, g.out);
}

}  // namespace peakprobe::cli
