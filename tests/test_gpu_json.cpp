#include <catch2/catch.hpp>

#include "gpu/gpu_json.hpp"
#include "gpu_fixture.hpp"

using namespace peakprobe;

TEST_CASE("gpu json: a report survives the round trip a worker's answer takes", "[gpu_json]") {
  const GpuReport r = test::sample_gpu_report();
  const nlohmann::json j = to_json(r);
  CHECK(j.at("device").at("name") == r.device.name);
  CHECK(j.at("compute").at(1).at("status") == "skipped");
  auto back = gpu_report_from_json(nlohmann::json::parse(j.dump()));
  REQUIRE(back.ok());
  CHECK(back->device.name == r.device.name);
  CHECK(back->device.extensions == r.device.extensions);
  REQUIRE(back->compute.size() == 2);
  CHECK(back->compute[0].gops == Approx(1234.5));
  CHECK(back->compute[0].gops_stats.samples == 5);
  CHECK(back->compute[1].status == Status::skipped);
  REQUIRE(back->memory.size() == 2);
  CHECK(back->memory[1].status == Status::mistrusted);
  CHECK(back->memory[1].reason == r.memory[1].reason);
  REQUIRE(back->latency.size() == 1);
  CHECK(back->latency[0].ns == Approx(480.5));
  CHECK(back->seconds == Approx(3.25));
}

TEST_CASE("gpu json: anything else is a typed error", "[gpu_json]") {
  CHECK_FALSE(gpu_report_from_json(nlohmann::json::object()).ok());
  nlohmann::json j = to_json(test::sample_gpu_report());
  j["compute"][0]["status"] = "great";
  auto bad = gpu_report_from_json(j);
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().find("not a GPU report") != std::string::npos);
  j = to_json(test::sample_gpu_report());
  j["device"].erase("clock_mhz");
  CHECK_FALSE(gpu_report_from_json(j).ok());
}
