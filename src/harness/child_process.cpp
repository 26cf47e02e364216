#include "harness/child_process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>

#include <fmt/format.h>

extern char** environ;

namespace peakprobe {
namespace {

std::atomic<bool> dispatch_enabled{false};

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// Closes a descriptor when it goes out of scope.
struct Fd {
  int fd = -1;
  ~Fd() { reset(); }
  void reset() {
    if (fd >= 0) ::close(fd);
    fd = -1;
  }
};

// Owns what posix_spawn needs and frees it on every path.
struct SpawnSetup {
  posix_spawn_file_actions_t actions;
  posix_spawnattr_t attr;
  bool actions_ok = false, attr_ok = false;
  ~SpawnSetup() {
    if (actions_ok) posix_spawn_file_actions_destroy(&actions);
    if (attr_ok) posix_spawnattr_destroy(&attr);
  }
};

std::string errno_text(const char* what, int err) { return fmt::format("{}: {}", what, std::strerror(err)); }

// Reaps `pid`, waiting at most until `deadline`; false when it is still running then.
bool reap(pid_t pid, int& status, Clock::time_point deadline) {
  for (;;) {
    const pid_t r = ::waitpid(pid, &status, WNOHANG);
    if (r == pid) return true;
    if (r < 0 && errno != EINTR) return true;  // not our child any more: nothing to wait for
    if (Clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
}

// The ELF machine of an executable (e_machine), 0 when it is not an ELF file.
unsigned elf_machine(const std::string& path) {
  unsigned char h[20] = {};
  FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) return 0;
  const size_t n = std::fread(h, 1, sizeof(h), f);
  std::fclose(f);
  if (n < sizeof(h) || std::memcmp(h, "\x7f" "ELF", 4) != 0) return 0;
  return unsigned(h[18]) | unsigned(h[19]) << 8;  // little-endian
}

// Whether `path` is built for this program's own machine, which a user-mode emulator must run (the
// kernel runs only the build machine's programs, /bin/sh among them). The emulator shows this
// program as /proc/self/exe.
bool is_own_architecture(const std::string& path) {
  const unsigned own = elf_machine("/proc/self/exe");
  return own != 0 && elf_machine(path) == own;
}

}  // namespace

Expected<ChildOutcome> run_child(const std::string& executable, const std::vector<std::string>& args,
                                 double time_limit_s) {
  if (executable.empty()) return make_error("no worker executable to start");
  // Said here, not left to posix_spawn: under a user-mode emulator a failed exec in the child is not
  // always reported back to the parent.
  if (::access(executable.c_str(), X_OK) != 0) return make_error(errno_text(fmt::format("cannot start {}", executable).c_str(), errno));
  if (args.empty()) return make_error("a child needs at least argv[0]");
  if (!(time_limit_s > 0)) return make_error(fmt::format("time limit {} s: expected more than 0", time_limit_s));

  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_CLOEXEC) != 0) return make_error(errno_text("pipe", errno));
  Fd read_end{pipe_fds[0]}, write_end{pipe_fds[1]};
  // The answer descriptor is dup2'ed onto kWorkerAnswerFd in the child; a source that already is
  // that number would keep its close-on-exec flag, so move it out of the way first.
  if (write_end.fd <= kWorkerAnswerFd) {
    const int moved = ::fcntl(write_end.fd, F_DUPFD_CLOEXEC, 10);
    if (moved < 0) return make_error(errno_text("fcntl", errno));
    write_end.reset();
    write_end.fd = moved;
  }

  SpawnSetup s;
  if (posix_spawn_file_actions_init(&s.actions) != 0) return make_error("posix_spawn_file_actions_init failed");
  s.actions_ok = true;
  if (posix_spawnattr_init(&s.attr) != 0) return make_error("posix_spawnattr_init failed");
  s.attr_ok = true;
  posix_spawn_file_actions_addopen(&s.actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&s.actions, 2, 1);  // the library's prints go to our stderr
  posix_spawn_file_actions_adddup2(&s.actions, write_end.fd, kWorkerAnswerFd);
  // Every signal at its default (our handlers for faults or for cleaning up temporary files are not
  // the child's business) and nothing blocked.
  sigset_t all, none;
  sigfillset(&all);
  sigemptyset(&none);
  posix_spawnattr_setsigdefault(&s.attr, &all);
  posix_spawnattr_setsigmask(&s.attr, &none);
  posix_spawnattr_setflags(&s.attr, POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);

  // Under a user-mode emulator (the AArch64 suite under qemu in CI) the kernel cannot start the
  // program's own binary: PEAKPROBE_CHILD_EMULATOR names the emulator that runs it, and
  // /proc/self/exe, which the emulator shows as the program, is read to the program's real path.
  std::string program = executable;
  std::vector<std::string> full_args = args;
  const char* emulator = std::getenv("PEAKPROBE_CHILD_EMULATOR");
  if (emulator && *emulator && (executable == "/proc/self/exe" || is_own_architecture(executable))) {
    std::string target = executable;
    if (executable == "/proc/self/exe") {
      char buf[4096];
      const ssize_t n = ::readlink("/proc/self/exe", buf, sizeof(buf) - 1);
      if (n > 0) target.assign(buf, size_t(n));
    }
    full_args.insert(full_args.begin(), emulator);
    full_args[1] = target;
    program = emulator;
  }
  std::vector<char*> argv;
  for (const auto& a : full_args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);

  const auto t0 = Clock::now();
  const auto deadline = t0 + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(time_limit_s));
  pid_t pid = 0;
  if (int err = posix_spawn(&pid, program.c_str(), &s.actions, &s.attr, argv.data(), environ); err != 0)
    return make_error(errno_text(fmt::format("cannot start {}", executable).c_str(), err));
  write_end.reset();  // the child's copy is the only writer now: EOF when it exits or closes it

  ChildOutcome out;
  char buffer[4096];
  bool open = true;
  while (open) {
    const double left_ms = std::chrono::duration<double, std::milli>(deadline - Clock::now()).count();
    if (left_ms <= 0) break;
    pollfd p{read_end.fd, POLLIN, 0};
    const int ready = ::poll(&p, 1, int(std::min(left_ms + 1, 1000.0)));
    if (ready < 0) {
      if (errno == EINTR) continue;
      break;
    }
    if (ready == 0) continue;
    const ssize_t n = ::read(read_end.fd, buffer, sizeof buffer);
    if (n > 0) {
      // A worker answers a few kilobytes; more is a runaway child, not an answer.
      if (out.answer.size() < (1u << 20)) out.answer.append(buffer, size_t(n));
    } else if (n == 0 || errno != EINTR) {
      open = false;
    }
  }
  int status = 0;
  if (!reap(pid, status, deadline)) {
    ::kill(pid, SIGKILL);
    out.timed_out = true;
    ::waitpid(pid, &status, 0);
  }
  out.seconds = seconds_since(t0);
  if (WIFEXITED(status)) {
    out.exited = true;
    out.exit_code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    out.signal = WTERMSIG(status);
  }
  if (out.timed_out) out.exited = false;
  return out;
}

std::string describe(const ChildOutcome& o) {
  if (o.timed_out) return fmt::format("killed after {:.0f} s without finishing (time limit)", o.seconds);
  if (o.signal != 0) {
    const char* abbrev = sigabbrev_np(o.signal);
    const char* text = strsignal(o.signal);
    return fmt::format("killed by SIG{} ({})", abbrev ? abbrev : std::to_string(o.signal).c_str(),
                       text ? text : "unknown signal");
  }
  if (o.exited && o.exit_code != 0) return fmt::format("exited with code {}", o.exit_code);
  return "finished";
}

void enable_worker_dispatch() { dispatch_enabled = true; }

std::string worker_executable() { return dispatch_enabled ? "/proc/self/exe" : ""; }

void die_with_parent(int parent_pid) {
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != parent_pid) ::_exit(1);  // the parent died before the line above took effect
}

void write_worker_answer(const std::string& text) {
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(kWorkerAnswerFd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    done += size_t(n);
  }
}

}  // namespace peakprobe
