// src/cli/worker.cpp: the private `__worker` subcommand that harness/child_process.cpp starts to run
// untrusted code away from the measuring process. Not a user command: a wrong invocation is refused
// with exit 2 before anything runs, and --help does not list it.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "cli/worker.hpp"
#include "cli_run.hpp"
#include "harness/child_process.hpp"

namespace {

using peakprobe::test::check_refused;
using peakprobe::test::Refusal;
using peakprobe::test::Run;
using peakprobe::test::run_peakprobe;

bool invoked(std::vector<std::string> args) {
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  return peakprobe::cli::is_worker_invocation(int(args.size()), argv.data());
}

}  // namespace

TEST_CASE("worker: only the worker word as the first argument makes a worker invocation", "[worker]") {
  const std::string word = peakprobe::kWorkerArg;
  CHECK(invoked({"peakprobe", word, "baseline", "123", "{}"}));
  CHECK(invoked({"peakprobe", word}));  // refused later, by run_worker
  CHECK_FALSE(invoked({"peakprobe"}));
  CHECK_FALSE(invoked({"peakprobe", "run", word}));
  CHECK_FALSE(invoked({"peakprobe", word + "x"}));
}

TEST_CASE("worker: a wrong invocation exits 2 naming what is wrong, and --help does not list the worker", "[worker]") {
  const std::string worker = std::string(peakprobe::kWorkerArg) + " ";
  const std::vector<Refusal> cases = {
      {worker, worker + "KIND PARENT_PID JOB"},
      {worker + "baseline 1234", worker + "KIND PARENT_PID JOB"},
      {worker + "baseline 1234 '{}' extra", worker + "KIND PARENT_PID JOB"},
      {worker + "baseline 12abc '{}'", "PARENT_PID '12abc' is not a process id"},
      {worker + "baseline '' '{}'", "PARENT_PID '' is not a process id"},
      // 1 is init, never a peakprobe that started a worker; 0 and below are no process.
      {worker + "zz-kind 1 '{}'", "PARENT_PID '1' is not a process id"},
      {worker + "zz-kind 0 '{}'", "PARENT_PID '0' is not a process id"},
      {worker + "zz-kind 1234 '{}'", "unknown kind 'zz-kind' (known: baseline, gpu)"},
  };
  check_refused(cases);
  Run help = run_peakprobe("--help");
  CHECK(help.rc == 0);
  CHECK(help.out.find(peakprobe::kWorkerArg) == std::string::npos);
}
