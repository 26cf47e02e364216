// Tests for src/report/status.cpp: the status names every output format writes.
#include <catch2/catch.hpp>

#include <string>

#include "peakprobe/result.hpp"

using namespace peakprobe;

TEST_CASE("status names are the ones the documents use, and a value outside the enum says so", "[status]") {
  CHECK(std::string(to_string(Status::ok)) == "ok");
  CHECK(std::string(to_string(Status::skipped)) == "skipped");
  CHECK(std::string(to_string(Status::mistrusted)) == "mistrusted");
  CHECK(std::string(to_string(Status::error)) == "error");
  CHECK(std::string(to_string(static_cast<Status>(99))) == "unknown");
}
