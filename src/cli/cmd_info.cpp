#include <unistd.h>

#include <iostream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "cli/commands.hpp"
#include "cli/measure.hpp"
#include "cpu/cpu_info.hpp"
#include "harness/core_availability.hpp"
#include "harness/probe_runner.hpp"
#include "report/json_report.hpp"
#include "report/output_file.hpp"

namespace peakprobe::cli {
namespace {

std::string bytes(uint64_t b) {
  if (b >= (1ull << 20) && b % (1ull << 20) == 0) return fmt::format("{} MiB", b >> 20);
  if (b >= 1024 && b % 1024 == 0) return fmt::format("{} KiB", b >> 10);
  return fmt::format("{} B", b);
}

// How long `info` watches the probes' core for interruptions: some fifty periods of the 1 ms stops a
// KVM host was seen to make, in a command that otherwise takes a quarter second.
constexpr double kInfoScanMs = 50;

void print_info(std::ostream& out, const CpuInfo& c, const ClockReading& clock, int cpu, const CoreAvailability& a) {
  out << fmt::format("CPU        {} ({})\n", c.brand, c.vendor);
  out << fmt::format("           family {:#x} model {:#x} stepping {}{}\n", c.family, c.model, c.stepping,
                     c.hypervisor ? ", under a hypervisor" : "");
  if (!c.emulator.empty())
    out << fmt::format("           EMULATED: {} (code runs, timings mean nothing)\n", c.emulator);
  out << fmt::format("Topology   {} package(s), {} core(s), {} logical CPU(s), {} thread(s) per core\n",
                     c.packages, c.physical_cores, c.logical_cpus, c.smt_per_core);
  // Hybrid CPUs: the quiet-core ranking compares a core's rates with those of its own kind only.
  if (const std::string kinds = core_kinds_text(c.cpu_kind); !kinds.empty())
    out << fmt::format("Core kinds {} (hwloc; kind 0 the least performant where hwloc can rank them)\n", kinds);
  for (const auto& l : c.caches)
    out << fmt::format("Cache      L{} {:<11} {:>8} x{:<3} line {} B, {}-way, shared by {} CPU(s)\n", l.level,
                       l.type, bytes(l.size_bytes), l.instances, l.line_bytes,
                       l.associativity < 0 ? std::string("fully") : std::to_string(l.associativity),
                       l.shared_by_cpus);
  if (!c.isa_state_label.empty()) out << fmt::format("{:<10} {}\n", c.isa_state_label, c.isa_state_text);
  out << fmt::format("TSC        {:.3f} GHz{}\n", c.tsc_hz / 1e9, c.tsc_invariant ? " (invariant)" : "");
  out << fmt::format("Core clock {:.3f} GHz measured on CPU {} ({})\n", clock.ghz, cpu, clock.source);
  if (a.scanned_ms > 0) {
    out << fmt::format("Available  {:.1f}% of the wall time on CPU {} ({} interruption{} in {:.0f} ms", 100 * a.share,
                       a.cpu >= 0 ? a.cpu : cpu, a.interruptions, a.interruptions == 1 ? "" : "s", a.scanned_ms);
    if (a.interruptions > 0)
      out << fmt::format(", median {:.1f} us, longest {:.1f} us", a.median_interruption_us, a.longest_interruption_us);
    out << ")\n";
  }
  std::string line = "Features  ";
  for (const auto& f : c.features) {
    if (line.size() + f.size() + 1 > 100) {
      out << line << "\n";
      line = "          ";
    }
    line += " " + f;
  }
  out << line << "\n";
  if (!c.os_disabled.empty()) out << fmt::format("OS-disabled {}\n", fmt::join(c.os_disabled, " "));
}

}  // namespace

void add_info_command(CLI::App& app, GlobalOptions& g) {
  auto* cmd = app.add_subcommand("info", "Describe this CPU: identity, ISA features, caches, TSC and core clock");
  // Parsing only records the action; main() runs it once logging is set up.
  cmd->callback([&g] {
    g.action = [&g] {
    if (int rc = refuse_outputs(g.out, "info", true, false, false)) return void(g.exit_code = rc);
    if (int rc = check_outputs(g.out)) return void(g.exit_code = rc);
    CpuInfo cpu = detect_cpu_info();
    if (int rc = check_placement(g, cpu)) {
      g.exit_code = rc;
      return;
    }
    ProbeOptions opt;
    opt.cpu = g.cpu;
    auto runner = ProbeRunner::create(cpu, opt);
    if (!runner) {
      spdlog::error("{}", runner.error());
      g.exit_code = kExitMeasure;
      return;
    }
    const ClockReading& clock = (*runner)->start_clock();
    // The share of wall time the probes' core gives a thread: what a timing of milliseconds loses
    // there to interrupts and to a host (under an emulator the timestamp says nothing of the core).
    CoreAvailability available;
    if (cpu.emulator.empty())
      if (auto scanned = scan_cores({(*runner)->cpu()}, kInfoScanMs, cpu.tsc_hz); !scanned.empty()) available = scanned.front();
    if (!g.out.json.empty()) {
      nlohmann::json doc = {{"schema", kSchema}, {"host", to_json(cpu)}, {"clock", to_json(clock)},
                            {"cpu", (*runner)->cpu()},
                            {"core_availability", to_json(available)}};
      try {
        write_output_file(g.out.json, [&](std::ostream& o) { o << json_text(doc) << "\n"; });
      } catch (const OutputError& e) {
        spdlog::error("{}", e.what());
        g.exit_code = kExitOutput;
        return;
      }
      if (g.out.writes_stdout()) return;
    }
    print_info(std::cout, cpu, clock, (*runner)->cpu(), available);
    };
  });
}

}  // namespace peakprobe::cli
