#include "matmul/thread_team.hpp"

#include <sched.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

#include "harness/pin.hpp"
#include "skip.hpp"

using namespace peakprobe;

namespace {
std::vector<int> allowed_cpus() {
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  std::vector<int> cpus;
  if (sched_getaffinity(0, sizeof(allowed), &allowed) != 0) return cpus;
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &allowed)) cpus.push_back(c);
  return cpus;
}
}  // namespace

TEST_CASE("thread team: every member runs exactly once per run, whatever the team size", "[matmul][team]") {
  ThreadTeam team;
  std::array<std::atomic<int>, 6> calls{};
  std::array<int, 6> written{};
  // Sizes go up and down, so helpers that are not needed see runs they must sit out.
  const std::vector<int> sizes = {4, 2, 6, 1, 3, 6, 2};
  for (int round = 0; round < 300; ++round) {
    const int parties = sizes[size_t(round) % sizes.size()];
    for (auto& c : calls) c = 0;
    written.fill(0);
    team.run(parties, [&](int t) {
      calls[size_t(t)].fetch_add(1);
      written[size_t(t)] = round + 1;  // plain writes: run() must make them visible to the caller
    });
    for (int t = 0; t < 6; ++t) {
      INFO("round " << round << ", parties " << parties << ", member " << t);
      CHECK(calls[size_t(t)] == (t < parties ? 1 : 0));
      CHECK(written[size_t(t)] == (t < parties ? round + 1 : 0));
    }
  }
  // Started once and reused: as many helpers as the largest team less the caller.
  CHECK(team.helpers() == 5);
  CHECK(team.runs() == 300);
}

TEST_CASE("thread team: helpers outside a run neither run its job nor answer it", "[matmul][team]") {
  ThreadTeam team;
  team.run(6, [](int) {});
  for (int t = 1; t <= 5; ++t) CHECK(team.answers(t) == 1);
  // Runs of two members: only helper 1 takes part, so a call on fewer threads than the team has
  // started never waits for the other helpers to notice it (they may be asleep or descheduled).
  std::atomic<int> outside{0};
  for (int i = 0; i < 50; ++i) team.run(2, [&](int t) { outside += t >= 2; });
  CHECK(outside == 0);
  CHECK(team.answers(1) == 51);
  for (int t = 2; t <= 5; ++t) CHECK(team.answers(t) == 1);
  team.run(4, [](int) {});
  CHECK(team.answers(3) == 2);
  CHECK(team.answers(4) == 1);
  CHECK(team.answers(0) == 0);  // the caller is no helper
  CHECK(team.answers(6) == 0);  // nor is a helper never started
}

TEST_CASE("thread team: member 0 is the caller, the helpers are other threads", "[matmul][team]") {
  ThreadTeam team;
  std::array<std::thread::id, 3> who{};
  team.run(3, [&](int t) { who[size_t(t)] = std::this_thread::get_id(); });
  CHECK(who[0] == std::this_thread::get_id());
  CHECK(who[1] != who[0]);
  CHECK(who[2] != who[0]);
  CHECK(who[1] != who[2]);
  // The same helpers the next time.
  std::array<std::thread::id, 3> again{};
  team.run(3, [&](int t) { again[size_t(t)] = std::this_thread::get_id(); });
  CHECK(again == who);
}

TEST_CASE("thread team: helpers asleep in the kernel wake for the next run and for destruction", "[matmul][team]") {
  std::atomic<int> sum{0};
  {
    ThreadTeam team;
    team.run(3, [&](int t) { sum += t + 1; });
    // Long past the spin: the helpers now wait on the futex.
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    team.run(3, [&](int t) { sum += 10 * (t + 1); });
    CHECK(sum == 66);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }  // joins sleeping helpers: a hang here fails the test by its CTest timeout
  CHECK(sum == 66);
}

TEST_CASE("thread team: helper t sits on cpus[t]", "[matmul][team]") {
  std::vector<int> cpus = allowed_cpus();
  if (cpus.size() > 3) cpus.resize(3);
  if (cpus.size() < 2) PP_SKIP("this process may run on one CPU only");
  // Reversed, so that helper 1 must move off the first allowed CPU.
  std::vector<int> order(cpus.rbegin(), cpus.rend());
  ThreadTeam team(order);
  const int helpers = int(order.size()) - 1;
  std::vector<int> seen(order.size(), -1);
  team.run(helpers + 1, [&](int t) { seen[size_t(t)] = sched_getcpu(); });
  for (int t = 1; t <= helpers; ++t) CHECK(seen[size_t(t)] == order[size_t(t)]);
}

TEST_CASE("thread team: a fork and join is measured with the helpers it needs", "[matmul][team]") {
  // How it compares with starting a thread per call is a benchmark figure (docs/matmul.md), not a
  // test: under ctest -j2 the helper shares the machine with another test.
  ThreadTeam team;
  const double pooled = team.fork_join_seconds(2);
  CHECK(pooled > 0);
  CHECK(pooled < 1.0);
  CHECK(team.helpers() == 1);
  CHECK(team.runs() == 201);
  CHECK(team.fork_join_seconds(1) > 0);
  CHECK(team.helpers() == 1);
}
