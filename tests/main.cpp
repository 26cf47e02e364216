// The one Catch2 main for the whole suite; each other file here tests one source file.
// It also answers worker invocations (cli/worker.hpp), so tests of isolated baselines can start
// workers of this very binary, as peakprobe's own main does.
//
// Under an instruction-set emulator (qemu-user: the AArch64 suite in CI) a hardware test cannot
// check any physical invariant: when every test case the command line selects is tagged [hw], the
// run reports itself skipped (tests/skip.hpp's marker) instead of running them.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include <iostream>

#include "cli/worker.hpp"
#include "cpu/cpu_info.hpp"
#include "harness/child_process.hpp"

namespace {

bool only_hardware_tests_selected(Catch::Session& session) {
  const auto& spec = session.config().testSpec();
  int selected = 0, hardware = 0;
  for (const auto& tc : Catch::getAllTestCasesSorted(session.config())) {
    if (!spec.matches(tc)) continue;
    ++selected;
    const auto& tags = tc.getTestCaseInfo().tags;
    if (std::find(tags.begin(), tags.end(), "hw") != tags.end()) ++hardware;
  }
  return selected > 0 && selected == hardware;
}

}  // namespace

int main(int argc, char** argv) {
  if (peakprobe::cli::is_worker_invocation(argc, argv)) return peakprobe::cli::run_worker(argc, argv);
  peakprobe::enable_worker_dispatch();
  Catch::Session session;
  if (int rc = session.applyCommandLine(argc, argv)) return rc;
  if (!session.config().listTestNamesOnly() && session.config().hasTestFilters() &&
      only_hardware_tests_selected(session)) {
    const peakprobe::CpuInfo cpu = peakprobe::detect_cpu_info();
    if (!cpu.emulator.empty()) {
      std::cout << "PEAKPROBE_SKIP: a hardware test under emulation (" << cpu.emulator << ")\n";
      return 0;
    }
  }
  return session.run();
}
