// Tests for src/harness/core_availability.cpp: the share of wall time a core runs the calling
// thread. Synthetic scans check the arithmetic; on the machine, a second thread kept runnable on the
// same core must take a large part of the scanned time away (physical invariant: two runnable threads
// on one core take turns).
#include <catch2/catch.hpp>

#include <sched.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "cpu/cpu_info.hpp"
#include "harness/core_availability.hpp"
#include "harness/pin.hpp"
#include "skip.hpp"

using namespace peakprobe;

TEST_CASE("core availability: the threshold is many loop steps and never under the floor", "[core_availability]") {
  // 1 GHz timestamp: the floor is kShortestInterruptionNs ticks.
  CHECK(interruption_threshold_ticks(1, 1e9) == uint64_t(kShortestInterruptionNs));
  CHECK(interruption_threshold_ticks(100, 1e9) == uint64_t(100 * kStepsPerThreshold));
  // A coarse timestamp whose steps read 0 still needs a step of at least two ticks.
  CHECK(interruption_threshold_ticks(0, 1e6) == 2);
}

TEST_CASE("core availability: gaps are the time the thread did not run", "[core_availability]") {
  // 10 ms at 1 GHz with three stops of 50, 40 and 60 us.
  const CoreAvailability a = availability_from_gaps({50'000, 40'000, 60'000}, 10'000'000, 1000, 1e9);
  CHECK(a.scanned_ms == Approx(10.0));
  CHECK(a.share == Approx(1.0 - 150e3 / 10e6));
  CHECK(a.interruptions == 3);
  CHECK(a.median_interruption_us == Approx(50.0));
  CHECK(a.longest_interruption_us == Approx(60.0));
  CHECK(a.threshold_us == Approx(1.0));
  // An even count takes the middle two.
  CHECK(availability_from_gaps({10'000, 30'000}, 1'000'000, 1000, 1e9).median_interruption_us == Approx(20.0));
  // Nothing lost: all of it ran.
  const CoreAvailability quiet = availability_from_gaps({}, 5'000'000, 1000, 1e9);
  CHECK(quiet.share == 1.0);
  CHECK(quiet.interruptions == 0);
  CHECK(quiet.median_interruption_us == 0);
  // No time or no rate: not scanned.
  CHECK(availability_from_gaps({}, 0, 1000, 1e9).scanned_ms == 0);
  CHECK(availability_from_gaps({}, 1000, 1000, 0).share == 0);
}

TEST_CASE("core availability: a call pays the whole periods of interruptions it spans", "[core_availability]") {
  CoreAvailability a;
  // 25 stops of 40 us in 20 ms: one every 0.8 ms, 5% of the time.
  a.scanned_ms = 20, a.interruptions = 25, a.median_interruption_us = 40, a.share = 0.95;
  // 10 ms spans 12.5 periods: 12 stops, 0.48 ms.
  UnavoidableStops s = unavoidable_interruptions(a, 10);
  CHECK(s.count == 12);
  CHECK(s.ms == Approx(0.48));
  // Shorter than one period: none.
  s = unavoidable_interruptions(a, 0.5);
  CHECK(s.count == 0);
  CHECK(s.ms == 0);
  // Never more time than the scan lost of the call: long stops that were few in the scan.
  a.median_interruption_us = 200;
  CHECK(unavoidable_interruptions(a, 10).ms == Approx(0.05 * 10));
  // No scan, no stops, or no call: nothing.
  CHECK(unavoidable_interruptions(CoreAvailability{}, 10).ms == 0);
  a.interruptions = 0;
  CHECK(unavoidable_interruptions(a, 10).count == 0);
  a.interruptions = 25;
  CHECK(unavoidable_interruptions(a, 0).count == 0);
}

TEST_CASE("core availability: of two scans the quieter one stands", "[core_availability]") {
  CoreAvailability busy, calm;
  busy.share = 0.82, busy.scanned_ms = 10, busy.interruptions = 259, busy.cpu = 0;
  calm.share = 0.95, calm.scanned_ms = 10, calm.interruptions = 13, calm.cpu = 0;
  CHECK(quieter(busy, calm).interruptions == 13);
  CHECK(quieter(calm, busy).interruptions == 13);
  // A scan that did not happen gives way, whichever side it is on.
  CHECK(quieter(CoreAvailability{}, busy).interruptions == 259);
  CHECK(quieter(busy, CoreAvailability{}).interruptions == 259);
  CHECK(quieter(CoreAvailability{}, CoreAvailability{}).scanned_ms == 0);
}

TEST_CASE("core availability: a team is judged by the core whose stops its call can least avoid",
          "[core_availability]") {
  CoreAvailability first, second;
  first.share = 0.95, first.scanned_ms = 10, first.interruptions = 12, first.cpu = 0;
  first.median_interruption_us = 40;
  second.share = 0.91, second.scanned_ms = 10, second.interruptions = 30, second.cpu = 1;
  second.median_interruption_us = 30;
  CHECK(least_available({first, second}, 10).cpu == 1);
  CHECK(least_available({second, first}, 10).cpu == 1);
  // A core that was not scanned says nothing, even with a share of 0.
  CHECK(least_available({CoreAvailability{}, first}, 10).cpu == 0);
  CHECK(least_available({first, CoreAvailability{}}, 10).cpu == 0);
  CHECK(least_available({}, 10).scanned_ms == 0);
  CHECK(least_available({CoreAvailability{}}, 10).scanned_ms == 0);
  // Few long stops lose the larger share, but a short call slips between them: 2 stops of 400 us in
  // 10 ms (share 0.92) against 20 of 30 us (0.94). A 3 ms call spans none of the first core's and six
  // of the second's; a 20 ms call four of the first's (1.6 ms) and forty of the second's (1.2 ms).
  CoreAvailability rare, frequent;
  rare.share = 0.92, rare.scanned_ms = 10, rare.interruptions = 2, rare.median_interruption_us = 400, rare.cpu = 0;
  frequent.share = 0.94, frequent.scanned_ms = 10, frequent.interruptions = 20;
  frequent.median_interruption_us = 30, frequent.cpu = 1;
  CHECK(least_available({rare, frequent}, 3).cpu == 1);
  CHECK(least_available({rare, frequent}, 20).cpu == 0);
  // A call too short for any stop: the smaller share stands, for the report.
  CHECK(least_available({frequent, rare}, 0.01).cpu == 0);
}

TEST_CASE("core availability: a thread kept runnable on the same core takes its time away",
          "[core_availability][hw]") {
  const CpuInfo cpu = detect_cpu_info();
  if (!(cpu.tsc_hz > 0)) PP_SKIP("no timestamp rate on this machine");
  if (!cpu.emulator.empty()) PP_SKIP("under an emulator the timestamp does not follow the core");
  AffinityGuard caller_affinity;
  const int core = sched_getcpu();
  REQUIRE(pin_current_thread(core));
  const CoreAvailability alone = scan_core_availability(20, cpu.tsc_hz);
  INFO("alone: " << alone.share << " of " << alone.scanned_ms << " ms, " << alone.interruptions << " interruptions");
  // The scan covers what it was asked for (a coarse timestamp may end it within a tick of that).
  REQUIRE(alone.scanned_ms >= 19.8);
  CHECK(alone.share > 0.0);
  CHECK(alone.cpu == core);

  std::atomic<bool> running{false}, stop{false};
  std::thread other([&] {
    pin_current_thread(core);
    running = true;
    while (!stop.load(std::memory_order_relaxed)) {
    }
  });
  while (!running.load()) std::this_thread::yield();
  const CoreAvailability shared = scan_core_availability(100, cpu.tsc_hz);
  stop = true;
  other.join();
  INFO("beside a spinning thread: " << shared.share << " of " << shared.scanned_ms << " ms, " << shared.interruptions
                                    << " interruptions, longest " << shared.longest_interruption_us << " us");
  // Taking turns for 100 ms, the scan runs about half of it; a scan blind to the turns reads ~1.
  CHECK(shared.share < 0.8);
  CHECK(shared.interruptions >= 1);
}
