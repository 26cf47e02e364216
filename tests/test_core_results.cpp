// Tests for src/pairs/core_results.cpp: pair-batch results kept per core, and which pairs must be
// measured again so that no verdict compares a pair with references from another core.
#include <catch2/catch.hpp>

#include <vector>

#include "pairs/core_results.hpp"

using namespace peakprobe;

namespace {

MixResult on_cpu(int cpu, Status status = Status::ok, double cycles = 1.0) {
  MixResult m;
  m.cpu = cpu;
  m.status = status;
  m.cycles_per_group = cycles;
  return m;
}

// Jobs 0 and 1: the references of parts A and B; job 2: the pair A + B.
std::vector<PairJobs> one_pair() { return {PairJobs{2, {0, 1}}}; }

}  // namespace

TEST_CASE("core results: each core keeps its own latest result of a job", "[pipes]") {
  ResultsByCore r;
  r.reset(2);
  CHECK(r.latest(0) == nullptr);
  CHECK(r.on(0, 0) == nullptr);
  r.store(0, on_cpu(0, Status::ok, 1.0));
  r.store(0, on_cpu(1, Status::ok, 2.0));
  REQUIRE(r.latest(0) != nullptr);
  CHECK(r.latest(0)->cpu == 1);
  REQUIRE(r.on(0, 0) != nullptr);
  CHECK(*r.on(0, 0)->cycles_per_group == 1.0);
  // A retry on core 0 replaces core 0's result and becomes the latest; core 1's stays.
  r.store(0, on_cpu(0, Status::ok, 1.5));
  CHECK(r.latest(0)->cpu == 0);
  CHECK(*r.on(0, 0)->cycles_per_group == 1.5);
  CHECK(*r.on(0, 1)->cycles_per_group == 2.0);
  CHECK(r.on(1, 0) == nullptr);
  CHECK(r.latest(5) == nullptr);  // out of range: nothing, no crash
  r.store(5, on_cpu(0));
  CHECK(r.jobs() == 2);
  r.reset(2);
  CHECK(r.latest(0) == nullptr);
}

TEST_CASE("core results: a pair with its references on its own core needs nothing", "[pipes]") {
  ResultsByCore r;
  r.reset(3);
  for (size_t k = 0; k < 3; ++k) r.store(k, on_cpu(0));
  CHECK(plan_settle(r, one_pair(), 0).empty());
  // The runner moved to core 1 afterwards: the pair was judged on core 0 with core 0's references.
  CHECK(plan_settle(r, one_pair(), 1).empty());
}

TEST_CASE("core results: a pair after a move gets the references it lacks on its core", "[pipes]") {
  ResultsByCore r;
  r.reset(3);
  r.store(0, on_cpu(0));
  r.store(1, on_cpu(0));
  r.store(2, on_cpu(1));  // the pair ran after the move
  const SettlePlan plan = plan_settle(r, one_pair(), 1);
  CHECK(plan.jobs == std::vector<size_t>{0, 1});
  CHECK(plan.pairs == std::vector<size_t>{0});
  // One reference already measured there: only the other.
  r.store(1, on_cpu(1));
  CHECK(plan_settle(r, one_pair(), 1).jobs == std::vector<size_t>{0});
}

TEST_CASE("core results: a pair left on a core the runner has left is measured again where it is", "[pipes]") {
  ResultsByCore r;
  r.reset(3);
  r.store(0, on_cpu(0));
  r.store(2, on_cpu(0));
  r.store(1, on_cpu(1));  // B's reference came after the move (say, a retry)
  const SettlePlan plan = plan_settle(r, one_pair(), 1);
  CHECK(plan.jobs == std::vector<size_t>{0, 2});  // A's reference here, then the pair
  CHECK(plan.pairs == std::vector<size_t>{0});
}

TEST_CASE("core results: a doubted reference is replaced by the new core's only where that one is no worse",
          "[pipes]") {
  ResultsByCore r;
  r.reset(3);
  r.store(0, on_cpu(0, Status::mistrusted));
  r.store(1, on_cpu(0));
  r.store(2, on_cpu(0));
  // The runner moved to core 1 and A's reference was retried there and trusted: the pair goes there.
  r.store(0, on_cpu(1));
  SettlePlan plan = plan_settle(r, one_pair(), 1);
  CHECK(plan.jobs == std::vector<size_t>{1, 2});
  // On the pair's own core a doubted reference is the verdict's business, not the plan's.
  CHECK(plan_settle(r, one_pair(), 0).empty());
  // Doubted on the new core as well: nothing better to be had by moving the pair.
  ResultsByCore both;
  both.reset(3);
  both.store(0, on_cpu(0, Status::mistrusted));
  both.store(1, on_cpu(0));
  both.store(2, on_cpu(0));
  both.store(0, on_cpu(1, Status::mistrusted));
  CHECK(plan_settle(both, one_pair(), 1).empty());
}

TEST_CASE("core results: a trusted result on a core is not replaced by a later doubted one there", "[pipes]") {
  // A batch retries what its first attempt doubted; by then the reference may have been measured
  // again on this core (after a move) and trusted. The retry must not throw that away.
  ResultsByCore r;
  r.reset(1);
  r.store(0, on_cpu(1, Status::ok, 2.0));
  r.store(0, on_cpu(1, Status::mistrusted, 3.0));
  REQUIRE(r.on(0, 1) != nullptr);
  CHECK(r.on(0, 1)->status == Status::ok);
  CHECK(*r.on(0, 1)->cycles_per_group == 2.0);
  // A later trusted one does replace it, and a doubted one replaces a doubted one.
  r.store(0, on_cpu(1, Status::ok, 1.9));
  CHECK(*r.on(0, 1)->cycles_per_group == 1.9);
  r.store(0, on_cpu(2, Status::mistrusted, 5.0));
  r.store(0, on_cpu(2, Status::error, 0.0));
  CHECK(r.on(0, 2)->status == Status::error);
  CHECK(r.latest(0)->cpu == 2);
}

TEST_CASE("core results: failed or unmeasured pairs need no references", "[pipes]") {
  ResultsByCore r;
  r.reset(3);
  CHECK(plan_settle(r, one_pair(), 0).empty());
  r.store(2, on_cpu(1, Status::error));
  CHECK(plan_settle(r, one_pair(), 0).empty());
  r.store(2, on_cpu(1, Status::mistrusted));  // a doubted pair is still judged (and retried): it needs them
  CHECK(plan_settle(r, one_pair(), 0).jobs == std::vector<size_t>{0, 1, 2});
}

TEST_CASE("core results: references shared by many pairs are planned once", "[pipes]") {
  ResultsByCore r;
  r.reset(5);
  // Jobs 0, 1, 2: references of A, B, C; 3: A + B, 4: A + C; the pairs ran on core 1, the
  // references on core 0.
  for (size_t k : {0, 1, 2}) r.store(k, on_cpu(0));
  for (size_t k : {3, 4}) r.store(k, on_cpu(1));
  const std::vector<PairJobs> pairs = {PairJobs{3, {0, 1}}, PairJobs{4, {0, 2}}};
  const SettlePlan plan = plan_settle(r, pairs, 1);
  CHECK(plan.jobs == std::vector<size_t>{0, 1, 2});
  CHECK(plan.pairs == std::vector<size_t>{0, 1});
}
