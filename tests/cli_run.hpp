// Running the peakprobe executable from a test: exit code, stdout and stderr through files in a
// directory of the call's own (tests run in parallel under ctest -j).
#pragma once
#include <sys/wait.h>

#include <cstdlib>

#include <catch2/catch.hpp>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "scratch_dir.hpp"

namespace peakprobe::test {

struct Run {
  int rc = -1;
  std::string out, err;
};

inline std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// A path as one single-quoted shell word.
inline std::string quoted(const std::string& path) {
  std::string q = "'";
  for (char c : path) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

// Runs the executable with `args`; its output goes through files in a directory of this call's own
// (tests run in parallel).
inline Run run_peakprobe_env(const std::string& env, const std::string& args) {
  const peakprobe::test::ScratchDir dir;
  const std::string out = dir.file("stdout.txt"), err = dir.file("stderr.txt");
  // Under a user-mode emulator the shell cannot start the binary itself (see run_child).
  const char* emulator = std::getenv("PEAKPROBE_CHILD_EMULATOR");
  const std::string binary = (emulator && *emulator ? std::string(emulator) + " " : "") + PEAKPROBE_BINARY;
  std::string cmd = env + (env.empty() ? "" : " ") + binary + " " + args + " >" + quoted(out) +
                    " 2>" + quoted(err);
  int status = std::system(cmd.c_str());
  Run r;
  r.rc = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.out = slurp(out);
  r.err = slurp(err);
  return r;
}

inline Run run_peakprobe(const std::string& args) { return run_peakprobe_env("", args); }

// Command lines that must be refused as bad input: exit 2, the error saying `says`, nothing on stdout
// (refused before any table or document).
struct Refusal {
  std::string args, says;
};
inline void check_refused(const std::vector<Refusal>& cases) {
  for (const auto& c : cases) {
    INFO(c.args);
    Run r = run_peakprobe(c.args);
    CHECK(r.rc == 2);
    CHECK_THAT(r.err, Catch::Contains(c.says));
    CHECK(r.out.empty());
  }
}

}  // namespace peakprobe::test
