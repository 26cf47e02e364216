// Child processes for untrusted code: the answer pipe, the way a child ended (exit code, signal
// named), the time limit, and that a child's standard output never reaches ours.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <fstream>

#include <sys/stat.h>

#include "harness/child_process.hpp"
#include "scratch_dir.hpp"

using namespace peakprobe;

namespace {

Expected<ChildOutcome> shell(const std::string& script, double limit = 10) {
  return run_child("/bin/sh", {"sh", "-c", script}, limit);
}

}  // namespace

TEST_CASE("child process: the answer comes on descriptor 3, standard output stays out of it", "[child_process]") {
  auto o = shell("echo printed; printf 'the answer' >&3");
  REQUIRE(o.ok());
  CHECK(o->answer == "the answer");
  CHECK(o->clean());
  CHECK(o->exited);
  CHECK(o->exit_code == 0);
  CHECK(o->signal == 0);
  CHECK(describe(*o) == "finished");
}

TEST_CASE("child process: an exit code and a killing signal are told apart and named", "[child_process]") {
  auto exited = shell("exit 3");
  REQUIRE(exited.ok());
  CHECK_FALSE(exited->clean());
  CHECK(exited->exit_code == 3);
  CHECK(describe(*exited) == "exited with code 3");

  auto killed = shell("printf partial >&3; kill -SEGV $$");
  REQUIRE(killed.ok());
  CHECK_FALSE(killed->clean());
  CHECK_FALSE(killed->exited);
  CHECK(killed->answer == "partial");
  CHECK(killed->signal == 11);
  CHECK(describe(*killed).find("killed by SIGSEGV") == 0);
}

TEST_CASE("child process: a hanging child is killed at the time limit", "[child_process]") {
  auto o = shell("exec sleep 60", 0.3);
  REQUIRE(o.ok());
  CHECK(o->timed_out);
  CHECK_FALSE(o->clean());
  CHECK(o->seconds >= 0.3);
  CHECK(o->seconds < 10);
  CHECK(describe(*o).find("time limit") != std::string::npos);

  // Closing the answer pipe early does not end the wait: the child must also exit.
  auto closed = shell("exec 3>&-; exec sleep 60", 0.3);
  REQUIRE(closed.ok());
  CHECK(closed->timed_out);
}

TEST_CASE("child process: what cannot start is an error, not a crash", "[child_process]") {
  CHECK_FALSE(run_child("/nonexistent/program", {"x"}, 1).ok());
  CHECK_FALSE(run_child("", {"x"}, 1).ok());
  CHECK_FALSE(run_child("/bin/sh", {}, 1).ok());
  CHECK_FALSE(run_child("/bin/sh", {"sh", "-c", "true"}, 0).ok());
}

TEST_CASE("child process: the test runner dispatches workers like peakprobe does", "[child_process]") {
  CHECK(worker_executable() == "/proc/self/exe");
  // A worker invocation with a bad parent id is refused with exit 2 before it runs anything.
  auto o = run_child(worker_executable(), {"worker", kWorkerArg, "baseline", "not-a-pid", "{}"}, 10);
  REQUIRE(o.ok());
  CHECK(o->exited);
  CHECK(o->exit_code == 2);
  auto unknown = run_child(worker_executable(), {"worker", kWorkerArg, "nonsense", "1234", "{}"}, 10);
  REQUIRE(unknown.ok());
  CHECK(unknown->exit_code == 2);
}

TEST_CASE("child process: under an emulator the program's own binary runs through it", "[child_process]") {
  // A stand-in emulator that answers with the command line it was given.
  const test::ScratchDir dir;
  const std::string fake = dir.file("emulator.sh");
  std::ofstream(fake) << "#!/bin/sh\nprintf '%s|' \"$@\" >&3\n";
  ::chmod(fake.c_str(), 0755);
  ::setenv("PEAKPROBE_CHILD_EMULATOR", fake.c_str(), 1);
  auto own = run_child("/proc/self/exe", {"self", "--flag"}, 10);
  auto other = run_child("/bin/sh", {"sh", "-c", "printf direct >&3"}, 10);
  ::unsetenv("PEAKPROBE_CHILD_EMULATOR");
  REQUIRE(own.ok());
  // The emulator gets the binary's real path (not /proc/self/exe, which would be the emulator's own)
  // and the arguments after argv[0].
  CHECK(own->answer.find("/proc/self/exe") == std::string::npos);
  CHECK(own->answer.find("peakprobe_tests|--flag|") != std::string::npos);
  REQUIRE(other.ok());
  // A program of the build machine's own architecture also goes through it here (the test runs
  // natively); under real emulation /bin/sh is foreign to the guest and starts directly.
  CHECK((other->answer == "direct" || other->answer.rfind("/bin/sh|-c|", 0) == 0));
}
