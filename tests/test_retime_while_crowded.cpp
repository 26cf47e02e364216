// Tests for src/matmul/retime_while_crowded.hpp: which timing a doubted product keeps, and what its
// row says. The timings are made up; no witness runs (one thread).
#include <catch2/catch.hpp>

#include <deque>

#include "hw_fixture.hpp"
#include "matmul/retime_while_crowded.hpp"
#include "skip.hpp"

using namespace peakprobe;

namespace {

struct Timing {
  double ms = 0;
};

// Runs the retries with `first` kept, `next` the timings taken again in turn (an error where the
// text is not empty) and `doubts` what each judgment in turn says.
struct Scenario {
  std::deque<Expected<Timing>> next;
  std::deque<std::optional<std::string>> doubts;
  int timed_again = 0;

  std::optional<std::string> run(Timing& kept) {
    const CpuInfo& cpu = test::this_cpu();
    static Gemm gemm(cpu, MatmulDtype::f32);
    MatmulConfig config;
    return retime_while_crowded<Timing>(
        gemm, config, 1, -1, "test", kept,
        [&]() -> Expected<Timing> {
          ++timed_again;
          Expected<Timing> t = std::move(next.front());
          next.pop_front();
          return t;
        },
        [](const Timing& t) { return t.ms; },
        [&]() -> std::optional<std::string> {
          std::optional<std::string> d = doubts.front();
          doubts.pop_front();
          return d;
        },
        std::chrono::milliseconds(0));
  }
};

}  // namespace

TEST_CASE("crowded retime: an undoubted timing is kept as it is", "[retime_while_crowded]") {
  Scenario s;
  s.doubts = {std::nullopt};
  Timing kept{5.0};
  CHECK_FALSE(s.run(kept));
  CHECK(kept.ms == 5.0);
  CHECK(s.timed_again == 0);
}

TEST_CASE("crowded retime: the first timing not doubted is kept, even if an earlier one was faster",
          "[retime_while_crowded]") {
  Scenario s;
  s.next = {Timing{9.0}, Timing{6.0}};
  s.doubts = {std::string("waited"), std::string("waited"), std::nullopt};
  Timing kept{4.0};  // fast, but doubted: a clock glitch is as possible as a quiet moment
  CHECK_FALSE(s.run(kept));
  CHECK(kept.ms == 6.0);
  CHECK(s.timed_again == 2);
}

TEST_CASE("crowded retime: doubted every time, the fastest is kept and the last doubt said", "[retime_while_crowded]") {
  Scenario s;
  s.next = {Timing{3.0}, Timing{8.0}};
  s.doubts = {std::string("one"), std::string("two"), std::string("three")};
  Timing kept{7.0};
  auto d = s.run(kept);
  REQUIRE(d);
  CHECK(*d == "three");
  CHECK(kept.ms == 3.0);
  CHECK(s.timed_again == kCrowdedAttempts - 1);
}

TEST_CASE("crowded retime: a timing that fails when taken again keeps the checked one and says why",
          "[retime_while_crowded]") {
  Scenario s;
  s.next = {make_error("the library crashed")};
  s.doubts = {std::string("waited")};
  Timing kept{7.0};
  auto d = s.run(kept);
  REQUIRE(d);
  CHECK(*d == "waited; timed again, it failed: the library crashed");
  CHECK(kept.ms == 7.0);
}
