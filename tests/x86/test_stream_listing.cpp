// `inst --listing` for x86 forms with more than one stream: balanced stack forms, forms refused
// before running, and forms whose latency goes through several operands.
#include <catch2/catch.hpp>

#include "cpu/cpu_info.hpp"
#include "harness/stream_listing.hpp"

using namespace peakprobe;

namespace {

Expected<std::vector<StreamListing>> listings_of(const std::string& text, int chains) {
  static const CpuInfo cpu = detect_cpu_info();
  ProbeSpec spec;
  spec.text = text;
  ProbeResult row;
  row.accumulators = chains;
  return probe_listings(isa::host_target(), cpu, spec, row);
}

}  // namespace

TEST_CASE("stream listing: push is listed beside its pop as the balanced pair it is timed as", "[stream_listing]") {
  auto l = listings_of("push r64", 4);
  REQUIRE(l.ok());
  REQUIRE(l->size() == 1);
  CHECK_THAT(l->front().title, Catch::Contains("balanced with 'pop r64'"));
  CHECK_THAT(l->front().title, Catch::Contains("4 rounds"));
  CHECK_THAT(l->front().code, Catch::Contains("push "));
  CHECK_THAT(l->front().code, Catch::Contains("pop "));
}

TEST_CASE("stream listing: a refused form gives the refusal, a form with two inputs a chain through each",
          "[stream_listing]") {
  auto refused = listings_of("syscall", 1);
  REQUIRE_FALSE(refused.ok());
  CHECK_THAT(refused.error(), Catch::Contains("refused before running"));
  auto two = listings_of("imul r64, r64", 6);
  REQUIRE(two.ok());
  REQUIRE(two->size() == 4);  // the destination chain, operand 1, operand 2, the stream
  CHECK_THAT((*two)[1].title, Catch::StartsWith("latency through operand 1 (r64)"));
  CHECK_THAT((*two)[2].title, Catch::StartsWith("latency through operand 2 (r64)"));
  CHECK_THAT((*two)[3].title, Catch::StartsWith("throughput stream, 6 chains"));
}
