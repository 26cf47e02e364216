// The promise of main.cpp's whole command line, swept: every form the built-in catalog knows, and
// hostile instruction texts made from the target's own forms, go through the real executable in
// child processes. None may kill the process with a signal or hang it; a rejected text exits 2 with
// a message. (test_main.cpp checks single commands and their messages; this file is the crash sweep.
// tests/<isa>/test_main_crash_sweep.cpp sweeps the texts that have hurt probers of one ISA.)
#include <catch2/catch.hpp>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <random>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli_sweep.hpp"
#include "scratch_dir.hpp"
#include "target_fixture.hpp"

using namespace peakprobe;
using test::Ended;
using test::run_binary;

namespace {

// The target's forms bent out of shape: stray and missing separators, case, tabs, bytes that are
// not UTF-8, operands without end, and two forms in one text.
std::vector<std::string> malformed_texts() {
  const isa::Target& t = test::target();
  std::vector<std::string> forms = {t.ruler_forms().one_cycle, t.ruler_forms().multi_cycle,
                                    t.help_texts().example_form};
  std::vector<std::string> out = {"", " ", ",", ",,,", "{", "}", "[", "]", "#", std::string(10000, 'a'),
                                  "\xc3\x28", "\xff\xfe"};
  for (const std::string& f : forms) {
    const std::string m = test::mnemonic_of(f);
    const size_t at = f.find(m), space = f.find(' ', at);
    const std::string operands = space == std::string::npos ? "" : f.substr(space + 1);
    std::string upper = f, tabs = f, no_commas = f, double_commas, many = f;
    std::transform(upper.begin(), upper.end(), upper.begin(), [](unsigned char c) { return char(std::toupper(c)); });
    std::replace(tabs.begin(), tabs.end(), ' ', '\t');
    no_commas.erase(std::remove(no_commas.begin(), no_commas.end(), ','), no_commas.end());
    for (char c : f) double_commas += c == ',' ? std::string(",,") : std::string(1, c);
    const std::string last = operands.substr(operands.rfind(' ') == std::string::npos ? 0 : operands.rfind(' ') + 1);
    for (int i = 0; i < 300; ++i) many += ", " + last;
    for (const std::string& text :
         {m, m + " ,", f + ",", f + ", ", f + ",,", no_commas, double_commas, upper, tabs, f + " ; " + f, f + "\n",
          m + " " + std::string(5000, 'r'), many, "{" + f, f + " {", m + "\xff\xfe " + operands,
          m + " \xff\xfe, " + operands, test::misspelled(f)})
      out.push_back(text);
  }
  return out;
}

// Forms the target's encoder knows but refuses to build a stream for, spread over its whole list, and
// random mnemonics of it with random operands seen in its forms.
std::vector<std::string> refused_and_generated_texts() {
  const auto& all = test::target().all_forms();
  std::vector<std::string> refused, mnemonics, operands;
  std::set<std::string> seen_mnemonics, seen_operands;
  for (const auto& f : all) {
    if (!f.refusal.empty()) refused.push_back(f.text);
    const size_t space = f.text.find(' ');
    const std::string m = f.text.substr(0, space);
    if (seen_mnemonics.insert(m).second) mnemonics.push_back(m);
    if (space == std::string::npos) continue;
    std::string rest = f.text.substr(space + 1);
    for (size_t start = 0; start <= rest.size();) {
      const size_t comma = rest.find(", ", start);
      const std::string op = rest.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
      if (!op.empty() && seen_operands.insert(op).second) operands.push_back(op);
      if (comma == std::string::npos) break;
      start = comma + 2;
    }
  }
  std::vector<std::string> out;
  constexpr size_t kRefused = 40;
  for (size_t i = 0; i < std::min(kRefused, refused.size()); ++i) out.push_back(refused[i * refused.size() / kRefused]);
  if (mnemonics.empty() || operands.empty()) return out;
  operands.push_back("");
  std::mt19937 rng(20261122);
  for (int i = 0; i < 60; ++i) {
    std::string text = mnemonics[rng() % mnemonics.size()];
    const int n = int(rng() % 4);
    for (int j = 0; j < n; ++j) text += (j == 0 ? " " : ", ") + operands[rng() % operands.size()];
    out.push_back(text);
  }
  return out;
}

}  // namespace

TEST_CASE("cli sweep: every catalog form is measured or refused, the process never dies", "[main][hw]") {
  const test::ScratchDir dir;
  const std::string out = dir.file("run.json");
  // Within ctest's own limit for a test (PEAKPROBE_TEST_TIMEOUT, 300 s; [hw] tests do not run under
  // an emulator), so that a hang is this test's `timed_out`, with the child's stderr, not ctest's
  // silent kill.
  const Ended run = run_binary({"--quiet", "--json", out, "run"}, 270);
  INFO(run.err);
  CHECK(run.outcome.signal == 0);
  CHECK_FALSE(run.outcome.timed_out);
  REQUIRE(run.outcome.exited);
  CHECK((run.outcome.exit_code == 0 || run.outcome.exit_code == 1));

  const Ended list = run_binary({"--quiet", "--json", dir.file("list.json"), "list"}, 60);
  REQUIRE(list.outcome.clean());
  std::ifstream list_in(dir.file("list.json")), run_in(out);
  const auto catalog = nlohmann::json::parse(list_in).at("catalog");
  const auto results = nlohmann::json::parse(run_in).at("results");
  // Every catalog row has its result row, with a status a reader knows.
  CHECK(results.size() == catalog.size());
  const std::set<std::string> statuses = {"ok", "mistrusted", "skipped", "error"};
  for (const auto& r : results) CHECK(statuses.count(r.at("status").get<std::string>()) == 1);
}

TEST_CASE("hw: cli sweep: the target's forms bent out of shape get a row or a clear refusal, never a crash",
          "[main][hw]") {
  for (const std::string& text : malformed_texts()) test::check_inst_survives(text);
  for (const std::string& text : refused_and_generated_texts()) test::check_inst_survives(text);
}
