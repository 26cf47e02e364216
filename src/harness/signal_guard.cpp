#include "harness/signal_guard.hpp"

#include <csetjmp>
#include <csignal>
#include <cstring>
#include <algorithm>
#include <mutex>
#include <vector>

namespace peakprobe {
namespace {

thread_local sigjmp_buf* t_jump = nullptr;
thread_local volatile sig_atomic_t t_signal = 0;

void on_fault(int sig) {
  if (t_jump) {
    t_signal = sig;
    siglongjmp(*t_jump, 1);
  }
  // A fault outside generated code is a real bug: restore the default action and let it crash.
  std::signal(sig, SIG_DFL);
  std::raise(sig);
}

// The handler runs on a stack of its own: generated code may have moved or exhausted the thread's
// stack pointer when it faults. One per thread, set up on the thread's first guarded run. When the
// thread ends, the stack the thread had before is put back before the memory is freed: otherwise
// the thread would end with freed memory as its signal stack, and whoever had set the previous one
// (a sanitizer runtime sets one for every thread and unmaps it at thread exit) would get ours.
class AltStack {
 public:
  void install() {
    if (installed_) return;
    memory_.resize(size_t(std::max<long>(SIGSTKSZ, 64 * 1024)));
    stack_t ss{};
    ss.ss_sp = memory_.data();
    ss.ss_size = memory_.size();
    ss.ss_flags = 0;
    installed_ = sigaltstack(&ss, &previous_) == 0;
  }
  ~AltStack() {
    if (!installed_) return;
    previous_.ss_flags &= SS_DISABLE;  // SS_ONSTACK is reported, never accepted
    sigaltstack(&previous_, nullptr);
  }

 private:
  std::vector<char> memory_;
  stack_t previous_{};
  bool installed_ = false;
};

void install_alt_stack() {
  thread_local AltStack stack;
  stack.install();
}

void install_handlers() {
  static std::once_flag once;
  std::call_once(once, [] {
    struct sigaction sa;
    std::memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_fault;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_NODEFER | SA_ONSTACK;
    for (int s : {SIGILL, SIGSEGV, SIGBUS, SIGFPE, SIGTRAP}) sigaction(s, &sa, nullptr);
  });
  install_alt_stack();
}

constexpr const char* kIllegalInstruction = "illegal instruction (SIGILL): the CPU or OS does not support this form";

const char* describe(int sig) {
  switch (sig) {
    case SIGILL: return kIllegalInstruction;
    case SIGSEGV: return "memory fault (SIGSEGV) in generated code";
    case SIGBUS: return "bus error (SIGBUS) in generated code";
    case SIGFPE: return "arithmetic fault (SIGFPE) in generated code";
    case SIGTRAP: return "trap (SIGTRAP) in generated code";
    default: return "signal in generated code";
  }
}

}  // namespace

bool is_illegal_instruction(const std::string& error) { return error.find(kIllegalInstruction) != std::string::npos; }

bool run_guarded(const std::function<void()>& body, std::string& error) {
  install_handlers();
  // A guard inside another hands the thread back to the outer one when it ends: clearing it would
  // leave the rest of the outer body unguarded (a clock reading, which guards its own calls, inside
  // a guarded body once did).
  // The hand-back is an object made before the jump point, so that it runs however the body ends:
  // returning, faulting (back here through siglongjmp, in this frame) or throwing. A body that
  // threw once left the thread pointing at this frame's dead jump buffer, and the next fault
  // anywhere on the thread jumped into it.
  struct HandBack {
    sigjmp_buf* outer;
    ~HandBack() { t_jump = outer; }
  } const hand_back{t_jump};
  sigjmp_buf jump;
  if (sigsetjmp(jump, 1) != 0) {
    error = describe(t_signal);
    return false;
  }
  t_jump = &jump;
  body();
  return true;
}

}  // namespace peakprobe
