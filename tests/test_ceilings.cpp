#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>

#include "ceilings_fixture.hpp"
#include "roofline/ceilings.hpp"

using namespace peakprobe;
using peakprobe::test::bw;
using peakprobe::test::caches;
using peakprobe::test::probe;



TEST_CASE("ceilings: only arithmetic families set roofs, int8 roofs are dot products", "[roofline]") {
  ProbeResult cmp = probe("vpcmpeqd ymm, ymm, ymm", "i32", 500);
  cmp.group = "vec.int.cmp";
  ProbeResult add8 = probe("vpaddb zmm, zmm, zmm", "i8", 900);
  add8.group = "vec.int.add";
  ProbeResult dot = probe("vpdpbusd zmm, zmm, zmm", "i8", 473);
  auto c = compute_ceilings({cmp, add8, dot});
  REQUIRE(c.size() == 1);
  CHECK(c[0].source == "vpdpbusd zmm, zmm, zmm");
}

TEST_CASE("ceilings: a row's all-cores figure sets a ceiling only when its threaded run is ok", "[roofline]") {
  ProbeResult fma2 = probe("vfmadd231ps ymm, ymm, ymm", "f32", 64);
  fma2.threads = 2;
  fma2.total_gflops = 127;
  auto ok = compute_ceilings({fma2});
  CHECK(ok.size() == 2);
  // A document whose threaded run was doubted (older writers kept its total) sets the one-core roof only.
  fma2.threads_status = Status::mistrusted;
  fma2.threads_reason = "the 2-thread run fell 26% short of the same code alone on one core";
  auto doubted = compute_ceilings({fma2});
  REQUIRE(doubted.size() == 1);
  CHECK(doubted[0].threads == 1);
  CHECK(doubted[0].gops == 64);
}

TEST_CASE("ceilings: an all-cores rate per cycle is each thread's in its own cycles, not the total over the one-core clock", "[roofline]") {
  // A row whose threads ran at a higher clock than its one-core timing: each thread 0.25 cycles for 16
  // ops (64 a cycle), the threads at 4.4 GHz, the one-core row at 4.0.
  ProbeResult row = probe("vpaddw zmm, zmm, zmm", "i16", 256);
  row.group = "vec.int.add";
  row.threads = 2;
  row.per_thread_recip_throughput = {0.25, 0.25};
  row.total_gops = 2 * 64 * 4.4;
  const auto c = compute_ceilings({row});
  REQUIRE(c.size() == 2);
  const auto& all = c[0].threads == 2 ? c[0] : c[1];
  CHECK(all.gops == Approx(2 * 64 * 4.4));
  CHECK(all.ops_per_cycle == Approx(64));      // the total over the one-core clock: 70.4
  CHECK(all.clock_ghz == Approx(4.4));
  CHECK(all.gops == Approx(all.ops_per_cycle * all.clock_ghz * all.threads));
  // Threads at unlike rates: the mean of their ops per cycle.
  row.per_thread_recip_throughput = {0.25, 0.5};
  row.total_gops = 64 * 4.4 + 32 * 4.0;
  const auto unlike = compute_ceilings({row});
  REQUIRE(unlike.size() == 2);
  const auto& both = unlike[0].threads == 2 ? unlike[0] : unlike[1];
  CHECK(both.ops_per_cycle == Approx(48));
  CHECK(both.gops == Approx(both.ops_per_cycle * both.clock_ghz * 2));
  // An older document without the threads' cycles, or with a missing one: the one-core clock.
  for (const std::vector<double>& cycles :
       {std::vector<double>{}, std::vector<double>{0.25, 0.0}, std::vector<double>{0.25, 1e-320}}) {
    row.per_thread_recip_throughput = cycles;
    const auto old = compute_ceilings({row});
    REQUIRE(old.size() == 2);
    const auto& o = old[0].threads == 2 ? old[0] : old[1];
    CHECK(o.ops_per_cycle == Approx(*row.total_gops / 4.0 / 2));
    CHECK(o.clock_ghz == Approx(4.0));
  }
}

TEST_CASE("ceilings: a FLOP mix that beats the single instruction replaces it", "[roofline]") {
  FlopMixSearch s;
  s.a = "vfmadd231ps zmm, zmm, zmm";
  s.b = "vaddps zmm, zmm, zmm";
  s.best_a = s.best_b = 1;
  s.best_flops_per_cycle = 48;
  MixResult m;
  m.parts = {MixPart{s.a, 1, 32, "f32"}, MixPart{s.b, 1, 16, "f32"}};
  m.flops_per_cycle = 48;
  m.gflops = 192;
  m.clock.ghz = 4;
  s.tried = {m};
  auto c = compute_ceilings({probe("vfmadd231ps zmm, zmm, zmm", "f32", 128)}, {s});
  REQUIRE(c.size() == 1);
  CHECK(c[0].gops == 192);
  CHECK(c[0].source.find("mix 1:1") == 0);

  // Measured on two cores at once as well: the all-cores ceiling is the mix's too, with its own
  // total (here below twice one core's), not the single instruction's and not a scaled guess.
  ProbeResult fma2 = probe("vfmadd231ps zmm, zmm, zmm", "f32", 128);
  fma2.threads = 2;
  fma2.total_gflops = 250;
  MixResult all = m;
  all.threads = 2;
  all.total_gflops = 370;
  s.best_all_threads = all;
  auto two = compute_ceilings({fma2}, {s});
  REQUIRE(two.size() == 2);
  const auto& both = two[0].threads == 2 ? two[0] : two[1];
  CHECK(both.threads == 2);
  CHECK(both.gops == 370);
  CHECK(both.ops_per_cycle == Approx(370 / 4.0 / 2));
  CHECK(both.source.find("mix 1:1") == 0);
  // A threaded mix slower than the single instruction on all cores loses to it, and so does one
  // within 2% of it.
  for (double total : {240.0, 252.0}) {
    s.best_all_threads->total_gflops = total;
    auto slower = compute_ceilings({fma2}, {s});
    const auto& lost = slower[0].threads == 2 ? slower[0] : slower[1];
    CHECK(lost.gops == 250);
    CHECK(lost.source == "vfmadd231ps zmm, zmm, zmm");
  }
  // A mix within 2% of its instruction on one core is no ceiling there, nor on all cores, however
  // it ran there: the table would show a mix only several cores gain from.
  ProbeResult fma1 = probe("vfmadd231ps zmm, zmm, zmm", "f32", 190);
  s.best_all_threads->total_gflops = 370;
  for (const auto& c : compute_ceilings({fma1, fma2}, {s})) {
    INFO(c.threads);
    CHECK(c.source == "vfmadd231ps zmm, zmm, zmm");
  }
}

namespace {

// A FLOP-mix search whose best ratio a:b ran at `flops` FLOP/cycle (4 GHz); 0 on a side: that
// instruction alone was best.
FlopMixSearch mix_search(const std::string& a, const std::string& b, const std::string& dtype, int best_a,
                         int best_b, double flops) {
  FlopMixSearch s;
  s.a = a, s.b = b;
  s.best_a = best_a, s.best_b = best_b;
  s.best_flops_per_cycle = flops;
  MixResult m;
  if (best_a) m.parts.push_back(MixPart{a, best_a, 2, dtype});
  if (best_b) m.parts.push_back(MixPart{b, best_b, 1, dtype});
  m.flops_per_cycle = flops;
  m.gflops = 4 * flops;
  m.clock.ghz = 4;
  s.tried = {m};
  s.ratios = {{best_a, best_b}};
  return s;
}

}  // namespace

TEST_CASE("ceilings: an all-cores FLOP mix per cycle comes from each core's cycles per group", "[roofline]") {
  auto s = mix_search("vfmadd231ps zmm, zmm, zmm", "vaddps zmm, zmm, zmm", "f32", 1, 1, 48);
  MixResult all = s.tried.front();
  all.threads = 2;
  all.per_thread_cycles_per_group = {3 / 48.0, 3 / 48.0};  // 3 FLOP a group: 48 FLOP a cycle on each core
  all.total_gflops = 2 * 48 * 4.2;                         // at 4.2 GHz
  s.best_all_threads = all;
  const auto c = compute_ceilings({probe("vfmadd231ps zmm, zmm, zmm", "f32", 128)}, {s});
  REQUIRE(c.size() == 2);
  const auto& both = c[0].threads == 2 ? c[0] : c[1];
  CHECK(both.source.find("mix 1:1") == 0);
  CHECK(both.ops_per_cycle == Approx(48));
  CHECK(both.clock_ghz == Approx(4.2));
}

TEST_CASE("ceilings: each type's FLOP mix sets its own ceiling, a search won by one instruction sets none", "[roofline]") {
  // f32 and f64 FMAs at 32 and 16 FLOP/cycle alone (4 GHz); their mixes with the add ran 1.5 times
  // faster. The f16 search's best was its FMA alone, at a rate above the f16 row's: it is not a mix,
  // and the row stays the ceiling.
  const auto f32_mix = mix_search("vfmadd231ps zmm, zmm, zmm", "vaddps zmm, zmm, zmm", "f32", 1, 1, 48);
  const auto f64_mix = mix_search("vfmadd231pd zmm, zmm, zmm", "vaddpd zmm, zmm, zmm", "f64", 1, 1, 24);
  const auto f16_alone = mix_search("vfmadd231ph zmm, zmm, zmm", "vaddph zmm, zmm, zmm", "f16", 1, 0, 80);
  auto c = compute_ceilings({probe("vfmadd231ps zmm, zmm, zmm", "f32", 128), probe("vfmadd231pd zmm, zmm, zmm", "f64", 64),
                             probe("vfmadd231ph zmm, zmm, zmm", "f16", 256)},
                            {f32_mix, f64_mix, f16_alone});
  REQUIRE(c.size() == 3);
  auto of = [&](const std::string& dtype) {
    return *std::find_if(c.begin(), c.end(), [&](const ComputeCeiling& x) { return x.dtype == dtype; });
  };
  CHECK(of("f32").gops == 192);
  CHECK(of("f32").source == "mix 1:1 of vfmadd231ps zmm, zmm, zmm + vaddps zmm, zmm, zmm");
  CHECK(of("f64").gops == 96);
  CHECK(of("f64").ops_per_cycle == 24);
  CHECK(of("f64").source == "mix 1:1 of vfmadd231pd zmm, zmm, zmm + vaddpd zmm, zmm, zmm");
  CHECK(of("f16").gops == 256);
  CHECK(of("f16").source == "vfmadd231ph zmm, zmm, zmm");
}

TEST_CASE("ceilings: of two encodings of one mix the faster sets the ceiling, and only a mix clearly above the instruction alone", "[roofline]") {
  // One type and width searched twice (16 and 32 registers): 34 and 48 FLOP/cycle against 32 for
  // the FMA alone. A third search gains 1% on its FMA alone: within the noise, not a ceiling.
  const auto few_registers = mix_search("madd.narrow", "add.narrow", "f32", 5, 2, 34);
  const auto all_registers = mix_search("wide.madd.narrow", "wide.add.narrow", "f32", 1, 1, 48);
  const auto within_noise = mix_search("madd.double", "add.double", "f64", 7, 1, 16.16);
  const std::vector<ProbeResult> rows = {probe("madd.narrow", "f32", 128), probe("madd.double", "f64", 64)};
  for (const auto& order : {std::vector<FlopMixSearch>{few_registers, all_registers, within_noise},
                            std::vector<FlopMixSearch>{all_registers, within_noise, few_registers}}) {
    auto c = compute_ceilings(rows, order);
    REQUIRE(c.size() == 2);
    for (const auto& x : c) {
      INFO(x.dtype << " " << x.source);
      if (x.dtype == "f32") CHECK(x.source == "mix 1:1 of wide.madd.narrow + wide.add.narrow");
      if (x.dtype == "f64") CHECK(x.source == "madd.double");
    }
  }
  // Only the faster encoding is run on every core at once; neither the slower one nor the mix
  // within noise of its FMA.
  CHECK(mixes_setting_ceilings(rows, {few_registers, all_registers, within_noise}) == std::vector<size_t>{1});
  CHECK(mixes_setting_ceilings(rows, {within_noise, all_registers}) == std::vector<size_t>{1});
  // A mix 3% above its instruction alone is a ceiling.
  const auto clear = mix_search("madd.double", "add.double", "f64", 7, 1, 16.5);
  CHECK(mixes_setting_ceilings(rows, {clear}) == std::vector<size_t>{0});
  CHECK(mixes_setting_ceilings(rows, {}).empty());
}

TEST_CASE("ceilings: working sets map to the levels the threads can use", "[roofline]") {
  CHECK(level_for_size(16 << 10, caches(), 1) == "L1");
  CHECK(level_for_size(48 << 10, caches(), 1) == "L2");
  CHECK(level_for_size(48 << 10, caches(), 2) == "L1");  // two private L1s hold 64 KiB
  CHECK(level_for_size(16 << 20, caches(), 1) == "L3");
  CHECK(level_for_size(1ull << 30, caches(), 2) == "DRAM");
  auto sizes = level_sizes(caches(), 1);
  REQUIRE(sizes.size() == 4);
  CHECK(sizes[0] == std::make_pair(std::string("L1"), uint64_t(16 << 10)));
  CHECK(sizes[1].first == "L2");
  CHECK(sizes[2].first == "L3");
  CHECK(sizes[3].first == "DRAM");
  for (const auto& [level, size] : sizes) CHECK(level_for_size(size, caches(), 1) == level);
  // A last level of hundreds of MiB: DRAM's working set is four times it, not the 512 MiB floor.
  std::vector<CacheLevel> big = caches();
  big.back().size_bytes = 480ull << 20;
  big.back().instances = 1;
  const auto big_sizes = level_sizes(big, 1);
  REQUIRE(big_sizes.back().first == "DRAM");
  CHECK(big_sizes.back().second == 4 * (480ull << 20));
  CHECK(level_for_size(big_sizes.back().second, big, 1) == "DRAM");
  CHECK(dram_working_set(big, 1) == big_sizes.back().second);
}

TEST_CASE("ceilings: DRAM's working set follows where the last level ends as measured", "[roofline]") {
  constexpr uint64_t MiB = 1ull << 20;
  std::vector<CacheLevel> big = caches();
  big.back().size_bytes = 480 * MiB;
  big.back().instances = 1;
  // Reported and measured alike, or nothing measured: four times the reported level.
  CHECK(dram_working_set(big, 1, 480 * MiB) == 4 * 480 * MiB);
  CHECK(dram_working_set(big, 1, 0) == 4 * 480 * MiB);
  // The level ends at 120 MiB: four times that, but no less than 512 MiB and past what is reported,
  // so the row is still named DRAM.
  const uint64_t vm = dram_working_set(big, 1, 120 * MiB);
  CHECK(vm == 512 * MiB);
  CHECK(level_for_size(vm, big, 1) == "DRAM");
  // A level that ends at 200 MiB: 800 MiB.
  CHECK(dram_working_set(big, 1, 200 * MiB) == 800 * MiB);
  // A reported 2 GiB level that holds 64 MiB: past the reported size (by a sixteenth), whole pages.
  big.back().size_bytes = 2048 * MiB;
  const uint64_t huge = dram_working_set(big, 1, 64 * MiB);
  CHECK(huge == 2176 * MiB);
  CHECK(huge % 4096 == 0);
  CHECK(level_for_size(huge, big, 1) == "DRAM");
  // A measured end past the reported size changes nothing (the search only ever moves below it).
  CHECK(dram_working_set(big, 1, 8192 * MiB) == 4 * 2048 * MiB);
  // No caches at all: the floor.
  CHECK(dram_working_set({}, 1, 0) == 512 * MiB);
}

TEST_CASE("ceilings: the caches as one core showed them set more cores' plans, DRAM's working set and level names", "[roofline]") {
  constexpr uint64_t MiB = 1ull << 20;
  // A VM that reports a 508 MiB L3 for each core and holds 16 MiB for one.
  std::vector<CacheLevel> vm = caches();
  vm.back().size_bytes = 508 * MiB;
  vm.back().shared_by_cpus = 1;
  vm.back().instances = 2;
  CHECK(level_sizes(vm, 2)[2] == std::make_pair(std::string("L3"), uint64_t(508 * MiB)));
  CHECK(level_for_size(512 * MiB, vm, 2) == "L3");  // so DRAM's rows were measured past 1 GiB
  const std::vector<CacheLevel> shown = caches_as_shown(vm, "L3", 16 * MiB);
  CHECK(level_for_size(8 * MiB, shown, 1) == "L3");
  CHECK(level_for_size(17 * MiB, shown, 1) == "DRAM");
  const auto two = level_sizes(shown, 2);
  REQUIRE(two.size() == 4);
  CHECK(two[2] == std::make_pair(std::string("L3"), uint64_t(16 * MiB)));  // half of the two shares
  CHECK(two[3] == std::make_pair(std::string("DRAM"), uint64_t(512 * MiB)));
  CHECK(level_for_size(512 * MiB, shown, 2) == "DRAM");
  CHECK(dram_working_set(shown, 1, 16 * MiB) == 512 * MiB);
  CHECK(level_floor("L3", shown, 2) == level_floor("L3", vm, 2));  // the levels before are as reported
  // A cache shared by the cores (the fixture's 32 MiB L3): one share for any number of threads.
  const std::vector<CacheLevel> shared = caches_as_shown(caches(), "L3", 8 * MiB);
  CHECK(level_for_size(8 * MiB, shared, 1) == "L3");
  CHECK(level_for_size(8 * MiB + 4096, shared, 2) == "DRAM");
  // A multi-die L3 (8 instances of 32 MiB, each shared by 16 CPUs): one thread shows about one
  // instance, and all of them stay the level's for every thread count.
  std::vector<CacheLevel> dies = caches();
  dies.back().shared_by_cpus = 16;
  dies.back().instances = 8;
  const std::vector<CacheLevel> dies_shown = caches_as_shown(dies, "L3", 32 * MiB);
  CHECK(dies_shown.back().size_bytes == 32 * MiB);
  CHECK(dies_shown.back().instances == 8);
  CHECK(level_for_size(200 * MiB, dies_shown, 128) == "L3");
  // Its instances holding less than reported: each cut, none lost.
  const std::vector<CacheLevel> dies_cut = caches_as_shown(dies, "L3", 16 * MiB);
  CHECK(dies_cut.back().size_bytes == 16 * MiB);
  CHECK(dies_cut.back().instances == 8);
  CHECK(level_sizes(dies_cut, 128)[2].first == "L3");
  // Nothing sooner than reported, no end, or another level's name: unchanged.
  for (const auto& same : {caches_as_shown(caches(), "L3", 64 * MiB), caches_as_shown(caches(), "L3", 0),
                           caches_as_shown(caches(), "L4", 8 * MiB)})
    for (size_t i = 0; i < same.size(); ++i) CHECK(same[i].size_bytes == caches()[i].size_bytes);
  // The instruction cache of a level is never a data level's share.
  const auto l1 = caches_as_shown(caches(), "L1", 16 << 10);
  CHECK(l1[0].size_bytes == 16 << 10);
  CHECK(l1[1].size_bytes == 32 << 10);
}

TEST_CASE("ceilings: a level's working set is halved until it reads on the level's plateau", "[roofline]") {
  constexpr uint64_t MiB = 1ull << 20;
  // A machine whose last level holds 116 MiB (30 GB/s) and reports 480 MiB: past the edge, memory's
  // 16 GB/s. Rates a little noisy, as measured.
  int calls = 0;
  auto vm = [&](uint64_t size) {
    ++calls;
    if (size > 180 * MiB) return 16.3;
    if (size > 116 * MiB) return 21.0;  // part in the cache, part from memory
    return size % (2 * MiB) ? 29.6 : 30.1;
  };
  PlateauSearch p = plateau_size(240 * MiB, 8 * MiB, vm);
  // 240 -> 120 (faster, and 240 again no faster) -> 60 (faster) -> 30 (as fast; the floor's rate,
  // read once, puts it on the plateau, not past the end).
  CHECK(p.size == 30 * MiB);
  CHECK(p.gbps == Approx(30.1));
  CHECK(p.tried.size() == 7);
  CHECK(calls == 7);
  CHECK(p.tried.front() == std::make_pair(uint64_t(240 * MiB), 16.3));
  CHECK(p.past_end);
  // A level that holds what it reports: one extra measurement, and the half inside the plateau.
  auto honest = [](uint64_t size) { return size <= 32 * MiB ? (size % (4 * MiB) ? 60.0 : 61.0) : 20.0; };
  PlateauSearch h = plateau_size(16 * MiB, 2 * MiB, honest);
  CHECK(h.size == 8 * MiB);
  CHECK(h.tried.size() == 3);  // 16, 8 and the floor
  CHECK_FALSE(h.past_end);
  // A half that reads slower (noise, or the level before showing through) leaves the planned size.
  auto dip = [](uint64_t size) { return size == 8 * MiB ? 40.0 : 60.0; };
  CHECK(plateau_size(16 * MiB, 2 * MiB, dip).size == 16 * MiB);
  // Never below the floor (past the level before), however much faster half would be.
  auto steep = [](uint64_t size) { return 1e12 / double(size); };
  PlateauSearch s = plateau_size(64 * MiB, 10 * MiB, steep);
  CHECK(s.size == 16 * MiB);  // 32 and 16 are above the floor, 8 is not
  for (const auto& [size, rate] : s.tried) CHECK(size >= 10 * MiB);
  // One slowed moment at the planned size does not move the level: measured again, it is as fast.
  int at_planned = 0;
  auto slowed_once = [&](uint64_t size) {
    if (size == 16 * MiB && at_planned++ == 0) return 40.0;
    return 60.0;
  };
  PlateauSearch once = plateau_size(16 * MiB, 2 * MiB, slowed_once);
  CHECK_FALSE(once.past_end);
  CHECK(once.size == 8 * MiB);  // the plateau's inner half, as for any level
  // A size that cannot be measured ends the search where it stands.
  PlateauSearch failed = plateau_size(64 * MiB, 1 * MiB, [](uint64_t) { return 0.0; });
  CHECK(failed.size == 64 * MiB);
  CHECK(failed.tried.size() == 1);
  auto fails_at_half = [](uint64_t size) { return size == 32 * MiB ? 0.0 : 10.0; };
  CHECK(plateau_size(64 * MiB, 1 * MiB, fails_at_half).size == 64 * MiB);
}

TEST_CASE("ceilings: a planned size whose half reads alike, both far under the floor's rate, is halved on", "[roofline]") {
  constexpr uint64_t MiB = 1ull << 20;
  // A VM that reports 508 MiB of L3 and holds about 8 MiB of it (101 GB/s), memory 42 GB/s, a
  // partial step between.
  auto vm = [](uint64_t size) {
    if (size <= 8 * MiB) return size % (2 * MiB) ? 100.0 : 101.0;
    if (size <= 16 * MiB) return 60.0;
    return 42.0;
  };
  PlateauSearch p = plateau_size(254 * MiB, 2 * MiB, vm);
  CHECK(p.past_end);
  CHECK(p.size <= 8 * MiB);
  CHECK(p.size >= 2 * MiB);
  CHECK(p.gbps >= 100.0);
  // Each size halves the one before, from the planned size down, never under the floor.
  for (const auto& [size, rate] : p.tried) CHECK(size >= 2 * MiB);
  // A half past the end that reads slower than the planned size (memory's rate moved between the two
  // moments) walks on as well: the L3 row of a full report on the Zen 5 VM stood at 254 MiB once.
  int reads_at_127 = 0;
  auto noisy = [&](uint64_t size) { return size == 127 * MiB && reads_at_127++ == 0 ? 36.0 : vm(size); };
  PlateauSearch n = plateau_size(254 * MiB, 2 * MiB, noisy);
  CHECK(n.past_end);
  CHECK(n.size <= 8 * MiB);
  CHECK(n.gbps >= 100.0);
  // The run that showed it: 127 MiB read faster than 254 (DRAM's rate moving; 254 read again no
  // faster), then 63.5 MiB slower. Sizes still far under the floor's rate walk on after a faster one.
  auto faster_then_slower = [&](uint64_t size) {
    if (size == 254 * MiB) return 40.7;
    if (size == 127 * MiB) return 46.0;
    if (size == 127 * MiB / 2) return 32.5;
    return vm(size);
  };
  PlateauSearch fs = plateau_size(254 * MiB, 2 * MiB, faster_then_slower);
  CHECK(fs.past_end);
  CHECK(fs.size <= 8 * MiB);
  CHECK(fs.gbps >= 100.0);
  // A walk that no faster size ends leaves what the search had when it began: here the faster size
  // before it (32 MiB; read again, 64 MiB was no faster), never the floor's remnant.
  for (uint64_t floor : {3 * MiB, 4 * MiB}) {  // 4 MiB: the floor on the halving path, not measured again
    auto remnant_noisy = [floor](uint64_t size) { return size <= floor ? 100.0 : size == 32 * MiB ? 46.0 : 40.0; };
    PlateauSearch rn = plateau_size(64 * MiB, floor, remnant_noisy);
    CHECK(rn.past_end);
    CHECK(rn.size == 32 * MiB);
    CHECK(rn.gbps == 46.0);
    // Every reading kept: 64, 32, 64 again, the floor, 16, 8 and (floor 3 MiB) 4.
    CHECK(rn.tried.size() == (floor == 3 * MiB ? 7u : 6u));
    CHECK(std::count_if(rn.tried.begin(), rn.tried.end(), [&](const auto& t) { return t.first <= floor; }) <= 1);
  }
  // A walk that reaches the floor's rate through sizes no faster than the one before is the level
  // before showing through, not an end: a level that holds its 32 MiB keeps the planned 16 MiB.
  auto honest_walk = [](uint64_t size) {
    return size >= 16 * MiB ? 70.0 : size >= 8 * MiB ? 76.0 : size >= 4 * MiB ? 80.0 : 100.0;
  };
  PlateauSearch hw = plateau_size(16 * MiB, 2 * MiB, honest_walk);
  CHECK_FALSE(hw.past_end);
  CHECK(hw.size == 16 * MiB);
  CHECK(hw.gbps == 70.0);
  // The same with a step of more than 10% near the floor, or a slowed reading on the way: a faster size
  // that does not leave the walk's starting rate behind by the floor's ratio does not end the level.
  for (double at8 : {76.0, 60.0}) {
    auto stepped = [at8](uint64_t size) {
      return size >= 16 * MiB ? 70.0 : size >= 8 * MiB ? at8 : size >= 4 * MiB ? 84.0 : 100.0;
    };
    PlateauSearch st = plateau_size(16 * MiB, 2 * MiB, stepped);
    CHECK_FALSE(st.past_end);
    CHECK(st.size == 16 * MiB);
  }
  // A plateau found by faster sizes that reads far under the floor's rate (the level before shows
  // through there) stands where it was found.
  auto plateau_under_floor = [](uint64_t size) {
    if (size > 180 * MiB) return 16.3;
    if (size > 116 * MiB) return 21.0;
    if (size <= 8 * MiB) return 45.0;
    return size % (2 * MiB) ? 29.6 : 30.1;
  };
  PlateauSearch pf = plateau_size(240 * MiB, 8 * MiB, plateau_under_floor);
  CHECK(pf.past_end);
  CHECK(pf.size == 30 * MiB);
  CHECK(pf.gbps == Approx(30.1));
  // The same when the size at the level's edge reads like memory (a walk first, then the faster sizes):
  // the faster sizes end the walk, and the plateau stands.
  auto edge_like_memory = [&](uint64_t size) { return size == 120 * MiB ? 17.0 : plateau_under_floor(size); };
  PlateauSearch em = plateau_size(240 * MiB, 8 * MiB, edge_like_memory);
  CHECK(em.past_end);
  CHECK(em.size == 30 * MiB);
  CHECK(em.gbps == Approx(30.1));
  // A level whose plateau reads under the floor's rate, reached through a walk at memory's rate.
  auto zen_like = [](uint64_t size) {
    return size >= 32 * MiB ? 42.0 : size >= 16 * MiB ? 60.0 : size >= 8 * MiB ? 70.0 : size >= 4 * MiB ? 72.0 : 100.0;
  };
  PlateauSearch zl = plateau_size(256 * MiB, 2 * MiB, zen_like);
  CHECK(zl.past_end);
  CHECK(zl.size == 4 * MiB);
  CHECK(zl.gbps == 72.0);
  // A level less than a third faster than memory (30 against 24 GB/s), walked first: its faster size
  // far above the floor ends the walk, and its plateau stands instead of memory's rate.
  auto slow_level = [](uint64_t size) { return size > 116 * MiB ? 24.0 : size <= 8 * MiB ? 45.0 : 30.0; };
  PlateauSearch sl = plateau_size(240 * MiB, 8 * MiB, slow_level);
  CHECK(sl.past_end);
  CHECK(sl.size == 30 * MiB);
  CHECK(sl.gbps == 30.0);
  // Where the level before shows through the floor and nothing between reads faster than the planned
  // size, the planned size stands.
  auto remnant = [](uint64_t size) { return size <= 3 * MiB ? 100.0 : 40.0; };
  PlateauSearch r = plateau_size(64 * MiB, 3 * MiB, remnant);
  CHECK_FALSE(r.past_end);
  CHECK(r.size == 64 * MiB);
  CHECK(r.gbps == 40.0);
  // The same with the floor on the halving path (64 -> 32 -> 16 -> 8 -> 4): the floor's own rate,
  // reached by walking, does not count as the level's.
  auto remnant_on_path = [](uint64_t size) { return size <= 4 * MiB ? 100.0 : 40.0; };
  PlateauSearch q = plateau_size(64 * MiB, 4 * MiB, remnant_on_path);
  CHECK_FALSE(q.past_end);
  CHECK(q.size == 64 * MiB);
  for (const auto& [size, rate] : q.tried) CHECK((size > 4 * MiB || rate == 100.0));
  // A level whose plateau already matches the floor's rate is not walked: as before.
  auto flat = [](uint64_t size) { return size <= 64 * MiB ? 50.0 : 20.0; };
  PlateauSearch f = plateau_size(32 * MiB, 2 * MiB, flat);
  CHECK(f.size == 16 * MiB);
  CHECK(f.tried.size() == 3);
}

TEST_CASE("ceilings: a level's floor is twice what the level before holds for the threads", "[roofline]") {
  CHECK(level_floor("L1", caches(), 1) == 0);
  CHECK(level_floor("L2", caches(), 1) == 64u << 10);
  CHECK(level_floor("L3", caches(), 1) == 2u << 20);
  CHECK(level_floor("L3", caches(), 2) == 4u << 20);  // two private L2s
  CHECK(level_floor("DRAM", caches(), 1) == 0);
  CHECK(level_floor("L4", caches(), 1) == 0);
  // The floor is out of the level before, and the planned size is at or above it.
  for (const auto& [level, size] : level_sizes(caches(), 1)) {
    const uint64_t floor = level_floor(level, caches(), 1);
    if (floor == 0) continue;
    CHECK(level_for_size(floor, caches(), 1) == level);
    CHECK(size >= floor);
  }
}

TEST_CASE("ceilings: emulated bandwidth sets no memory roof, unsteady bandwidth still does", "[roofline]") {
  BandwidthResult emulated = bw("load", 16 << 10, 240), unsteady = bw("load", 1ull << 30, 30);
  emulated.status = unsteady.status = Status::mistrusted;
  emulated.reason = "emulated: MIDR implementer 0";
  unsteady.reason = "unsteady: median 20% below the best";
  auto m = memory_ceilings({emulated, unsteady}, caches());
  REQUIRE(m.size() == 1);
  CHECK(m[0].gbps == 30);
}

TEST_CASE("ceilings: a row whose threads waited for their CPUs in every repetition sets no memory roof", "[roofline]") {
  // Another program beside the second thread: the L1 copy row read a third of its rate. A row that
  // left out the repetitions with waits and kept a few still bounds memory.
  BandwidthResult spoiled = bw("copy", 48 << 10, 285, 2), few_spared = bw("load", 48 << 10, 834, 2);
  spoiled.status = few_spared.status = Status::mistrusted;
  spoiled.reason = "its threads waited for their CPUs in every repetition (up to 2.8 ms of 4.0: another program ran there)";
  spoiled.waited_every_repetition = true;
  few_spared.reason = "only 2 of 25 repetitions ran without a thread waiting for its CPU (another program ran there)";
  CHECK_FALSE(bounds_memory(spoiled));
  CHECK(bounds_memory(few_spared));
  auto m = memory_ceilings({spoiled, few_spared}, caches());
  REQUIRE(m.size() == 1);
  CHECK(m[0].kernel == "load");
  CHECK(m[0].gbps == 834);
}

TEST_CASE("ceilings: ridge points are peak / bandwidth", "[roofline]") {
  auto t = make_ceiling_table({probe("vfmadd231ps zmm, zmm, zmm", "f32", 120)}, {},
                              {bw("load", 16 << 10, 240), bw("load", 1ull << 30, 30), bw("copy", 1ull << 30, 25)}, caches());
  REQUIRE(t.memory.size() == 3);
  REQUIRE(t.ridges.size() == 2);  // load kernels only
  for (const auto& r : t.ridges) {
    const double expect = r.level == "L1" ? 120.0 / 240 : 120.0 / 30;
    CHECK(r.ai == Approx(expect));
  }
}

TEST_CASE("score: out-of-range requests and ceilings that are not positive are refused", "[roofline]") {
  auto t = make_ceiling_table({probe("vfmadd231ps zmm, zmm, zmm", "f32", 100)}, {},
                              {bw("load", 1ull << 30, 20)}, caches());
  for (ScoreRequest bad : {ScoreRequest{"k", 1.7976931348623157e308, 1, 1, "f32", "", 1},
                           ScoreRequest{"k", 1, 1e25, 1, "f32", "", 1}, ScoreRequest{"k", 1, 1, 1e-300, "f32", "", 1},
                           ScoreRequest{"k", 1, 1, 1e10, "f32", "", 1}, ScoreRequest{"k", 1, 1, 1, "f32", "", 0},
                           ScoreRequest{"k", 1, 1, 1, "f32", "", -3}, ScoreRequest{"k", NAN, 1, 1, "f32", "", 1}}) {
    INFO(bad.flops << " " << bad.bytes << " " << bad.seconds << " " << bad.threads);
    auto s = score_kernel(t, bad);
    REQUIRE_FALSE(s.ok());
    CHECK(s.error().size() < 200);  // bounds printed short, never as 309 digits
  }
  for (double roof : {-5.0, 0.0, double(INFINITY), double(NAN)}) {
    CeilingTable broken = t;
    broken.compute.front().gops = roof;
    auto s = score_kernel(broken, {"k", 1e9, 1e9, 0.1, "f32", "", 1});
    REQUIRE_FALSE(s.ok());
    CHECK_THAT(s.error(), Catch::Contains("positive"));
    broken = t;
    broken.memory.front().gbps = roof;
    CHECK_FALSE(score_kernel(broken, {"k", 1e9, 1e9, 0.1, "f32", "", 1}).ok());
  }
  CHECK(score_kernel(t, {"k", 1e24, 1e24, 1e-12, "f32", "", 1}).ok());  // the bounds themselves are fine
}

TEST_CASE("score: a kernel's own roof binds instead of the dtype's mix ceiling, and the peak is kept beside it", "[roofline]") {
  // The table's f32 peak is a mix (96 a cycle) a matmul of multiply-adds (64 a cycle) cannot use.
  auto t = make_ceiling_table({probe("vfmadd231ps zmm, zmm, zmm", "f32", 300)}, {}, {bw("load", 1ull << 30, 30)}, caches());
  ScoreRequest q{"matmul", 2e9, 1.2e7, 0.01, "f32", "", 1};  // 200 GFLOP/s, AI 167
  auto plain = score_kernel(t, q);
  REQUIRE(plain.ok());
  CHECK(plain->attainable_gflops == Approx(300));
  REQUIRE(t.compute.size() == 1);  // its width as this target reads the text
  CHECK(plain->bound_by == "compute f32 " + t.compute.front().isa);
  q.roof_gflops = 210;
  q.roof_name = "f32 512 multiply-add";
  auto own = score_kernel(t, q);
  REQUIRE(own.ok());
  CHECK(own->attainable_gflops == Approx(210));
  CHECK(own->efficiency == Approx(200.0 / 210));
  CHECK(own->bound_by == "compute f32 512 multiply-add");
  CHECK(own->peak_gflops == Approx(300));
  CHECK(own->ridge_ai == Approx(210.0 / 30));
  // A memory roof below the own roof still binds.
  q.bytes = 2e9;  // AI 1: 30 GFLOP/s from DRAM
  auto thin = score_kernel(t, q);
  REQUIRE(thin.ok());
  CHECK(thin->bound_by == "memory DRAM load");
  // A table without the dtype scores against the own roof alone, with no peak.
  q.bytes = 1.2e7;
  q.dtype = "bf16";
  auto lone = score_kernel(t, q);
  REQUIRE(lone.ok());
  CHECK(lone->peak_gflops == 0);
  // A table whose peak is under the own roof lacks the kernel's width there: no peak, never a share above 100%.
  q.dtype = "f32";
  q.roof_gflops = 400;
  auto above = score_kernel(t, q);
  REQUIRE(above.ok());
  CHECK(above->peak_gflops == 0);
  // Nor when the kernel beat the peak (the peak within 95% of the own roof, read at another moment).
  q.roof_gflops = 310;
  q.seconds = 2e9 / 305e9;  // 305 GFLOP/s against a peak of 300
  auto beat = score_kernel(t, q);
  REQUIRE(beat.ok());
  CHECK(beat->peak_gflops == 0);
  q.seconds = 0.01;
  // An own roof that is not a number from 0 up is refused.
  for (double bad : {-1.0, double(NAN), 1e30}) {
    q.roof_gflops = bad;
    CHECK_FALSE(score_kernel(t, q).ok());
  }
}

namespace {
WidthRate rate(const std::string& family, const std::string& dtype, const std::string& width, double per_cycle) {
  return {family, dtype, width, per_cycle};
}
}  // namespace

TEST_CASE("width rates: the same instructions read below their wider form per lane are named, with it", "[roofline]") {
  // The f32 FMA:add mix at 128 bits at 22.0 FLOP a cycle (5.5 a lane) beside the 256-bit mix at 47.6
  // (5.95) and the 512-bit one at 94.8 (5.93); the scalar mix is not a vector width.
  const std::string mix = "vfmadd231ps + vaddps";
  const std::vector<WidthRate> t = {rate(mix, "f32", "128", 22.0), rate(mix, "f32", "256", 47.6),
                                    rate(mix, "f32", "512", 94.8), rate(mix, "f32", "scalar", 4.0)};
  const auto short_ones = narrow_rates_short_of_wider(t);
  REQUIRE(short_ones.size() == 1);
  CHECK(short_ones[0].narrow == 0);
  CHECK(short_ones[0].wide == 1);
  CHECK(short_ones[0].shortfall == Approx(1 - 5.5 / 5.95));
}

TEST_CASE("width rates: other instructions, the allowance, a slower wide form, scalar and other dtypes are not named", "[roofline]") {
  // Other instructions at the wider width: a 52-bit multiply-add (from 256 bits only) against the
  // 128-bit adds, a matrix multiply against 64-bit dot products.
  CHECK(narrow_rates_short_of_wider({rate("vpaddq", "i64", "128", 6), rate("vpmadd52luq", "i64", "256", 16)}).empty());
  CHECK(narrow_rates_short_of_wider({rate("sdot", "i8", "64", 16), rate("smmla", "i8", "128", 64)}).empty());
  // Each 128-bit lane 2.5% below the 256-bit one's: within kNarrowShortfall.
  CHECK(narrow_rates_short_of_wider({rate("vfmadd231pd", "f64", "128", 7.8), rate("vfmadd231pd", "f64", "256", 16)}).empty());
  // A 512-bit form split in two halves runs half the rate per lane: the narrow one is faster.
  CHECK(narrow_rates_short_of_wider({rate("vaddps", "f32", "256", 16), rate("vaddps", "f32", "512", 16)}).empty());
  // Scalar forms run on other pipes: never compared with a vector width.
  CHECK(narrow_rates_short_of_wider({rate("imul", "i64", "scalar", 1), rate("imul", "i64", "128", 8)}).empty());
  // Another dtype of the same mnemonic text: not compared.
  CHECK(narrow_rates_short_of_wider({rate("vpmul", "i16", "128", 8), rate("vpmul", "i32", "256", 32)}).empty());
  // Nothing to divide: a rate that is not a positive number, a width that is not one, no family.
  CHECK(narrow_rates_short_of_wider({rate("vaddps", "f32", "128", std::nan("")), rate("vaddps", "f32", "256", 16)}).empty());
  CHECK(narrow_rates_short_of_wider({rate("vaddps", "f32", "tile", 1), rate("vaddps", "f32", "256", 16)}).empty());
  CHECK(narrow_rates_short_of_wider({rate("", "f32", "128", 1), rate("", "f32", "256", 16)}).empty());
  // The same family short at two narrower widths: each named once, against the wider form that
  // shows it shortest.
  const auto both = narrow_rates_short_of_wider({rate("vpaddd", "i32", "128", 6), rate("vpaddd", "i32", "256", 14),
                                                 rate("vpaddd", "i32", "512", 32)});
  REQUIRE(both.size() == 2);
  CHECK(both[0].narrow == 0);
  CHECK(both[0].wide == 2);
  CHECK(both[1].narrow == 1);
  CHECK(both[1].wide == 2);
}
