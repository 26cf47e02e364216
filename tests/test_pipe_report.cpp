// Pipe groups in JSON (src/report/pipe_report.cpp): the document's basis and each row's verdicts
// read back as written, hostile input never throws, and the compact summary of a row.
#include <catch2/catch.hpp>

#include <string>

#include <nlohmann/json.hpp>

#include "report/pipe_report.hpp"

using namespace peakprobe;
using nlohmann::json;

namespace {

PipeGroups groups() {
  PipeGroups g;
  g.basis = {{"add r64, r64", {"add r64, r64", "popcnt r64, r64"}, 0.25, 1.0},
             {"vmulps ymm, ymm, ymm", {"vmulps ymm, ymm, ymm"}, 0.5}};
  g.issue_width = 6.02;
  g.seeds = {"add r64, r64", "popcnt r64, r64", "vmulps ymm, ymm, ymm"};
  g.seed_same_port = {{1.0, 0.98, 0.01}, {0.98, 1.0, std::nullopt}, {0.01, std::nullopt, 1.0}};
  g.skipped_seeds = {"div r32: mistrusted: slowed"};
  g.seconds = 1.5;
  return g;
}

PipeVerdict verdict(const std::string& basis, Contention c, std::optional<double> sp, const std::string& why = "") {
  PipeVerdict v;
  v.basis = basis;
  v.contention = c;
  v.same_port = sp;
  v.weight_form = 2;
  v.weight_basis = 1;
  v.ipc = 3.5;
  v.reason = why;
  return v;
}

}  // namespace

TEST_CASE("pipe report: the basis reads back as written", "[pipe_report]") {
  const PipeGroups g = groups();
  const json j = to_json(g);
  CHECK(j["issue_width"] == 6.02);
  CHECK(j["seed_same_port"][1][2].is_null());
  auto back = pipe_groups_from_json(j);
  REQUIRE(back);
  REQUIRE(back->basis.size() == 2);
  CHECK(back->basis[0].instruction == "add r64, r64");
  CHECK(back->basis[0].members == g.basis[0].members);
  CHECK(back->basis[1].recip_throughput == 0.5);
  // A member's chain through its destination sets its chains in pairs; none is written as null.
  CHECK(j["basis"][0]["chain_latency_cycles"] == 1.0);
  CHECK(j["basis"][1]["chain_latency_cycles"].is_null());
  CHECK(back->basis[0].latency == 1.0);
  CHECK(back->basis[1].latency == 0);
  CHECK(back->issue_width == 6.02);
  CHECK(back->seeds == g.seeds);
  CHECK(back->seed_same_port == g.seed_same_port);
  CHECK(back->skipped_seeds == g.skipped_seeds);
  CHECK(back->seconds == 1.5);
}

TEST_CASE("pipe report: a basis without what --resume needs is an error, never a throw", "[pipe_report]") {
  CHECK_FALSE(pipe_groups_from_json(json::array()));
  CHECK_FALSE(pipe_groups_from_json(json::object()));
  CHECK_FALSE(pipe_groups_from_json(json{{"basis", json{{{"members", json::array()}}}}}));
  const auto no_rate = pipe_groups_from_json(json{{"basis", json{{{"instruction", "add"}}}}});
  REQUIRE_FALSE(no_rate);
  CHECK_THAT(no_rate.error(), Catch::Contains("add"));
  // Mistyped optional parts are left empty.
  auto odd = pipe_groups_from_json(json{{"basis", json{{{"instruction", "add"}, {"recip_throughput_cycles", 1}}}},
                                        {"seeds", 3}, {"seed_same_port", "x"}, {"issue_width", "wide"}});
  REQUIRE(odd);
  CHECK(odd->basis[0].latency == 0);  // documents written before the field: no chain known
  CHECK(odd->seeds.empty());
  CHECK(odd->seed_same_port.empty());
  CHECK(odd->issue_width == 0);
}

TEST_CASE("pipe report: a row's verdicts read back as written", "[pipe_report]") {
  const std::vector<PipeVerdict> vs = {verdict("add r64, r64", Contention::shared, 0.97),
                                       verdict("vmulps ymm, ymm, ymm", Contention::issue_width, std::nullopt, "wide")};
  const json j = pipe_verdicts_json(vs);
  REQUIRE(j.size() == 2);
  CHECK(j[0]["contention"] == "shared");
  CHECK(j[1]["contention"] == "issue-width");
  CHECK(j[1]["same_port"].is_null());
  CHECK(j[0]["weights"] == json::array({2, 1}));
  const auto back = pipe_verdicts_from_json(j);
  REQUIRE(back.size() == 2);
  for (size_t i = 0; i < 2; ++i) {
    CHECK(back[i].basis == vs[i].basis);
    CHECK(back[i].contention == vs[i].contention);
    CHECK(back[i].same_port == vs[i].same_port);
    CHECK(back[i].weight_form == 2);
    CHECK(back[i].weight_basis == 1);
    CHECK(back[i].ipc == vs[i].ipc);
    CHECK(back[i].reason == vs[i].reason);
  }
  // Entries that name no basis are dropped; unknown words are no verdict.
  const auto odd = pipe_verdicts_from_json(json::array({1, json{{"contention", "shared"}},
                                                         json{{"basis", "x"}, {"contention", "maybe"}}}));
  REQUIRE(odd.size() == 1);
  CHECK(odd[0].contention == Contention::unmeasured);
  CHECK(pipe_verdicts_from_json(json("not an array")).empty());
}

TEST_CASE("pipe report: every contention word reads back to itself", "[pipe_report]") {
  for (Contention c : {Contention::none, Contention::partial, Contention::shared, Contention::issue_width,
                       Contention::penalty, Contention::unmeasured})
    CHECK(contention_from(to_string(c)) == c);
  CHECK(std::string(to_string(Contention::penalty)) == "penalty");
  CHECK_FALSE(contention_from("co-issue"));
}

TEST_CASE("pipe report: the summary names what a form shares, partly shares, or meets at the issue width",
          "[pipe_report]") {
  CHECK(pipe_summary({}) == "-");
  CHECK(pipe_summary({verdict("a", Contention::unmeasured, std::nullopt)}) == "-");
  CHECK(pipe_summary({verdict("a", Contention::none, 0.0), verdict("b", Contention::unmeasured, std::nullopt)}) ==
        "none");
  CHECK(pipe_summary({verdict("a", Contention::shared, 1.0), verdict("b", Contention::partial, 0.4),
                      verdict("c", Contention::shared, 0.9), verdict("d", Contention::issue_width, std::nullopt)}) ==
        "shares a | c; partial b; issue width with d");
  // A penalty is named apart: it says nothing of the pipes the two share.
  CHECK(pipe_summary({verdict("a", Contention::penalty, std::nullopt), verdict("b", Contention::none, 0.0)}) ==
        "penalty with a");
  CHECK(pipe_summary({verdict("a", Contention::shared, 1.0), verdict("b", Contention::penalty, std::nullopt)}) ==
        "shares a; penalty with b");
}
