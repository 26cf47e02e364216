// Tests for src/report/json_read.cpp: reads of peakprobe's own documents never throw and never
// invent a value: a missing key, another type or an out-of-range number gives the fallback.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>

#include "report/json_read.hpp"

using namespace peakprobe;
using namespace peakprobe::json_read;

TEST_CASE("json read: members of objects only, numbers and texts by their type", "[json_read]") {
  const json doc = json::parse(R"({"n": 3, "x": 2.5, "s": "text", "null": null, "list": [1, 2]})");
  CHECK(member(doc, "n") != nullptr);
  CHECK(member(doc, "missing") == nullptr);
  CHECK(member(json::array({1, 2}), "n") == nullptr);  // not an object
  CHECK(number_at(doc, "x") == 2.5);
  CHECK(number_at(doc, "n") == 3.0);
  CHECK(number_at(doc, "missing", 7.0) == 7.0);
  CHECK(number_at(doc, "s", 7.0) == 7.0);  // another type
  CHECK(std::isnan(number_at(doc, "null", 7.0)));  // to_json writes NaN as null
  CHECK(optional_at(doc, "x") == 2.5);
  CHECK_FALSE(optional_at(doc, "null"));
  CHECK_FALSE(optional_at(doc, "s"));
  CHECK(text_at(doc, "s") == "text");
  CHECK(text_at(doc, "n", "none") == "none");
  CHECK(text_at(doc, "missing", "none") == "none");
}

TEST_CASE("json read: an integer out of the target's range is the fallback, not a wrapped value", "[json_read]") {
  const json doc = json::parse(R"({"big": 5000000000, "neg": -1, "huge": 18446744073709551615,
                                   "float": 3.9, "bigfloat": 1e300, "edge": 9.223372036854775808e18, "nan": null})");
  CHECK(integer_at<int>(doc, "big", -7) == -7);  // 5e9 as an int would read 705032704
  CHECK(integer_at<int64_t>(doc, "big", -7) == 5000000000);
  CHECK(integer_at<int>(doc, "neg", 9) == -1);
  CHECK(integer_at<uint32_t>(doc, "neg", 9) == 9);  // -1 as unsigned would read 4294967295
  CHECK(integer_at<int64_t>(doc, "huge", -7) == -7);
  CHECK(integer_at<uint64_t>(doc, "huge", 0) == UINT64_MAX);
  CHECK(integer_at<int>(doc, "float", 0) == 3);
  CHECK(integer_at<int>(doc, "bigfloat", -7) == -7);
  CHECK(integer_at<int64_t>(doc, "edge", -7) == -7);  // 2^63: one past int64_t's largest
  CHECK(integer_at<int>(doc, "nan", -7) == -7);
  CHECK(integer_at<int>(doc, "missing", -7) == -7);
}

TEST_CASE("json read: statuses by their names, clock readings and availability with defaults", "[json_read]") {
  CHECK(status_from("ok") == Status::ok);
  CHECK(status_from("mistrusted") == Status::mistrusted);
  CHECK(status_from("error") == Status::error);
  CHECK(status_from("skipped") == Status::skipped);
  CHECK_FALSE(status_from("OK"));
  CHECK_FALSE(status_from(""));
  const ClockReading c = clock_from(json::parse(R"({"source": "tsc", "ghz": 3.5, "ghz_before": 3.4})"));
  CHECK(c.source == "tsc");
  CHECK(c.ghz == 3.5);
  CHECK(c.ghz_before == 3.4);
  CHECK(c.ghz_after == 0);  // missing: the fallback
  const CoreAvailability a = availability_from(json::parse(R"({"share": 0.9, "interruptions": "many"})"));
  CHECK(a.cpu == -1);
  CHECK(a.share == 0.9);
  CHECK(a.interruptions == 0);  // another type
}
