// The private worker subcommand: `<exe> __worker KIND PARENT_PID JOB`, started by
// harness/child_process.cpp to run untrusted code (BLAS baselines) away from the measuring process.
// Not a user command: it is not in --help, and it answers on descriptor 3, which a shell rarely has.
#pragma once

namespace peakprobe::cli {

// argv[1] is kWorkerArg.
bool is_worker_invocation(int argc, char** argv);
// Runs the worker and returns its exit code (most kinds leave with _exit and never return).
// Also called by the test runner's main, so tests can start workers of their own binary.
int run_worker(int argc, char** argv);

}  // namespace peakprobe::cli
