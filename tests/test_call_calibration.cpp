// Tests for src/matmul/call_calibration.cpp: the micro-kernel calls and the packing timed on this core
// for the cost model. Physical invariants only: no figure of any CPU is expected.
#include <catch2/catch.hpp>
#include <cmath>

#include "hw_fixture.hpp"
#include "matmul/call_calibration.hpp"
#include "harness/pin.hpp"
#include "matmul/gemm.hpp"
#include "skip.hpp"
#include "target_fixture.hpp"

using namespace peakprobe;

namespace {

// The model's machine as `matmul` builds it: clock, issue rate and latency of the kernels' own
// multiply-add, measured here by the shared probe runner. Returns why not, "" when measured.
std::string measure_machine(const CpuInfo& cpu, MachineModel& out, MatmulDtype dtype = MatmulDtype::f32) {
  const isa::MatmulRoof roof = test::target().matmul_roof(cpu, dtype);
  const ProbeSpec madd = test::spec(roof.instruction, roof.ops, roof.dtype);
  // A mistrusted reading is taken again, as `matmul` does (a busy moment of the host).
  ProbeResult r = test::shared_runner().run_batch({madd}).front();
  for (int attempt = 1; attempt < 3 && r.status == Status::mistrusted; ++attempt)
    r = test::shared_runner().run_batch({madd}).front();
  if (r.status != Status::ok) return "the roof instruction's reading is " + std::string(to_string(r.status)) + ": " + r.reason;
  if (!r.recip_throughput_cycles || *r.recip_throughput_cycles <= 0 || !r.latency_cycles || r.clock.ghz <= 0)
    return "the roof instruction's reading has no rate, latency or clock";
  out = machine_model_from(cpu, r.clock.ghz, 1.0 / *r.recip_throughput_cycles, *r.latency_cycles, dtype);
  return "";
}

// Runs `check(dtype, machine, gemm, mr, nv)` for each dtype this CPU runs on tiles: the model's
// machine with the tile product's own issue rate and clock, measured here, and the reference block.
// Skips the test where there is none.
template <typename Check>
void for_each_tile_dtype(const Check& check) {
  const CpuInfo& cpu = test::this_cpu();
  int timed = 0;
  for (MatmulDtype dtype : {MatmulDtype::bf16, MatmulDtype::i8}) {
    if (!gemm_unsupported(cpu, dtype).empty()) continue;
    if (!machine_model_from(cpu, 3.0, 1.0, 4.0, dtype).tiles) continue;
    MachineModel machine;
    if (const std::string why = measure_machine(cpu, machine, dtype); !why.empty()) PP_SKIP(why);
    Gemm gemm(cpu, dtype);
    const std::pair<int, int> block = calibration_block(machine, dtype);
    INFO(to_string(dtype) << " " << block.first << "x" << block.second);
    check(dtype, machine, gemm, block.first, block.second);
    ++timed;
  }
  if (timed == 0) PP_SKIP("this CPU runs no tile kernels");
}

// Cycles a k step of an mr x nv tile block takes at least: one tile product per C tile every
// kTileDepthSteps steps, at the measured issue rate.
double tile_step_floor(const MachineModel& machine, int mr, int nv) {
  const double products = double(mr / isa::MicroKernelShape::kTileRows * nv) / isa::MicroKernelShape::kTileDepthSteps;
  return products / machine.fma_per_cycle;
}

}  // namespace

TEST_CASE("call calibration: a machine without a clock or a block the registers cannot hold is an error",
          "[call_calibration]") {
  const CpuInfo& cpu = test::this_cpu();
  if (const std::string why = gemm_unsupported(cpu, MatmulDtype::f32); !why.empty()) PP_SKIP(why);
  Gemm gemm(cpu, MatmulDtype::f32);
  MachineModel machine = machine_model_from(cpu, 3.0, 1.0, 4.0);
  machine.ghz = 0;
  auto no_clock = measure_calls(gemm, machine, 4, 2);
  REQUIRE_FALSE(no_clock.ok());
  CHECK(no_clock.error().find("clock") != std::string::npos);
  machine.ghz = 3.0;
  auto too_big = measure_calls(gemm, machine, 60, 4);
  REQUIRE_FALSE(too_big.ok());
  CHECK(too_big.error().find("register") != std::string::npos);
  // The tile rows' measurement times tile kernels only: an f32 block is refused, not timed.
  auto not_tiles = measure_tile_rows(gemm, machine, 4, 2);
  REQUIRE_FALSE(not_tiles.ok());
  CHECK(not_tiles.error().find("tile") != std::string::npos);
}

TEST_CASE("call calibration: the reference block is one this CPU's kernels run, for every dtype it has",
          "[call_calibration]") {
  const CpuInfo& cpu = test::this_cpu();
  for (MatmulDtype dtype : {MatmulDtype::f32, MatmulDtype::bf16, MatmulDtype::i8}) {
    if (!gemm_unsupported(cpu, dtype).empty()) continue;
    const MachineModel machine = machine_model_from(cpu, 3.0, 2.0, 4.0, dtype);
    const auto [mr, nv] = calibration_block(machine, dtype);
    INFO(to_string(dtype) << " " << mr << "x" << nv);
    Gemm gemm(cpu, dtype);
    auto kernel = gemm.tile_kernel(mr, nv);
    CHECK(kernel.ok());
  }
}

TEST_CASE("call calibration: the deep loop's B panel fills more than twice L1 and stays in a quarter of L2",
          "[call_calibration]") {
  MachineModel m;
  m.l1_bytes = 48 << 10;
  m.l2_bytes = 1 << 20;
  // 48 columns: 192 bytes a step; 512 steps are exactly twice L1, so 640 (whole 128-step loops).
  CHECK(deep_panel_steps(m, 48, false) == 640);
  // 64 columns: 384 steps are exactly twice L1, so 512; with a sums step the panel is one step longer.
  CHECK(deep_panel_steps(m, 64, false) == 512);
  CHECK(deep_panel_steps(m, 64, true) == 512);
  // A narrow block (128-bit vectors) on a 64 KiB L1 needs a deep loop, not a capped one: 16 columns, 2176 steps.
  m.l1_bytes = 64 << 10;
  m.l2_bytes = 2 << 20;
  CHECK(deep_panel_steps(m, 16, false) == 2176);
  // An L2 whose quarter cannot hold such a panel: nothing to measure.
  m.l1_bytes = 32 << 10;
  m.l2_bytes = 256 << 10;
  CHECK(deep_panel_steps(m, 64, false) == 0);
}

TEST_CASE("hw: call calibration: the k loop runs no faster than the multiply-add ports allow", "[call_calibration][hw]") {
  const CpuInfo& cpu = test::this_cpu();
  if (const std::string why = gemm_unsupported(cpu, MatmulDtype::f32); !why.empty()) PP_SKIP(why);
  MachineModel machine;
  if (const std::string why = measure_machine(cpu, machine); !why.empty()) PP_SKIP(why);
  Gemm gemm(cpu, MatmulDtype::f32);
  const auto [mr, nv] = calibration_block(machine, MatmulDtype::f32);
  auto calls = measure_calls(gemm, machine, mr, nv);
  REQUIRE(calls.ok());
  WARN(mr << "x" << nv << " block: k step " << calls->step_cycles << " cycles, call beyond the loop "
          << calls->call_l1 << " / " << calls->call_l2 << " / " << calls->call_l3 << " cycles (C in L1 / L2 / L3)");
  CHECK(calls->mr == mr);
  CHECK(calls->nv == nv);
  // A step issues mr x nv multiply-adds: at the measured issue rate that takes this many cycles at
  // least. 5% for the clock's own reading (the roof's clock converts the seconds).
  const double ports = double(mr * nv) / machine.fma_per_cycle;
  CHECK(calls->step_cycles >= ports * 0.95);
  // And it is a finite figure of the same order: not a timer that stood still.
  CHECK(calls->step_cycles < ports * 20);
  // The deep loop, B streaming from L2, is held to the same ports wherever its panel is L2's
  // (deep_panel_steps), and is not measured where it is not.
  WARN("k step with B from L2: " << calls->step_cycles_b_l2 << " cycles");
  const int nr = gemm.micro_kernel_shape(mr, nv, false).nr();
  const int64_t deep = deep_panel_steps(machine, nr, gemm.b_panels_have_sums());
  CHECK((calls->step_cycles_b_l2 > 0) == (deep > 0));
  if (deep > 0) {
    CHECK(uint64_t(deep) * uint64_t(nr) * 4 > 2 * machine.l1_bytes);
    CHECK(uint64_t(deep) * uint64_t(nr) * 4 <= machine.l2_bytes / 4);
    CHECK(calls->step_cycles_b_l2 >= ports * 0.95);
    CHECK(calls->step_cycles_b_l2 < ports * 20);
  }
  // What a call adds beyond its loop is an update of C, not another loop: less than the 128-step loop
  // it was measured after, with C in L1 (a broken intercept, e.g. seconds taken for cycles, is not).
  CHECK(calls->call_l1 < 128 * calls->step_cycles);
}

TEST_CASE("hw: call calibration: the kernel's k loop timed alone runs no faster than the multiply-add ports allow",
          "[call_calibration][hw]") {
  const CpuInfo& cpu = test::this_cpu();
  if (const std::string why = gemm_unsupported(cpu, MatmulDtype::f32); !why.empty()) PP_SKIP(why);
  MachineModel machine;
  if (const std::string why = measure_machine(cpu, machine); !why.empty()) PP_SKIP(why);
  Gemm gemm(cpu, MatmulDtype::f32);
  for (auto [mr, nv] : {calibration_block(machine, MatmulDtype::f32), std::pair{2, 1}}) {
    auto step = measure_step_seconds(gemm, mr, nv);
    REQUIRE(step.ok());
    // Seconds at the roof's clock, read again right after: the faster of the two readings, for a
    // host that moves the clock between states seconds apart (the Sapphire Rapids-class VM: 3.36 and
    // 3.86 GHz under the roof's stream). 5% for the clock's own reading, as for measure_calls.
    MachineModel after;
    if (const std::string why = measure_machine(cpu, after); !why.empty()) PP_SKIP(why);
    const double ghz = std::max(machine.ghz, after.ghz);
    const double cycles = *step * ghz * 1e9, ports = double(mr * nv) / machine.fma_per_cycle;
    WARN(mr << "x" << nv << " block alone: k step " << cycles << " cycles at " << ghz << " GHz");
    CHECK(cycles >= ports * 0.95);
    // A 2x1 block's step is a chain of its two multiply-adds' latency, no faster: 2 accumulators.
    // 30%: the roof's clock is read under a stream of wide multiply-adds, which some cores run at a
    // lower clock than two chains (Sapphire Rapids-class VM: 3.24-3.36 against 3.6 GHz), and the
    // chains of one call overlap the next call's (each call starts its own). There this step read
    // 3.60-3.69 cycles of the slower clock in 3 ms timings, and 3.24-3.64 in the windows that dodge
    // the host's interruptions. A loop that ran half its steps would read about 2.
    if (mr * nv == 2) CHECK(cycles >= machine.fma_latency * 0.7);
    CHECK(cycles < std::max(ports, machine.fma_latency) * 20);
  }
  // A block the registers cannot hold is an error, not a figure.
  CHECK_FALSE(measure_step_seconds(gemm, 60, 4).ok());
}

TEST_CASE("hw: call calibration: the kernel's k loop taken at the clock around its windows issues no more "
          "multiply-adds a cycle than the roof instruction's probe",
          "[call_calibration][hw]") {
  const CpuInfo& cpu = test::this_cpu();
  if (cpu.tsc_hz <= 0) PP_SKIP("no invariant TSC rate to read the clock with");
  int timed = 0;
  for (MatmulDtype dtype : {MatmulDtype::f32, MatmulDtype::bf16, MatmulDtype::i8}) {
    if (!gemm_unsupported(cpu, dtype).empty()) continue;
    MachineModel machine;
    if (const std::string why = measure_machine(cpu, machine, dtype); !why.empty()) {
      WARN(to_string(dtype) << ": " << why);
      continue;
    }
    if (machine.tiles) continue;  // tile products have their own floor (tile_step_floor)
    const auto [mr, nv] = calibration_block(machine, dtype);
    Gemm gemm(cpu, dtype);
    CycleCounter counter;
    AffinityGuard restore_affinity;
    if (!cpu.core_order.empty()) pin_current_thread(cpu.core_order.front());
    auto clock = ClockCalibrator::create(counter, cpu.tsc_hz, cpu);
    if (!clock) PP_SKIP("no clock calibrator on this machine: " << clock.error());
    (*clock)->set_ratio_window(0);
    (*clock)->measure();
    auto step = measure_step_at_clock(gemm, **clock, mr, nv);
    REQUIRE(step.ok());
    if (!(step->ghz > 0)) PP_SKIP("the clock could not be read beside the kernel's windows");
    // The block's multiply-adds a step over the probe's rate: the fewest cycles its ports allow. Both
    // are cycles of the clock read beside their own samples, so no clock is scaled to another: 3%
    // for the two readings' noise (the loop read 99.4-100.7% of the bound on the Zen 5 VM).
    const double ports = double(mr * nv) / machine.fma_per_cycle;
    WARN(to_string(dtype) << " " << mr << "x" << nv << " block alone: k step " << step->cycles() << " cycles at "
                          << step->ghz << " GHz, ports " << ports);
    CHECK(step->cycles() >= ports * 0.97);
    CHECK(step->cycles() < std::max(ports, machine.fma_latency) * 20);
    ++timed;
  }
  if (timed == 0) PP_SKIP("no dtype's roof could be read, or every one runs on tiles");
}

TEST_CASE("call calibration: the kernel alone reads A in place only where the kernels keep its row pointers",
          "[call_calibration]") {
  const CpuInfo& cpu = test::this_cpu();
  if (const std::string why = gemm_unsupported(cpu, MatmulDtype::f32); !why.empty()) PP_SKIP(why);
  const int rows = a_in_place_rows(cpu, MatmulDtype::f32);
  REQUIRE(rows >= 1);
  Gemm gemm(cpu, MatmulDtype::f32);
  // One row more than the kernels hold pointers for: a packed panel of that block is a kernel, A in
  // place is an error, not a packed kernel's figure.
  CHECK(gemm.tile_kernel(rows + 1, 1).ok());
  const auto taller = gemm.tile_kernel(rows + 1, 1, true);
  REQUIRE_FALSE(taller.ok());
  CHECK_THAT(taller.error(), Catch::Contains("in-place A"));
  const auto timed = measure_step_seconds(gemm, rows + 1, 1, -1, true);
  REQUIRE_FALSE(timed.ok());
  CHECK_THAT(timed.error(), Catch::Contains("in-place A"));
  CHECK(gemm.tile_kernel(rows, 1, true).ok());
}

TEST_CASE("hw: call calibration: the in-place A kernel's k loop timed alone runs no faster than the multiply-add ports allow",
          "[call_calibration][hw]") {
  const CpuInfo& cpu = test::this_cpu();
  int timed = 0;
  for (MatmulDtype dtype : {MatmulDtype::f32, MatmulDtype::bf16, MatmulDtype::i8}) {
    if (!gemm_unsupported(cpu, dtype).empty()) continue;
    const int rows = a_in_place_rows(cpu, dtype);
    if (rows == 0) continue;  // widened, shifted or tile A: packed always (a_direct_refusal)
    // A dtype whose roof cannot be read now (a busy moment) is left out; the test skips if all are.
    MachineModel machine;
    if (const std::string why = measure_machine(cpu, machine, dtype); !why.empty()) {
      WARN(to_string(dtype) << ": " << why);
      continue;
    }
    auto [mr, nv] = calibration_block(machine, dtype);
    mr = std::min(mr, rows);
    Gemm gemm(cpu, dtype);
    auto step = measure_step_seconds(gemm, mr, nv, -1, true);
    REQUIRE(step.ok());
    MachineModel after;
    if (const std::string why = measure_machine(cpu, after, dtype); !why.empty()) {
      WARN(to_string(dtype) << ": " << why);
      continue;
    }
    // As for the packed kernel above: the faster of the two clock readings, 5% for the clock's own
    // reading. A loop that ran fewer steps than asked would read below the ports' bound (that the
    // kernel reads the rows it is given is the gemm tests' to show, by the products it computes).
    const double ghz = std::max(machine.ghz, after.ghz);
    const double cycles = *step * ghz * 1e9, ports = double(mr * nv) / machine.fma_per_cycle;
    WARN(to_string(dtype) << " " << mr << "x" << nv << " block reading A in place: k step " << cycles << " cycles at "
                          << ghz << " GHz");
    CHECK(cycles >= ports * 0.95);
    CHECK(cycles < std::max(ports, machine.fma_latency) * 20);
    ++timed;
  }
  if (timed == 0) PP_SKIP("no dtype's kernels read A in place on this CPU, or no roof could be read");
}

TEST_CASE("hw: call calibration: the tile kernels' k loop is timed alone too", "[call_calibration][hw]") {
  for_each_tile_dtype([](MatmulDtype dtype, const MachineModel& machine, Gemm& gemm, int mr, int nv) {
    auto step = measure_step_seconds(gemm, mr, nv);
    REQUIRE(step.ok());
    // Each call loads and releases its tile configuration, the same in both lengths: what is left is
    // the tile products, no faster than the measured issue rate allows (10%: the roof's clock against
    // the loop's, as above; a loop that ran fewer blocks than its steps ask would be far faster).
    const double cycles = *step * machine.ghz * 1e9, least = tile_step_floor(machine, mr, nv);
    WARN(to_string(dtype) << " " << mr << "x" << nv << " tile block alone: k step " << cycles << " cycles, at least "
                          << least);
    CHECK(cycles >= least * 0.9);
    CHECK(cycles < least * 20);
  });
}

TEST_CASE("call calibration: a tile row's 16-step panels fill twice L1, its 128-step ones at most half of L2",
          "[call_calibration]") {
  MachineModel m;
  m.l1_bytes = 48 << 10;
  m.l2_bytes = 2 << 20;
  // 32 columns: 2 KiB a 16-step panel, 48 of them fill 96 KiB; 48 128-step panels are 768 KiB.
  CHECK(tile_row_panels(m, 32) == 48);
  // 16 columns: 96 panels of 1 KiB; their 128-step ones make 768 KiB, within half of L2.
  CHECK(tile_row_panels(m, 16) == 96);
  // A 1 MiB L2: 48 128-step panels of 32 columns would pass half of it; 32 of them.
  m.l2_bytes = 1 << 20;
  CHECK(tile_row_panels(m, 32) == 32);
  // A tiny L2 still leaves a row of two panels.
  m.l2_bytes = 64 << 10;
  CHECK(tile_row_panels(m, 32) == 2);
}

TEST_CASE("hw: call calibration: a tile row streaming B from L2 runs no faster than the tile products allow",
          "[call_calibration][hw]") {
  for_each_tile_dtype([](MatmulDtype dtype, const MachineModel& machine, Gemm& gemm, int mr, int nv) {
    auto calls = measure_tile_rows(gemm, machine, mr, nv);
    REQUIRE(calls.ok());
    const double least = tile_step_floor(machine, mr, nv);
    WARN(to_string(dtype) << " tile row: k step " << calls->step_cycles_b_l2 << " cycles and "
                          << calls->row_panel_cycles << " a panel (in L1: " << calls->step_cycles << " and "
                          << calls->call_l1 << "), at least " << least << " a step");
    // A 128-step panel of the row takes at least its tile products (10%: the roof's clock against
    // the row's), whatever way the two rows' difference splits it between step and panel.
    const double long_panel = 128 * calls->step_cycles_b_l2 + calls->row_panel_cycles;
    CHECK(long_panel >= 128 * least * 0.9);
    CHECK(calls->step_cycles >= least * 0.9);
    // Each panel loads and stores its C tiles: a row's panel costs something beyond its k loop.
    CHECK(calls->row_panel_cycles > 0);
    // calibrate_machine fills the model from the rows, and the tile packing's rates.
    MachineModel calibrated = machine;
    CHECK(calibrate_machine(calibrated, gemm) == "");
    CHECK(calibrated.calls.row_panel_cycles > 0);
    CHECK(calibrated.pack_a_gbps > 0);
  });
}

TEST_CASE("hw: call calibration: packing rates are measured and calibrate_machine fills the model", "[call_calibration][hw]") {
  const CpuInfo& cpu = test::this_cpu();
  if (const std::string why = gemm_unsupported(cpu, MatmulDtype::f32); !why.empty()) PP_SKIP(why);
  // The clock only converts the calls' seconds to cycles: the TSC's will do here.
  MachineModel machine = machine_model_from(cpu, 0, 1.0, 4.0);
  Gemm gemm(cpu, MatmulDtype::f32);
  CHECK(calibrate_machine(machine, gemm) == "");
  CHECK(machine.calls.mr > 0);
  CHECK(machine.calls.step_cycles > 0);
  CHECK(machine.pack_a_gbps > 0);
  CHECK(machine.pack_b_gbps > 0);
  CHECK(std::isfinite(machine.pack_a_gbps));
  CHECK(std::isfinite(machine.pack_b_gbps));
}

TEST_CASE("hw: call calibration: the team calibration measures the hand-off and barrier for several threads only",
          "[call_calibration][hw]") {
  const CpuInfo& cpu = test::this_cpu();
  if (const std::string why = gemm_unsupported(cpu, MatmulDtype::f32); !why.empty()) PP_SKIP(why);
  MachineModel machine = machine_model_from(cpu, 3.0, 1.0, 4.0);
  Gemm gemm(cpu, MatmulDtype::f32);
  machine.handoff_gbps = 5, machine.barrier_seconds = 1e-6;  // whatever was there before
  CHECK(calibrate_team(machine, gemm, 1).empty());  // nothing to measure, nothing missing
  CHECK(machine.handoff_gbps == 0);  // one thread shares no B block and meets no one
  CHECK(machine.barrier_seconds == 0);
  calibrate_team(machine, gemm, 2);
  CHECK(machine.handoff_gbps > 0);
  CHECK(std::isfinite(machine.handoff_gbps));
  CHECK(machine.fork_join_seconds.size() == 3);
  CHECK(machine.fork_join_seconds[2] > 0);
}

TEST_CASE("hw: call calibration: the wait of two threads meeting after each block is measured",
          "[call_calibration][hw]") {
  const CpuInfo& cpu = test::this_cpu();
  if (const std::string why = gemm_unsupported(cpu, MatmulDtype::f32); !why.empty()) PP_SKIP(why);
  Gemm gemm(cpu, MatmulDtype::f32);
  auto wait = measure_barrier(gemm, machine_model_from(cpu, 3.0, 2.0, 4.0));
  if (!wait.ok() && wait.error().find("did not run at once") != std::string::npos)
    PP_SKIP("the helper's core was not free: " + wait.error());
  INFO((wait.ok() ? std::string() : wait.error()));
  REQUIRE(wait.ok());
  CHECK(std::isfinite(*wait));
}

TEST_CASE("call calibration: the barrier's wait is the trials' median, floored, and an error past a block",
          "[call_calibration]") {
  // Median of the waits; the blocks only judge it.
  CHECK(*barrier_wait({1e-6, 3e-6, 2e-6}, {50e-6, 51e-6, 49e-6}) == Approx(2e-6));
  // Below what a round trip costs unmeasured: the floor.
  CHECK(*barrier_wait({0.0, 0.1e-6, 0.0}, {50e-6}) == Approx(0.25e-6));
  // A pair that lost a whole block a meeting did not run at once.
  const auto lost = barrier_wait({60e-6, 55e-6, 70e-6}, {50e-6, 50e-6, 50e-6});
  REQUIRE_FALSE(lost.ok());
  CHECK(lost.error().find("did not run at once") != std::string::npos);
  CHECK_FALSE(barrier_wait({}, {50e-6}).ok());
  CHECK_FALSE(barrier_wait({1e-6}, {0.0}).ok());
  CHECK_FALSE(barrier_wait({std::nan("")}, {50e-6}).ok());
}
