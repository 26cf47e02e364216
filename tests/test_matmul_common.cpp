// What the matmul commands parse and score: --config lists, dtypes, shapes, the roof that binds.
#include <catch2/catch.hpp>

#include <algorithm>

#include "cli/matmul_common.hpp"
#include "cpu/cpu_info.hpp"
#include "matmul/gemm.hpp"
#include "skip.hpp"

using namespace peakprobe;
using namespace peakprobe::cli;

TEST_CASE("matmul options: --config keeps what is not given and follows a new block", "[matmul_common]") {
  MatmulConfig base;
  base.mr = 6, base.nv = 4, base.nr = 64, base.mc = 252, base.kc = 512, base.nc = 1024;
  auto c = parse_config("mr=8,nv=3,kc=256,grid=2x1", base, 512, 6);
  REQUIRE(c.ok());
  CHECK(c->mr == 8);
  CHECK(c->nr == 48);
  CHECK(c->kc == 256);
  CHECK(c->mc % 8 == 0);   // 252 rounded up to whole micro-panels of 8 rows
  CHECK(c->nc % 48 == 0);
  CHECK(c->threads == 2);
  CHECK(c->thread_rows == 2);
  CHECK(c->pack_a);
  auto nr = parse_config("nr=32,pack_a=0", base, 512, 6);
  REQUIRE(nr.ok());
  CHECK(nr->nv == 2);
  CHECK_FALSE(nr->pack_a);
  CHECK(config_text(*nr) == "mr=6,nv=2,mc=252,kc=512,nc=1024,grid=1x1,pack_a=0");
  CHECK(c->pack_b);
  auto b_in_place = parse_config("pack_b=0", base, 512, 6);
  REQUIRE(b_in_place.ok());
  CHECK(b_in_place->pack_a);
  CHECK_FALSE(b_in_place->pack_b);
  CHECK(config_text(*b_in_place) == "mr=6,nv=4,mc=252,kc=512,nc=1024,grid=1x1,pack_b=0");
  auto b_back = parse_config(config_text(*b_in_place), base, 512, 6);
  REQUIRE(b_back.ok());
  CHECK_FALSE(b_back->pack_b);
  // A model config that reads both in place, given blocks that no longer allow it: a taller block
  // packs A; a grid of two rows still reads B in place (each thread into panels of its own); what
  // the user gives explicitly is kept (and checked later).
  MatmulConfig in_place = base;
  in_place.pack_a = in_place.pack_b = false;
  auto rows2 = parse_config("grid=2x1", in_place, 512, 6);
  REQUIRE(rows2.ok());
  CHECK_FALSE(rows2->pack_b);
  CHECK_FALSE(rows2->pack_a);
  auto tall = parse_config("mr=8,nv=3", in_place, 512, 6);
  REQUIRE(tall.ok());
  CHECK(tall->pack_a);
  CHECK_FALSE(tall->pack_b);
  // The limit is the kernels' own: where they keep row pointers for 9 rows, 8 stay in place.
  auto tall_within = parse_config("mr=8,nv=3", in_place, 512, 9);
  REQUIRE(tall_within.ok());
  CHECK_FALSE(tall_within->pack_a);
  // Where the dtype's A is always packed (limit 0), any block packs it.
  auto never = parse_config("nv=3", in_place, 512, 0);
  REQUIRE(never.ok());
  CHECK(never->pack_a);
  auto asked = parse_config("grid=2x1,pack_b=0", in_place, 512, 6);
  REQUIRE(asked.ok());
  CHECK_FALSE(asked->pack_b);
  // Batch groups: alone they run each item on one thread; with a grid, each group runs on it.
  auto spread = parse_config("batch_threads=2", base, 512, 6);
  REQUIRE(spread.ok());
  CHECK(spread->batch_threads == 2);
  CHECK(spread->thread_rows * spread->thread_cols == 1);
  CHECK(spread->threads == 2);
  CHECK(config_text(*spread) == "mr=6,nv=4,mc=252,kc=512,nc=1024,grid=1x1,batch_threads=2");
  auto groups = parse_config("grid=2x1,batch_threads=4", base, 512, 6);
  REQUIRE(groups.ok());
  CHECK(groups->threads == 8);
  auto parts = parse_config("k_threads=3", base, 512, 6);
  REQUIRE(parts.ok());
  CHECK(parts->k_threads == 3);
  CHECK(parts->threads == 3);
  CHECK(config_text(*parts) == "mr=6,nv=4,mc=252,kc=512,nc=1024,grid=1x1,k_threads=3");
  // A grid alone puts every item on it again, over all of K.
  auto back = parse_config("grid=2x1", *groups, 512, 6);
  REQUIRE(back.ok());
  CHECK(back->batch_threads == 1);
  CHECK(back->threads == 2);
  for (const char* bad : {"kc", "kc=0", "kc=-4", "kc=12x", "grid=2", "grid=0x1", "nr=20", "pack_a=2", "pack_b=yes", "speed=11",
                          "batch_threads=0", "batch_threads=1048576,grid=2x1", "k_threads=0",
                          "k_threads=1024,batch_threads=1024,grid=2x1"}) {
    INFO(bad);
    CHECK_FALSE(parse_config(bad, base, 512, 6).ok());
  }
}

TEST_CASE("matmul plan: a first choice that packs A is also timed with A in place, where the kernels can",
          "[matmul_common]") {
  const CpuInfo cpu = detect_cpu_info();
  for (MatmulDtype dt : {MatmulDtype::f32, MatmulDtype::bf16, MatmulDtype::i8}) {
    if (!gemm_unsupported(cpu, dt).empty()) continue;
    Gemm gemm(cpu, dt);
    const int kg = gemm.micro_kernel_shape(1, 1, false).k_group();
    for (int64_t k : {int64_t(256), int64_t(256) + 1}) {  // whole k groups, and one value more
      const MatmulProblem p{256, 256, k, 1, dt, 1};
      CandidateCost first;
      first.config = default_config(cpu, dt, p.m, p.n, p.k, 1);
      first.config.pack_a = true;
      first.config.mc = 3 * first.config.mr;  // not the analytic tiling, which is timed with A in place anyway
      const std::vector<MatmulConfig> shortlist = plan_candidates(cpu, gemm, p, {first});
      REQUIRE_FALSE(shortlist.empty());
      CHECK(shortlist.front() == first.config);
      MatmulConfig in_place = first.config;
      in_place.pack_a = false;
      // K inside a k group: in place where the kernels read a partial last group (no refusal).
      const bool can = first.config.mr <= a_in_place_rows(cpu, dt) &&
                       (k % kg == 0 || a_in_place_depth_refusal(cpu, dt, in_place, k).empty());
      INFO(to_string(dt) << " k " << k << " block " << first.config.mr << " rows, in place up to "
                         << a_in_place_rows(cpu, dt));
      CHECK((std::find(shortlist.begin(), shortlist.end(), in_place) != shortlist.end()) == can);
      // Nothing the shortlist holds reads A in place where the kernels cannot.
      for (const MatmulConfig& c : shortlist)
        if (!c.pack_a) CHECK(a_in_place_depth_refusal(cpu, dt, c, k).empty());
    }
    CHECK(plan_candidates(cpu, gemm, MatmulProblem{}, {}).empty());
  }
}

// Found by fuzzing --config: a grid of 65536x65536 multiplied into an int, and a block near INT_MAX
// overflowed when rounded up to whole micro-panels (mc + mr - 1, nc + nr - 1) or scaled (nv x lanes).
TEST_CASE("matmul options: --config values too large to compute with are refused", "[matmul_common]") {
  MatmulConfig base;
  base.mr = 6, base.nv = 4, base.nr = 64, base.mc = 252, base.kc = 512, base.nc = 1024;
  for (const char* bad : {"grid=65536x65536", "grid=2147483647x2", "grid=2048x1024", "mc=2147483647",
                          "mr=7,nc=2147483647", "nv=2147483647", "nr=2147483632", "kc=1048577"}) {
    INFO(bad);
    auto c = parse_config(bad, base, 512, 6);
    REQUIRE_FALSE(c.ok());
    CHECK(c.error().find("--config") == 0);
  }
  auto big = parse_config("grid=1024x1024,mc=1048576,kc=1048576,nc=1048576", base, 256, 6);
  REQUIRE(big.ok());
  CHECK(big->threads == 1 << 20);
  CHECK(big->kc == 1 << 20);
}

TEST_CASE("matmul options: dtypes and shapes", "[matmul_common]") {
  CHECK(*parse_dtype("f32") == MatmulDtype::f32);
  CHECK(*parse_dtype("bf16") == MatmulDtype::bf16);
  CHECK(*parse_dtype("int8") == MatmulDtype::i8);
  CHECK_FALSE(parse_dtype("fp8").ok());
  int64_t m = 0, n = 0, k = 0;
  CHECK(parse_shape("3,5,7", m, n, k));
  CHECK((m == 3 && n == 5 && k == 7));
  for (const char* bad : {"3,5", "3,5,7,9", "0,1,1", "1,1,65537", "a,b,c", "3;5;7"}) CHECK_FALSE(parse_shape(bad, m, n, k));
}

namespace {
// Two cores, 1 MiB of L2 each, 32 MiB of L3, 20 GB/s of DRAM a core (40 for both).
MachineModel two_core_machine() {
  MachineModel machine;
  machine.cores = 2, machine.l2_bytes = 1 << 20, machine.l3_bytes = 32 << 20;
  machine.dram_gbps = 20, machine.dram_total_gbps = 40;
  return machine;
}

MatmulRoof fma_roof(double gflops) {
  MatmulRoof roof;
  roof.gflops = gflops;
  roof.source = "fma roof";
  return roof;
}

// 1024^3 at `gflops`: far above the ridge, so a compute roof binds.
MatmulResult square_product(double gflops) {
  MatmulResult r;
  r.m = r.n = r.k = 1024, r.gflops = gflops, r.arithmetic_intensity = 170;
  return r;
}

// 65536 x 4 x 4096 at 30 GFLOP/s, AI 2: 1 GB of A, too thin to reuse it, so the model's DRAM figure
// (20 GB/s x AI 2 = 40 GFLOP/s) binds below any compute roof here.
MatmulResult thin_product() {
  MatmulResult r;
  r.m = 65536, r.n = 4, r.k = 4096, r.gflops = 30, r.arithmetic_intensity = 2;
  return r;
}
}  // namespace

TEST_CASE("matmul score: compute roof for reuse-rich shapes, memory roof for thin ones", "[matmul_common]") {
  const MachineModel machine = two_core_machine();
  MatmulRoof roof;
  roof.gflops = 100;
  roof.source = "vfmadd231ps zmm, zmm, zmm";
  MatmulResult square;
  square.m = square.n = square.k = 1024, square.gflops = 90, square.arithmetic_intensity = 170;
  score_matmul(square, roof, machine);
  CHECK(square.bound_by == "compute f32 512");
  CHECK(*square.efficiency == Approx(0.9));
  // 65536 x 4 x 4096: 1 GB of A, AI about 2: 20 GB/s x 2 = 40 GFLOP/s is the roof.
  MatmulResult thin = thin_product();
  score_matmul(thin, roof, machine);
  CHECK(thin.bound_by == "memory DRAM");
  CHECK(*thin.ceiling_gflops == Approx(40));
  CHECK(*thin.efficiency == Approx(0.75));
}

TEST_CASE("matmul score: a compute roof is taken to the clock the product ran at", "[matmul_common]") {
  const MachineModel machine = two_core_machine();
  MatmulRoof roof = fma_roof(200);
  roof.clock.ghz = 4.0;
  MatmulResult square = square_product(171);
  square.clock.ghz = 3.8;  // the product ran 5% slower a cycle than the roof probe
  score_matmul(square, roof, machine);
  CHECK(*square.ceiling_measured_gflops == Approx(200));
  CHECK(square.ceiling_clock_ghz == Approx(4.0));
  CHECK(*square.ceiling_gflops == Approx(190));
  CHECK(*square.efficiency == Approx(0.9));
  CHECK(square.ceiling_source == "fma roof");
  // Without the product's clock the roof stays as measured.
  MatmulResult unclocked = square;
  unclocked.clock = {};
  score_matmul(unclocked, roof, machine);
  CHECK(*unclocked.ceiling_gflops == Approx(200));
  CHECK(*unclocked.efficiency == Approx(0.855));
  // Nor without the roof's.
  MatmulRoof roof_unclocked = roof;
  roof_unclocked.clock = {};
  MatmulResult square2 = square;
  score_matmul(square2, roof_unclocked, machine);
  CHECK(*square2.ceiling_gflops == Approx(200));
  CHECK(square2.ceiling_clock_ghz == 0);
  // A memory roof is bandwidth, not cycles: not scaled (65536 x 4 x 4096 at AI 2: 20 GB/s x 2).
  MatmulResult thin = thin_product();
  thin.clock.ghz = 3.8;
  score_matmul(thin, roof, machine);
  CHECK(thin.bound_by == "memory DRAM");
  CHECK(*thin.ceiling_gflops == Approx(40));
  // No roof at all: nothing to scale.
  MatmulRoof none;
  none.missing = "fma roof mistrusted: ...";
  none.clock.ghz = 3.9;  // a mistrusted probe still read its clock
  none.sustained.share = 0.9;  // nor is a share reported beside no roof
  MatmulResult without;
  without.m = without.n = without.k = 1024, without.gflops = 171, without.arithmetic_intensity = 170;
  without.clock.ghz = 3.8;
  score_matmul(without, none, machine);
  CHECK_FALSE(without.ceiling_gflops);
  CHECK_FALSE(without.ceiling_measured_gflops);
  CHECK_FALSE(without.efficiency);
  CHECK(without.ceiling_clock_ghz == 0);
  CHECK(without.ceiling_sustained_share == 0);
  // Several threads: the roof sums each thread's clock in a run of all of them, while both clock
  // readings are one core's: not scaled.
  MatmulRoof team_roof = roof;
  team_roof.threads = 2;
  MatmulResult team = square;
  team.threads = 2;
  score_matmul(team, team_roof, machine);
  CHECK(*team.ceiling_gflops == Approx(200));
  CHECK(team.ceiling_clock_ghz == Approx(4.0));
  // With the team's own clock known, that is the roof's clock, and still nothing is scaled.
  team_roof.team_clock_ghz = 4.2;
  score_matmul(team, team_roof, machine);
  CHECK(*team.ceiling_gflops == Approx(200));
  CHECK(team.ceiling_clock_ghz == Approx(4.2));
  // One thread keeps its probe's clock whatever the field holds.
  MatmulRoof one_roof = roof;
  one_roof.team_clock_ghz = 4.2;
  MatmulResult alone = square;
  score_matmul(alone, one_roof, machine);
  CHECK(alone.ceiling_clock_ghz == Approx(4.0));
}

TEST_CASE("matmul kernels: the widened path replaces the dot product only when its roof is faster beyond the noise",
          "[matmul_common]") {
  MatmulRoof native, widened;
  native.gflops = 100;
  widened.gflops = 200;  // a dot product at half the FLOP a cycle of the multiply-add
  CHECK(widened_roof_faster(native, widened));
  widened.gflops = 100 * (1 + kWidenGain) * 1.01;
  CHECK(widened_roof_faster(native, widened));
  widened.gflops = 100 * (1 + kWidenGain) * 0.99;  // within two readings' noise: the dot product stays
  CHECK_FALSE(widened_roof_faster(native, widened));
  widened.gflops = 50;
  CHECK_FALSE(widened_roof_faster(native, widened));
  // A roof not measured decides nothing: the dot product stays.
  widened.gflops = 200;
  native.gflops.reset();
  CHECK_FALSE(widened_roof_faster(native, widened));
  native.gflops = 100;
  widened.gflops.reset();
  CHECK_FALSE(widened_roof_faster(native, widened));
  native.gflops = 0;
  widened.gflops = 200;
  CHECK_FALSE(widened_roof_faster(native, widened));
  // A team figure missing (its run of several threads mistrusted): the one-core readings decide.
  native.gflops.reset();
  native.per_core_gflops = 90;
  widened.gflops = 360;
  widened.per_core_gflops = 180;
  CHECK(widened_roof_faster(native, widened));
  native.per_core_gflops = 170;  // within the noise on one core: the dot product stays
  CHECK_FALSE(widened_roof_faster(native, widened));
  native.gflops = 340;  // both teams measured: they decide, whatever one core read
  native.per_core_gflops = 50;
  CHECK_FALSE(widened_roof_faster(native, widened));
  native.gflops.reset();
  native.per_core_gflops.reset();  // nothing on one core either: nothing decides
  CHECK_FALSE(widened_roof_faster(native, widened));
}

TEST_CASE("matmul score: on several threads the k loop alone is taken to the roof's clock, where the ceiling stays",
          "[matmul_common]") {
  const MachineModel machine = two_core_machine();
  MatmulRoof roof = fma_roof(400);
  roof.threads = 2;
  roof.clock.ghz = 3.9;
  roof.team_clock_ghz = 3.8;
  MatmulResult two = square_product(360);
  two.threads = two.config.threads = 2;
  two.clock.ghz = 4.0;
  // One core's loop times the two threads, taken by matmul_run to the product's 4.0 GHz: 404, more
  // than the 400 the roof's pipes give at its 3.8 GHz. At the roof's clock: 404 x 3.8 / 4.0.
  two.kernel_l1_gflops = 404;
  two.kernel_l1_ghz = 3.9;
  score_matmul(two, roof, machine);
  CHECK(*two.ceiling_gflops == Approx(400));  // not scaled: several threads
  CHECK(two.ceiling_clock_ghz == Approx(3.8));
  CHECK(*two.kernel_l1_gflops == Approx(383.8));
  // One thread: the ceiling is scaled to the product's clock, and the loop stays there.
  MatmulRoof one_roof = fma_roof(200);
  one_roof.clock.ghz = 3.8;
  MatmulResult one = square_product(190);
  one.clock.ghz = 4.0;
  one.kernel_l1_gflops = 208;
  one.kernel_l1_ghz = 3.9;
  score_matmul(one, one_roof, machine);
  CHECK(*one.ceiling_gflops == Approx(200 * 4.0 / 3.8));
  CHECK(*one.kernel_l1_gflops == Approx(208));
  // A one-thread plan under two threads (not set against their ceiling): it stays at its clock.
  MatmulResult alone = square_product(190);
  alone.threads = 2;
  alone.config.threads = 1;
  alone.clock.ghz = 4.0;
  alone.kernel_l1_gflops = 202;
  alone.kernel_l1_ghz = 3.9;
  score_matmul(alone, roof, machine);
  CHECK(*alone.kernel_l1_gflops == Approx(202));
  // Several threads without the loop's own clock reading: nothing is scaled.
  MatmulResult unknown = square_product(360);
  unknown.threads = unknown.config.threads = 2;
  unknown.clock.ghz = 4.0;
  unknown.kernel_l1_gflops = 404;
  score_matmul(unknown, roof, machine);
  CHECK(*unknown.kernel_l1_gflops == Approx(404));
}

TEST_CASE("matmul score: a roof that slows when run without pause is scaled by the share it keeps",
          "[matmul_common]") {
  const MachineModel machine = two_core_machine();
  MatmulRoof roof = fma_roof(200);
  roof.clock.ghz = 4.0;
  roof.sustained.share = 0.9;
  MatmulResult square = square_product(171);
  square.clock.ghz = 4.0;
  score_matmul(square, roof, machine);
  CHECK(*square.ceiling_measured_gflops == Approx(200));
  CHECK(*square.ceiling_gflops == Approx(180));
  CHECK(*square.efficiency == Approx(0.95));
  CHECK(square.ceiling_sustained_share == Approx(0.9));
  // After the clock's scaling: the product's clock and the share both apply.
  MatmulResult slower = square_product(171);
  slower.clock.ghz = 3.8;
  score_matmul(slower, roof, machine);
  CHECK(*slower.ceiling_gflops == Approx(171));
  // A share that this core's own product or its k loop alone ran above (beyond the share's noise) was
  // read while the host slowed the share's runs: the roof is not lowered, and no share is reported.
  MatmulResult faster = square_product(171);
  faster.clock.ghz = 4.0;
  faster.gflops = 190;  // above the 180 the share would set
  score_matmul(faster, roof, machine);
  CHECK(*faster.ceiling_gflops == Approx(200));
  CHECK(faster.ceiling_sustained_share == 0);
  MatmulResult loop_faster = square_product(171);
  loop_faster.clock.ghz = 4.0;
  loop_faster.kernel_l1_gflops = 195;
  score_matmul(loop_faster, roof, machine);
  CHECK(*loop_faster.ceiling_gflops == Approx(200));
  // The k loop timed at a slower clock than the product's readings (read right after wide code, as
  // the roof's probe is): its rate as it ran is the witness, not the rate scaled to the product's
  // clock. 195 at the product's 4.0 GHz, timed at 3.6: it ran 175.5, under 180 x 1.02.
  MatmulResult loop_licensed = square_product(171);
  loop_licensed.clock.ghz = 4.0;
  loop_licensed.kernel_l1_gflops = 195;
  loop_licensed.kernel_l1_ghz = 3.6;
  score_matmul(loop_licensed, roof, machine);
  CHECK(*loop_licensed.ceiling_gflops == Approx(180));
  CHECK(loop_licensed.ceiling_sustained_share == Approx(0.9));
  // ... and that is the figure the result keeps beside the lowered ceiling (the console and the
  // kernel mix compare with it).
  CHECK(*loop_licensed.kernel_l1_gflops == Approx(175.5));
  // Timed at a faster clock than the product's, it keeps its scaled rate: 195 witnesses.
  MatmulResult loop_fast_clock = square_product(171);
  loop_fast_clock.clock.ghz = 4.0;
  loop_fast_clock.kernel_l1_gflops = 195;
  loop_fast_clock.kernel_l1_ghz = 4.2;
  score_matmul(loop_fast_clock, roof, machine);
  CHECK(*loop_fast_clock.ceiling_gflops == Approx(200));
  CHECK(*loop_fast_clock.kernel_l1_gflops == Approx(195));
  // Within that noise of the lowered roof: the share stands (a core that slows, its loop at the roof),
  // raised to what the loop or the product was seen to keep: the ceiling is never under either.
  MatmulResult at_roof = square_product(171);
  at_roof.clock.ghz = 4.0;
  at_roof.kernel_l1_gflops = 182;
  score_matmul(at_roof, roof, machine);
  CHECK(*at_roof.ceiling_gflops == Approx(182));
  CHECK(at_roof.ceiling_sustained_share == Approx(0.91));
  MatmulResult product_at_roof = square_product(182);
  product_at_roof.clock.ghz = 4.0;
  score_matmul(product_at_roof, roof, machine);
  CHECK(*product_at_roof.ceiling_gflops == Approx(182));
  CHECK(*product_at_roof.efficiency == Approx(1.0));
  MatmulResult under_roof = square_product(171);  // under the lowered roof: the share as measured
  under_roof.clock.ghz = 4.0;
  under_roof.kernel_l1_gflops = 178;
  score_matmul(under_roof, roof, machine);
  CHECK(*under_roof.ceiling_gflops == Approx(180));
  CHECK(under_roof.ceiling_sustained_share == Approx(0.9));
  // A share near the noise of 1, raised past it by the witness, lowers nothing, as one measured there.
  roof.sustained.share = 0.975;
  MatmulResult raised = square_product(171);
  raised.clock.ghz = 4.0;
  raised.kernel_l1_gflops = 197;  // 0.985 of the roof, within 2% above the 195 the share sets
  score_matmul(raised, roof, machine);
  CHECK(*raised.ceiling_gflops == Approx(200));
  CHECK(raised.ceiling_sustained_share == Approx(0.985));
  // Within kSustainedDrop of 1 the roof keeps its rate (the noise of a run against a reading).
  roof.sustained.share = 0.985;
  MatmulResult kept = square_product(171);
  kept.clock.ghz = 4.0;
  score_matmul(kept, roof, machine);
  CHECK(*kept.ceiling_gflops == Approx(200));
  CHECK(kept.ceiling_sustained_share == Approx(0.985));
  // Not measured: nothing changes, and the result says so (0).
  roof.sustained = {};
  MatmulResult unknown = square_product(171);
  unknown.clock.ghz = 4.0;
  score_matmul(unknown, roof, machine);
  CHECK(*unknown.ceiling_gflops == Approx(200));
  CHECK(unknown.ceiling_sustained_share == 0);
  // Without the product's clock the roof stays at its probe's clock, the slower one under the load
  // the share describes: not scaled by it either.
  roof.sustained.share = 0.9;
  MatmulResult unclocked = square_product(171);
  score_matmul(unclocked, roof, machine);
  CHECK(*unclocked.ceiling_gflops == Approx(200));
  CHECK(unclocked.ceiling_sustained_share == 0);
  // Nor is the roof of several threads: each thread's rate is at its own clock in their run.
  MatmulRoof team_roof = fma_roof(400);
  team_roof.threads = 2;
  team_roof.clock.ghz = 4.0;
  team_roof.sustained.share = 0.9;
  MatmulResult team = square_product(171);
  team.threads = 2;
  team.clock.ghz = 4.0;
  score_matmul(team, team_roof, machine);
  CHECK(*team.ceiling_gflops == Approx(400));
  CHECK(team.ceiling_sustained_share == 0);
  // A memory roof below the scaled compute roof binds as before.
  MatmulResult thin = thin_product();
  thin.clock.ghz = 4.0;
  score_matmul(thin, roof, machine);
  CHECK(*thin.ceiling_measured_gflops == Approx(200));
  CHECK(thin.bound_by == "memory DRAM");
  CHECK(*thin.ceiling_gflops == Approx(40));
}

TEST_CASE("matmul score: a product under a compute roof is also judged without the interruptions it spans",
          "[matmul_common]") {
  const MachineModel machine = two_core_machine();
  const MatmulRoof roof = fma_roof(200);
  MatmulResult square = square_product(171);
  square.timing.min_ms = 10;
  // One stop of 50 us a millisecond: a 10 ms call spans ten of them, 0.5 ms.
  square.availability.share = 0.95, square.availability.scanned_ms = 20, square.availability.interruptions = 20;
  square.availability.median_interruption_us = 50;
  score_matmul(square, roof, machine);
  CHECK(*square.efficiency == Approx(0.855));
  REQUIRE(square.efficiency_while_running);
  CHECK(*square.efficiency_while_running == Approx(0.855 * 10 / 9.5));
  // A call shorter than one period: its fastest run slipped between them, nothing to leave out.
  MatmulResult small = square;
  small.timing.min_ms = 0.5;
  small.efficiency_while_running.reset();
  score_matmul(small, roof, machine);
  CHECK(small.efficiency);
  CHECK_FALSE(small.efficiency_while_running);
  // Not scanned (an emulator, no timestamp rate): no such figure.
  MatmulResult unscanned = square;
  unscanned.availability = {};
  unscanned.efficiency_while_running.reset();
  score_matmul(unscanned, roof, machine);
  CHECK_FALSE(unscanned.efficiency_while_running);
  // Several threads wait for the slowest at each join: the team's scan is its least available core,
  // whose stops are left out the same way.
  MatmulResult team = square;
  team.threads = 2;
  team.efficiency_while_running.reset();
  score_matmul(team, roof, machine);
  REQUIRE(team.efficiency);
  REQUIRE(team.efficiency_while_running);
  CHECK(*team.efficiency_while_running == Approx(*team.efficiency * 10 / 9.5));
  // A team whose cores were not scanned (threads asked to share cores): none.
  MatmulResult crowded = team;
  crowded.availability = {};
  crowded.efficiency_while_running.reset();
  score_matmul(crowded, roof, machine);
  CHECK(crowded.efficiency);
  CHECK_FALSE(crowded.efficiency_while_running);
  // A memory roof was measured over long runs that paid the same interruptions.
  MatmulResult thin = thin_product();
  thin.availability = square.availability;
  score_matmul(thin, roof, machine);
  CHECK(thin.bound_by == "memory DRAM");
  CHECK_FALSE(thin.efficiency_while_running);
  // No roof, no efficiency of either kind.
  MatmulRoof none;
  none.missing = "fma roof mistrusted: ...";
  MatmulResult without = square_product(171);
  without.availability = square.availability;
  score_matmul(without, none, machine);
  CHECK_FALSE(without.efficiency);
  CHECK_FALSE(without.efficiency_while_running);
}

TEST_CASE("matmul options: --baseline names a known library or a path", "[matmul_common]") {
  auto two = parse_baselines("openblas,blis");
  REQUIRE(two.ok());
  CHECK(*two == std::vector<std::string>{"openblas", "blis"});
  auto none = parse_baselines("none");
  REQUIRE(none.ok());
  CHECK(none->empty());
  auto paths = parse_baselines("/opt/lib/libmkl_rt.so,libopenblas.so.0");
  REQUIRE(paths.ok());
  CHECK(paths->size() == 2);
  for (const char* bad : {"garbage", "openblas,", "", "mkl", "OpenBLAS", "openblas,,blis", "/tmp", "/dev/zero"}) {
    INFO(bad);
    auto b = parse_baselines(bad);
    REQUIRE_FALSE(b.ok());
    CHECK_THAT(b.error(), Catch::StartsWith("--baseline '"));
  }
}

TEST_CASE("matmul size: refused by work and by memory before anything is allocated", "[matmul_common]") {
  constexpr uint64_t kGB = 1000000000;
  CHECK(matmul_size_problem(1024, 1024, 1024, 1, MatmulDtype::f32, ColdCacheMode::none, true, 16 * kGB).empty());
  // Work: 2 x 65536^3 is 5.6e14 FLOP a call, whatever the memory.
  CHECK_THAT(matmul_size_problem(65536, 65536, 65536, 1, MatmulDtype::f32, ColdCacheMode::none, false, 0),
             Catch::Contains("FLOP a call"));
  CHECK_THAT(matmul_size_problem(4096, 4096, 4096, 1 << 20, MatmulDtype::i8, ColdCacheMode::none, false, 0),
             Catch::Contains("FLOP a call"));
  // Memory: 65536 x 65536 x 1 is little work, but C alone is 17 GB.
  const std::string c17 = matmul_size_problem(65536, 65536, 1, 1, MatmulDtype::f32, ColdCacheMode::none, false, 16 * kGB);
  CHECK_THAT(c17, Catch::Contains("17.18 GB") && Catch::Contains("free memory"));
  CHECK(matmul_size_problem(65536, 65536, 1, 1, MatmulDtype::f32, ColdCacheMode::none, false, 0).empty());  // unknown
  // 3 GB of operands fit in 80% of 6 GB, but not with the baseline's own copy, nor with two cold copies.
  const int64_t s = 16000;  // 3 x 16000^2 x 4 bytes = 3.07 GB
  CHECK(matmul_size_problem(s, s, s, 1, MatmulDtype::f32, ColdCacheMode::none, false, 6 * kGB).empty());
  CHECK_THAT(matmul_size_problem(s, s, s, 1, MatmulDtype::f32, ColdCacheMode::none, true, 6 * kGB),
             Catch::Contains("baseline"));
  CHECK_THAT(matmul_size_problem(s, s, s, 1, MatmulDtype::f32, ColdCacheMode::all, false, 6 * kGB),
             Catch::Contains("cold-cache"));
  // The baseline runs f32 only: a bf16 problem needs no second copy.
  CHECK(matmul_size_problem(s, s, s, 1, MatmulDtype::bf16, ColdCacheMode::none, true, 6 * kGB).empty());
}

TEST_CASE("matmul options: --isa takes the target's levels and nothing else", "[matmul_common]") {
  const auto levels = isa_level_names();
  REQUIRE_FALSE(levels.empty());
  for (const auto& level : levels) {
    auto l = parse_isa_level(level);
    REQUIRE(l);
    CHECK(*l == level);
  }
  auto none = parse_isa_level("");
  REQUIRE(none);
  CHECK(none->empty());
  auto bad = parse_isa_level("mmx-plus");
  REQUIRE_FALSE(bad);
  for (const auto& level : levels) CHECK_THAT(bad.error(), Catch::Contains(level));
  CHECK_THAT(isa_option_help(), Catch::Contains(levels.front()));

  // No level: the CPU as detected, untouched.
  CpuInfo cpu;
  cpu.features = {"a", "b"};
  auto same = kernel_cpu(cpu, "");
  REQUIRE(same);
  CHECK(same->features == cpu.features);
}

TEST_CASE("matmul roof core: a one-thread product runs on the core its roof was measured on", "[matmul_common]") {
  CpuInfo cpu;
  cpu.core_order = {0, 2, 4, 6, 1, 3};
  MatmulRoof roof;
  roof.threads = 1;
  roof.cpu = 4;
  CHECK(led_by_roof_core(cpu, roof).core_order == std::vector<int>{4, 0, 2, 6, 1, 3});
  roof.cpu = 0;  // already first
  CHECK(led_by_roof_core(cpu, roof).core_order == cpu.core_order);
  roof.cpu = 3;  // the last
  CHECK(led_by_roof_core(cpu, roof).core_order == std::vector<int>{3, 0, 2, 4, 6, 1});
  roof.cpu = 9;  // not a CPU of the order (unknown to it): unchanged
  CHECK(led_by_roof_core(cpu, roof).core_order == cpu.core_order);
  roof.cpu = -1;  // the roof could not run
  CHECK(led_by_roof_core(cpu, roof).core_order == cpu.core_order);
  roof.cpu = 4;
  roof.threads = 2;  // a team's roof ran on the order's first CPUs, like the team
  CHECK(led_by_roof_core(cpu, roof).core_order == cpu.core_order);
}

TEST_CASE("matmul kernel mix: the step's counts in their smallest whole ratio", "[matmul_common]") {
  // A 9-row block of 3 vectors: 3 loads of B, 9 spreads of A, 27 multiply-adds a step.
  const auto parts = cli::kernel_mix_parts({{"load", 3}, {"spread", 9}, {"madd", 27}});
  CHECK(parts.divisor == 3);
  CHECK(parts.weights == std::vector<std::pair<std::string, int>>{{"load", 1}, {"spread", 3}, {"madd", 9}});
  // Coprime counts stay as they are; a part of none is left out; no step, no parts.
  CHECK(cli::kernel_mix_parts({{"load", 4}, {"spread", 6}, {"madd", 24}, {"none", 0}}).weights ==
        std::vector<std::pair<std::string, int>>{{"load", 2}, {"spread", 3}, {"madd", 12}});
  CHECK(cli::kernel_mix_parts({{"a", 5}, {"b", 7}}).divisor == 1);
  CHECK(cli::kernel_mix_parts({}).divisor == 0);
  CHECK(cli::kernel_mix_parts({}).weights.empty());
}

TEST_CASE("matmul kernel mix: the stream's rate over the roof's at the same moments", "[matmul_common]") {
  // A step of 9 x 48 f32 multiply-adds (864 FLOP) in 3 groups of 4.8 cycles at 3.0 GHz: 180 GFLOP/s,
  // against a roof read 200 before and after.
  const double ops = 2.0 * 9 * 48;
  auto share = cli::kernel_mix_share(ops, 3, 4.8, 3.0, 200, 200);
  REQUIRE(share);
  CHECK(*share == Approx(0.9));
  // The roof's two readings are averaged while they agree...
  share = cli::kernel_mix_share(ops, 3, 4.8, 3.0, 198, 202);
  REQUIRE(share);
  CHECK(*share == Approx(0.9));
  // ... and a clock that moved under the stream gives no share at all.
  CHECK_FALSE(cli::kernel_mix_share(ops, 3, 4.8, 3.0, 200, 200 * (1 + 1.5 * cli::kMixRoofAgreement)));
  CHECK_FALSE(cli::kernel_mix_share(ops, 3, 4.8, 3.0, 200 * (1 + 1.5 * cli::kMixRoofAgreement), 200));
  // Nothing measured, nothing divided.
  CHECK_FALSE(cli::kernel_mix_share(ops, 3, 0, 3.0, 200, 200));
  CHECK_FALSE(cli::kernel_mix_share(ops, 3, 4.8, 0, 200, 200));
  CHECK_FALSE(cli::kernel_mix_share(ops, 0, 4.8, 3.0, 200, 200));
  CHECK_FALSE(cli::kernel_mix_share(ops, 3, 4.8, 3.0, 0, 200));
}

TEST_CASE("matmul kernel mix: a stream the loop itself beats is no ceiling", "[matmul_common]") {
  CHECK(cli::stream_bounds_loop(200, 190));
  CHECK(cli::stream_bounds_loop(200, 200 * (1 + cli::kLoopAboveStream)));  // within the two timings' error
  CHECK_FALSE(cli::stream_bounds_loop(200, 200 * (1 + 1.5 * cli::kLoopAboveStream)));
  CHECK_FALSE(cli::stream_bounds_loop(85.8, 115.4));  // a stream 25% below its own loop
  CHECK_FALSE(cli::stream_bounds_loop(0, 100));
}

namespace {

// A register file of `registers` for a stream of `parts`: each part takes a register per chain (its
// instances, weight x rounds, or its chains where fewer), plus `shared` for the sources; the most
// rounds that fit, as ProbeRunner::mix_rounds answers (0: not even one).
std::function<int(const std::vector<MixSpec>&)> register_file(int registers, int shared) {
  return [=](const std::vector<MixSpec>& parts) {
    int best = 0;
    for (int rounds = 1; rounds <= 32; ++rounds) {
      int used = shared;
      for (const auto& p : parts) used += p.chains > 0 ? std::min(p.chains, p.weight * rounds) : p.weight * rounds;
      if (used > registers) break;
      best = rounds;
    }
    return best;
  };
}

std::vector<MixSpec> stream_of(const std::vector<int>& weights) {
  std::vector<MixSpec> parts;
  for (int w : weights) parts.push_back({ProbeSpec{}, w});
  return parts;
}

}  // namespace

TEST_CASE("matmul kernel mix: the busiest chain's links must fit in a group at the rate", "[matmul_common]") {
  using cli::chains_keep_up;
  CHECK(chains_keep_up(12, 12, 8));        // one link each, 4 cycles in a group of 6
  CHECK_FALSE(chains_keep_up(12, 10, 8));  // two chains with two links: 8 cycles in 6
  CHECK(chains_keep_up(24, 10, 8));        // three links at most: 12 cycles in 12
  CHECK_FALSE(chains_keep_up(24, 10, 10)); // no room for slack there
  CHECK(chains_keep_up(27, 26, 10));       // the 512-bit 9x48 block: one chain with two links
  CHECK_FALSE(chains_keep_up(6, 4, 8));    // fewer instances than the rate needs chains
  CHECK_FALSE(chains_keep_up(0, 4, 8));
  CHECK_FALSE(chains_keep_up(12, 0, 8));
}

TEST_CASE("matmul kernel mix: the multiply-adds get the chains their rate needs", "[matmul_common]") {
  // One load, three spreads, six multiply-adds a group on 16 registers (2 for sources), the
  // multiply-adds needing 8 chains: one round (6 chains) would run at 6/8 of their rate. Two
  // rounds fit once the others go down to two chains each: 12 + 2 + 2 = 16.
  auto parts = stream_of({1, 3, 6});
  const std::vector<bool> madd = {false, false, true};
  auto rounds = cli::stream_rounds(parts, madd, 8, register_file(16, 0));
  REQUIRE(rounds);
  CHECK(*rounds == 2);
  CHECK(parts[0].chains == 2);
  CHECK(parts[1].chains == 2);
  CHECK(parts[2].chains == 12);
  // With sources taking two registers, the multiply-adds get 10 chains, and 2 rounds' 12 instances
  // on them would leave two chains two links (8 cycles of latency in a group of 6): 3 rounds, 18
  // instances, no chain more than two links (8 cycles in a group of 9).
  parts = stream_of({1, 3, 6});
  rounds = cli::stream_rounds(parts, madd, 8, register_file(16, 2));
  REQUIRE(rounds);
  CHECK(*rounds == 3);
  CHECK(parts[2].chains == 10);
  CHECK(cli::chains_keep_up(6 * *rounds, parts[2].chains, 8));
  // The 256-bit 4x24 block: 3 loads, 4 spreads, 12 FMAs a group, 16 registers less 2 shared. One
  // round on 10 chains ran at 75% of the FMAs' rate; two rounds keep up at the bound.
  parts = stream_of({3, 4, 12});
  rounds = cli::stream_rounds(parts, madd, 8, register_file(16, 2));
  REQUIRE(rounds);
  CHECK(*rounds == 2);
  CHECK(parts[2].chains == 10);
  // Never below what their rate needs: then nothing is measured.
  parts = stream_of({1, 3, 6});
  CHECK_FALSE(cli::stream_rounds(parts, madd, 8, register_file(10, 2)));
  // A stream that fits as it comes is left alone (0: as many rounds as the registers allow).
  parts = stream_of({2, 3, 12});
  rounds = cli::stream_rounds(parts, {false, false, true}, 10, register_file(32, 0));
  REQUIRE(rounds);
  CHECK(*rounds == 0);
  CHECK(parts[0].chains == 0);
  CHECK(parts[2].chains == 0);
  // The multiply-adds are the part named so, not the part of the most instances: one row of a wide
  // block has as many loads as multiply-adds, and the loads still go down to two chains.
  parts = stream_of({4, 1, 4});
  rounds = cli::stream_rounds(parts, {false, false, true}, 8, register_file(14, 0));
  REQUIRE(rounds);
  CHECK(parts[0].chains == 2);
  CHECK(parts[2].chains >= 8);
  // A stream that does not plan even on one chain a part is not a matter of registers: run_mix
  // refuses it with its own reason.
  parts = stream_of({1, 3, 6});
  rounds = cli::stream_rounds(parts, madd, 8, [](const std::vector<MixSpec>&) { return 0; });
  REQUIRE(rounds);
  CHECK(*rounds == 0);
}

TEST_CASE("matmul --widen: auto, yes and no, and what each dtype on this CPU can follow", "[matmul_common]") {
  for (WidenChoice c : {WidenChoice::automatic, WidenChoice::yes, WidenChoice::no}) {
    auto back = parse_widen(to_string(c));
    REQUIRE(back);
    CHECK(*back == c);
  }
  for (const char* bad : {"", "Yes", "maybe", "auto,yes"}) {
    auto refused = parse_widen(bad);
    REQUIRE_FALSE(refused);
    CHECK_THAT(refused.error(), Catch::Contains("--widen '") && Catch::Contains("expected auto, yes or no"));
  }
  // f32 is never widened: no is what it does, yes is refused, on every CPU (the dtypes with a choice
  // are tested with the target's CPUs: tests/<isa>/test_target.cpp).
  const CpuInfo cpu = detect_cpu_info();
  CHECK(widen_problem(cpu, MatmulDtype::f32, WidenChoice::no).empty());
  CHECK(widen_problem(cpu, MatmulDtype::f32, WidenChoice::automatic).empty());
  CHECK_THAT(widen_problem(cpu, MatmulDtype::f32, WidenChoice::yes), Catch::Contains("f32 is not widened"));
}

TEST_CASE("matmul score: the roof not taken is kept beside the one that binds", "[matmul_common]") {
  const MachineModel machine = two_core_machine();
  MatmulRoof roof = fma_roof(200);
  MatmulResult plain = square_product(171);
  score_matmul(plain, roof, machine);
  CHECK(plain.ceiling_alternative_source.empty());
  CHECK_FALSE(plain.ceiling_alternative_gflops.has_value());
  roof.alternative_source = "the dot product";
  roof.alternative_gflops = 100;
  MatmulResult chose = square_product(171);
  score_matmul(chose, roof, machine);
  CHECK(chose.ceiling_alternative_source == "the dot product");
  CHECK(chose.ceiling_alternative_gflops == Approx(100));
  CHECK(*chose.ceiling_measured_gflops == Approx(200));  // the ceiling is the roof taken
  roof.alternative_gflops.reset();  // not measured: the source stays, the rate is empty
  MatmulResult unmeasured = square_product(171);
  score_matmul(unmeasured, roof, machine);
  CHECK(unmeasured.ceiling_alternative_source == "the dot product");
  CHECK_FALSE(unmeasured.ceiling_alternative_gflops.has_value());
}
