// Another program on a CPU, as a user's would be: a child process pinned there that spins until the
// object goes (killed and reaped whatever the test does), and never outlives the test process.
#pragma once
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <thread>

namespace peakprobe::test {

class BusyLoopChild {
 public:
  // Started on `cpu`; running there once the constructor returns (20 ms after the fork).
  explicit BusyLoopChild(int cpu) {
    pid_ = ::fork();
    if (pid_ == 0) {
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);
      cpu_set_t one;
      CPU_ZERO(&one);
      CPU_SET(cpu, &one);
      ::sched_setaffinity(0, sizeof one, &one);
      volatile uint64_t n = 0;
      for (;;) n = n + 1;
    }
    if (pid_ > 0) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ~BusyLoopChild() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
  }
  BusyLoopChild(const BusyLoopChild&) = delete;
  BusyLoopChild& operator=(const BusyLoopChild&) = delete;
  bool started() const { return pid_ > 0; }

 private:
  pid_t pid_ = -1;
};

}  // namespace peakprobe::test
