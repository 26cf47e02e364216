// The ceiling table's outputs for a fixed input: golden CSV and Markdown, JSON structure, and the
// JSON round trip `score --table` depends on.
#include <catch2/catch.hpp>

#include <sstream>

#include "report/ceiling_report.hpp"
#include "report_fixture.hpp"

using namespace peakprobe;

namespace {

RunDocument roofline_document() {
  RunDocument d = test::report_fixture();
  d.results.clear();
  CeilingTable t;
  t.compute = {{"f32", "512", 1, 177.3, false, 48.0, 3.694, "mix 1:1 of vfmadd231ps zmm, zmm, zmm + vaddps zmm, zmm, zmm"},
               {"f32", "512", 2, 236.4, false, 32.0, 3.694, "vfmadd231ps zmm, zmm, zmm"},
               {"i8", "512", 1, 473.4, true, 128.1, 3.694, "vpdpbusd zmm, zmm, zmm"}};
  t.memory = {{"L1", "load", 1, 224.3, 60.7, 16384}, {"DRAM", "load", 1, 24.0, 6.5, 536870912}};
  t.ridges = {{"f32", "512", "L1", "load", 1, 177.3 / 224.3}, {"f32", "512", "DRAM", "load", 1, 177.3 / 24.0}};
  d.ceilings = t;
  KernelScore s;
  s.name = "gemm 1024";
  s.flops = 2.147e9;
  s.bytes = 1.258e7;
  s.seconds = 0.0202;
  s.level = "DRAM";
  s.ai = s.flops / s.bytes;
  s.achieved_gflops = 106.3;
  s.attainable_gflops = 177.3;
  s.bound_by = "compute f32 512";
  s.efficiency = 106.3 / 177.3;
  s.ridge_ai = 177.3 / 24.0;
  s.distance_to_ridge = s.ai / s.ridge_ai;
  d.scores = {s};
  return d;
}

}  // namespace

TEST_CASE("ceiling CSV and Markdown match the golden files", "[report]") {
  const RunDocument d = roofline_document();
  std::ostringstream csv, md;
  write_ceilings_csv(csv, d);
  write_ceilings_markdown(md, d);
  test::check_golden("ceilings.csv", csv.str());
  test::check_golden("ceilings.md", md.str());
}

TEST_CASE("ceiling JSON carries schema, conventions and every row", "[report]") {
  const auto j = to_json(*roofline_document().ceilings);
  CHECK(j["schema"] == kCeilingSchema);
  for (const char* k : {"flops", "bytes", "intensity"}) CHECK(j["conventions"].contains(k));
  REQUIRE(j["compute"].size() == 3);
  CHECK(j["compute"][0]["gflops"].get<double>() == Approx(177.3));
  CHECK(j["compute"][2].contains("gops"));  // integer roofs count operations, not FLOPs
  CHECK_FALSE(j["compute"][2].contains("gflops"));
  REQUIRE(j["memory"].size() == 2);
  CHECK(j["memory"][1]["size_bytes"] == 536870912);
  REQUIRE(j["ridges"].size() == 2);
  CHECK(j["ridges"][1]["ai"].get<double>() == Approx(177.3 / 24.0));
}

TEST_CASE("a saved ceiling table reads back as it was written", "[report]") {
  const CeilingTable t = *roofline_document().ceilings;
  nlohmann::json doc = {{"schema", "peakprobe/1"}, {"ceilings", to_json(t)}};
  auto back = ceilings_from_json(nlohmann::json::parse(doc.dump()));
  REQUIRE(back.ok());
  REQUIRE(back->compute.size() == t.compute.size());
  for (size_t i = 0; i < t.compute.size(); ++i) {
    CHECK(back->compute[i].dtype == t.compute[i].dtype);
    CHECK(back->compute[i].gops == Approx(t.compute[i].gops));
    CHECK(back->compute[i].integer == t.compute[i].integer);
    CHECK(back->compute[i].source == t.compute[i].source);
  }
  REQUIRE(back->memory.size() == t.memory.size());
  CHECK(back->memory[0].gbps == Approx(224.3));
  CHECK_FALSE(ceilings_from_json(nlohmann::json{{"schema", "other"}}).ok());
  CHECK_FALSE(ceilings_from_json(nlohmann::json{{"schema", kCeilingSchema}, {"compute", 3}}).ok());
}
