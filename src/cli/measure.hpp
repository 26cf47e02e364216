// Shared driver of `run` and `inst`: detect the CPU, check options, measure specs, report.
#pragma once
#include <functional>
#include <memory>
#include <vector>

#include "cli/commands.hpp"
#include "peakprobe/probe_spec.hpp"

namespace peakprobe {
class ProbeRunner;
struct ProbeOptions;
}
namespace peakprobe::cli {

// `after`, when given, runs once the outputs are written, with the CPU measured on and the document.
int measure_and_report(GlobalOptions& g, const std::vector<ProbeSpec>& specs,
                       const std::function<void(const CpuInfo&, const RunDocument&)>& after = {});
// A runner on --threads cores of `cpu` (after prepare_measuring), and `doc` started with its first
// calibration; nullptr after logging why when measuring cannot start (then exit kExitMeasure).
std::unique_ptr<ProbeRunner> start_runner(const GlobalOptions& g, const CpuInfo& cpu, RunDocument& doc);
// Shared driver of the dual-issue commands: checks outputs and placement, starts a runner, lets
// `body` fill the document, writes the outputs.
// Dual-issue probes run on one core. `team`, when asked for (flopmix with --threads above 1), is a
// second runner over --threads cores for the all-cores figures; null otherwise.
int measure_dual_issue(GlobalOptions& g, const std::function<void(ProbeRunner&, RunDocument&, ProbeRunner* team)>& body,
                       bool with_team = false);
// Measures what the ceiling table needs into `doc` (results, flop_mixes, bandwidth, ceilings):
// arithmetic catalog rows (or the whole catalog) at one and all cores, memory per level. 0 or an exit code.
// `last_level_end`, when given, gets where one core's last cache level ended as measured when that was
// sooner than reported (else it is left alone), for the memory curves' top (dram_working_set).
int measure_roofline(GlobalOptions& g, const CpuInfo& cpu, RunDocument& doc, bool quick, bool whole_catalog,
                     uint64_t* last_level_end = nullptr);
// What every measuring command does first: outputs writable, CPU described, --cpu/--threads
// valid. 0 when fine (cpu filled), else an exit code after logging.
int prepare_measuring(const GlobalOptions& g, CpuInfo& cpu);
// Probe options on `threads` cores from --cpu, the repro lines saying --threads when above 1.
ProbeOptions probe_options(const GlobalOptions& g, int threads);
// Without --cpu: puts the quietest core first in cpu.core_order (harness/quiet_core.hpp), so every
// runner started from `cpu` measures there; says so in the log when that is not the usual first core.
// With --cpu N: puts N first (chosen_cpu_first), so the matmul's caller and helpers, the memory
// workers and multi-thread probes start there too, not only the single-thread probe runner.
void prefer_quiet_core(const GlobalOptions& g, CpuInfo& cpu);
// Validates --cpu and --threads against this machine; 0 when fine, else an exit code after logging.
int check_placement(const GlobalOptions& g, const CpuInfo& cpu);

}  // namespace peakprobe::cli
