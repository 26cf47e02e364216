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
  // The report scanned two cores: the summary says what share of the wall time each gave a thread.
  d.availability = {{0, 0.949, 25.0, 33, 37.1, 75.5, 1.0}, {1, 0.928, 25.0, 1, 49.3, 49.3, 1.0}};
  CeilingTable t;
  t.compute = {{"f32", "512", 1, 177.3, false, 48.0, 3.694, "mix 1:1 of vfmadd231ps zmm, zmm, zmm + vaddps zmm, zmm, zmm"},
               {"f32", "512", 2, 236.4, false, 32.0, 3.694, "vfmadd231ps zmm, zmm, zmm"},
               // Each row at its own probe's clock; a probe that read none prints "-".
               {"i8", "512", 1, 473.4, true, 128.1, 3.512, "vpdpbusd zmm, zmm, zmm"},
               {"i8", "256", 1, 236.2, true, 64.0, 0.0, "vpdpbusd ymm, ymm, ymm"}};
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
  s.peak_gflops = 177.3;
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

TEST_CASE("ceiling console table matches the golden file", "[report]") {
  std::ostringstream out;
  write_ceilings_console(out, roofline_document());
  test::check_golden("ceilings_console.txt", out.str());
}

TEST_CASE("ceiling JSON carries schema, conventions and every row", "[report]") {
  const auto j = to_json(*roofline_document().ceilings);
  CHECK(j["schema"] == kCeilingSchema);
  for (const char* k : {"flops", "bytes", "intensity"}) CHECK(j["conventions"].contains(k));
  REQUIRE(j["compute"].size() == 4);
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

// Found by fuzzing `score --table`: a "schema" that is not a string threw out of the reader, and a
// count far outside int's range (1e300 threads, a negative size) reached a cast whose result is undefined.
TEST_CASE("a saved ceiling table with keys of the wrong type or range is an error", "[report]") {
  using nlohmann::json;
  CHECK_FALSE(ceilings_from_json(json{{"schema", 5}, {"compute", json::array()}}).ok());
  CHECK_FALSE(ceilings_from_json(json{{"ceilings", {{"schema", json::array()}}}}).ok());
  CHECK_FALSE(ceilings_from_json(json::array()).ok());
  auto table = [](json compute, json memory) {
    return json{{"schema", kCeilingSchema}, {"compute", json::array({compute})}, {"memory", json::array({memory})}};
  };
  const json c = {{"dtype", "f32"}, {"isa", "512"}, {"threads", 1}, {"gflops", 100.0}};
  const json m = {{"level", "L1"}, {"kernel", "load"}, {"threads", 1}, {"gbps", 200.0}, {"size_bytes", 16384}};
  REQUIRE(ceilings_from_json(table(c, m)).ok());
  CHECK(ceilings_from_json(table(c, m))->memory[0].size_bytes == 16384);
  for (json threads : {json(1e300), json(-1e300), json(2.5), json(4294967296LL), json("1")}) {
    INFO(threads.dump());
    json bad_c = c, bad_m = m;
    bad_c["threads"] = threads;
    bad_m["threads"] = threads;
    auto a = ceilings_from_json(table(bad_c, m));
    REQUIRE_FALSE(a.ok());
    CHECK(a.error().find("malformed ceiling table") != std::string::npos);
    CHECK_FALSE(ceilings_from_json(table(c, bad_m)).ok());
  }
  for (json size : {json(-1), json(-1e300), json(1e300)}) {
    json bad_m = m;
    bad_m["size_bytes"] = size;
    CHECK_FALSE(ceilings_from_json(table(c, bad_m)).ok());
  }
  json whole_double = c;
  whole_double["threads"] = 2.0;  // a tool that writes every number as a double
  auto ok = ceilings_from_json(table(whole_double, m));
  REQUIRE(ok.ok());
  CHECK(ok->compute[0].threads == 2);
}

// `score --kernels` used to read each entry with json's value(), which throws on an entry that is not
// an object or a key of another type: the exception ended the program. Now each is an error.
TEST_CASE("score --kernels: entries read with defaults, wrong types are errors naming the entry", "[report]") {
  using nlohmann::json;
  auto reqs = score_requests_from_json(
      json::parse(R"([{"name": "gemm", "flops": 2e9, "bytes": 1e7, "seconds": 0.02, "level": "L2"},
                      {"flops": 1, "bytes": 2, "seconds": 3, "threads": 2, "dtype": "f64"}])"),
      4);
  REQUIRE(reqs.ok());
  REQUIRE(reqs->size() == 2);
  CHECK((*reqs)[0].name == "gemm");
  CHECK((*reqs)[0].flops == 2e9);
  CHECK((*reqs)[0].level == "L2");
  CHECK((*reqs)[0].dtype == "f32");
  CHECK((*reqs)[0].threads == 4);  // the default: --threads
  CHECK((*reqs)[1].name == "kernel");
  CHECK((*reqs)[1].threads == 2);
  CHECK((*reqs)[1].dtype == "f64");
  CHECK(score_requests_from_json(json::array(), 1)->empty());
  CHECK_FALSE(score_requests_from_json(json::object(), 1).ok());
  for (const char* bad : {R"([5])", R"([{"name": 1}])", R"([{"flops": "many"}])", R"([{}, {"level": null}])",
                          R"([{"threads": 1e300}])", R"([{"threads": 1.5}])", R"([{"threads": "2"}])"}) {
    INFO(bad);
    auto r = score_requests_from_json(json::parse(bad), 1);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().find("kernel ") == 0);
  }
}
