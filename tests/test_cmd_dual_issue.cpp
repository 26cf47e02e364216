// The dual-issue commands (src/cli/cmd_dual_issue.cpp): mix, pair, pairs and flopmix. Their weights,
// ratios, sets and instruction counts are checked before anything runs; they measure on one core,
// flopmix's best ratio also on --threads cores.
#include <catch2/catch.hpp>

#include <sched.h>

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli_forms.hpp"
#include "cli_run.hpp"
#include "cpu/cpu_info.hpp"
#include "skip.hpp"
#include "target_fixture.hpp"

namespace {

using peakprobe::test::add_form;
using peakprobe::test::arg;
using peakprobe::test::check_refused;
using peakprobe::test::mul_form;
using peakprobe::test::Refusal;
using peakprobe::test::Run;
using peakprobe::test::run_peakprobe;
using peakprobe::test::target;

bool two_cpus_allowed() {
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  return sched_getaffinity(0, sizeof(allowed), &allowed) == 0 && CPU_COUNT(&allowed) >= 2;
}

}  // namespace

TEST_CASE("cli: dual-issue commands refuse bad input with exit 2", "[main]") {
  const std::string add = arg(add_form()), mul = arg(mul_form());
  CHECK(run_peakprobe("pair " + add + " " + mul + " --ratio 2-1").rc == 2);
  CHECK(run_peakprobe("pair " + add + " " + mul + " --ratio 0:1").rc == 2);
  CHECK(run_peakprobe("mix " + arg(add_form() + ":x")).rc == 2);
  CHECK(run_peakprobe("mix " + arg(add_form() + ":99")).rc == 2);
  CHECK(run_peakprobe("pairs --set no-such-set").rc == 2);
  CHECK(run_peakprobe("pairs " + add).rc == 2);
  // Integer forms have no FLOP count (their catalog rows count integer operations).
  Run f = run_peakprobe("flopmix " + add + " " + mul);
  CHECK(f.rc == 2);
  CHECK_THAT(f.err, Catch::Contains("has no FLOP count"));
  const std::string form = target().help_texts().example_form;
  Run u = run_peakprobe("pair " + arg(peakprobe::test::misspelled(form)) + " " + add);
  CHECK(u.rc == 2);
  CHECK(u.err.find(peakprobe::test::mnemonic_of(form)) != std::string::npos);
}

TEST_CASE("cli: pair --json - gives the classification", "[main][hw]") {
  Run r = run_peakprobe("pair " + arg(add_form()) + " " + arg(mul_form()) + " --json - --quiet");
  REQUIRE(r.rc == 0);
  auto doc = nlohmann::json::parse(r.out);
  REQUIRE(doc["pairs"].size() == 1);
  const auto& p = doc["pairs"][0];
  CHECK(p["parts"].size() == 2);
  CHECK(p["cycles_per_group"].get<double>() > 0);
  CHECK(p.contains("same_port"));
  CHECK(p.contains("classification"));
  CHECK(p["repro"].get<std::string>().rfind("peakprobe mix ", 0) == 0);
}

TEST_CASE("cli: pairs --list-sets names the shipped sets", "[main]") {
  Run r = run_peakprobe("pairs --list-sets");
  CHECK(r.rc == 0);
  CHECK(r.out.find(target().help_texts().pairs_set) != std::string::npos);
  CHECK(r.out.find(target().report_pair_set(peakprobe::detect_cpu_info())) != std::string::npos);
}

TEST_CASE("dual issue: refusals name the weight, the ratio, the set or the count, and the limits are allowed", "[main]") {
  const std::string add = add_form(), mul = mul_form();
  const std::string typo = peakprobe::test::misspelled(target().help_texts().example_form);
  const auto unknown = target().resolve(typo);
  REQUIRE_FALSE(unknown.ok());
  // 65 instructions; 64 with one of them unknown is refused for that one, not for the count.
  std::string many, most = arg(typo);
  for (int i = 0; i < 65; ++i) many += " " + arg(add);
  for (int i = 0; i < 63; ++i) most += " " + arg(add);
  const std::vector<Refusal> cases = {
      {"mix " + arg(add + ":17"), "weight '17' in '" + add + ":17' must be a whole number from 1 to 16"},
      {"mix " + arg(add + ":0"), "weight '0' in '" + add + ":0'"},
      {"mix " + arg(add + ":16") + " " + arg(typo), unknown.error()},
      {"pair " + arg(add) + " " + arg(mul) + " --ratio 17:1", "--ratio '17:1': expected a:b with whole numbers from 1 to 16"},
      {"pair " + arg(typo) + " " + arg(mul) + " --ratio 16:16", unknown.error()},
      {"pairs " + arg(add), "pairs needs at least two instructions"},
      {"pairs" + many, "pairs: 65 instructions would make 2145 pairs; at most 64 instructions (2080 pairs)"},
      {"pairs " + most, unknown.error()},
      {"pairs --set zz-no-such-set", "no set named 'zz-no-such-set'"},
      {"flopmix " + arg(add), "give both instructions or neither"},
      {"flopmix " + arg(add) + " " + arg(mul), "'" + target().resolve(add)->display + "' has no FLOP count"},
  };
  check_refused(cases);
}

TEST_CASE("dual issue: each command's --help teaches its arguments with this ISA's examples", "[main]") {
  const auto help = target().help_texts();
  Run mix = run_peakprobe("mix --help");
  CHECK(mix.rc == 0);
  CHECK_THAT(mix.out, Catch::Contains(":WEIGHT") && Catch::Contains("peakprobe mix " + help.mix_example));
  Run pair = run_peakprobe("pair --help");
  CHECK(pair.rc == 0);
  CHECK_THAT(pair.out, Catch::Contains("--ratio") && Catch::Contains("peakprobe pair " + help.pair_example));
  Run pairs = run_peakprobe("pairs --help");
  CHECK(pairs.rc == 0);
  CHECK_THAT(pairs.out, Catch::Contains("--list-sets") && Catch::Contains("--svg") &&
                            Catch::Contains("peakprobe pairs --set " + help.pairs_set) &&
                            Catch::Contains("peakprobe pairs " + help.pairs_example) &&
                            Catch::Contains("probes/" + target().name() + ".sets"));
  Run flopmix = run_peakprobe("flopmix --help");
  CHECK(flopmix.rc == 0);
  CHECK_THAT(flopmix.out, Catch::Contains("--exhaustive") && Catch::Contains("(default: " + help.flop_a + ")") &&
                              Catch::Contains("(default: " + help.flop_b + ")"));
}

TEST_CASE("dual issue: --threads on a one-core command is said on stderr, the document alone on stdout", "[main][hw]") {
  if (!two_cpus_allowed()) PP_SKIP("this process may run on one CPU only");
  Run r = run_peakprobe("--threads 2 mix " + arg(add_form()) + " --json -");
  REQUIRE(r.rc == 0);
  CHECK_THAT(r.err, Catch::Contains("--threads applies to run, inst and flopmix; dual-issue probes use one core"));
  const auto doc = nlohmann::json::parse(r.out);
  REQUIRE(doc["mixes"].size() == 1);
  // Measured on one core: its repro line asks for no threads.
  CHECK(doc["mixes"][0]["repro"].get<std::string>().find("--threads") == std::string::npos);
}

TEST_CASE("dual issue: flopmix runs its best ratio on --threads cores too, without the one-core warning", "[main][hw]") {
  if (!two_cpus_allowed()) PP_SKIP("this process may run on one CPU only");
  const auto pair = target().flop_pair(peakprobe::detect_cpu_info(), false);
  if (!pair) PP_SKIP("this CPU runs no floating-point multiply and add pair");
  Run r = run_peakprobe("--threads 2 flopmix --json -");
  REQUIRE(r.rc == 0);
  CHECK(r.err.find("use one core") == std::string::npos);
  const auto doc = nlohmann::json::parse(r.out);
  REQUIRE(doc["flop_mixes"].size() == 1);
  const auto& search = doc["flop_mixes"][0];
  CHECK(search["a"] == pair->mul);
  CHECK(search["b"] == pair->add);
  if (!search["best_all_threads"].is_object()) {
    // A host that slows one vCPU during the two-thread run (the Emerald Rapids VM, 1 run in 3) leaves
    // no figure: then the warning must say which run and why, and the invariant is not checkable.
    const size_t at = r.err.find("no 2-core ceiling from the mix");
    REQUIRE(at != std::string::npos);
    const std::string rest = r.err.substr(at), line = rest.substr(0, rest.find('\n'));
    REQUIRE(line.find("mistrusted") != std::string::npos);  // an error is a failure, not a skip
    PP_SKIP(line);
  }
  CHECK(search["best_all_threads"]["threads"] == 2);
}
