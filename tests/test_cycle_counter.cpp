// Tests for src/harness/cycle_counter.cpp: the time base advances, says what it is, and
// PEAKPROBE_NO_PERF holds it to the timestamp counter.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <cstring>

#include "harness/cycle_counter.hpp"

using namespace peakprobe;

namespace {

void spin() {
  volatile uint64_t sink = 0;
  for (int i = 0; i < 200000; ++i) sink = sink + uint64_t(i);
}

}  // namespace

TEST_CASE("cycle counter: it advances, and its source names what it counts", "[cycle_counter]") {
  const CycleCounter counter;
  const uint64_t a = counter.now();
  spin();
  const uint64_t b = counter.now();
  CHECK(b > a);
  const std::string source = counter.source();
  CHECK(source == (counter.counts_cycles() ? "perf_event cycles" : "tsc + add-chain calibration"));
  // The timestamp read advances too, whichever the counter is.
  const uint64_t t0 = tsc_now();
  spin();
  CHECK(tsc_now() > t0);
}

TEST_CASE("cycle counter: PEAKPROBE_NO_PERF=1 keeps the timestamp counter, whose readings are the timestamp's",
          "[cycle_counter]") {
  ::setenv("PEAKPROBE_NO_PERF", "1", 1);
  const CycleCounter counter;
  ::unsetenv("PEAKPROBE_NO_PERF");
  CHECK_FALSE(counter.counts_cycles());
  CHECK(std::strcmp(counter.source(), "tsc + add-chain calibration") == 0);
  // Its readings are the timestamp's own: one read between two of the other lies between them.
  const uint64_t t0 = tsc_now();
  const uint64_t c = counter.now();
  const uint64_t t1 = tsc_now();
  CHECK(t0 <= c);
  CHECK(c <= t1);
}
