// Runs code we do not trust (a BLAS library today; a GPU driver or runtime later) in a child
// process, so that its crash, its exit() or its hang costs one result and never the whole run.
// The child is this same executable started again with a private worker argument (fork/exec: a
// forked copy of a threaded process may inherit locks held by threads that do not exist in it).
// It answers on a pipe at file descriptor 3; its standard output goes to our standard error, so
// whatever a library prints can never corrupt `--json -`.
#pragma once
#include <string>
#include <vector>

#include "peakprobe/expected.hpp"

namespace peakprobe {

// File descriptor on which a worker writes its answer.
inline constexpr int kWorkerAnswerFd = 3;
// argv[1] of a worker invocation: `<exe> __worker KIND PARENT_PID JOB` (cli/worker.hpp dispatches).
inline constexpr const char* kWorkerArg = "__worker";

struct ChildOutcome {
  std::string answer;      // everything the child wrote to kWorkerAnswerFd
  bool exited = false;     // ended by exit(); exit_code is valid
  int exit_code = 0;
  int signal = 0;          // ended by this signal (0: not by a signal)
  bool timed_out = false;  // killed by us (SIGKILL) after time_limit_s
  double seconds = 0;      // wall time from start to reaping
  bool clean() const { return exited && exit_code == 0 && !timed_out; }
};

// Starts `executable` with `args` (args[0] is the program's argv[0]), standard input from /dev/null,
// waits at most `time_limit_s` seconds for it to close its answer pipe and exit, then kills it with
// SIGKILL. The child gets the default disposition of every signal and an empty signal mask, and the
// caller's CPU set. Errors only when the child cannot be started at all.
Expected<ChildOutcome> run_child(const std::string& executable, const std::vector<std::string>& args,
                                 double time_limit_s);

// "killed by SIGSEGV (Segmentation fault)", "exited with code 3", "killed after 60 s without finishing
// (time limit)", "finished" - for a row's reason.
std::string describe(const ChildOutcome& outcome);

// The executable run_child starts for workers: "/proc/self/exe" once a program's main() dispatches
// worker invocations (enable_worker_dispatch), else "" (then isolated work is refused, not run in
// process). peakprobe's main and the test runner's main both dispatch.
void enable_worker_dispatch();
std::string worker_executable();

// Called at the start of a worker: it dies with SIGKILL when its parent does (so a killed peakprobe
// leaves no BLAS running behind it), and exits at once if the parent is already gone.
void die_with_parent(int parent_pid);

// A worker's answer, written whole to kWorkerAnswerFd (a parent that reads a truncated document
// reports a typed error).
void write_worker_answer(const std::string& text);

}  // namespace peakprobe
