// The clock of a product's fastest timed call (matmul/call_clock.hpp).
#include <catch2/catch.hpp>

#include "matmul/call_clock.hpp"

using namespace peakprobe;

namespace {
ClockSample at(double ghz) {
  ClockSample s;
  s.ghz = ghz;
  return s;
}
}  // namespace

TEST_CASE("call clock: the fastest call is scored at the readings around its own segment", "[call_clock]") {
  CallClock c;
  c.start(at(3.4));
  // Calls of 10 ms: each closes a segment. The clock rises to 3.7 GHz around the third call, the
  // fastest; the readings at the ends of the run (3.4, 3.5) would describe other moments.
  const double ms[] = {10.4, 10.3, 9.7, 10.2};
  const double after[] = {3.45, 3.6, 3.7, 3.5};
  for (int i = 0; i < 4; ++i) {
    c.add_call(ms[i]);
    REQUIRE(c.due());
    c.read(at(after[i]));
    CHECK_FALSE(c.due());
  }
  CHECK(c.segments() == 4);
  const ClockReading r = c.fastest("test");
  CHECK(r.ghz_before == 3.6);
  CHECK(r.ghz_after == 3.7);
  CHECK(r.ghz == Approx(3.65));
  CHECK(r.source == "test");
}

TEST_CASE("call clock: short calls share a segment until it lasts its time", "[call_clock]") {
  CallClock c;
  c.start(at(3.5));
  // Calls of 0.5 ms (one of 0.4): due once they add up to the segment's time, not before.
  double sum = 0;
  int calls = 0;
  while (!c.due()) {
    const double ms = calls == 3 ? 0.4 : 0.5;
    c.add_call(ms);
    sum += ms;
    ++calls;
    CHECK(c.due() == (sum >= kClockSegmentMs));
    REQUIRE(calls < 100);
  }
  CHECK(calls > 1);
  c.read(at(3.6));
  c.add_call(0.45);
  c.read(at(3.0));  // the last reading, after the run, closes the open segment
  const ClockReading r = c.fastest("test");
  CHECK(r.ghz_before == 3.5);  // the 0.4 ms call was in the first segment
  CHECK(r.ghz_after == 3.6);
}

TEST_CASE("call clock: a short call whose preparation takes long closes its segment by wall time", "[call_clock]") {
  CallClock c;
  c.start(at(3.5));
  c.add_call(0.02, kClockSegmentMs);  // a cold-cache call: 0.02 ms of product, the rest preparing
  CHECK(c.due());
}

TEST_CASE("call clock: no known clock for a segment with a failed reading, an open one, or no call", "[call_clock]") {
  CallClock none;
  CHECK(none.fastest("test").ghz == 0);
  CallClock empty;
  empty.start(at(3.5));
  empty.read(at(3.5));
  CHECK(empty.fastest("test").ghz == 0);
  CallClock failed;
  failed.start(at(3.5));
  failed.add_call(10);
  failed.read(at(0));
  CHECK(failed.fastest("test").ghz == 0);  // no reading after it
  // A failed reading stands aside for the nearest good one on its side.
  CallClock gap;
  gap.start(at(3.4));
  gap.add_call(10);
  gap.read(at(0));  // failed
  gap.add_call(9);  // the fastest
  gap.read(at(3.6));
  const ClockReading around = gap.fastest("test");
  CHECK(around.ghz_before == 3.4);
  CHECK(around.ghz_after == 3.6);
  CallClock open;
  open.start(at(3.5));
  open.add_call(1);
  CHECK(open.fastest("test").ghz == 0);
  // A reading before start() is ignored.
  CallClock unstarted;
  unstarted.read(at(3.5));
  CHECK(unstarted.segments() == 0);
}
