#include <catch2/catch.hpp>

#include <fstream>

#include <nlohmann/json.hpp>

#include "cli_run.hpp"
#include "skip.hpp"
#include "scratch_dir.hpp"

using peakprobe::test::quoted;
using peakprobe::test::run_peakprobe;
using peakprobe::test::slurp;

TEST_CASE("cli: table --list names every chosen form and what happens to it, measuring nothing", "[main]") {
  auto r = run_peakprobe("table --list");
  REQUIRE(r.rc == 0);
  CHECK_THAT(r.out, Catch::Contains("forms:") && Catch::Contains("measured on this CPU") && Catch::Contains("refused"));
  auto g = run_peakprobe("table --list --group nosuchfamily");
  CHECK(g.rc == 2);
  CHECK_THAT(g.err, Catch::Contains("nosuchfamily") && Catch::Contains("known:"));
  auto none = run_peakprobe("table --list --filter \"no form is spelled like this\"");
  CHECK(none.rc == 2);
  CHECK(run_peakprobe("table --help").rc == 0);
}

TEST_CASE("cli: table measures the chosen forms, one row each, and --resume keeps what is done", "[main][hw]") {
  const peakprobe::test::ScratchDir dir;
  const std::string first = dir.file("first.json"), second = dir.file("second.json");
  // Over 32 forms (one chunk); a budget of 0.001 s stops after the first chunk, and the rest are rows
  // "not measured" that --resume measures.
  const std::string filter = "--filter \"cnt r,bsf r,bsr r,bls\"";
  auto r = run_peakprobe("--quiet table " + filter + " --budget 0.001 --json " + quoted(first));
  REQUIRE(r.rc <= 1);
  auto doc = nlohmann::json::parse(slurp(first));
  REQUIRE(doc["schema"] == "peakprobe/1");
  const auto rows = doc["results"];
  REQUIRE(rows.size() > 32);  // popcnt, lzcnt, tzcnt, bsf, bsr, blsi, blsmsk, blsr: registers and memory
  size_t not_reached = 0;
  for (const auto& row : rows) {
    INFO(row["instruction"] << ": " << row["reason"]);
    // popcnt r64, m64 and the like once faulted: their latency chase followed a computed "pointer".
    CHECK(row["status"] != "error");
    if (row["reason"].get<std::string>().rfind("not measured", 0) == 0) ++not_reached;
  }
  CHECK(not_reached > 0);
  CHECK(not_reached < rows.size());
  auto again = run_peakprobe("--quiet table " + filter + " --resume " + quoted(first) + " --json " + quoted(second));
  REQUIRE(again.rc <= 1);
  auto doc2 = nlohmann::json::parse(slurp(second));
  REQUIRE(doc2["results"].size() == rows.size());
  for (size_t i = 0; i < rows.size(); ++i) {
    CHECK(doc2["results"][i]["instruction"] == rows[i]["instruction"]);
    CHECK(doc2["results"][i]["reason"].get<std::string>().rfind("not measured", 0) == std::string::npos);
    if (rows[i]["status"] == "ok") CHECK(doc2["results"][i] == rows[i]);  // kept, not measured again
  }
  auto bad = run_peakprobe("table --filter popcnt --resume " + quoted(dir.write("bad.json", "{\"schema\": \"x/1\"}")));
  CHECK(bad.rc == 2);
  CHECK_THAT(bad.err, Catch::Contains("--resume"));
}

TEST_CASE("cli: table --pipes classifies each ok form against this CPU's basis, and --resume keeps the verdicts",
          "[main][hw]") {
  const peakprobe::test::ScratchDir dir;
  const std::string first = dir.file("pipes.json"), second = dir.file("again.json"), csv = dir.file("pipes.csv");
  const std::string forms = "--forms \"add r64, r64\" \"vpaddd xmm, xmm, xmm\" \"mov r64, m64\"";
  auto r = run_peakprobe("--quiet table --pipes " + forms + " --json " + quoted(first) + " --csv " + quoted(csv));
  REQUIRE(r.rc <= 1);
  auto doc = nlohmann::json::parse(slurp(first));
  // The basis is measured: when its seed forms stayed mistrusted (a busy host) there is none to judge by.
  if (!doc.contains("pipe_groups")) PP_SKIP("no pipe basis was measured this time: " << r.err);
  const auto basis = doc["pipe_groups"]["basis"];
  REQUIRE(basis.size() >= 2);
  CHECK(doc["pipe_groups"]["issue_width"].get<double>() >= 1);
  REQUIRE(doc["results"].size() == 3);
  size_t judged = 0, doubted = 0;
  for (const auto& row : doc["results"]) {
    INFO(row["instruction"] << " " << row["status"] << " " << row["reason"]);
    if (row["status"] != "ok") {
      CHECK_FALSE(row.contains("pipes"));  // no figures alone to judge by
      ++doubted;
      continue;
    }
    REQUIRE(row["pipes"].size() == basis.size());
    for (size_t k = 0; k < basis.size(); ++k) {
      const auto& v = row["pipes"][k];
      CHECK(v["basis"] == basis[k]["instruction"]);
      const std::string c = v["contention"];
      CHECK((c == "none" || c == "partial" || c == "shared" || c == "issue-width" || c == "penalty" || c == "unmeasured"));
      if (c == "unmeasured") CHECK_FALSE(v["reason"].get<std::string>().empty());
      if (c != "unmeasured" && c != "issue-width" && c != "penalty") ++judged;
      if (v["reason"].get<std::string>().rfind("not measured", 0) == 0) ++doubted;
    }
  }
  // A busy host leaves rows and pairs doubted ("not measured: ..."): then nothing can be judged here.
  if (judged == 0 && doubted > 0) PP_SKIP("every pair or row was doubted: the machine is too busy to judge pipes");
  CHECK(judged > 0);
  CHECK_THAT(slurp(csv), Catch::Contains(",repro,pipes,\"pipe:"));
  // Resumed with the same forms: the basis stays, and ok rows whose verdicts are all final are kept as
  // they were (a verdict "not measured: ..." -- a doubted pair -- is measured again).
  auto again = run_peakprobe("--quiet table --pipes " + forms + " --resume " + quoted(first) + " --json " +
                             quoted(second));
  REQUIRE(again.rc <= 1);
  auto doc2 = nlohmann::json::parse(slurp(second));
  CHECK(doc2["pipe_groups"]["basis"] == basis);
  for (size_t i = 0; i < doc["results"].size(); ++i) {
    const auto& row = doc["results"][i];
    if (row["status"] != "ok") continue;
    bool final = true;
    for (const auto& v : row["pipes"]) final = final && v["reason"].get<std::string>().rfind("not measured", 0) != 0;
    if (final) CHECK(doc2["results"][i] == row);
    REQUIRE(doc2["results"][i]["pipes"].size() == basis.size());
  }
  // Resumed without --pipes: the kept rows' verdicts keep the basis they refer to.
  auto plain = run_peakprobe("--quiet table " + forms + " --resume " + quoted(second) + " --json " + quoted(first));
  REQUIRE(plain.rc <= 1);
  CHECK(nlohmann::json::parse(slurp(first))["pipe_groups"]["basis"] == basis);
}

TEST_CASE("cli: table --forms takes forms as inst does, and refuses text that is no form", "[main]") {
  auto list = run_peakprobe("table --list --forms \"add r64, r64\" \"ADD r64,r64\" \"vpaddd xmm, xmm, xmm\"");
  REQUIRE(list.rc == 0);
  CHECK_THAT(list.out, Catch::Contains("2 forms:"));  // the same form twice is listed once
  auto bad = run_peakprobe("table --list --forms \"add r64, r64\" \"frobnicate r64\"");
  CHECK(bad.rc == 2);
  CHECK_THAT(bad.err, Catch::Contains("--forms") && Catch::Contains("frobnicate"));
}
