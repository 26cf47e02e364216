// Tests for src/harness/pin.cpp: a thread runs where it is pinned, a CPU outside the allowed set is
// refused with a reason, and AffinityGuard gives the thread its CPU set back.
#include <catch2/catch.hpp>

#include <sched.h>

#include <string>
#include <thread>

#include "harness/pin.hpp"

using namespace peakprobe;

namespace {

int allowed_count() {
  cpu_set_t set;
  CPU_ZERO(&set);
  REQUIRE(sched_getaffinity(0, sizeof(set), &set) == 0);
  return CPU_COUNT(&set);
}

int first_allowed() {
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (cpu_allowed(c)) return c;
  return -1;
}

}  // namespace

TEST_CASE("pin: a pinned thread runs on its CPU, and a CPU it may not use is refused with the reason", "[pin]") {
  std::thread([] {
    const int cpu = first_allowed();
    REQUIRE(cpu >= 0);
    std::string error;
    REQUIRE(pin_current_thread(cpu, &error));
    CHECK(error.empty());
    CHECK(current_cpu() == cpu);
    CHECK(allowed_count() == 1);
    CHECK_FALSE(cpu_allowed(-1));
    CHECK_FALSE(pin_current_thread(-1, &error));
    CHECK_FALSE(error.empty());
    error.clear();
    CHECK_FALSE(pin_current_thread(CPU_SETSIZE + 5, &error));
    CHECK_FALSE(error.empty());
    CHECK(current_cpu() == cpu);  // a refused pin leaves the thread where it was
  }).join();
}

TEST_CASE("pin: AffinityGuard puts the thread's CPU set back when it goes out of scope", "[pin]") {
  std::thread([] {
    const int before = allowed_count();
    {
      AffinityGuard guard;
      REQUIRE(pin_current_thread(first_allowed()));
      CHECK(allowed_count() == 1);
    }
    CHECK(allowed_count() == before);
  }).join();
}
