// Hardware tests for dual issue: invariants that hold on every x86-64 core with the features used.
#include <catch2/catch.hpp>

#include <algorithm>
#include <optional>

#include "asm/target.hpp"
#include "cpu/cpu_info.hpp"
#include "hw_fixture.hpp"
#include "pairs/classify.hpp"
#include "pairs/pair_runner.hpp"
#include "skip.hpp"

using namespace peakprobe;

namespace {

const CpuInfo& cpu() { return test::this_cpu(); }
ProbeRunner& runner() { return test::shared_runner(); }

ProbeSpec spec(const std::string& text, double ops = 0, const std::string& dtype = "-") {
  ProbeSpec s;
  s.text = text;
  s.ops_per_instruction = ops;
  s.dtype = dtype;
  return s;
}

// Noise on a shared VM only ever slows a stream down, and kernel threads (huge-page compaction after
// the memory tests) can disturb a whole measurement; an invariant of the undisturbed machine holds
// if one of a few attempts shows it.
template <typename F>
bool in_one_of(int attempts, F&& attempt) {
  for (int i = 0; i < attempts; ++i)
    if (attempt()) return true;
  return false;
}

}  // namespace

// Every core this test runs on has integer ALU ports that host no FMA, so the two never share all
// their pipes.
// Full co-issue is not universal: where the vector units sit on integer ports (Intel's ports 0 and
// 1), the allocator can put an add on an FMA port now and then, and the pair reads partial (seen on
// an Emerald Rapids VM, once in three runs).
TEST_CASE("hw: an integer add beside a vector FMA never shares all its pipes", "[hw][pair_runner]") {
  if (!cpu().has("fma")) PP_SKIP("needs fma");
  PairResult p;
  bool any_trusted = false;
  const bool shown = in_one_of(3, [&] {
    p = measure_pair(runner(), spec("add r64, r64"), spec("vfmadd231ps ymm, ymm, ymm"), 1, 1);
    any_trusted |= p.mix.status != Status::mistrusted;
    return p.mix.status == Status::ok && p.classification && *p.classification != PairClass::shared;
  });
  if (!shown && !any_trusted) PP_SKIP("every attempt stayed mistrusted: " << p.mix.reason);
  INFO(p.mix.reason);
  CHECK(shown);
}

TEST_CASE("hw: an instruction paired with itself shares its own pipes", "[hw][pair_runner]") {
  PairResult p = measure_pair(runner(), spec("imul r64, r64"), spec("imul r64, r64"), 1, 1);
  INFO(p.mix.reason);
  if (p.mix.status == Status::mistrusted) PP_SKIP("the pair stayed mistrusted: " << p.mix.reason);
  REQUIRE(p.mix.status == Status::ok);
  REQUIRE(p.same_port);
  CHECK(*p.same_port > 0.8);
  CHECK(*p.classification == PairClass::shared);
}

TEST_CASE("hw: FMA and multiply share the multiplier pipes", "[hw][pair_runner]") {
  if (!cpu().has("fma")) PP_SKIP("needs fma");
  PairResult p = measure_pair(runner(), spec("vfmadd231ps ymm, ymm, ymm"), spec("vmulps ymm, ymm, ymm"), 1, 1);
  INFO(p.mix.reason);
  if (p.mix.status == Status::mistrusted) PP_SKIP("the pair stayed mistrusted: " << p.mix.reason);
  REQUIRE(p.mix.status == Status::ok);
  CHECK(*p.classification == PairClass::shared);
}

TEST_CASE("hw: a mix's FLOP/cycle follows from its group time", "[hw][pair_runner]") {
  if (!cpu().has("fma")) PP_SKIP("needs fma");
  MixResult m = runner().run_mix({{spec("vfmadd231ps ymm, ymm, ymm", 16, "f32"), 2}, {spec("vaddps ymm, ymm, ymm", 8, "f32"), 1}});
  INFO(m.reason);
  if (m.status == Status::mistrusted) PP_SKIP("the mix stayed mistrusted: " << m.reason);
  REQUIRE(m.status == Status::ok);
  REQUIRE(m.cycles_per_group);
  CHECK(*m.flops_per_cycle == Approx((2 * 16 + 8) / *m.cycles_per_group));
  CHECK(*m.ipc == Approx(3 / *m.cycles_per_group));
  // Never faster than its two FMAs alone allow, at the rate this core reaches with FMAs only (best
  // of three, as noise only slows a run; 10% for the error of two measurements).
  double fma_cycles = 1e9;
  for (int i = 0; i < 3; ++i) {
    ProbeResult alone = runner().run_batch({spec("vfmadd231ps ymm, ymm, ymm", 16, "f32")}).front();
    if (alone.status == Status::ok && alone.recip_throughput_cycles)
      fma_cycles = std::min(fma_cycles, *alone.recip_throughput_cycles);
  }
  if (fma_cycles >= 1e9) PP_SKIP("FMA alone stayed mistrusted in three attempts: nothing to compare the mix with");
  INFO("FMA alone: " << fma_cycles << " cycles each");
  CHECK(*m.cycles_per_group >= 0.9 * 2 * fma_cycles);
}

TEST_CASE("hw: the guided FLOP-mix search is within 3% of the exhaustive one", "[hw][pair_runner]") {
  if (!cpu().has("fma")) PP_SKIP("needs fma");
  ProbeSpec a = spec("vfmadd231ps ymm, ymm, ymm", 16, "f32"), b = spec("vaddps ymm, ymm, ymm", 8, "f32");
  FlopMixSearch guided, full;
  std::optional<double> same_run;
  const bool close = in_one_of(3, [&] {
    guided = search_flop_mix(runner(), a, b, false);
    full = search_flop_mix(runner(), a, b, true);
    same_run.reset();
    for (size_t i = 0; i < full.ratios.size(); ++i)
      if (full.ratios[i] == std::make_pair(guided.best_a, guided.best_b)) same_run = full.tried[i].flops_per_cycle;
    return full.best_flops_per_cycle > 0 &&
           same_run.value_or(guided.best_flops_per_cycle) >= 0.97 * full.best_flops_per_cycle;
  });
  // A search over mixes the harness mistrusted compares noise with noise (and finds no best at all
  // when every mix was mistrusted).
  auto mistrusted = [](const FlopMixSearch& f) {
    return std::any_of(f.tried.begin(), f.tried.end(), [](const MixResult& m) { return m.status == Status::mistrusted; });
  };
  if (!close && (mistrusted(guided) || mistrusted(full)))
    PP_SKIP("some mixes of the last attempt stayed mistrusted (the core was disturbed)");
  REQUIRE(full.best_flops_per_cycle > 0);
  // Judge the pick, not two noisy runs against each other: the ratio the guided search chose, as the
  // brute-force sweep itself measured it, must be within 3% of that sweep's maximum. A chosen ratio
  // outside the brute-force grid (a side above 4) is compared by value instead.
  CHECK(close);
  CHECK(guided.tried.size() < full.tried.size() + 3);
  CHECK(guided.ratios.size() == guided.tried.size());
  // FMA alone (1:0) is a candidate, so the best is at least what FMA alone reached.
  REQUIRE(guided.tried.front().flops_per_cycle);
  CHECK(guided.best_flops_per_cycle >= *guided.tried.front().flops_per_cycle);
}

TEST_CASE("hw: a pair matrix finds a self-consistent grouping", "[hw][pair_runner]") {
  if (!cpu().has("fma")) PP_SKIP("needs fma");
  std::vector<ProbeSpec> s = {spec("vfmadd231ps ymm, ymm, ymm"), spec("vmulps ymm, ymm, ymm"), spec("add r64, r64")};
  PairMatrix m = measure_pair_matrix(runner(), s);
  REQUIRE(m.instructions.size() == 3);
  REQUIRE(m.pairs.size() == 6);
  // Groups inferred from mistrusted pairs (a busy sibling thread) say nothing about the pipes.
  for (const auto& p : m.pairs)
    if (p.mix.status == Status::mistrusted) PP_SKIP("a pair stayed mistrusted: " << p.mix.reason);
  for (size_t i = 0; i < 3; ++i) {
    REQUIRE(m.same_port[i][i]);
    CHECK(*m.same_port[i][i] > 0.8);  // each with itself
  }
  // FMA and MUL land in one group, the integer add in another.
  bool together = false;
  for (const auto& g : m.groups)
    if (g.size() == 2 && g[0] == "vfmadd231ps ymm, ymm, ymm" && g[1] == "vmulps ymm, ymm, ymm") together = true;
  CHECK(together);
}

TEST_CASE("hw: a pair with an unsupported part is skipped, never run", "[hw][pair_runner]") {
  if (cpu().has("amx_bf16")) PP_SKIP("this CPU has amx_bf16, so tdpbf16ps is not unsupported here");
  PairResult p = measure_pair(runner(), spec("add r64, r64"), spec("tdpbf16ps tmm, tmm, tmm"), 1, 1);
  CHECK(p.mix.status == Status::skipped);
  CHECK(p.mix.reason.find("amx_bf16") != std::string::npos);
  CHECK_FALSE(p.classification);
}

TEST_CASE("hw: mixes refuse what inst refuses and run stack forms only balanced", "[hw][pair_runner]") {
  // A pair with syscall would make real system calls; it is refused before anything runs.
  PairResult sys = measure_pair(runner(), spec("syscall"), spec("add r64, r64"), 1, 1);
  CHECK(sys.mix.status == Status::skipped);
  CHECK(sys.mix.reason.find("refused before running") == 0);
  CHECK_FALSE(sys.classification);

  // pop beside its companion push, in either order, runs balanced (push first); alone it is refused.
  for (const auto& [a, b] : {std::pair<const char*, const char*>{"pop r64", "push r64"}, {"push r64", "pop r64"}}) {
    MixResult m = runner().run_mix({MixSpec{spec(a), 1}, MixSpec{spec(b), 1}});
    INFO(a << " + " << b << ": " << to_string(m.status) << " " << m.reason);
    CHECK(m.status != Status::error);
    CHECK(m.status != Status::skipped);
  }
  MixResult alone = runner().run_mix({MixSpec{spec("pop r64"), 1}, MixSpec{spec("add r64, r64"), 1}});
  CHECK(alone.status == Status::skipped);
  CHECK(alone.reason.find("push r64") != std::string::npos);
  MixResult unequal = runner().run_mix({MixSpec{spec("pop r64"), 2}, MixSpec{spec("push r64"), 1}});
  CHECK(unequal.status == Status::skipped);
  // The harness still measures after all of them.
  MixResult after = runner().run_mix({MixSpec{spec("add r64, r64"), 1}});
  CHECK(after.status != Status::error);
}

TEST_CASE("hw: a mix run on every core at once sums to at most the cores times one core's rate", "[hw][pair_runner]") {
  if (cpu().core_order.size() < 2) PP_SKIP("needs two cores");
  ProbeOptions opt;
  opt.threads = 2;
  auto two = ProbeRunner::create(cpu(), opt);
  REQUIRE(two);
  // The target's multiply and add of its widest width; one op each is enough for a ratio of rates.
  const auto pair = isa::host_target().flop_pair(cpu(), /*fused_only=*/false);
  REQUIRE(pair);
  const std::vector<MixSpec> parts = {{spec(pair->mul, 1, "f32"), 1}, {spec(pair->add, 1, "f32"), 1}};
  MixResult m;
  const bool measured = in_one_of(3, [&] {
    m = (*two)->run_mix(parts, true);
    return m.status == Status::ok && m.threads == 2 && m.total_gflops.has_value();
  });
  if (!measured) PP_SKIP("no undisturbed run on both cores: " << m.reason);
  REQUIRE(m.gflops);
  INFO("one core " << *m.gflops << " GFLOP/s, both " << *m.total_gflops);
  // Each core runs the same stream: never more than twice one core (clock and jitter: 10%), and a
  // second core adds something.
  CHECK(*m.total_gflops <= 2 * *m.gflops * 1.10);
  CHECK(*m.total_gflops > *m.gflops);
  // Without on_all_threads, a runner with two threads still measures one core only.
  MixResult one = (*two)->run_mix(parts);
  CHECK(one.threads == 1);
  CHECK_FALSE(one.total_gflops.has_value());
}
