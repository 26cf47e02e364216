// Running the peakprobe executable without a shell for the crash sweeps: any byte of an argument
// reaches it as is, and a signal or a hang shows in the outcome instead of killing the test.
#pragma once
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "harness/child_process.hpp"
#include "scratch_dir.hpp"

namespace peakprobe::test {

struct Ended {
  ChildOutcome outcome;
  std::string err;
};

// Runs peakprobe with `args` (no shell: any byte reaches it as is), stdout discarded, stderr kept.
inline Ended run_binary(const std::vector<std::string>& args, double limit) {
  const ScratchDir dir;
  const std::string err = dir.file("stderr.txt");
  std::vector<std::string> argv = {"sh", "-c", "f=$1; shift; exec \"$@\" >/dev/null 2>\"$f\"", "sh", err,
                                   PEAKPROBE_BINARY};
  argv.insert(argv.end(), args.begin(), args.end());
  auto o = run_child("/bin/sh", argv, limit);
  REQUIRE(o.ok());
  std::ifstream in(err);
  std::stringstream ss;
  ss << in.rdbuf();
  return {*o, ss.str()};
}

// One `inst` run of a text that may be hostile: it gets a row or a clear refusal, never a signal,
// a hang or an exit code outside the documented ones.
inline void check_inst_survives(const std::string& text) {
  const Ended e = run_binary({"--quiet", "inst", text}, 120);
  INFO("inst \"" << text.substr(0, 200) << "\": " << describe(e.outcome) << "\n" << e.err.substr(0, 400));
  CHECK(e.outcome.signal == 0);
  CHECK_FALSE(e.outcome.timed_out);
  CHECK(e.outcome.exited);
  // 0 measured (or skipped/refused rows), 1 a row with status error, 2 refused input,
  // 4 measuring could not start: never anything else.
  const int rc = e.outcome.exit_code;
  CHECK((rc == 0 || rc == 1 || rc == 2 || rc == 4));
  if (rc == 2) CHECK_FALSE(e.err.empty());
}

}  // namespace peakprobe::test
