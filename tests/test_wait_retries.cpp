// Bandwidth rows measured again while another program holds a core (memory/wait_retries.hpp).
#include <catch2/catch.hpp>

#include <vector>

#include "memory/wait_retries.hpp"

using namespace peakprobe;

namespace {

BandwidthResult row(bool waited, double gbps) {
  BandwidthResult r;
  r.kernel = "load";
  r.gbps = gbps;
  r.waited_every_repetition = waited;
  if (waited) r.status = Status::mistrusted;
  return r;
}

// A measurement that answers the given rows in turn, counting its calls.
struct Script {
  std::vector<BandwidthResult> rows;
  size_t calls = 0;
  BandwidthResult operator()() { return rows.at(calls++); }
};

}  // namespace

TEST_CASE("wait retries: a row that measured memory is taken at once, with no pause", "[wait_retries]") {
  std::vector<int> pauses;
  WaitRetries retries([&](int ms) { pauses.push_back(ms); });
  Script s{{row(false, 100)}};
  const BandwidthResult r = retries.measure([&] { return s(); });
  CHECK(s.calls == 1);
  CHECK(pauses.empty());
  CHECK(*r.gbps == 100);
  CHECK(retries.spoiled_in_a_row() == 0);
}

TEST_CASE("wait retries: a row whose threads waited is measured again after pauses until one measures memory", "[wait_retries]") {
  std::vector<int> pauses;
  WaitRetries retries([&](int ms) { pauses.push_back(ms); });
  Script s{{row(true, 40), row(true, 45), row(false, 120)}};
  const BandwidthResult r = retries.measure([&] { return s(); });
  CHECK(s.calls == 3);
  CHECK(pauses == std::vector<int>{kWaitPauseMs[0], kWaitPauseMs[1]});
  CHECK_FALSE(r.waited_every_repetition);
  CHECK(*r.gbps == 120);
  CHECK(retries.spoiled_in_a_row() == 0);
}

TEST_CASE("wait retries: once rows in a row stay spoiled, later ones get one attempt until one measures memory", "[wait_retries]") {
  std::vector<int> pauses;
  WaitRetries retries([&](int ms) { pauses.push_back(ms); });
  // The first kPersistentWaitRows rows use every attempt and stay spoiled.
  for (int i = 0; i < kPersistentWaitRows; ++i) {
    CHECK_FALSE(retries.persistent());
    Script s{std::vector<BandwidthResult>(kWaitAttempts, row(true, 40))};
    const BandwidthResult r = retries.measure([&] { return s(); });
    CHECK(s.calls == size_t(kWaitAttempts));
    CHECK(r.waited_every_repetition);
  }
  CHECK(retries.persistent());
  CHECK(pauses.size() == size_t(kPersistentWaitRows * (kWaitAttempts - 1)));
  // Lasting: one attempt, no pause.
  Script lasting{{row(true, 40), row(false, 120)}};
  CHECK(retries.measure([&] { return lasting(); }).waited_every_repetition);
  CHECK(lasting.calls == 1);
  CHECK(pauses.size() == size_t(kPersistentWaitRows * (kWaitAttempts - 1)));
  // A row that measures memory ends it: the next spoiled row is tried again in full.
  Script clean{{row(false, 120)}};
  retries.measure([&] { return clean(); });
  CHECK_FALSE(retries.persistent());
  Script again{{row(true, 40), row(false, 118)}};
  CHECK(*retries.measure([&] { return again(); }).gbps == 118);
  CHECK(again.calls == 2);
}
