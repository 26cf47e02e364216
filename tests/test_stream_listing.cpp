// `inst --listing`: the streams a form's measurement times, planned again with the chains its row
// names, in the order they run, with the form's own instruction in each loop.
#include <catch2/catch.hpp>

#include <sstream>

#include "cpu/cpu_info.hpp"
#include "harness/stream_listing.hpp"
#include "target_fixture.hpp"

using namespace peakprobe;

namespace {

const CpuInfo& cpu() {
  static const CpuInfo c = detect_cpu_info();
  return c;
}

// Lines of `code` that are the instruction `mnemonic` (asmjit writes one instruction a line).
int lines_of(const std::string& code, const std::string& mnemonic) {
  std::istringstream in(code);
  int n = 0;
  for (std::string line; std::getline(in, line);)
    if (line.rfind(mnemonic + " ", 0) == 0) ++n;
  return n;
}

}  // namespace

TEST_CASE("stream listing: the latency chain first, the throughput stream at the row's chains last", "[stream_listing]") {
  const std::string text = test::target().ruler_forms().one_cycle;
  const std::string mnemonic = test::mnemonic_of(text);
  REQUIRE_FALSE(mnemonic.empty());
  ProbeSpec spec;
  spec.text = text;
  for (int chains : {1, 5}) {
    ProbeResult row;
    row.accumulators = chains;
    auto listings = probe_listings(test::target(), cpu(), spec, row);
    REQUIRE(listings.ok());
    REQUIRE(listings->size() >= 2);
    CHECK_THAT(listings->front().title, Catch::StartsWith("latency chain"));
    const StreamListing& stream = listings->back();
    CHECK_THAT(stream.title, Catch::StartsWith("throughput stream, " + std::to_string(chains) + " chain"));
    // Each copy of the pattern holds one instruction a chain.
    CHECK(lines_of(stream.code, mnemonic) >= chains);
    // The latency chain is one chain: every link is the form's instruction.
    CHECK(lines_of(listings->front().code, mnemonic) > 1);
  }
  // A row without chains (not measured) lists the stream at the most chains the form has.
  auto unmeasured = probe_listings(test::target(), cpu(), spec, ProbeResult{});
  REQUIRE(unmeasured.ok());
  auto form = test::target().probe_form(text, cpu());
  REQUIRE(form.ok());
  CHECK_THAT(unmeasured->back().title,
             Catch::StartsWith("throughput stream, " + std::to_string(form.value()->max_chains()) + " chain"));
}

TEST_CASE("stream listing: a text that is no form gives the parser's error", "[stream_listing]") {
  ProbeSpec spec;
  spec.text = test::misspelled(test::target().help_texts().example_form);
  auto listings = probe_listings(test::target(), cpu(), spec, ProbeResult{});
  REQUIRE_FALSE(listings.ok());
  CHECK_FALSE(listings.error().empty());
}
