// The one Catch2 main for the whole suite; each other file here tests one source file.
// It also answers worker invocations (cli/worker.hpp), so tests of isolated baselines can start
// workers of this very binary, as peakprobe's own main does.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include "cli/worker.hpp"
#include "harness/child_process.hpp"

int main(int argc, char** argv) {
  if (peakprobe::cli::is_worker_invocation(argc, argv)) return peakprobe::cli::run_worker(argc, argv);
  peakprobe::enable_worker_dispatch();
  return Catch::Session().run(argc, argv);
}
