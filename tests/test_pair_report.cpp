// Dual-issue results in every format (src/report/pair_report.cpp): a document with several FLOP-mix
// searches, as `roofline` and the full report make (one per floating-point type and width), shows
// each of them, and JSON keeps the single "flop_mix" key of earlier documents as the first search.
#include <catch2/catch.hpp>

#include <optional>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "report/pair_report.hpp"

using namespace peakprobe;
using nlohmann::json;

namespace {

RunDocument bare_document() {
  RunDocument d;
  d.host.brand = "Test CPU";
  d.clock.ghz = 4;
  d.clock.source = "fixture";
  return d;
}

// A pair of two parts at 0.5 cycles each alone that took 340 cycles a group.
PairResult penalty_pair() {
  PairResult p;
  p.mix.parts = {MixPart{"mul.legacy", 1, 0, "-", 0.5}, MixPart{"add.wide", 1, 8, "f32", 0.5}};
  p.mix.status = Status::ok;
  p.mix.cycles_per_group = 340.0;
  return p;
}

FlopMixSearch search(const std::string& a, const std::string& b, double madd_ops, double best_flops) {
  FlopMixSearch s;
  s.a = a, s.b = b;
  s.best_a = s.best_b = 1;
  s.best_flops_per_cycle = best_flops;
  s.best_gflops = 4 * best_flops;
  for (auto [x, y] : {std::pair{1, 0}, std::pair{1, 1}}) {
    MixResult m;
    m.parts.push_back(MixPart{a, x, madd_ops, "f32"});
    if (y) m.parts.push_back(MixPart{b, y, madd_ops / 2, "f32"});
    m.status = Status::ok;
    m.cycles_per_group = 0.5;
    m.flops_per_cycle = (x * madd_ops + y * madd_ops / 2) / 0.5;
    m.gflops = 4 * *m.flops_per_cycle;
    m.clock.ghz = 4;
    s.tried.push_back(m);
    s.ratios.emplace_back(x, y);
  }
  return s;
}

RunDocument two_searches() {
  RunDocument d = bare_document();
  d.flop_mixes = {search("madd.wide", "add.wide", 32, 96), search("madd.narrow", "add.narrow", 16, 48)};
  return d;
}

}  // namespace

TEST_CASE("pair report: JSON carries every FLOP-mix search, and the first one under its earlier key", "[report]") {
  json doc;
  add_dual_issue(doc, two_searches());
  REQUIRE(doc.contains("flop_mixes"));
  REQUIRE(doc["flop_mixes"].size() == 2);
  CHECK(doc["flop_mixes"][0]["a"] == "madd.wide");
  CHECK(doc["flop_mixes"][1]["a"] == "madd.narrow");
  CHECK(doc["flop_mixes"][1]["best_flops_per_cycle"] == 48);
  CHECK(doc["flop_mixes"][1]["tried"].size() == 2);
  CHECK(doc["flop_mixes"][1]["tried"][1]["ratio"] == json::array({1, 1}));
  CHECK(doc["flop_mix"] == doc["flop_mixes"][0]);

  json none;
  add_dual_issue(none, RunDocument{});
  CHECK_FALSE(none.contains("flop_mixes"));
  CHECK_FALSE(none.contains("flop_mix"));
}

TEST_CASE("pair report: CSV, Markdown and console show each FLOP-mix search", "[report]") {
  const RunDocument d = two_searches();
  auto count = [](const std::string& text, const std::string& what) {
    size_t n = 0;
    for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
    return n;
  };
  std::ostringstream csv, md, console;
  write_dual_issue_csv(csv, d);
  write_dual_issue_markdown(md, d);
  write_dual_issue_console(console, d);
  CHECK(count(csv.str(), "\nflopmix,") == 4);  // two ratios of each search
  CHECK(count(csv.str(), "madd.narrow") == 2);
  CHECK(count(md.str(), "Best FLOP mix: 1:1 of `madd.wide` : `add.wide` = 96.00 FLOP/cycle") == 1);
  CHECK(count(md.str(), "Best FLOP mix: 1:1 of `madd.narrow` : `add.narrow` = 48.00 FLOP/cycle") == 1);
  CHECK(count(console.str(), "FLOP mix search: madd.wide  vs  add.wide") == 1);
  CHECK(count(console.str(), "FLOP mix search: madd.narrow  vs  add.narrow") == 1);
  CHECK(count(console.str(), "best 1:1 = 48.00 FLOP/cycle") == 1);
}

TEST_CASE("pair report: a pair far slower than its parts in sequence reads as a penalty, not a shared pipe", "[report]") {
  RunDocument d = bare_document();
  PairResult p = penalty_pair();
  p.mix.ipc = 2 / 340.0;
  p.same_port = 1.0;
  p.classification = PairClass::shared;
  p.penalty = true;
  d.pairs = {p};
  std::ostringstream csv, md, console;
  write_dual_issue_csv(csv, d);
  write_dual_issue_markdown(md, d);
  write_dual_issue_console(console, d);
  const json j = to_json(p);
  CHECK(j["classification"] == "penalty");
  CHECK(j["penalty"] == true);
  CHECK(j["same_port"] == 1.0);
  CHECK_THAT(csv.str(), Catch::Contains(",penalty,") && !Catch::Contains(",shared,"));
  CHECK_THAT(md.str(), Catch::Contains("| penalty |"));
  CHECK_THAT(console.str(), Catch::Contains("=> penalty: 340.0x as slow as the two one after the other (1.000 cycles)") &&
                                !Catch::Contains("=> shared"));
  // Without the mark, the same pair is a shared pipe as before.
  d.pairs[0].penalty = false;
  std::ostringstream plain;
  write_dual_issue_console(plain, d);
  CHECK_THAT(plain.str(), Catch::Contains("=> shared (same-port measure 1.00"));
  CHECK(to_json(d.pairs[0])["classification"] == "shared");
}

TEST_CASE("pair report: a matrix lists its penalty pairs under the groups", "[report]") {
  RunDocument d = bare_document();
  PairMatrix m;
  m.instructions = {"mul.legacy", "add.wide"};
  m.alone_cycles = {0.5, 0.5};
  m.same_port = {{1.0, std::nullopt}, {std::nullopt, 1.0}};
  m.groups = {{"mul.legacy"}, {"add.wide"}};
  PairResult p = penalty_pair();
  p.same_port = 1.0;
  p.classification = PairClass::shared;
  p.penalty = true;
  m.pairs = {p};
  d.matrix = m;
  std::ostringstream console, md;
  write_dual_issue_console(console, d);
  write_dual_issue_markdown(md, d);
  CHECK_THAT(console.str(), Catch::Contains("far slower than their parts one after the other (a cost paid only "
                                            "together, not a pipe), so left out of the groups:\n  mul.legacy + add.wide\n"));
  CHECK_THAT(md.str(), Catch::Contains("| penalty |"));
  CHECK(to_json(m)["pairs"][0]["classification"] == "penalty");
}

TEST_CASE("pair report: a mix run on several cores carries each core's cycles per group, one on one core none", "[report]") {
  MixResult m;
  m.parts = {MixPart{"a", 1, 32, "f32"}, MixPart{"b", 1, 16, "f32"}};
  m.cycles_per_group = 1.0;
  const json one = to_json(m);
  CHECK_FALSE(one.contains("per_thread_cycles_per_group"));
  CHECK_FALSE(one.contains("total_gflops"));
  m.threads = 2;
  m.total_gflops = 380;
  m.per_thread_cycles_per_group = {1.01, 0.99};
  const json two = to_json(m);
  REQUIRE(two.contains("per_thread_cycles_per_group"));
  REQUIRE(two["per_thread_cycles_per_group"].size() == 2);
  CHECK(two["per_thread_cycles_per_group"][0].get<double>() == Approx(1.01));
  CHECK(two["per_thread_cycles_per_group"][1].get<double>() == Approx(0.99));
  CHECK(two["threads"] == 2);
}
