// Tests for src/harness/pin.cpp: a thread runs where it is pinned, a CPU outside the allowed set is
// refused with a reason, and AffinityGuard gives the thread its CPU set back.
#include <catch2/catch.hpp>

#include <sched.h>

#include <string>
#include <thread>

#include "harness/pin.hpp"

using namespace peakprobe;

namespace {

// -1 when the set cannot be read. (No REQUIRE inside the threads below: a Catch assertion that
// throws out of a std::thread ends the process; they record, and the test checks after join.)
int allowed_count() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) != 0) return -1;
  return CPU_COUNT(&set);
}

int first_allowed() {
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (cpu_allowed(c)) return c;
  return -1;
}

}  // namespace

TEST_CASE("pin: a pinned thread runs on its CPU, and a CPU it may not use is refused with the reason", "[pin]") {
  const int cpu = first_allowed();
  REQUIRE(cpu >= 0);
  struct Seen {
    bool pinned = false, refused_negative = true, refused_large = true, negative_allowed = true;
    std::string error, error_negative, error_large;
    int on = -2, allowed = -2, after_refusals = -2;
  } seen;
  std::thread([&] {
    seen.pinned = pin_current_thread(cpu, &seen.error);
    seen.on = current_cpu();
    seen.allowed = allowed_count();
    seen.negative_allowed = cpu_allowed(-1);
    seen.refused_negative = !pin_current_thread(-1, &seen.error_negative);
    seen.refused_large = !pin_current_thread(CPU_SETSIZE + 5, &seen.error_large);
    seen.after_refusals = current_cpu();
  }).join();
  REQUIRE(seen.pinned);
  CHECK(seen.error.empty());
  CHECK(seen.on == cpu);
  CHECK(seen.allowed == 1);
  CHECK_FALSE(seen.negative_allowed);
  CHECK(seen.refused_negative);
  CHECK_FALSE(seen.error_negative.empty());
  CHECK(seen.refused_large);
  CHECK_FALSE(seen.error_large.empty());
  CHECK(seen.after_refusals == cpu);  // a refused pin leaves the thread where it was
}

TEST_CASE("pin: AffinityGuard puts the thread's CPU set back when it goes out of scope", "[pin]") {
  int before = -2, inside = -2, after = -2;
  bool pinned = false;
  std::thread([&] {
    before = allowed_count();
    {
      AffinityGuard guard;
      pinned = pin_current_thread(first_allowed());
      inside = allowed_count();
    }
    after = allowed_count();
  }).join();
  REQUIRE(pinned);
  CHECK(inside == 1);
  CHECK(before >= 1);
  CHECK(after == before);
}
