// Shared driver of `run` and `inst`: detect the CPU, check options, measure specs, report.
#pragma once
#include <vector>

#include "cli/commands.hpp"
#include "peakprobe/probe_spec.hpp"

namespace peakprobe::cli {

int measure_and_report(GlobalOptions& g, const std::vector<ProbeSpec>& specs);
// Validates --cpu and --threads against this machine; 0 when fine, else an exit code after logging.
int check_placement(const GlobalOptions& g, const CpuInfo& cpu);

}  // namespace peakprobe::cli
