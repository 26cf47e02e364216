// `peakprobe inst` (src/cli/cmd_inst.cpp): any instruction form given as text, measured as the
// catalog's rows are; its options checked before anything runs, its --listing after the results.
#include <catch2/catch.hpp>

#include <cstdint>
#include <regex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "catalog/catalog.hpp"
#include "cli/catalog_loading.hpp"
#include "cli_forms.hpp"
#include "cli_run.hpp"
#include "cpu/cpu_info.hpp"
#include "scratch_dir.hpp"
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

// The largest immediate `--imm` takes (CLI11's range): no form of 8 or 16 bits, nor a 64-bit
// operation's sign-extended 32 bits, holds it.
constexpr int64_t kLargestImm = 4294967295;

// A catalog row this CPU runs whose immediate operand cannot hold every value --imm takes; "" when
// the catalog has none.
std::string form_with_immediate() {
  const peakprobe::CpuInfo cpu = peakprobe::detect_cpu_info();
  const auto catalog = peakprobe::default_catalog();
  if (!catalog) return "";
  for (const auto& row : *catalog)
    if (!target().check_immediate(row.text, kLargestImm).empty() && target().check_immediate(row.text, 7).empty() &&
        peakprobe::cli::features_missing(row, cpu).empty())
      return row.text;
  return "";
}

}  // namespace

TEST_CASE("cli: unknown instruction suggests names and exits 2", "[main]") {
  const std::string form = target().help_texts().example_form, typo = peakprobe::test::misspelled(form);
  const auto unknown = target().resolve(typo);
  REQUIRE_FALSE(unknown.ok());
  Run r = run_peakprobe("inst " + arg(typo));
  CHECK(r.rc == 2);
  CHECK_THAT(r.err, Catch::Contains(unknown.error()));
  CHECK_THAT(r.err, Catch::Contains(peakprobe::test::mnemonic_of(form)));  // among the nearest names
}

TEST_CASE("cli: --json - writes one document to stdout", "[main][hw]") {
  Run r = run_peakprobe("inst " + arg(add_form()) + " " + arg(mul_form()) + " --json - --quiet");
  REQUIRE(r.rc == 0);
  auto doc = nlohmann::json::parse(r.out);
  CHECK(doc["schema"] == "peakprobe/1");
  REQUIRE(doc["results"].size() == 2);
  CHECK(doc["results"][0]["instruction"] == target().resolve(add_form())->display);
  CHECK(doc["results"][1]["instruction"] == target().resolve(mul_form())->display);
  CHECK(doc["host"].contains("caches"));
  CHECK(doc["clock"]["ghz"].get<double>() > 0);
}

TEST_CASE("cli: inst --listing prints, after the results, the code each form was timed with", "[main][hw]") {
  const peakprobe::test::ScratchDir dir;
  const std::string json = dir.file("listed.json");
  Run r = run_peakprobe("inst " + arg(add_form()) + " --listing --quiet --json " + peakprobe::test::quoted(json));
  REQUIRE(r.rc == 0);
  auto doc = nlohmann::json::parse(peakprobe::test::slurp(json));
  REQUIRE(doc["results"].size() == 1);
  const std::string display = doc["results"][0]["instruction"];
  const int chains = doc["results"][0]["accumulators"];
  CHECK_THAT(r.out, Catch::Contains("# " + display + "\n"));
  CHECK_THAT(r.out, Catch::Contains("## latency chain"));
  // The stream at the chains the row reports, after the row (the console table comes first).
  const size_t stream = r.out.find("## throughput stream, " + std::to_string(chains) + " chain");
  REQUIRE(stream != std::string::npos);
  CHECK(r.out.find(display) < r.out.find("# " + display + "\n"));  // the row of the table first
  CHECK_THAT(r.out.substr(stream), Catch::Contains(peakprobe::test::mnemonic_of(add_form()) + " "));
}

TEST_CASE("inst: --help teaches the notation, the operand kinds and every option", "[main]") {
  const auto help = target().help_texts();
  Run r = run_peakprobe("inst --help");
  CHECK(r.rc == 0);
  CHECK(r.err.empty());
  CHECK_THAT(r.out, Catch::Contains(help.notation) && Catch::Contains(help.example_form));
  CHECK_THAT(r.out, Catch::Contains(help.operand_kinds));
  CHECK_THAT(r.out, Catch::Contains(help.inst_examples));
  for (const char* option : {"--ops", "--dtype", "--imm", "--listing"}) CHECK_THAT(r.out, Catch::Contains(option));
  // Every value --dtype accepts is named (each as a word of its own: CLI11 may wrap the line).
  for (const char* dtype : {"f64", "f32", "f16", "bf16", "i64", "i32", "i16", "i8", "u8"}) {
    INFO(dtype);
    CHECK(std::regex_search(r.out, std::regex(std::string("\\b") + dtype + "\\b")));
  }
}

TEST_CASE("inst: option values are checked at their limits before anything runs", "[main]") {
  const std::string inst = "inst " + arg(add_form());
  const std::vector<Refusal> cases = {
      {"inst", "instructions is required"},
      {inst + " --ops 16777217", "'16777217'"},  // 2^24 + 1
      // 2^24 operations are allowed: the next check, --dtype, is the one that refuses.
      {inst + " --ops 16777216 --dtype garbage", "--dtype 'garbage'"},
      // u8 and '-' are dtypes too: the --listing check after them refuses.
      {inst + " --dtype u8 --listing --json -", "--listing prints to stdout"},
      {inst + " --dtype - --listing --json -", "--listing prints to stdout"},
      {inst + " --imm 4294967296", "4294967296"},
      {inst + " --imm -2147483649", "-2147483649"},
      {inst + " --imm -2147483648 --listing --json -", "--listing prints to stdout"},
  };
  check_refused(cases);
  Run bound = run_peakprobe(inst + " --ops 16777216 --dtype garbage");
  CHECK(bound.err.find("--ops") == std::string::npos);
}

TEST_CASE("inst: every unknown text of several is named, and nothing runs", "[main]") {
  const std::string first = peakprobe::test::misspelled(add_form()), second = peakprobe::test::misspelled(mul_form());
  const auto a = target().resolve(first), b = target().resolve(second);
  REQUIRE_FALSE(a.ok());
  REQUIRE_FALSE(b.ok());
  Run r = run_peakprobe("inst " + arg(first) + " " + arg(add_form()) + " " + arg(second));
  CHECK(r.rc == 2);
  CHECK_THAT(r.err, Catch::Contains(a.error()) && Catch::Contains(b.error()));
  CHECK(r.out.empty());
}

TEST_CASE("inst: an immediate the form cannot hold is refused with the form's range", "[main]") {
  const std::string form = form_with_immediate();
  if (form.empty()) PP_SKIP("no catalog row with a bounded immediate runs on this CPU");
  check_refused({{"inst " + arg(form) + " --imm " + std::to_string(kLargestImm),
                  target().check_immediate(form, kLargestImm)}});
}

TEST_CASE("inst: --ops, --dtype and --imm label the row and its repro line", "[main][hw]") {
  const std::string form = form_with_immediate();
  if (form.empty()) PP_SKIP("no catalog row with a bounded immediate runs on this CPU");
  Run r = run_peakprobe("inst " + arg(form) + " --ops 3 --dtype i16 --imm 7 --json - --quiet");
  REQUIRE(r.rc == 0);
  const auto doc = nlohmann::json::parse(r.out);
  REQUIRE(doc["results"].size() == 1);
  const auto& row = doc["results"][0];
  CHECK(row["instruction"] == target().resolve(form)->display);
  CHECK(row["ops_per_instruction"].get<double>() == 3.0);
  CHECK(row["dtype"] == "i16");
  CHECK_THAT(row["repro"].get<std::string>(), Catch::Contains("--imm 7"));
}
