#include "cli/worker.hpp"

#include <sys/resource.h>

#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string>

#include "harness/child_process.hpp"
#include "gpu/gpu_worker.hpp"
#include "matmul/baseline_worker.hpp"

namespace peakprobe::cli {

bool is_worker_invocation(int argc, char** argv) {
  return argc >= 2 && argv[1] != nullptr && std::strcmp(argv[1], kWorkerArg) == 0;
}

int run_worker(int argc, char** argv) {
  if (argc != 5) {
    std::cerr << "peakprobe: " << kWorkerArg << " is started by peakprobe itself: " << kWorkerArg
              << " KIND PARENT_PID JOB\n";
    return 2;
  }
  const std::string kind = argv[2];
  char* end = nullptr;
  const long parent = std::strtol(argv[3], &end, 10);
  if (end == argv[3] || *end != '\0' || parent <= 1) {
    std::cerr << "peakprobe: " << kWorkerArg << ": PARENT_PID '" << argv[3] << "' is not a process id\n";
    return 2;
  }
  // A library that crashes here is reported by name; a core file of it in the user's folder is not wanted.
  const rlimit no_core{0, 0};
  ::setrlimit(RLIMIT_CORE, &no_core);
  if (kind == "baseline") return baseline_worker_main(argv[4], int(parent));
  if (kind == "gpu") return gpu::gpu_worker_main(argv[4], int(parent));
  std::cerr << "peakprobe: " << kWorkerArg << ": unknown kind '" << kind << "' (known: baseline, gpu)\n";
  return 2;
}

}  // namespace peakprobe::cli
