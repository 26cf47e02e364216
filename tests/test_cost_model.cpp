// The matmul cost model on synthetic machines: the register blocks it may use, the plans it picks for
// a laptop and a server, padding, imbalance, cache fit, dtype grouping and the --explain text.
#include <catch2/catch.hpp>

#include "asm/target.hpp"

#include <algorithm>
#include <cmath>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "cpu/cpu_info.hpp"
#include "matmul/cost_model.hpp"
#include "target_fixture.hpp"

using namespace peakprobe;

namespace {

constexpr uint64_t KiB = 1024, MiB = 1024 * 1024;

// A 2-core laptop with 512-bit vectors and 32 registers (Zen 4-like: one 512-bit FMA per cycle).
MachineModel laptop() {
  MachineModel m;
  m.cores = 2;
  m.vector_bits = 512;
  m.vector_registers = 32;
  m.ghz = 3.7;
  m.fma_per_cycle = 1;
  m.fma_latency = 4;
  m.l1_bytes = 32 * KiB;
  m.l2_bytes = 1 * MiB;
  m.l3_bytes = 32 * MiB;
  m.l3_shared_by = 2;
  m.l2_gbps = 118, m.l3_gbps = 44, m.dram_gbps = 15, m.dram_total_gbps = 40;
  return m;
}

// A 64-core server with 512-bit vectors: two FMAs per cycle, L3 in instances of 8 cores, little DRAM
// per core.
MachineModel server() {
  MachineModel m;
  m.cores = 64;
  m.vector_bits = 512;
  m.vector_registers = 32;
  m.ghz = 3.0;
  m.fma_per_cycle = 2;
  m.fma_latency = 4;
  m.l1_bytes = 48 * KiB;
  m.l2_bytes = 2 * MiB;
  m.l3_bytes = 32 * MiB;
  m.l3_shared_by = 8;
  m.l2_gbps = 96, m.l3_gbps = 36, m.dram_gbps = 10, m.dram_total_gbps = 200;
  return m;
}

// An 8-core desktop with 256-bit vectors and 16 registers.
MachineModel desktop_256() {
  MachineModel m;
  m.cores = 8;
  m.vector_bits = 256;
  m.vector_registers = 16;
  m.ghz = 4.0;
  m.fma_per_cycle = 2;
  m.fma_latency = 4;
  m.l1_bytes = 32 * KiB;
  m.l2_bytes = 512 * KiB;
  m.l3_bytes = 16 * MiB;
  m.l3_shared_by = 8;
  return m;
}

MatmulProblem problem(int64_t m, int64_t n, int64_t k, int threads = 1, MatmulDtype dtype = MatmulDtype::f32) {
  MatmulProblem p;
  p.m = m, p.n = n, p.k = k, p.threads = threads, p.dtype = dtype;
  return p;
}

MatmulConfig config(int mr, int nv, int mc, int kc, int nc, int thread_rows, int thread_cols) {
  MatmulConfig c;
  c.mr = mr, c.nv = nv, c.mc = mc, c.kc = kc, c.nc = nc;
  c.thread_rows = thread_rows, c.thread_cols = thread_cols, c.threads = thread_rows * thread_cols;
  return c;
}

// The --explain text of the model's three cheapest candidates.
std::string explanation(const MachineModel& m, const MatmulProblem& p) {
  std::ostringstream out;
  write_explanation(out, m, p, rank_configs(m, p), 3);
  return out.str();
}

double intensity(std::pair<int, int> block) {
  return double(block.first) * block.second / (block.first + block.second);
}

double accumulators_needed(const MachineModel& m) { return std::ceil(m.fma_latency * m.fma_per_cycle); }

// The blocks a chosen plan keeps resident must fit the caches meant for them.
void check_blocks_fit(const MachineModel& m, const CandidateCost& best, int ab_bytes = 4) {
  const MatmulConfig& c = best.config;
  INFO("mr " << c.mr << " nr " << c.nr << " mc " << c.mc << " kc " << c.kc << " nc " << c.nc);
  CHECK(uint64_t(c.mc) * uint64_t(c.kc) * ab_bytes <= m.l2_bytes);  // A block in L2
  CHECK(uint64_t(c.kc) * uint64_t(c.nr) * ab_bytes <= m.l1_bytes);  // B micro-panel in L1
  CHECK(uint64_t(c.kc) * uint64_t(c.nc) * ab_bytes <= m.l3_bytes);  // B block in an L3 instance
}

}  // namespace

TEST_CASE("to_string names the matmul dtypes", "[cost_model]") {
  CHECK(std::string(to_string(MatmulDtype::f32)) == "f32");
  CHECK(std::string(to_string(MatmulDtype::bf16)) == "bf16");
  CHECK(std::string(to_string(MatmulDtype::i8)) == "int8");
}

TEST_CASE("register blocks fit the register file and hide the FMA latency", "[cost_model]") {
  for (const MachineModel& m : {laptop(), server(), desktop_256()}) {
    const auto registers = [&m](int mr, int nv) {
      return isa::host_target().registers_needed({mr, nv, m.vector_bits, MatmulDtype::f32});
    };
    INFO(m.vector_registers << " registers, " << m.fma_per_cycle << " FMA/cycle");
    const auto blocks = register_blocks(m);
    REQUIRE(!blocks.empty());
    int most = 0;
    for (auto [mr, nv] : blocks) {
      INFO("block " << mr << " x " << nv);
      CHECK(nv >= 1);
      CHECK(nv <= 4);
      CHECK(mr >= 1);
      // Accumulators, B vectors and A's registers, as the target's kernels lay them out.
      CHECK(registers(mr, nv) <= m.vector_registers);
      CHECK(mr * nv >= accumulators_needed(m));
      most = std::max(most, mr * nv);
    }
    // The tallest block of every width is there (nothing cut below the register limit).
    for (int nv = 1; nv <= 4; ++nv) {
      int tallest = 0;
      while (registers(tallest + 1, nv) <= m.vector_registers) ++tallest;
      if (tallest * nv >= accumulators_needed(m))
        CHECK(std::count(blocks.begin(), blocks.end(), std::make_pair(tallest, nv)) == 1);
    }
    CHECK(most >= accumulators_needed(m));
  }
  // 32 registers: the 6 x 4-vector block of 24 accumulators is among them.
  const auto wide = register_blocks(laptop());
  CHECK(std::count(wide.begin(), wide.end(), std::make_pair(6, 4)) == 1);
  // A register file too small for the latency still gets its largest blocks, never nothing.
  MachineModel tiny = desktop_256();
  tiny.vector_registers = 6;
  tiny.fma_latency = 8;
  const auto few = register_blocks(tiny);
  REQUIRE(!few.empty());
  for (auto [mr, nv] : few) CHECK(mr * nv + nv + 1 <= 6);
}

TEST_CASE("when loads limit the kernel, the best block has the highest operand intensity", "[cost_model]") {
  // One load port for two FMA ports: every broadcast and B load competes with the FMAs, so the block
  // with the fewest loads per FMA (highest mr*nv/(mr+nv)) must win a large square problem.
  MachineModel m = server();
  m.loads_per_cycle = 1;
  const auto blocks = register_blocks(m);
  double best_intensity = 0;
  for (auto b : blocks) best_intensity = std::max(best_intensity, intensity(b));
  const CandidateCost best = choose_config(m, problem(3072, 3072, 3072));
  INFO("chosen " << best.config.mr << " x " << best.config.nv);
  CHECK(intensity({best.config.mr, best.config.nv}) == Approx(best_intensity));
  CHECK(best.config.mr * best.config.nv >= accumulators_needed(m));
}

TEST_CASE("a 2-core laptop and a 64-core server plan 4096^3 differently", "[cost_model]") {
  const MachineModel lap = laptop(), srv = server();
  const CandidateCost on_laptop = choose_config(lap, problem(4096, 4096, 4096, lap.cores));
  const CandidateCost on_server = choose_config(srv, problem(4096, 4096, 4096, srv.cores));
  CHECK(on_laptop.config.threads == 2);
  CHECK(on_server.config.threads == 64);
  // 64 x 1 would make every thread read all of B, mostly packed in other L3 instances: 2D instead.
  CHECK(on_server.config.thread_rows > 1);
  CHECK(on_server.config.thread_cols > 1);
  MatmulConfig rows_only = on_server.config;
  rows_only.thread_rows = 64, rows_only.thread_cols = 1;
  CHECK(predict(srv, problem(4096, 4096, 4096, 64), rows_only).seconds > on_server.seconds);
  CHECK(on_laptop.imbalance < 0.05);
  CHECK(on_server.imbalance < 0.05);
  check_blocks_fit(lap, on_laptop);
  check_blocks_fit(srv, on_server);
  // The server's shared B block must fit one L3 instance next to its neighbours'; the laptop's the
  // L3 it shares with one other core.
  CHECK(uint64_t(on_server.config.kc) * on_server.config.nc * 4 <= srv.l3_bytes / 2);
  // And it is faster, by roughly its extra compute.
  CHECK(on_server.seconds * 10 < on_laptop.seconds);
}

TEST_CASE("narrow and short problems pick blocks that avoid padding", "[cost_model]") {
  const MachineModel lap = laptop(), srv = server();
  SECTION("tall-skinny: 4096 x 16 x 4096") {
    for (auto [m, threads] : {std::pair{lap, 1}, std::pair{srv, 64}}) {
      const CandidateCost best = choose_config(m, problem(4096, 16, 4096, threads));
      CHECK(best.config.nr == 16);  // one vector covers n exactly
      CHECK(best.padding < 0.01);
      CHECK(best.imbalance < 0.05);
    }
  }
  SECTION("n = 48 is three vectors") {
    const CandidateCost best = choose_config(lap, problem(2048, 48, 2048));
    CHECK(48 % best.config.nr == 0);
    CHECK(best.padding < 0.01);
  }
  SECTION("m = 3 rows") {
    const CandidateCost best = choose_config(lap, problem(3, 4096, 1024, 2));
    CHECK(best.config.mr == 3);
    CHECK(best.padding < 0.01);
  }
  SECTION("m = 1, a row vector times a matrix") {
    const CandidateCost best = choose_config(srv, problem(1, 4096, 4096));
    CHECK(best.config.mr == 1);
    CHECK(best.padding == Approx(0).margin(1e-12));
  }
  SECTION("256-bit vectors: n = 8 is one vector") {
    const CandidateCost best = choose_config(desktop_256(), problem(4096, 8, 4096, 8));
    // Either one vector wide, or (this problem is bound by reading A) a wider block that reads
    // A in place: padding columns cost compute, which is idle here anyway, packing A costs traffic.
    if (best.config.pack_a) {
      CHECK(best.config.nr == 8);
      CHECK(best.padding < 0.01);
    } else {
      CHECK(best.config.mr <= 6);
      CHECK(best.memory_seconds > best.compute_seconds);
    }
  }
}

TEST_CASE("chosen blocks fit the caches they are meant for", "[cost_model]") {
  check_blocks_fit(laptop(), choose_config(laptop(), problem(1024, 1024, 1024)));
  check_blocks_fit(laptop(), choose_config(laptop(), problem(2048, 2048, 2048, 2)));
  check_blocks_fit(server(), choose_config(server(), problem(4096, 4096, 4096, 64)));
  check_blocks_fit(desktop_256(), choose_config(desktop_256(), problem(2048, 2048, 2048, 8)));
  // bf16 halves the bytes per element: the B micro-panel may hold twice the k.
  check_blocks_fit(laptop(), choose_config(laptop(), problem(2048, 2048, 2048, 1, MatmulDtype::bf16)), 2);
}

TEST_CASE("an overflowing block costs the next level's bandwidth", "[cost_model]") {
  const MachineModel m = laptop();
  const MatmulProblem p = problem(2048, 2048, 2048);
  // Same block and kc, A block 384 KiB (in the L2 budget) against 3 MiB (over all of L2).
  const CandidateCost fits = predict(m, p, config(6, 4, 384, 256, 2048, 1, 1));
  const CandidateCost spills = predict(m, p, config(6, 4, 2046, 384, 2048, 1, 1));
  CHECK(fits.note.find("A block") == std::string::npos);
  CHECK(spills.note.find("A block over L2 budget, from L3") != std::string::npos);
  CHECK(spills.memory_seconds > fits.memory_seconds);
  // Finite, proportionate: L3 bandwidth, not a penalty factor.
  CHECK(spills.seconds < 2 * fits.seconds);
}

TEST_CASE("predicted time grows with the problem, and never beats the peak", "[cost_model]") {
  const MachineModel m = laptop();
  const double peak_gflops = m.ghz * m.fma_per_cycle * 2 * (m.vector_bits / 32);
  double previous = 0;
  for (int64_t size : {16, 32, 64, 128, 256, 512, 1024, 2048, 4096}) {
    const MatmulProblem p = problem(size, size, size);
    const CandidateCost best = choose_config(m, p);
    INFO("size " << size);
    CHECK(best.seconds > previous);
    CHECK(2.0 * size * size * size / best.seconds / 1e9 <= peak_gflops);
    previous = best.seconds;
  }
  // Growing one dimension only, too.
  CHECK(choose_config(m, problem(1024, 1024, 2048)).seconds > choose_config(m, problem(1024, 1024, 1024)).seconds);
  CHECK(choose_config(m, problem(2048, 512, 512)).seconds > choose_config(m, problem(1024, 512, 512)).seconds);
  // batch multiplies the call.
  MatmulProblem batched = problem(256, 256, 256);
  batched.batch = 4;
  CHECK(choose_config(m, batched).seconds == Approx(4 * choose_config(m, problem(256, 256, 256)).seconds));
}

TEST_CASE("an imbalanced thread grid is predicted slower per flop", "[cost_model]") {
  const MachineModel m = server();
  SECTION("3 threads on m = 6") {
    const MatmulProblem p = problem(6, 1024, 1024, 3);
    // 2-row tiles: one each. 4-row tiles: two tiles for three threads, one idle.
    const CandidateCost balanced = predict(m, p, config(2, 4, 2, 256, 1024, 3, 1));
    const CandidateCost idle = predict(m, p, config(4, 4, 4, 256, 1024, 3, 1));
    CHECK(balanced.imbalance == Approx(0).margin(1e-12));
    CHECK(idle.imbalance == Approx(0.5));
    CHECK(idle.note.find("1 idle thread") != std::string::npos);
    CHECK(idle.seconds > balanced.seconds);  // same FLOPs, so slower per flop
  }
  SECTION("6 tiles on 4 threads against 3") {
    const MatmulProblem p4 = problem(36, 1024, 1024, 4), p3 = problem(36, 1024, 1024, 3);
    const CandidateCost four = predict(m, p4, config(6, 4, 36, 256, 1024, 4, 1));
    const CandidateCost three = predict(m, p3, config(6, 4, 36, 256, 1024, 3, 1));
    CHECK(four.imbalance == Approx(1.0 / 3));
    CHECK(three.imbalance == Approx(0).margin(1e-12));
    // Thread-seconds per flop: the fourth thread buys nothing.
    CHECK(four.seconds * 4 > three.seconds * 3);
  }
  SECTION("the ranking gives no thread an empty share") {
    const CandidateCost best = choose_config(m, problem(16, 16, 4096, 64));
    const int64_t tiles = ((16 + best.config.mr - 1) / best.config.mr) * ((16 + best.config.nr - 1) / best.config.nr);
    // A handful of tiles, not 64 threads on a grid: each thread has a tile (and its own part of K).
    CHECK(best.config.threads <= tiles * best.config.k_threads);
    CHECK(best.imbalance == Approx(0).margin(1e-12));
    CHECK(best.note.find("idle") == std::string::npos);
  }
}

TEST_CASE("threads of a row split the columns in whole vectors, and a narrower last tile costs its own vectors",
          "[cost_model]") {
  const MachineModel m = laptop();  // 16 lanes: 513 columns are 33 vectors, 8 tiles of 64 and one of a vector
  SECTION("two threads over N: 17 and 16 vectors, not 5 and 4 tiles") {
    const CandidateCost two = predict(m, problem(513, 513, 513, 2), config(6, 4, 258, 256, 576, 1, 2));
    CHECK(two.imbalance == Approx(17.0 / 16.5 - 1));
  }
  SECTION("a thread whose columns fit one block gets one, though its last panel is narrower") {
    // 513 columns: 33 vectors, 9 panels of 64 (576 columns padded to panels); a B block of all of
    // them fits the laptop's L3 share, so some 6x64 candidate keeps the whole width (nc 576).
    bool one_block = false;
    for (const CandidateCost& c : rank_configs(m, problem(513, 513, 513)))
      if (c.config.nv == 4 && c.config.nc >= 513) one_block = true;
    CHECK(one_block);
  }
  SECTION("a last tile of one vector costs less than a whole one, and no less than its share of the FLOPs") {
    const CandidateCost narrow = predict(m, problem(516, 513, 512), config(6, 4, 258, 256, 576, 1, 1));
    const CandidateCost whole = predict(m, problem(516, 576, 512), config(6, 4, 258, 256, 576, 1, 1));
    CHECK(narrow.compute_seconds < 0.95 * whole.compute_seconds);
    CHECK(narrow.compute_seconds > whole.compute_seconds * 513 / 576);
    CHECK(narrow.padding == Approx(1 - 513.0 / 528));  // computed to whole vectors, not whole tiles
  }
}

TEST_CASE("the ranking is sorted and agrees with predict", "[cost_model]") {
  for (const MatmulProblem& p : {problem(1024, 1024, 1024), problem(777, 333, 555, 2), problem(4096, 16, 4096, 2)}) {
    const auto ranked = rank_configs(laptop(), p);
    REQUIRE(!ranked.empty());
    CHECK(ranked.size() <= 5000);  // a few thousand at most
    CHECK(std::is_sorted(ranked.begin(), ranked.end(),
                         [](const CandidateCost& a, const CandidateCost& b) { return a.seconds < b.seconds; }));
    const CandidateCost chosen = choose_config(laptop(), p);
    CHECK(chosen.seconds == ranked.front().seconds);
    for (size_t i : {size_t(0), ranked.size() / 2, ranked.size() - 1}) {
      const CandidateCost again = predict(laptop(), p, ranked[i].config);
      CHECK(again.seconds == ranked[i].seconds);
      CHECK(again.kernel_efficiency == ranked[i].kernel_efficiency);
    }
    // Every candidate is a whole plan: nr from nv, blocks in their units, a grid of the threads.
    std::set<std::tuple<int, int, int, int, int, int, int, int>> seen;
    for (const CandidateCost& r : ranked) {
      const MatmulConfig& c = r.config;
      CHECK(c.nr == c.nv * 16);
      CHECK(c.mc % c.mr == 0);
      CHECK(c.nc % c.nr == 0);
      CHECK(c.threads == c.batch_threads * c.k_threads * c.thread_rows * c.thread_cols);
      CHECK(c.batch_threads == 1);  // one item
      CHECK(c.threads <= p.threads);
      CHECK(r.kernel_efficiency > 0);
      CHECK(r.kernel_efficiency <= 1);
      CHECK(seen.insert({c.mr, c.nv, c.mc, c.kc, c.nc, c.thread_rows, c.thread_cols, c.k_threads}).second);
    }
  }
}

TEST_CASE("bf16 and int8 block k in pairs and quads", "[cost_model]") {
  for (auto [dtype, group] : {std::pair{MatmulDtype::bf16, 2}, std::pair{MatmulDtype::i8, 4}}) {
    const MatmulProblem p = problem(1024, 1024, 1023, 1, dtype);
    const auto ranked = rank_configs(laptop(), p);
    REQUIRE(!ranked.empty());
    for (const CandidateCost& r : ranked) CHECK(r.config.kc % group == 0);
    // K = 1023 is padded to a whole group, which shows as padding even when M and N fit the block.
    const CandidateCost r = predict(laptop(), p, config(8, 2, 512, 256, 1024, 1, 1));
    CHECK(r.padding > 0);
    CHECK(r.config.kc % group == 0);
    // Twice (four times) the operations per instruction: faster than f32 on the same block.
    const CandidateCost f32 = predict(laptop(), problem(1024, 1024, 1023), config(8, 2, 512, 256, 1024, 1, 1));
    CHECK(r.compute_seconds < f32.compute_seconds / (group * 0.9));
  }
}

TEST_CASE("degenerate problems never divide by zero", "[cost_model]") {
  const MachineModel m = server();
  for (const MatmulProblem& p : {problem(1, 1, 1), problem(1, 1, 1, 64), problem(1, 4096, 1, 64),
                                 problem(4096, 1, 1, 64), problem(65536, 65536, 65536, 64),
                                 problem(65536, 1, 65536, 64), problem(3, 5, 7, 1000)}) {
    INFO(p.m << " x " << p.n << " x " << p.k << ", " << p.threads << " threads");
    const auto ranked = rank_configs(m, p);
    REQUIRE(!ranked.empty());
    const CandidateCost& best = ranked.front();
    CHECK(std::isfinite(best.seconds));
    CHECK(best.seconds > 0);
    CHECK(std::isfinite(best.padding));
    CHECK(std::isfinite(best.imbalance));
    CHECK(best.config.threads >= 1);
    // No more threads than tiles.
    const int64_t tiles = ((p.m + best.config.mr - 1) / best.config.mr) * ((p.n + best.config.nr - 1) / best.config.nr);
    CHECK(best.config.threads <= tiles);
  }
  // An empty problem: one candidate, nothing to do.
  const auto empty = rank_configs(m, problem(0, 16, 16));
  REQUIRE(empty.size() == 1);
  CHECK(empty.front().seconds == 0);
  CHECK(!empty.front().note.empty());
  // A config with nothing filled in is completed, not divided by.
  const CandidateCost blank = predict(m, problem(100, 100, 100), MatmulConfig{});
  CHECK(std::isfinite(blank.seconds));
  CHECK(blank.config.nr == 16);
  // A machine with no L3 and no bandwidth figures still ranks.
  MachineModel bare = laptop();
  bare.l3_bytes = 0, bare.l2_gbps = 0, bare.l3_gbps = 0, bare.dram_gbps = 0, bare.dram_total_gbps = 0;
  CHECK(std::isfinite(choose_config(bare, problem(512, 512, 512, 2)).seconds));
}

TEST_CASE("ranking does bounded work whatever the problem", "[cost_model]") {
  // Counted, not timed (speed belongs in benchmarks): the largest problem on the widest machine ranks
  // no more candidates than the fine pass allows, each of them once.
  const auto ranked = rank_configs(server(), problem(65536, 65536, 65536, 64));
  REQUIRE(!ranked.empty());
  CHECK(ranked.size() <= kMaxRankedConfigs);
  std::set<std::tuple<int, int, int, int, int, int, int, int, int, bool, bool>> distinct;
  for (const auto& c : ranked)
    distinct.insert({c.config.mr, c.config.nv, c.config.kc, c.config.mc, c.config.nc, c.config.thread_rows,
                     c.config.thread_cols, c.config.batch_threads, c.config.k_threads, c.config.pack_a,
                     c.config.pack_b});
  CHECK(distinct.size() == ranked.size());
}

TEST_CASE("machine_model_from reads vector width and caches", "[cost_model]") {
  const isa::Target& t = test::target();
  CpuInfo cpu;
  cpu.physical_cores = 64;
  cpu.logical_cpus = 128;
  cpu.packages = 1;
  cpu.smt_per_core = 2;
  cpu.caches = {{1, "data", 48 * KiB, 64, 12, 2, 64},
                {1, "instruction", 32 * KiB, 64, 8, 2, 64},
                {2, "unified", 2 * MiB, 64, 16, 2, 64},
                {3, "unified", 32 * MiB, 64, 16, 16, 8}};
  // The width and registers are the target's for the CPU's features: this machine's, and a CPU's
  // with every feature the target knows.
  for (const auto& features : {detect_cpu_info().features, test::cpu_with_every_feature().features}) {
    cpu.features = features;
    const MachineModel m = machine_model_from(cpu, 3.0, 2, 4);
    CHECK(m.vector_bits == t.model_vector_bits(cpu));
    CHECK(m.vector_registers == t.vector_registers(m.vector_bits));
  }
  const MachineModel m = machine_model_from(cpu, 3.0, 2, 4);
  CHECK(m.cores == 64);
  CHECK(m.ghz == 3.0);
  CHECK(m.fma_per_cycle == 2);
  CHECK(m.fma_latency == 4);
  CHECK(m.l1_bytes == 48 * KiB);  // shared by the two SMT threads of one core: one core's
  CHECK(m.l2_bytes == 2 * MiB);
  CHECK(m.l3_bytes == 32 * MiB);
  CHECK(m.l3_shared_by == 8);  // 16 logical CPUs = 8 cores
  CHECK(m.l2_gbps > m.l3_gbps);
  CHECK(m.l3_gbps > m.dram_gbps);
  CHECK(m.dram_total_gbps >= m.dram_gbps);

  // Without an L3, blocks that would live there are priced at DRAM, and planning still works.
  cpu.caches.pop_back();
  const MachineModel no_l3 = machine_model_from(cpu, 0, 0, 0);
  CHECK(no_l3.l3_bytes == 0);
  CHECK(no_l3.ghz > 0);
  CHECK(std::isfinite(choose_config(no_l3, problem(1024, 1024, 1024, 4)).seconds));
}

TEST_CASE("the explanation shows the machine, the top rows and the choice", "[cost_model]") {
  const MachineModel m = laptop();
  const MatmulProblem p = problem(1024, 1024, 1024);
  const auto ranked = rank_configs(m, p);
  std::ostringstream out;
  write_explanation(out, m, p, ranked, 5);
  const std::string text = out.str();
  INFO(text);
  CHECK(text.find("512-bit") != std::string::npos);
  CHECK(text.find("1024 x 1024 x 1024") != std::string::npos);
  // Rows 1..5 and not 6.
  std::istringstream lines(text);
  std::string line;
  int rows = 0;
  std::string last_line;
  while (std::getline(lines, line)) {
    std::istringstream words(line);
    int rank = 0;
    std::string block;
    if (words >> rank >> block && rank >= 1 && block.find('x') != std::string::npos) ++rows;  // "  3  8x32 ..."
    last_line = line;
  }
  CHECK(rows == 5);
  // The last line names the chosen configuration.
  const MatmulConfig& c = ranked.front().config;
  CHECK(last_line.rfind("chosen: ", 0) == 0);
  CHECK(last_line.find(std::to_string(c.mr) + "x" + std::to_string(c.nr) + " block") != std::string::npos);
  CHECK(last_line.find("kc " + std::to_string(c.kc)) != std::string::npos);
  CHECK(last_line.find("GFLOP/s") != std::string::npos);
  // int8 speaks of operations, not FLOPs.
  std::ostringstream int8;
  const MatmulProblem q = problem(512, 512, 512, 1, MatmulDtype::i8);
  write_explanation(int8, m, q, rank_configs(m, q), 3);
  CHECK(int8.str().find("GOP/s") != std::string::npos);
}

TEST_CASE("a batch of small items on many threads runs an item per thread group", "[cost_model]") {
  // 64 items of 32^3 on 16 threads: an item has 8 row tiles at most, so split over threads it leaves
  // threads idle and pays a barrier per B block; spread over groups, every thread works on whole items.
  MatmulProblem p = problem(32, 32, 32);
  p.batch = 64;
  p.threads = 16;
  const CandidateCost best = choose_config(server(), p);
  INFO("grid " << best.config.batch_threads << "x" << best.config.thread_rows << "x" << best.config.thread_cols);
  CHECK(best.config.batch_threads > 1);
  CHECK(best.config.threads == best.config.batch_threads * best.config.thread_rows * best.config.thread_cols);
  CHECK(best.config.threads <= 16);
  // Every candidate keeps the invariant, and no group is left without an item.
  MatmulProblem few = p;
  few.batch = 3;
  for (const CandidateCost& c : rank_configs(server(), few)) {
    CHECK(c.config.batch_threads <= 3);
    CHECK(c.config.threads == c.config.batch_threads * c.config.thread_rows * c.config.thread_cols);
  }
  // One item: no batch groups at all.
  for (const CandidateCost& c : rank_configs(server(), problem(32, 32, 32))) CHECK(c.config.batch_threads == 1);
}

TEST_CASE("a product with fewer tiles than threads and a long K shares K among threads", "[cost_model]") {
  // 8 x 64 has one or two tiles: 16 threads on a grid would leave most idle, while K = 65536 gives
  // every thread a long part of the sum to compute.
  const MatmulProblem p = problem(8, 64, 65536, 16);
  const CandidateCost best = choose_config(server(), p);
  INFO("k parts " << best.config.k_threads << ", grid " << best.config.thread_rows << "x" << best.config.thread_cols);
  CHECK(best.config.k_threads > 1);
  CHECK(best.config.threads ==
        best.config.batch_threads * best.config.k_threads * best.config.thread_rows * best.config.thread_cols);
  // Never more K parts than k values, and none at all for a short K on one thread.
  for (const CandidateCost& c : rank_configs(server(), problem(64, 64, 3, 16))) CHECK(c.config.k_threads <= 3);
  for (const CandidateCost& c : rank_configs(server(), problem(64, 64, 512))) CHECK(c.config.k_threads == 1);
}

TEST_CASE("a measured wait for C's lines favours deep kc, and one at the formula changes nothing", "[cost_model]") {
  const MatmulProblem p = problem(2048, 2048, 2048);
  const MatmulConfig shallow = config(6, 4, 384, 128, 2048, 1, 1), deep = config(6, 4, 192, 512, 2048, 1, 1);
  const MachineModel plain = server();
  const double step = formula_k_step(plain, MatmulDtype::f32, 6, 4);  // a measured step that changes nothing
  // Measured at or below what the port formula already charges: clamped, nothing added.
  MachineModel at_formula = plain;
  at_formula.calls = {6, 4, step, 1.0, 1.0, 1.0};
  CHECK(predict(at_formula, p, shallow).seconds == Approx(predict(plain, p, shallow).seconds));
  CHECK(predict(at_formula, p, deep).seconds == Approx(predict(plain, p, deep).seconds));
  // A call that waits 300 cycles for C from L3 (the C panel of 384 x 2048 is 3 MiB: over L2):
  // each kc block pays it once per tile, so the shallow kc pays four times what the deep one does.
  MachineModel waits = plain;
  waits.calls = {6, 4, step, 40.0, 90.0, 300.0};
  const double shallow_added = predict(waits, p, shallow).seconds - predict(plain, p, shallow).seconds;
  const double deep_added = predict(waits, p, deep).seconds - predict(plain, p, deep).seconds;
  CHECK(deep_added > 0);
  CHECK(shallow_added > 2 * deep_added);
  // The ranking then goes deeper: its pick's kc is no shallower than without the figures.
  CHECK(choose_config(waits, p).config.kc >= choose_config(plain, p).config.kc);
  // A block of another shape pays per C line: 12 rows of 2 vectors wait as long as 6 of 4.
  const MatmulConfig tall = config(12, 2, 384, 128, 2048, 1, 1);
  const double tall_added = predict(waits, p, tall).seconds - predict(plain, p, tall).seconds;
  CHECK(tall_added == Approx(shallow_added).epsilon(0.1));
}

TEST_CASE("a measured k step with B from L2 replaces the bandwidth price of re-reading B panels", "[cost_model]") {
  const MatmulProblem p = problem(2048, 2048, 2048);
  // kc 128: a 6 x 64 B micro-panel of 32 KiB, in L1's budget (36 KiB of 48); kc 512: 128 KiB, in L2.
  const MatmulConfig shallow = config(6, 4, 384, 128, 2048, 1, 1), deep = config(6, 4, 192, 512, 2048, 1, 1);
  const MachineModel plain = server();
  const double step = formula_k_step(plain, MatmulDtype::f32, 6, 4);  // a measured step that changes nothing
  CHECK(predict(plain, p, deep).note.find("B panel over L1 budget, from L2") != std::string::npos);
  // Measured no slower from L2 than from L1: the deep blocking sheds the re-reads' bandwidth price,
  // and the shallow one, whose panels stay in L1, is priced as before.
  MachineModel level = plain;
  level.calls = {6, 4, step, 1.0, 1.0, 1.0, step};
  CHECK(predict(level, p, deep).seconds < predict(plain, p, deep).seconds);
  CHECK(predict(level, p, deep).memory_seconds < predict(plain, p, deep).memory_seconds);
  CHECK(predict(level, p, shallow).seconds == Approx(predict(plain, p, shallow).seconds));
  // Two cycles more a step from L2: the calls that re-read a panel (all but the first of each ic
  // block's column of tiles) pay them in the kernel's time, in proportion to the wait.
  MachineModel slow = level, slower = level;
  slow.calls.step_cycles_b_l2 = step + 2;
  slower.calls.step_cycles_b_l2 = step + 4;
  const double slow_added = predict(slow, p, deep).compute_seconds - predict(level, p, deep).compute_seconds;
  const double slower_added = predict(slower, p, deep).compute_seconds - predict(level, p, deep).compute_seconds;
  CHECK(slow_added > 0);
  CHECK(slower_added == Approx(2 * slow_added));
  // At most what every call of the deep blocking would pay: 2 cycles of a step of 12 or more, a sixth.
  CHECK(slow_added < predict(level, p, deep).compute_seconds / 6);
  CHECK(predict(slow, p, shallow).seconds == Approx(predict(level, p, shallow).seconds));
  // The wait is per byte of B re-read: a block of two vectors reads half the bytes a step. 12 x 32
  // at kc 1024 (mc 192: 11 ic blocks) re-reads 171 - 11 row tiles x 64 column tiles = 10240 panels
  // of 32 columns; 6 x 64 at kc 512, (342 - 11) x 32 = 10592 of 64, over the same K.
  const MatmulConfig narrow = config(12, 2, 192, 1024, 2048, 1, 1);
  CHECK(predict(plain, p, narrow).note.find("B panel over L1 budget, from L2") != std::string::npos);
  const double narrow_added = predict(slow, p, narrow).compute_seconds - predict(level, p, narrow).compute_seconds;
  CHECK(narrow_added == Approx(slow_added * (10240.0 * 32) / (10592.0 * 64)));
  CHECK(explanation(slow, p).find(fmt::format("k step with the B micro-panel streaming from L2: {:.2f} cycles", step + 2)) !=
        std::string::npos);
  CHECK(explanation(plain, p).find("streaming from L2") == std::string::npos);
  // Calls measured but not the deep loop (a quarter of L2 could not hold its panel): the bandwidth
  // prices the re-reads, as with no figures at all (calls at or under the formula add nothing).
  MachineModel no_deep = level;
  no_deep.calls.step_cycles_b_l2 = 0;
  CHECK_FALSE(b_panel_l2_measured(no_deep));
  CHECK(b_panel_l2_measured(level));
  CHECK(predict(no_deep, p, deep).seconds == Approx(predict(plain, p, deep).seconds));
  CHECK(explanation(no_deep, p).find("streaming from L2") == std::string::npos);
}

TEST_CASE("a measured k step sets how every block's ports overlap", "[cost_model]") {
  // The calibrated block's step prices the others: measured at the formula, nothing moves; faster
  // than the formula (as the Emerald Rapids VM's 6x64 block ran: 12.10 cycles, formula 12.96),
  // every block's compute is cheaper, the calibrated one's step exactly the measured one; slower,
  // dearer. Never below the FMA ports' own time.
  const MatmulProblem p = problem(1024, 1024, 1024);
  const MachineModel plain = server();
  const double formula = formula_k_step(plain, MatmulDtype::f32, 6, 4), ideal = 6 * 4 / plain.fma_per_cycle;
  REQUIRE(formula > ideal * 1.01);
  auto with_step = [&](double step) {
    MachineModel m = plain;
    m.calls = {6, 4, step, 0.0, 0.0, 0.0};
    return m;
  };
  const MatmulConfig measured_block = config(6, 4, 192, 256, 1024, 1, 1), other = config(9, 3, 198, 256, 1008, 1, 1);
  for (const MatmulConfig& c : {measured_block, other}) {
    INFO(c.mr << "x" << c.nv);
    const double base = predict(plain, p, c).compute_seconds;
    CHECK(predict(with_step(formula), p, c).compute_seconds == Approx(base));
    CHECK(predict(with_step((formula + ideal) / 2), p, c).compute_seconds < base * 0.999);
    CHECK(predict(with_step(formula * 1.05), p, c).compute_seconds > base * 1.001);
  }
  // The calibrated block's k loop is priced at the measured step (1024 / 256 = 4 calls per tile),
  // and at the ports' own time a hard maximum: its FMA time, not less.
  const double tiles = std::ceil(1024.0 / 6) * 1024 / 64, hz = plain.ghz * 1e9;
  for (double step : {(formula + ideal) / 2, ideal}) {
    INFO("measured step " << step);
    const double loop_seconds = tiles * 1024 * step / hz;
    CHECK(predict(with_step(step), p, measured_block).compute_seconds >= loop_seconds * 0.999);
    CHECK(predict(with_step(step), p, measured_block).compute_seconds < loop_seconds * 1.03);
  }
  // Nothing said about the ports: a step that is no number, and a calibrated block whose chains
  // set its step (latency 13 cycles over ports of at most 12), keep the default; the 9x3 block,
  // whose FMA ports alone take 13.5 cycles, is still priced by its ports at that default.
  const double base = predict(plain, p, other).compute_seconds;
  CHECK(predict(with_step(std::nan("")), p, other).compute_seconds == Approx(base));
  CHECK(predict(with_step(0), p, other).compute_seconds == Approx(base));
  MachineModel chained = with_step(14), chained_plain = plain;
  chained.fma_latency = chained_plain.fma_latency = 13;
  CHECK(predict(chained, p, other).compute_seconds == Approx(predict(chained_plain, p, other).compute_seconds));
  CHECK(explanation(chained, p).find("the default kept") != std::string::npos);
  CHECK(explanation(with_step((formula + ideal) / 2), p).find("softness that fits it") != std::string::npos);
}

TEST_CASE("a K split wakes as many threads as it has parts of the whole K", "[cost_model]") {
  // int8, K = 64: 16 k groups. Split 8 ways, each part holds 2 groups; all 8 parts start (gemm.cpp's
  // started_grid counts the k groups of the whole K), and the team costs 8 threads' wake-up.
  MachineModel m = server();
  m.fork_join_seconds.assign(17, 0.0);
  m.fork_join_seconds[2] = 1e-6;
  const MatmulProblem p = problem(8, 64, 64, 8, MatmulDtype::i8);
  MatmulConfig c = config(8, 1, 8, 64, 64, 1, 1);
  c.k_threads = 8;
  c.threads = 8;
  CHECK(predict(m, p, c).team_seconds == Approx(fork_join_cost(m, 8)));
  CHECK(fork_join_cost(m, 8) > fork_join_cost(m, 2));
}

TEST_CASE("a B block kept in L2 leaves the C panel only the rest of L2", "[cost_model]") {
  // server(): 2 MiB of L2. A 48 KiB A block and a 1.25 MiB B block (kc 1024 x nc 1280, int8) stay
  // in L2 together; a C panel of 192 x 1280 words (960 KiB) fits the half of L2 beside the A block,
  // but not beside both blocks: it goes to L3.
  const MatmulProblem p = problem(192, 1280, 1024, 1, MatmulDtype::i8);
  const MachineModel m = server();
  std::ostringstream text;
  write_config_explanation(text, m, p, config(6, 4, 48, 1024, 1280, 1, 1));
  INFO(text.str());
  CHECK(text.str().find("B block 1.25 MiB in L2, C panel 960 KiB in L3") != std::string::npos);
  // With a B block of 512 KiB, a C panel of 768 KiB fits beside both.
  std::ostringstream half;
  write_config_explanation(half, m, p, config(6, 4, 48, 512, 1024, 1, 1));
  INFO(half.str());
  CHECK(half.str().find("B block 512 KiB in L2, C panel 768 KiB in L2") != std::string::npos);
}

TEST_CASE("an A block and a B block stay in L2 together up to three quarters of it", "[cost_model]") {
  // server(): 2 MiB of L2. int8 B of kc 1024 x nc 1024 is 1 MiB; with a 48-row A block (48 KiB)
  // the pair fills 52% of L2 and stays, at nc 1536 (1.5 MiB) 77% and the B block goes to L3.
  const MatmulProblem p = problem(1024, 2048, 1024, 1, MatmulDtype::i8);
  const MachineModel m = server();
  MatmulConfig fits = config(6, 4, 48, 1024, 1024, 1, 1), over = config(6, 4, 48, 1024, 1536, 1, 1);
  std::ostringstream fits_text, over_text;
  write_config_explanation(fits_text, m, p, fits);
  write_config_explanation(over_text, m, p, over);
  CHECK(fits_text.str().find("B block 1 MiB in L2") != std::string::npos);
  CHECK(over_text.str().find("B block 1.5 MiB in L3") != std::string::npos);
  CHECK(over_text.str().find("--config: 6x64 block (mr 6, nv 4), mc 48, kc 1024, nc 1536") != std::string::npos);
}

TEST_CASE("B panels re-read from L2 are never priced faster than the L2 bandwidth delivers them", "[cost_model]") {
  // A block of few rows reads much B a cycle: 2 x 64 at kc 512 on a machine whose L2 gives 8 bytes
  // a cycle (24 GB/s at 3 GHz) cannot run at its port rate, however short the measured block's wait.
  const MatmulProblem p = problem(1024, 1024, 1024);
  const MatmulConfig thin = config(2, 4, 192, 512, 1024, 1, 1);
  MachineModel starved = server();
  starved.l2_gbps = 24;
  starved.calls = {6, 4, 12.0, 1.0, 1.0, 1.0, 12.0};
  REQUIRE(predict(starved, p, thin).note.find("B panel over L1 budget, from L2") != std::string::npos);
  // 2 rows x 4 vectors of 16 lanes: 4 bytes a lane, 256 bytes a step, at least 32 cycles a step from
  // L2; the ports alone allow 4 (8 FMAs, 2 a cycle) and latency 4 x 4 / 8 accumulators = 2.
  const double rereads_bytes = (1024.0 / 2 - 6) * 16 * 1024 * 64 * 4;  // (tiles - ic blocks) x column tiles x K x nr x 4
  CHECK(predict(starved, p, thin).compute_seconds >= rereads_bytes / (24e9) * 0.999);
  // With the default bandwidth the port rate binds again.
  MachineModel fed = starved;
  fed.l2_gbps = 960;
  CHECK(predict(fed, p, thin).compute_seconds < rereads_bytes / (24e9) / 2);
}

TEST_CASE("a measured packing rate below the bandwidths makes repacking A cost more", "[cost_model]") {
  const MatmulProblem p = problem(2048, 2048, 2048);
  // nc 256 packs A eight times, nc 2048 once.
  const MatmulConfig narrow = config(6, 4, 384, 256, 256, 1, 1), wide = config(6, 4, 384, 256, 2048, 1, 1);
  const MachineModel plain = server();
  MachineModel slow_packing = plain;
  slow_packing.pack_a_gbps = 2;
  slow_packing.pack_b_gbps = 2;
  const double narrow_added = predict(slow_packing, p, narrow).pack_seconds - predict(plain, p, narrow).pack_seconds;
  const double wide_added = predict(slow_packing, p, wide).pack_seconds - predict(plain, p, wide).pack_seconds;
  CHECK(wide_added > 0);
  CHECK(narrow_added > 4 * wide_added);
  // Faster than every bandwidth: the bandwidths bind, nothing changes.
  MachineModel fast_packing = plain;
  fast_packing.pack_a_gbps = 1e6;
  fast_packing.pack_b_gbps = 1e6;
  CHECK(predict(fast_packing, p, narrow).seconds == Approx(predict(plain, p, narrow).seconds));
}

TEST_CASE("B read in place saves its packing, and the model reads in place only a B that stays in L2", "[cost_model]") {
  const MachineModel m = laptop();
  // A small f32 product on one thread: reading B in place drops the packing of B and brings the
  // same bytes in with the kernels' traffic instead.
  const MatmulProblem small = problem(128, 128, 128);
  MatmulConfig packed = config(6, 4, 132, 128, 128, 1, 1), in_place = packed;
  in_place.pack_b = false;
  const CandidateCost p = predict(m, small, packed), q = predict(m, small, in_place);
  CHECK(q.config.pack_b == false);
  CHECK(q.pack_seconds < p.pack_seconds);
  CHECK(q.memory_seconds > p.memory_seconds);
  CHECK_THAT(q.note, Catch::Contains("B read in place"));
  // Not for bf16 (k pairs only packing puts together): the model packs it whatever the
  // configuration asked.
  CHECK(predict(m, problem(128, 128, 128, 1, MatmulDtype::bf16), in_place).config.pack_b);
  // Several rows of threads each read B in place on their own: no barrier, no hand-off of B slices
  // (the packed grid pays both).
  MatmulConfig rows = config(6, 4, 132, 128, 128, 2, 1), rows_in_place = rows;
  rows_in_place.pack_b = false;
  MachineModel met = m;
  met.handoff_gbps = 10;
  met.barrier_seconds = 2e-6;
  const CandidateCost shared = predict(met, problem(128, 128, 128, 2), rows),
                      own = predict(met, problem(128, 128, 128, 2), rows_in_place);
  CHECK_FALSE(own.config.pack_b);
  CHECK(shared.pack_seconds - own.pack_seconds >= 2e-6);
  // Meetings and hand-offs cost the in-place grid nothing, the packed one its barrier and more.
  CHECK(own.pack_seconds == Approx(predict(m, problem(128, 128, 128, 2), rows_in_place).pack_seconds));
  CHECK(shared.pack_seconds - predict(m, problem(128, 128, 128, 2), rows).pack_seconds >= 2e-6);
  // And the model reads a B beyond L2 in place only on one row of threads, where its panels serve
  // few calls: several rows would each read it from memory.
  CHECK(b_in_place_pays(m, problem(24, 1024, 4096), 6, 1));
  CHECK_FALSE(b_in_place_pays(m, problem(24, 1024, 4096), 6, 2));
  // The model's own choice: in place for a B that fits half of L2, or whose panels serve few calls
  // (a few rows of A); packed for a large B that many row blocks reuse.
  CHECK_FALSE(choose_config(m, problem(64, 128, 128)).config.pack_b);
  CHECK_FALSE(choose_config(m, problem(24, 1024, 4096)).config.pack_b);
  CHECK(choose_config(m, problem(2048, 2048, 2048)).config.pack_b);
}

TEST_CASE("the model reads in place an A that fits half of L2, or whose blocks serve many B panels", "[cost_model]") {
  MachineModel m = server();  // 2 MiB of L2
  m.a_in_place_rows = 9;
  // 513^3 f32: A is 1 MiB and a little more, just over half of L2.
  const MatmulProblem p = problem(513, 513, 513);
  CHECK(a_in_place_pays(m, p, 9, kAReusePanels));
  CHECK_FALSE(a_in_place_pays(m, p, 9, kAReusePanels - 1));
  CHECK_FALSE(a_in_place_pays(m, p, 9, 1));  // nc one panel: each block is read once, in place from afar
  // An A within half of L2 is read in place whatever its reuse; a block the kernels cannot read
  // in place (taller than their rows, or K not whole k groups) never.
  CHECK(a_in_place_pays(m, problem(256, 513, 512), 9, 1));
  CHECK_FALSE(a_in_place_pays(m, problem(256, 513, 512), 10, 1));
  // K 513 ends inside a bf16 pair: read in place where the kernels read a partial last group.
  CHECK(a_in_place_pays(m, problem(256, 513, 513, 1, MatmulDtype::bf16), 6, kAReusePanels));
  MachineModel whole_groups = m;
  whole_groups.a_in_place_partial_groups = false;
  CHECK_FALSE(a_in_place_pays(whole_groups, problem(256, 513, 513, 1, MatmulDtype::bf16), 6, kAReusePanels));
  CHECK(a_in_place_pays(whole_groups, problem(256, 513, 512, 1, MatmulDtype::bf16), 6, kAReusePanels));
  // The model's own choices follow: every candidate whose nc spans kAReusePanels panels or more
  // reads A in place, every one narrower (with this A) packs it.
  for (const CandidateCost& c : rank_configs(m, p)) {
    if (c.config.mr > m.a_in_place_rows) continue;
    INFO(c.config.mr << "x" << c.config.nr << " nc " << c.config.nc);
    CHECK(c.config.pack_a == (c.config.nc / c.config.nr < kAReusePanels));
  }
}

TEST_CASE("threads side by side in C's rows pay for the line they share in each row not whole lines apart",
          "[cost_model]") {
  MachineModel m = laptop();
  m.handoff_gbps = 20;
  const MatmulConfig side_by_side = config(5, 4, 130, 127, 64, 1, 2), stacked = config(5, 4, 65, 127, 128, 2, 1);
  const CandidateCost shared = predict(m, problem(127, 127, 127, 2), side_by_side);
  const CandidateCost own = predict(m, problem(127, 127, 127, 2), stacked);
  // 127 rows each share a line, one K block stores it once: over and back, 128 bytes at 20 GB/s.
  CHECK(shared.team_seconds - own.team_seconds == Approx(127 * 128 / 20e9).epsilon(0.01));
  // C's rows 128 floats apart, 64-byte vectors: every cut falls on a line boundary, nothing shared.
  CHECK(predict(m, problem(128, 128, 128, 2), config(5, 4, 130, 128, 64, 1, 2)).team_seconds ==
        Approx(predict(m, problem(128, 128, 128, 2), config(5, 4, 65, 128, 128, 2, 1)).team_seconds));
  // With the price, the model stacks the threads for 127^3 where it put them side by side before.
  CHECK(choose_config(m, problem(127, 127, 127, 2)).config.thread_cols == 1);
}

TEST_CASE("the model plans with every power of two below the threads it may use", "[cost_model]") {
  CHECK(thread_counts(16) == std::vector<int>{16, 8, 4, 2, 1});
  CHECK(thread_counts(12) == std::vector<int>{12, 8, 4, 2, 1});
  CHECK(thread_counts(2) == std::vector<int>{2, 1});
  CHECK(thread_counts(1) == std::vector<int>{1});
  CHECK(thread_counts(0) == std::vector<int>{1});
  // Every candidate stays within the threads allowed; with a free team a large product takes them all.
  for (const CandidateCost& c : rank_configs(server(), problem(96, 96, 96, 16))) {
    CHECK(c.config.threads >= 1);
    CHECK(c.config.threads <= 16);
  }
  CHECK(choose_config(server(), problem(1024, 1024, 1024, 16)).config.threads == 16);
}

TEST_CASE("the team's measured wake-up and join is priced per call", "[cost_model]") {
  MachineModel m = server();
  CHECK(fork_join_cost(m, 16) == 0);  // not measured: free, as before
  m.fork_join_seconds.assign(17, 0.0);
  m.fork_join_seconds[2] = 1e-6;
  m.fork_join_seconds[16] = 8e-6;
  CHECK(fork_join_cost(m, 1) == 0);
  CHECK(fork_join_cost(m, 2) == Approx(1e-6));
  CHECK(fork_join_cost(m, 16) == Approx(8e-6));
  // A count not measured: the nearest measured one below, in proportion to the threads.
  CHECK(fork_join_cost(m, 4) == Approx(2e-6));
  CHECK(fork_join_cost(m, 32) == Approx(16e-6));
  const MatmulProblem p = problem(512, 512, 512, 16);
  for (const CandidateCost& c : rank_configs(m, p)) CHECK(c.team_seconds == Approx(fork_join_cost(m, c.config.threads)));
  // The explanation says what was measured and what the choice pays for it.
  const std::string text = explanation(m, p);
  CHECK(text.find("team wake-up and join measured: 2 threads 1.00 us, 16 threads 8.00 us") != std::string::npos);
  CHECK(text.find(", team ") != std::string::npos);
  // Only the threads the GEMM starts are woken: a 4x1 grid on a problem of one row panel starts one
  // thread (gemm.cpp, started_grid), and pays no team; 2x2 on two row panels and one column tile, two.
  CHECK(predict(m, problem(6, 512, 512, 4), config(6, 4, 6, 256, 512, 4, 1)).team_seconds == 0);
  CHECK(predict(m, problem(12, 64, 512, 4), config(6, 4, 12, 256, 64, 2, 2)).team_seconds == Approx(fork_join_cost(m, 2)));
  CHECK(predict(m, problem(512, 512, 512, 4), config(6, 4, 128, 256, 512, 2, 2)).team_seconds == Approx(fork_join_cost(m, 4)));
}

TEST_CASE("a measured hand-off prices the B slices other threads packed, on grids that share B blocks only",
          "[cost_model]") {
  MachineModel m = laptop();
  const MatmulProblem p = problem(512, 512, 512, 2);
  const MatmulConfig rows = config(8, 3, 256, 256, 528, 2, 1), cols = config(8, 3, 256, 256, 528, 1, 2);
  const CandidateCost rows_free = predict(m, p, rows), cols_free = predict(m, p, cols);
  m.handoff_gbps = 10;
  const CandidateCost rows_paid = predict(m, p, rows), cols_paid = predict(m, p, cols);
  // Two threads share each B block: half of its 512 columns x 512 k, in f32, comes from the other.
  CHECK(rows_paid.pack_seconds - rows_free.pack_seconds == Approx(512.0 * 512 * 4 * 0.5 / 10e9));
  CHECK(rows_paid.seconds - rows_free.seconds == Approx(512.0 * 512 * 4 * 0.5 / 10e9));
  CHECK(cols_paid.seconds == Approx(cols_free.seconds));  // one row of threads: nothing shared
  CHECK(explanation(m, p).find("hand-off measured: a core reads lines the next one wrote at 10.0 GB/s") !=
        std::string::npos);
}

TEST_CASE("a measured barrier replaces the round-trip price, once per shared B block and twice per K split",
          "[cost_model]") {
  MachineModel m = laptop();
  const MatmulProblem p = problem(512, 512, 512, 2);
  // kc 128 over K 512: 4 B blocks, each shared by the two rows of threads.
  const MatmulConfig rows = config(8, 3, 256, 128, 528, 2, 1), cols = config(8, 3, 256, 128, 528, 1, 2);
  MatmulConfig split = config(8, 3, 512, 128, 528, 1, 1);
  split.k_threads = 2, split.threads = 2;
  const CandidateCost rows_guess = predict(m, p, rows), cols_guess = predict(m, p, cols), split_guess = predict(m, p, split);
  m.barrier_seconds = 10e-6;
  CHECK(predict(m, p, rows).pack_seconds - rows_guess.pack_seconds == Approx(4 * (10e-6 - 2 * 0.25e-6)));
  CHECK(predict(m, p, cols).seconds == Approx(cols_guess.seconds));  // no shared B block
  CHECK(predict(m, p, split).pack_seconds - split_guess.pack_seconds == Approx(2 * (10e-6 - 0.25e-6)));
  CHECK(explanation(m, p).find("barrier measured: two threads lose 10.00 us each time they meet after a block of work") !=
        std::string::npos);
}

TEST_CASE("the first call on a B micro-panel from a B block beyond L2 waits for it as long as the level is slow",
          "[cost_model]") {
  MachineModel m = laptop();
  const MatmulProblem p = problem(2048, 2048, 2048, 1);
  // 8x3 blocks of 16 lanes: a k step reads 48 words of B in 24 FMA cycles, about 30 GB/s at 3.7 GHz.
  const MatmulConfig in_l3 = config(8, 3, 48, 256, 2064, 1, 1);  // 2 MiB B block: beyond the 1 MiB L2
  const MatmulConfig in_l2 = config(8, 3, 48, 256, 240, 1, 1);   // 240 KiB B block
  const CandidateCost l3_fast = predict(m, p, in_l3), l2_fast = predict(m, p, in_l2);
  m.l3_gbps = 10;
  const CandidateCost l3_slow = predict(m, p, in_l3), l2_slow = predict(m, p, in_l2);
  CHECK(l3_slow.compute_seconds > l3_fast.compute_seconds * 1.1);  // the first calls wait
  CHECK(l3_slow.kernel_efficiency < l3_fast.kernel_efficiency);
  CHECK(l2_slow.compute_seconds == Approx(l2_fast.compute_seconds));  // its B block is in L2
  // Faster than the calls consume them (44 GB/s already is): nothing to wait for.
  MachineModel fast = laptop();
  fast.l3_gbps = 440;
  CHECK(predict(fast, p, in_l3).compute_seconds == Approx(l3_fast.compute_seconds));
}

TEST_CASE("a K split's sums are priced where its region lies and at the hand-off rate, each part adding its share",
          "[cost_model]") {
  MachineModel m = laptop();
  const MatmulProblem p = problem(1024, 1024, 4096, 2);
  MatmulConfig split = config(8, 3, 256, 512, 1056, 1, 1);
  split.k_threads = 2, split.threads = 2;
  const CandidateCost unmeasured = predict(m, p, split);
  m.handoff_gbps = 10;
  const CandidateCost measured = predict(m, p, split);
  // Each part adds half of the 4 MiB region (beyond L2, in L3 at 44 GB/s): of what it reads, one half
  // was written by the other core and comes at the hand-off rate instead.
  const double slice = 1024.0 * 1024 * 4 / 2;
  CHECK(measured.pack_seconds - unmeasured.pack_seconds == Approx(slice / 10e9 - slice / 44e9));
  // A hand-off faster than that level does not make the region's slices arrive faster.
  m.handoff_gbps = 100;
  CHECK(predict(m, p, split).pack_seconds == Approx(unmeasured.pack_seconds));
}

TEST_CASE("a small product runs on fewer threads when waking all of them costs more than it saves", "[cost_model]") {
  MachineModel costly = server();
  // Twice the time of a whole 64^3 product on one core of this machine (0.52 MFLOP at 384 GFLOP/s: 1.4 us).
  costly.fork_join_seconds.assign(17, 0.0);
  costly.fork_join_seconds[2] = 3e-6;
  const MatmulProblem tiny = problem(64, 64, 64, 16);
  const CandidateCost free_team = choose_config(server(), tiny);
  const CandidateCost paid_team = choose_config(costly, tiny);
  INFO("free team: " << free_team.config.threads << " threads, paid: " << paid_team.config.threads);
  CHECK(paid_team.config.threads < free_team.config.threads);
  CHECK(paid_team.config.threads == 1);
  // A large product still takes every thread: the team is a small part of its time.
  const CandidateCost large = choose_config(costly, problem(2048, 2048, 2048, 16));
  CHECK(large.config.threads == 16);
}

TEST_CASE("the explanation says which cache bandwidths were measured, and on what set", "[cost_model]") {
  MachineModel m = laptop();
  const MatmulProblem p = problem(512, 512, 512, 1);
  const std::string defaults = explanation(m, p);
  CHECK(defaults.find("L2 " + std::to_string(int(m.l2_gbps)) + " (default), L3 " + std::to_string(int(m.l3_gbps)) +
                      " (default)") != std::string::npos);
  m.l2_gbps = 250, m.l2_measured_set = 512 << 10;
  m.l3_gbps = 90, m.l3_measured_set = 4 << 20;
  const std::string measured = explanation(m, p);
  CHECK(measured.find("L2 250 (measured on 512 KiB a thread), L3 90 (measured on 4 MiB a thread)") != std::string::npos);
  CHECK(measured.find("DRAM " + std::to_string(int(m.dram_gbps))) != std::string::npos);
  // Faster caches never make a plan slower.
  MachineModel slow = laptop();
  for (const MatmulConfig& c : {config(8, 3, 256, 256, 528, 1, 1), config(8, 3, 512, 1024, 528, 1, 1)})
    CHECK(predict(m, p, c).seconds <= predict(slow, p, c).seconds);
}

namespace {

// A matrix unit like the tile products': one 16 x 16 x 16-step product every 16 cycles, 16 cycles of
// latency, bf16 (two k values a word).
MachineModel tile_machine() {
  MachineModel m = server();
  m.tiles = true;
  m.fma_per_cycle = 1.0 / 16;
  m.fma_latency = 16;
  return m;
}

}  // namespace

TEST_CASE("tile rows load their configuration once a row, whatever its panels", "[cost_model]") {
  const MachineModel m = tile_machine();
  const MatmulProblem p = problem(512, 512, 256, 1, MatmulDtype::bf16);
  // kc = K: one row a row block and jc block. nc 32 (one panel a row) makes 16 jc blocks, nc 64
  // makes 8, nc 512 one: 15 and 7 more rows per row block than the widest, each paying the same
  // configuration (the B block stays in L2 in all three).
  const double c32 = predict(m, p, config(32, 2, 512, 256, 32, 1, 1)).compute_seconds;
  const double c64 = predict(m, p, config(32, 2, 512, 256, 64, 1, 1)).compute_seconds;
  const double c512 = predict(m, p, config(32, 2, 512, 256, 512, 1, 1)).compute_seconds;
  CHECK(c64 > c512);
  CHECK(c32 - c512 == Approx((c64 - c512) * 15.0 / 7.0));
}

TEST_CASE("a measured tile row prices B streaming from L2 per byte, and A panels that leave L1", "[cost_model]") {
  const MatmulProblem p = problem(1024, 1024, 512, 1, MatmulDtype::bf16);
  const MachineModel plain = tile_machine();
  // One block of rows packed right before its row, A panels of 32 rows x 256 steps (32 KiB: in L1's
  // budget), B blocks of 512 KiB in L2.
  const MatmulConfig row_block = config(32, 2, 32, 512, 512, 1, 1);
  // Measured: 4 cycles a step in L1; rows whose k step is 4, 6 or 8 cycles from L2, 500 a panel.
  MachineModel level = plain;
  level.calls = {32, 2, 4.0, 300.0, 0.0, 0.0, 4.0, 500.0};
  MachineModel slow = level, slower = level;
  slow.calls.step_cycles_b_l2 = 6.0;
  slower.calls.step_cycles_b_l2 = 8.0;
  REQUIRE(b_panel_l2_measured(level));
  // The panels' own cost is there at any step: the measured row costs more than the formula alone.
  CHECK(predict(level, p, row_block).compute_seconds > predict(plain, p, row_block).compute_seconds);
  const auto added = [&](const MachineModel& m, const MatmulProblem& q, const MatmulConfig& c) {
    return predict(m, q, c).compute_seconds - predict(level, q, c).compute_seconds;
  };
  const double slow_added = added(slow, p, row_block), slower_added = added(slower, p, row_block);
  CHECK(slow_added > 0);
  CHECK(slower_added == Approx(2 * slow_added));
  // Two more cycles a step on every step of every panel (all of B streams), at the model's clock.
  const double steps = 1024.0 / 32 * 1024 / 32 * (512 / 2);  // row blocks x panels x k steps
  CHECK(slow_added == Approx(steps * 2 / (plain.ghz * 1e9)));
  // A block of many rows: each row's first A panel comes from the A block, and waits as B's bytes do.
  const MatmulConfig many_rows = config(32, 2, 256, 512, 512, 1, 1);
  CHECK(predict(slow, p, many_rows).compute_seconds > predict(slow, p, row_block).compute_seconds);
  // A panels too deep for L1 (kc 1024: 64 KiB) wait for A on every panel of the row too; B blocks of
  // 512 and 256 KiB, in L2 both.
  const MatmulProblem deep_p = problem(1024, 1024, 1024, 1, MatmulDtype::bf16);
  const MatmulConfig deep = config(32, 2, 32, 1024, 256, 1, 1), shallow = config(32, 2, 32, 512, 256, 1, 1);
  CHECK(added(slow, deep_p, deep) > 1.5 * added(slow, deep_p, shallow));
  CHECK_THAT(explanation(slow, p), Catch::Contains("a tile row streaming its B panels from L2: k step 6.00 cycles"));
}

TEST_CASE("a measured tile row's costs hold wherever B lives, and a panel's costs go with its C tiles",
          "[cost_model]") {
  const MatmulProblem p = problem(1024, 1024, 1024, 1, MatmulDtype::bf16);
  MachineModel level = tile_machine();
  level.calls = {32, 2, 4.0, 300.0, 0.0, 0.0, 4.0, 500.0};
  MachineModel slow = level;
  slow.calls.step_cycles_b_l2 = 6.0;
  // kc 1024 and nc 1024: a 2 MiB B block, beyond the L2 budget. Its bytes still wait at least as the
  // measured rows' did: with an L3 fast enough not to bind, the slower row costs more there too; with
  // a slow one, the L3's rate binds whatever the row's wait.
  const MatmulConfig far_b = config(32, 2, 32, 1024, 1024, 1, 1);
  MachineModel fast_l3 = level, fast_l3_slow = slow;
  fast_l3.l3_gbps = fast_l3_slow.l3_gbps = 10000;
  CHECK(predict(fast_l3_slow, p, far_b).compute_seconds > predict(fast_l3, p, far_b).compute_seconds);
  MachineModel slow_l3 = level, slow_l3_slow = slow;
  slow_l3.l3_gbps = slow_l3_slow.l3_gbps = 5;
  CHECK(predict(slow_l3_slow, p, far_b).compute_seconds == Approx(predict(slow_l3, p, far_b).compute_seconds));
  CHECK(predict(slow_l3, p, far_b).compute_seconds > predict(fast_l3, p, far_b).compute_seconds);
  // A panel's measured cost beyond the C update grows with its C tiles: the same product in 16 x 16
  // blocks has four times the panels of 32 x 32 ones, each a quarter of the C tiles, and pays the same.
  MachineModel dear = level;
  dear.calls.row_panel_cycles = 900.0;
  const auto panel_cost = [&](const MatmulConfig& c) {
    return predict(dear, p, c).compute_seconds - predict(level, p, c).compute_seconds;
  };
  const double big = panel_cost(config(32, 2, 32, 512, 512, 1, 1)), small = panel_cost(config(16, 1, 16, 512, 512, 1, 1));
  CHECK(big > 0);
  CHECK(small == Approx(big));
}

TEST_CASE("the model tries one block of rows per A block for tile kernels only", "[cost_model]") {
  const MatmulProblem tiles_p = problem(1024, 1024, 1024, 1, MatmulDtype::bf16);
  bool row_block = false;
  for (const CandidateCost& c : rank_configs(tile_machine(), tiles_p))
    row_block = row_block || c.config.mc == c.config.mr;
  CHECK(row_block);
  const MatmulProblem p = problem(2048, 2048, 2048);
  for (const CandidateCost& c : rank_configs(server(), p)) CHECK(c.config.mc > c.config.mr);
}
