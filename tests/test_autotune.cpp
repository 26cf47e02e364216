// The autotune search: its grid is valid and covers the model's picks, a measured search finds the
// fastest point, and the gap to the model's pick is reported. On the real machine, the model's
// pick is compared with the exhaustive grid and must not be far from its best.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "cpu/cpu_info.hpp"
#include "hw_fixture.hpp"
#include "matmul/autotune.hpp"
#include "matmul/call_calibration.hpp"
#include "matmul/gemm.hpp"
#include "matmul/matmul_run.hpp"
#include "skip.hpp"
#include "target_fixture.hpp"

using namespace peakprobe;

namespace {

// A 2-core laptop with the target's widest matmul kernels.
MachineModel laptop() {
  const isa::Target& t = test::target();
  MachineModel m;
  m.cores = 2, m.ghz = 3.7;
  m.vector_bits = t.gemm_vector_bits(test::cpu_with_every_feature());
  m.vector_registers = t.vector_registers(m.vector_bits);
  m.l2_bytes = 1 << 20, m.l3_bytes = 32 << 20, m.l3_shared_by = 2;
  return m;
}

}  // namespace

TEST_CASE("autotune: the grid is valid for the problem and holds the model's pick", "[autotune]") {
  // A CPU that runs every dtype's kernels at the laptop's width.
  const CpuInfo cpu = test::cpu_with_every_feature();
  for (MatmulDtype dt : {MatmulDtype::f32, MatmulDtype::bf16, MatmulDtype::i8}) {
    const MatmulProblem p{300, 200, 150, 1, dt, 2};
    MachineModel m = laptop();
    m.tiles = test::target().gemm_tiles(cpu, dt);  // the dtype's kernels on that CPU (vectors or tiles)
    const auto grid = autotune_grid(m, p);
    CHECK(grid.size() >= 20);
    std::set<int> counts;
    for (const auto& c : grid) {
      INFO(to_string(dt) << " mr " << c.mr << " nv " << c.nv << " mc " << c.mc << " kc " << c.kc << " nc " << c.nc);
      CHECK(check_config(cpu, dt, c).empty());
      CHECK(c.threads >= 1);
      CHECK(c.threads <= 2);
      counts.insert(c.threads);
    }
    // Every count the model plans with is measured too (thread_counts: 2 and 1).
    CHECK(counts == std::set<int>{1, 2});
  }
}

TEST_CASE("autotune: the model's best come with the operands it reads in place packed too", "[autotune]") {
  // One thread, f32 operands that fit half of L2: the model reads both in place.
  const MatmulProblem small{96, 128, 128, 1, MatmulDtype::f32, 1};
  const auto grid = autotune_grid(laptop(), small);
  auto has = [&](bool pack_a, bool pack_b) {
    return std::any_of(grid.begin(), grid.end(),
                       [&](const MatmulConfig& c) { return c.pack_a == pack_a && c.pack_b == pack_b; });
  };
  CHECK(has(true, true));
  CHECK(has(false, false));
  CHECK(has(true, false));
  CHECK(has(false, true));
  // bf16 reads A in place too (its k pairs are words of A's rows), never B (only packing puts B's
  // pairs together); nor A where K is not whole pairs and the kernels read whole groups only, or
  // where the dtype's A is always packed. Kernels that read a partial last group take odd K in place.
  const auto packs_a = [](const MatmulConfig& c) { return c.pack_a; };
  const auto bf16 = autotune_grid(laptop(), MatmulProblem{96, 128, 128, 1, MatmulDtype::bf16, 1});
  CHECK(std::all_of(bf16.begin(), bf16.end(), [](const MatmulConfig& c) { return c.pack_b; }));
  CHECK_FALSE(std::all_of(bf16.begin(), bf16.end(), packs_a));
  MachineModel whole_groups = laptop();
  whole_groups.a_in_place_partial_groups = false;
  const auto odd = autotune_grid(whole_groups, MatmulProblem{96, 128, 127, 1, MatmulDtype::bf16, 1});
  CHECK(std::all_of(odd.begin(), odd.end(), packs_a));
  const auto odd_tail = autotune_grid(laptop(), MatmulProblem{96, 128, 127, 1, MatmulDtype::bf16, 1});
  CHECK_FALSE(std::all_of(odd_tail.begin(), odd_tail.end(), packs_a));
  MachineModel always_packed = laptop();
  always_packed.a_in_place_rows = 0;
  const auto packed = autotune_grid(always_packed, MatmulProblem{96, 128, 128, 1, MatmulDtype::bf16, 1});
  CHECK(std::all_of(packed.begin(), packed.end(), packs_a));
  // Nor an f32 B that outgrows half of L2 and serves many row blocks. Its A, beyond half of L2 too and
  // packed by the model, is still tried in place where the kernels can read the model's blocks so
  // (the timing settles what the model is unsure of).
  MachineModel any_rows = laptop();
  any_rows.a_in_place_rows = 64;
  const auto wide = autotune_grid(any_rows, MatmulProblem{1024, 4096, 1024, 1, MatmulDtype::f32, 1});
  CHECK(std::all_of(wide.begin(), wide.end(), [](const MatmulConfig& c) { return c.pack_b; }));
  CHECK_FALSE(std::all_of(wide.begin(), wide.end(), packs_a));
}

TEST_CASE("autotune: finds the fastest point and reports the model's gap", "[autotune]") {
  const MatmulProblem p{512, 512, 512, 1, MatmulDtype::f32, 1};
  const CandidateCost pick = choose_config(laptop(), p);
  // A made-up machine where kc 256 is best whatever the model thinks.
  auto measure = [&](const MatmulConfig& c) -> Expected<double> {
    return 10.0 + std::abs(c.kc - 256) / 64.0 + (c.mr == pick.config.mr ? 0.0 : 0.5);
  };
  auto at = autotune(laptop(), p, measure);
  REQUIRE(at.ok());
  CHECK(at->best.config.kc == 256);
  CHECK(at->best.measured_ms == Approx(10.0));
  // Fastest first among the finalists (the model's pick is one, however slow), then among the rest.
  for (size_t i = 1; i < at->points.size(); ++i)
    if (i != at->finalists) CHECK(at->points[i - 1].measured_ms <= at->points[i].measured_ms);
  CHECK(at->model_gap == Approx(at->model_pick.measured_ms / 10.0 - 1.0));
  CHECK(at->model_gap >= 0);
  // Measured by the model's own prediction, its pick cannot be beaten by the grid.
  auto self = autotune(laptop(), p, [&](const MatmulConfig& c) -> Expected<double> {
    return predict(laptop(), p, c).seconds * 1e3;
  });
  REQUIRE(self.ok());
  CHECK(self->model_gap == Approx(0.0).margin(1e-9));
  // A measurement that fails stops the search with its message.
  auto failed = autotune(laptop(), p, [](const MatmulConfig&) -> Expected<double> { return make_error("boom"); });
  REQUIRE_FALSE(failed.ok());
  CHECK(failed.error() == "boom");
}

TEST_CASE("autotune: candidates timed in turns keep their best turn, and a failure drops one", "[autotune]") {
  // Candidate 1 meets a busy stretch in the first turn (slow there only); candidate 2 fails in the
  // second turn; candidate 0 is steady.
  int turn_of_0 = 0;
  std::vector<std::vector<double>> times = {{1.0, 1.0, 1.0}, {3.0, 0.8, 0.9}, {0.5, -1, 0.4}};
  std::vector<int> calls(3, 0);
  const auto fastest = time_in_turns(3, 3, [&](size_t i) -> Expected<double> {
    const double t = times[i][size_t(calls[i]++)];
    if (i == 0) ++turn_of_0;
    if (t < 0) return make_error("the call failed");
    return t;
  });
  REQUIRE(fastest.size() == 3);
  CHECK(fastest[0] == Approx(1.0));
  CHECK(fastest[1] == Approx(0.8));  // its best turn, not its first
  CHECK(fastest[2] == 0);             // failed once: dropped, whatever it measured before
  CHECK(calls[2] == 2);               // and not timed after it failed
  CHECK(turn_of_0 == 3);
  // The first failure's message, when asked for.
  calls.assign(3, 0);
  std::string failure;
  time_in_turns(
      3, 3,
      [&](size_t i) -> Expected<double> {
        const double t = times[i][size_t(calls[i]++)];
        if (t < 0) return make_error("the call failed");
        return t;
      },
      &failure);
  CHECK(failure == "the call failed");
  // One turn is a plain timing of each.
  calls.assign(3, 0);
  const auto once = time_in_turns(3, 1, [&](size_t i) -> Expected<double> { return times[i][size_t(calls[i]++)]; });
  CHECK(once == std::vector<double>{1.0, 3.0, 0.5});
}

TEST_CASE("autotune: the best and the gap come from the finalists timed again, not from a lucky sweep", "[autotune]") {
  const MatmulProblem p{512, 512, 512, 1, MatmulDtype::f32, 1};
  const CandidateCost pick = choose_config(laptop(), p);
  // A made-up machine where every configuration takes 10 ms, except that one point of the sweep
  // (kc 128 with the smallest mc) read 7 ms once, a lucky timing, and the model's pick met a busy
  // stretch (20 ms) on its first timing.
  std::map<ConfigKey, int> timed;
  const auto key = [](const MatmulConfig& c) { return config_key(c); };
  MatmulConfig lucky;
  auto measure = [&](const MatmulConfig& c) -> Expected<double> {
    const int n = timed[key(c)]++;
    if (n == 0 && config_key(c) == config_key(pick.config)) return 20.0;
    if (n == 0 && lucky.kc == 0 && config_key(c) != config_key(pick.config)) {
      lucky = c;
      return 7.0;
    }
    return 10.0;
  };
  auto at = autotune(laptop(), p, measure);
  REQUIRE(at.ok());
  REQUIRE(at->finalists >= 2);
  CHECK(at->finalists <= size_t(kAutotuneFinalists) + 1);
  CHECK(at->model_gap == Approx(0.0));             // both 10 ms when timed again
  CHECK(at->best.measured_ms == Approx(10.0));     // the lucky 7 ms is not the best any more
  CHECK(at->model_pick.measured_ms == Approx(10.0));
  // Every finalist was timed once in the sweep and kAutotuneFinalTurns times again; the rest once.
  for (size_t i = 0; i < at->points.size(); ++i)
    CHECK(timed[key(at->points[i].config)] == (i < at->finalists ? 1 + kAutotuneFinalTurns : 1));
  // The lucky point and the model's pick are among the finalists.
  const auto first = at->points.begin(), last = first + long(at->finalists);
  CHECK(std::any_of(first, last, [&](const AutotunePoint& q) { return key(q.config) == key(lucky); }));
  CHECK(std::any_of(first, last, [&](const AutotunePoint& q) { return config_key(q.config) == config_key(pick.config); }));
  // A finalist that fails when timed again fails the search.
  std::map<ConfigKey, int> again;
  auto flaky = [&](const MatmulConfig& c) -> Expected<double> {
    if (again[key(c)]++ == 1 && config_key(c) == config_key(pick.config)) return make_error("lost");
    return 10.0;
  };
  const auto lost = autotune(laptop(), p, flaky);
  REQUIRE_FALSE(lost.ok());
  CHECK(lost.error().find("failed when timed again: lost") != std::string::npos);
}

TEST_CASE("hw: autotune: on this machine the model's pick is close to the best of the grid", "[autotune][hw]") {
  const CpuInfo& cpu = test::this_cpu();
  if (const std::string why = gemm_unsupported(cpu, MatmulDtype::f32); !why.empty()) PP_SKIP(why);
  // The model is fed as `matmul` feeds it: clock, issue rate and latency of the kernel's own
  // multiply-add (the target's matmul roof), measured here, as they differ between cores (one 512-bit
  // FMA per cycle on Zen 4, two on Zen 5 and many Xeons).
  const isa::MatmulRoof roof = test::target().matmul_roof(cpu, MatmulDtype::f32);
  const ProbeSpec madd = test::spec(roof.instruction, roof.ops, roof.dtype);
  const ProbeResult r = test::shared_runner().run_batch({madd}).front();
  INFO(madd.text << ": " << to_string(r.status) << " " << r.reason);
  REQUIRE((r.status == Status::ok || r.status == Status::mistrusted));
  REQUIRE(r.recip_throughput_cycles);
  REQUIRE(*r.recip_throughput_cycles > 0);
  REQUIRE(r.latency_cycles);
  REQUIRE(r.clock.ghz > 0);
  MachineModel machine = machine_model_from(cpu, r.clock.ghz, 1.0 / *r.recip_throughput_cycles, *r.latency_cycles);
  WARN(madd.text << ": " << 1.0 / *r.recip_throughput_cycles << " per cycle, latency " << *r.latency_cycles
                 << " cycles, at " << r.clock.ghz << " GHz");
  const MatmulProblem p{384, 384, 384, 1, MatmulDtype::f32, 1};
  Gemm gemm(cpu, MatmulDtype::f32);
  // And, as `matmul` does, with the calls and the packing timed on this core.
  CHECK(calibrate_machine(machine, gemm) == "");
  // Noise only slows a run: the best of a few searches.
  double gap = 1e9;
  for (int attempt = 0; attempt < 3 && gap > 0.15; ++attempt) {
    auto at = autotune(machine, p, [&](const MatmulConfig& c) { return time_matmul_config(gemm, 384, 384, 384, c); });
    REQUIRE(at.ok());
    gap = std::min(gap, at->model_gap);
    WARN("model pick " << at->model_pick.measured_ms << " ms, best " << at->best.measured_ms << " ms of "
                       << at->points.size() << ": gap " << 100 * at->model_gap << "%");
  }
  CHECK(gap <= 0.15);
}
