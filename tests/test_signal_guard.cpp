// Tests for src/harness/signal_guard.cpp: faults become errors, and the alternate signal stack the
// guard installs is handed back when the thread ends.
#include <catch2/catch.hpp>

#include <sys/mman.h>

#include <atomic>
#include <csignal>
#include <stdexcept>
#include <string>
#include <thread>

#include "harness/signal_guard.hpp"

using namespace peakprobe;

TEST_CASE("signal guard: a fault in the body is an error naming the signal", "[signal_guard]") {
  std::string error;
  CHECK(run_guarded([] {}, error));
  CHECK(error.empty());
  // On threads of their own (Catch's assertions are checked back on this one).
  bool ran = true;
  std::thread([&] { ran = run_guarded([] { std::raise(SIGSEGV); }, error); }).join();
  CHECK_FALSE(ran);
  CHECK(error.find("SIGSEGV") != std::string::npos);
  std::thread([&] { ran = run_guarded([] { std::raise(SIGFPE); }, error); }).join();
  CHECK_FALSE(ran);
  CHECK(error.find("SIGFPE") != std::string::npos);
}

// Found in review: a guard inside another cleared the thread's guard when it returned, and a fault
// later in the outer body killed the process (a clock reading, which guards its own calls, between
// the guarded runs of a stream).
TEST_CASE("signal guard: guards nest, the outer one catching what follows the inner", "[signal_guard]") {
  std::string outer_error, inner_error;
  bool outer = true, inner = false;
  std::thread([&] {
    outer = run_guarded(
        [&] {
          inner = run_guarded([] {}, inner_error);
          std::raise(SIGSEGV);
        },
        outer_error);
  }).join();
  CHECK(inner);
  CHECK_FALSE(outer);
  CHECK(outer_error.find("SIGSEGV") != std::string::npos);
  // A fault in the inner body is the inner guard's; the outer body goes on.
  bool after = false;
  outer_error.clear();
  std::thread([&] {
    outer = run_guarded(
        [&] {
          inner = run_guarded([] { std::raise(SIGFPE); }, inner_error);
          after = true;
        },
        outer_error);
  }).join();
  CHECK(outer);
  CHECK_FALSE(inner);
  CHECK(after);
  CHECK(inner_error.find("SIGFPE") != std::string::npos);
  CHECK(outer_error.empty());
}

// Found in review: a body that threw left the thread's guard pointing at the returned guard's jump
// buffer, and a later fault under an outer guard jumped into that dead frame instead of the outer
// guard's.
TEST_CASE("signal guard: a body that throws hands the thread back to the outer guard", "[signal_guard]") {
  std::string outer_error, inner_error;
  bool outer = true, caught = false;
  std::thread([&] {
    outer = run_guarded(
        [&] {
          try {
            run_guarded([] { throw std::runtime_error("thrown by the body"); }, inner_error);
          } catch (const std::runtime_error&) {
            caught = true;
          }
          std::raise(SIGSEGV);
        },
        outer_error);
  }).join();
  CHECK(caught);
  CHECK_FALSE(outer);
  CHECK(outer_error.find("SIGSEGV") != std::string::npos);
}

namespace {

// Constructed before the guard's per-thread stack, so destroyed after it: it sees what the thread's
// signal stack is once the guard has cleaned up.
struct AtThreadEnd {
  void* expected = nullptr;
  std::atomic<int>* verdict = nullptr;  // 1: the thread's own stack is back, 0: it is not
  ~AtThreadEnd() {
    stack_t now{};
    sigaltstack(nullptr, &now);
    if (verdict) *verdict = (now.ss_flags & SS_DISABLE) == 0 && now.ss_sp == expected ? 1 : 0;
  }
};

}  // namespace

// Found by the sanitizer run: the guard left a freed buffer installed as the thread's signal stack
// at thread exit, and AddressSanitizer, unmapping what it took for its own stack, aborted the run.
TEST_CASE("signal guard: the thread's previous signal stack is restored when the thread ends", "[signal_guard]") {
  constexpr size_t kSize = 64 * 1024;
  void* own = mmap(nullptr, kSize, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  REQUIRE(own != MAP_FAILED);
  std::atomic<int> verdict{-1};
  std::atomic<bool> replaced_while_running{false}, own_installed{false};
  std::thread([&] {
    thread_local AtThreadEnd check;
    check.expected = own;
    check.verdict = &verdict;
    stack_t ss{};
    ss.ss_sp = own;
    ss.ss_size = kSize;
    own_installed = sigaltstack(&ss, nullptr) == 0;
    std::string error;
    run_guarded(
        [&] {
          stack_t now{};
          sigaltstack(nullptr, &now);
          replaced_while_running = now.ss_sp != own;  // the guard runs faults on a stack of its own
        },
        error);
  }).join();
  REQUIRE(own_installed);
  CHECK(replaced_while_running);
  CHECK(verdict == 1);
  munmap(own, kSize);
}
