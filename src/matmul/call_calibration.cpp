#include "matmul/call_calibration.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cmath>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "harness/pin.hpp"
#include "harness/stats.hpp"
#include "matmul/aligned_words.hpp"
#include "matmul/packing.hpp"
#include "matmul/reference.hpp"
#include "matmul/spin_barrier.hpp"

namespace peakprobe {
namespace {

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// Seconds one run of `f` takes.
template <typename F>
double seconds_of(const F& f) {
  const auto t0 = Clock::now();
  f();
  return seconds_since(t0);
}

// Every measurement here runs where the GEMM's caller runs: the first core of the core order (the
// caller's AffinityGuard puts it back).
void pin_to_first_core(const Gemm& gemm) {
  if (!gemm.cpu().core_order.empty()) pin_current_thread(gemm.cpu().core_order.front());
}

// k loops of the timed calls: the short one and the long one separate the k step from the call. The
// long one, a typical kc, also times the calls with C further away: the C tile's prefetch, issued as
// a call starts, has that long to arrive (Sapphire Rapids-class VM: this calibration read C from L3
// at about 150 cycles a call after 64-step loops, 290-340 after 128-step ones; stand-alone loops of
// 128 and of 512 steps read the same wait).
constexpr int64_t kShortSteps = 16, kLongSteps = 128;
// Tile kernels run whole blocks of steps and drop what is left: both lengths must be whole blocks.
static_assert(kShortSteps % isa::MicroKernelShape::kTileDepthSteps == 0 &&
              kLongSteps % isa::MicroKernelShape::kTileDepthSteps == 0);
// Each timing runs calls for at least this long, and the fastest of kRepeats timings is kept.
constexpr double kMinSeconds = 3e-3;
constexpr int kRepeats = 7;
// The kernel alone's windows (measure_step_seconds): kStepWindows of each length, in turn, each of
// kStepWindowCalls calls.
constexpr int kStepWindows = 41, kStepWindowCalls = 32;
// C tiles across one row of the C region: 16 tiles of a 64-column block put C rows 4 KiB apart, as in
// a 1024-column C.
constexpr int64_t kTilesAcross = 16;

// A region of C tiles: `down` tiles in each column of tiles, kTilesAcross columns; c_region(0, ...)
// is a single tile (down 1, across 1: the same tile every call).
struct CRegion {
  Words words;
  int64_t down = 0, across = 1, ldc_words = 0;
};

Expected<CRegion> c_region(uint64_t bytes, int mr, int nr) {
  CRegion r;
  if (bytes == 0) {
    r.down = 1;
    r.ldc_words = nr;
  } else {
    r.across = kTilesAcross;
    r.ldc_words = kTilesAcross * nr;
    r.down = std::max<int64_t>(1, int64_t(bytes / 4) / (r.ldc_words * mr));
  }
  r.words = zeroed_words(size_t(r.down * mr * r.ldc_words));
  if (!r.words) return make_error("cannot allocate the C region of the call calibration");
  return r;
}

// Seconds per run of `run` in one timing: runs repeated for at least kMinSeconds.
template <typename Run>
double one_timing(const Run& run) {
  int64_t runs = 0;
  const auto t0 = Clock::now();
  double elapsed = 0;
  do {
    run();
    ++runs;
    elapsed = seconds_since(t0);
  } while (elapsed < kMinSeconds);
  return elapsed / double(runs);
}

// Seconds per call of one timing: sweeps of the region, warmed by one first.
double call_timing(isa::MicroKernelFn fn, int64_t steps, const uint32_t* a, const uint32_t* b, CRegion& c, int mr,
                   int nr) {
  const uint64_t ldc_bytes = uint64_t(c.ldc_words) * 4;
  const int64_t calls_per_sweep = c.down * c.across;
  // At least 64 calls between two readings of the clock: a reading costs about as much as a short call.
  const int64_t sweeps_per_check = std::max<int64_t>(1, 64 / calls_per_sweep);
  auto sweep = [&] {
    for (int64_t j = 0; j < c.across; ++j)
      for (int64_t i = 0; i < c.down; ++i)
        fn(uint64_t(steps), a, b, c.words.get() + i * mr * c.ldc_words + j * nr, ldc_bytes, 1, 0, 0, nullptr, 1);
  };
  sweep();  // warm: the region where it lives now
  const double per_run = one_timing([&] {
    for (int64_t s = 0; s < sweeps_per_check; ++s) sweep();
  });
  return per_run / double(sweeps_per_check * calls_per_sweep);
}

// A k step and what a call costs beyond its k loop (any unit), from the fastest short and long calls:
// the calls' difference, per step, and the long call less its steps. Never below 0.
struct StepAndCall {
  double step = 0, call = 0;
};
StepAndCall step_and_call(double short_call, double long_call) {
  StepAndCall r;
  r.step = std::max(0.0, (long_call - short_call) / double(kLongSteps - kShortSteps));
  r.call = std::max(0.0, long_call - double(kLongSteps) * r.step);
  return r;
}

// Fastest seconds per pass of kRepeats timings of `pass`, warmed by one first.
template <typename Pass>
double seconds_per_pass(const Pass& pass) {
  pass();
  double best = 1e300;
  for (int rep = 0; rep < kRepeats; ++rep) best = std::min(best, one_timing(pass));
  return best;
}

}  // namespace

Expected<MeasuredPacking> measure_packing(Gemm& gemm, const MachineModel& machine, int mr, int nv) {
  // The source: rows of kSourceColumns elements, four L2s of them (L3, not L2, holds it); blocks of
  // kc x (mc or nc) packed in turn over all of it, as the GEMM's loops do.
  constexpr int64_t kSourceColumns = 1024, kKc = 256, kMc = 96, kNc = 512;
  const int es = element_bytes(gemm.dtype());
  const bool widened = gemm.packs_widened(), sums = gemm.b_panels_have_sums();
  const isa::MicroKernelShape shape = gemm.micro_kernel_shape(mr, nv, false);
  const int nr = shape.nr(), step_block = shape.step_block();
  // Whole panels per B block: nc a multiple of nr (48 columns do not divide 512).
  const int64_t nc = std::max<int64_t>(nr, kNc / nr * nr);
  const int64_t rows = std::max<int64_t>(kKc, int64_t(machine.l2_bytes * 4 / (kSourceColumns * es)) / kKc * kKc);
  Words source = zeroed_words(size_t(rows * kSourceColumns * es / 4));
  const int64_t steps = k_steps(kKc, es, widened, step_block);
  const int64_t mc = std::max<int64_t>(mr, kMc / mr * mr);
  Words a_out = zeroed_words(size_t(steps * mc));
  Words b_out = zeroed_words(size_t(b_panel_words(steps, nr, sums) * (nc / nr)));
  if (!source || !a_out || !b_out) return make_error("cannot allocate the packing calibration's buffers");
  const auto* src = reinterpret_cast<const unsigned char*>(source.get());
  AffinityGuard caller_affinity;
  pin_to_first_core(gemm);
  // A: mc rows x kc at a time, down the rows, then the next kc.
  const double a_seconds = seconds_per_pass([&] {
    for (int64_t kb = 0; kb < kSourceColumns; kb += kKc)
      for (int64_t r0 = 0; r0 + mc <= rows; r0 += mc)
        if (shape.tiles)  // blocks of a tile depth, a block's rows one after another (gemm.cpp)
          pack_a_tile_blocks(src + (r0 * kSourceColumns + kb) * es, kSourceColumns, mc, kKc, es, mr, steps, step_block,
                             a_out.get());
        else
          pack_a(src + (r0 * kSourceColumns + kb) * es, kSourceColumns, mc, kKc, es, mr, a_out.get(), sums, widened);
  });
  // B: kc rows x nc at a time, across, then the next kc rows.
  const double b_seconds = seconds_per_pass([&] {
    for (int64_t kb = 0; kb + kKc <= rows; kb += kKc)
      for (int64_t j0 = 0; j0 + nc <= kSourceColumns; j0 += nc)
        pack_b(src + (kb * kSourceColumns + j0) * es, kSourceColumns, kKc, nc, es, nr, 0, nc / nr, b_out.get(),
               sums, widened, step_block);
  });
  const double a_bytes = double(rows / mc * mc) * kSourceColumns * es;
  const double b_bytes = double(rows) * double(kSourceColumns / nc * nc) * es;
  MeasuredPacking m;
  m.a_gbps = a_bytes / a_seconds / 1e9;
  m.b_gbps = b_bytes / b_seconds / 1e9;
  return m;
}

int64_t deep_panel_steps(const MachineModel& machine, int nr, bool sums) {
  const auto panel_bytes = [&](int64_t steps) { return uint64_t(b_panel_words(steps, nr, sums)) * 4; };
  const int64_t per_step = std::max<int64_t>(1, int64_t(nr) * 4);
  const int64_t steps = (int64_t(2 * machine.l1_bytes) / per_step + kLongSteps) / kLongSteps * kLongSteps;
  return panel_bytes(steps) >= 2 * machine.l1_bytes && panel_bytes(steps) <= machine.l2_bytes / 4 ? steps : 0;
}

std::pair<int, int> calibration_block(const MachineModel& machine, MatmulDtype dtype) {
  constexpr int64_t kReferenceSize = 1024;
  const MatmulProblem reference{kReferenceSize, kReferenceSize, kReferenceSize, 1, dtype, 1};
  const MatmulConfig c = choose_config(machine, reference).config;
  return {c.mr, c.nv};
}

Expected<MeasuredCalls> measure_calls(Gemm& gemm, const MachineModel& machine, int mr, int nv) {
  if (machine.ghz <= 0) return make_error("no clock to convert the call timings to cycles");
  auto fn = gemm.tile_kernel(mr, nv);
  if (!fn) return make_error(fn.error());
  const int nr = gemm.micro_kernel_shape(mr, nv, false).nr();
  Words a = zeroed_words(size_t(kLongSteps * mr));
  Words b = zeroed_words(size_t(b_panel_words(kLongSteps, nr, gemm.b_panels_have_sums())));
  if (!a || !b) return make_error("cannot allocate the panels of the call calibration");

  // C regions: one tile (L1); a quarter of L2, at least twice L1; four L2s, if half of an L3
  // instance holds them (else L3 is not told apart from L2).
  const uint64_t l2_region = std::max(machine.l2_bytes / 4, machine.l1_bytes * 2);
  const uint64_t l3_region = machine.l2_bytes * 4;
  const bool l3_apart = l3_region <= machine.l3_bytes / 2;
  auto in_l1 = c_region(0, mr, nr), in_l2 = c_region(l2_region, mr, nr);
  if (!in_l1) return make_error(in_l1.error());
  if (!in_l2) return make_error(in_l2.error());
  Expected<CRegion> in_l3 = l3_apart ? c_region(l3_region, mr, nr) : Expected<CRegion>(CRegion{});
  if (!in_l3) return make_error(in_l3.error());

  // A B micro-panel too deep for L1 (deep_panel_steps), streamed from L2 by every call.
  const bool sums = gemm.b_panels_have_sums();
  const int64_t deep_steps = deep_panel_steps(machine, nr, sums);
  const bool deep_in_l2 = deep_steps > 0;
  Words a_deep = deep_in_l2 ? zeroed_words(size_t(deep_steps * mr)) : Words{};
  Words b_deep = deep_in_l2 ? zeroed_words(size_t(b_panel_words(deep_steps, nr, sums))) : Words{};
  if (deep_in_l2 && (!a_deep || !b_deep)) return make_error("cannot allocate the deep panels of the call calibration");

  AffinityGuard caller_affinity;
  pin_to_first_core(gemm);
  // The timings taken in turn, kRepeats rounds, the fastest of each kept: a slow stretch of the
  // host then touches every timing alike instead of one level's.
  struct Timing {
    int64_t steps;
    CRegion* region;
    const uint32_t *a, *b;
    double best = 1e300;
  };
  std::vector<Timing> timings = {{kShortSteps, &*in_l1, a.get(), b.get()},
                                 {kLongSteps, &*in_l1, a.get(), b.get()},
                                 {kLongSteps, &*in_l2, a.get(), b.get()}};
  const size_t l3_index = timings.size();
  if (l3_apart) timings.push_back({kLongSteps, &*in_l3, a.get(), b.get()});
  const size_t deep_index = timings.size();
  if (deep_in_l2) timings.push_back({deep_steps, &*in_l1, a_deep.get(), b_deep.get()});
  for (int round = 0; round < kRepeats; ++round)
    for (Timing& t : timings)
      t.best = std::min(t.best, call_timing(*fn, t.steps, t.a, t.b, *t.region, mr, nr));
  const double hz = machine.ghz * 1e9;
  const double short_l1 = timings[0].best * hz, long_l1 = timings[1].best * hz;
  MeasuredCalls m;
  m.mr = mr;
  m.nv = nv;
  const StepAndCall l1 = step_and_call(short_l1, long_l1);
  m.step_cycles = l1.step;
  m.call_l1 = l1.call;
  // The further levels add to L1's call what their calls take longer, timings of the same length
  // compared: the step's own error, 128 times over, stays out of the difference.
  m.call_l2 = m.call_l1 + std::max(0.0, timings[2].best * hz - long_l1);
  if (l3_apart) m.call_l3 = m.call_l1 + std::max(0.0, timings[l3_index].best * hz - long_l1);
  // The deep loop's call less the call beyond the loop, per step: C in L1 in both, so what is left
  // is the k loop with B and A coming from L2 (the deep A panel does not stay in L1 beside B).
  if (deep_in_l2) m.step_cycles_b_l2 = std::max(0.0, (timings[deep_index].best * hz - m.call_l1) / double(deep_steps));
  return m;
}

Expected<MeasuredCalls> measure_tile_rows(Gemm& gemm, const MachineModel& machine, int mr, int nv) {
  if (machine.ghz <= 0) return make_error("no clock to convert the call timings to cycles");
  const isa::MicroKernelShape shape = gemm.micro_kernel_shape(mr, nv, false);
  if (!shape.tiles) return make_error("not a tile kernel");
  auto fn = gemm.tile_kernel(mr, nv);
  if (!fn) return make_error(fn.error());
  const int nr = shape.nr();
  // Rows of short and of long panels, as many of each: the same C tiles, B blocks that L2 holds and
  // L1 does not.
  const int64_t panels = tile_row_panels(machine, nr);
  struct Row {
    int64_t steps, panels;
    Words b, c;
    double best = 1e300;
  };
  std::array<Row, 2> rows = {Row{kShortSteps, panels, {}, {}}, Row{kLongSteps, panels, {}, {}}};
  for (Row& r : rows) {
    r.b = zeroed_words(size_t(r.panels * b_panel_words(r.steps, nr, false)));
    r.c = zeroed_words(size_t(int64_t(mr) * r.panels * nr));
    if (!r.b || !r.c) return make_error("cannot allocate the panels of the tile row timing");
  }
  Words a = zeroed_words(size_t(kLongSteps * mr)), b = zeroed_words(size_t(b_panel_words(kLongSteps, nr, false)));
  auto in_l1 = c_region(0, mr, nr);
  if (!a || !b) return make_error("cannot allocate the panels of the tile row timing");
  if (!in_l1) return make_error(in_l1.error());
  AffinityGuard caller_affinity;
  pin_to_first_core(gemm);
  const auto run_row = [&](const Row& r) {
    (*fn)(uint64_t(r.steps), a.get(), r.b.get(), r.c.get(), uint64_t(r.panels) * uint64_t(nr) * 4, 1, 0, 0, nullptr,
          uint64_t(r.panels));
  };
  for (const Row& r : rows) run_row(r);  // warm: the B blocks into L2
  double short_best = 1e300, long_best = 1e300;
  for (int round = 0; round < kRepeats; ++round) {
    short_best = std::min(short_best, call_timing(*fn, kShortSteps, a.get(), b.get(), *in_l1, mr, nr));
    long_best = std::min(long_best, call_timing(*fn, kLongSteps, a.get(), b.get(), *in_l1, mr, nr));
    for (Row& r : rows) r.best = std::min(r.best, one_timing([&] { run_row(r); }) / double(r.panels));
  }
  const double hz = machine.ghz * 1e9;
  MeasuredCalls m;
  m.mr = mr;
  m.nv = nv;
  const StepAndCall l1 = step_and_call(short_best * hz, long_best * hz);
  m.step_cycles = l1.step;
  m.call_l1 = l1.call;
  // A panel of a row, per step and beyond its k loop: the difference of the two rows' panels.
  const StepAndCall row = step_and_call(rows[0].best * hz, rows[1].best * hz);
  m.step_cycles_b_l2 = row.step;
  m.row_panel_cycles = row.call;
  return m;
}

int64_t tile_row_panels(const MachineModel& machine, int nr) {
  const uint64_t step_bytes = uint64_t(std::max(nr, 1)) * 4;
  const int64_t past_l1 = int64_t((2 * machine.l1_bytes + kShortSteps * step_bytes - 1) / (kShortSteps * step_bytes));
  const int64_t in_l2 = int64_t(machine.l2_bytes / 2 / (kLongSteps * step_bytes));
  return std::max<int64_t>(2, std::min(past_l1, in_l2));
}

// Seconds per call of one window of kStepWindowCalls calls of the same tile, after one untimed call:
// tens of microseconds, short enough to fall between the host's interruptions.
double window_call_timing(isa::MicroKernelFn fn, int64_t steps, const uint32_t* a, uint64_t lda_bytes, const uint32_t* b,
                          CRegion& c) {
  const uint64_t ldc_bytes = uint64_t(c.ldc_words) * 4;
  const auto call = [&] { fn(uint64_t(steps), a, b, c.words.get(), ldc_bytes, 1, lda_bytes, 0, nullptr, 1); };
  call();
  const auto t0 = Clock::now();
  for (int i = 0; i < kStepWindowCalls; ++i) call();
  return seconds_since(t0) / kStepWindowCalls;
}

namespace {

// The fastest window of each length and the clock around it (0 where none was read).
struct StepWindows {
  double short_s = 1e300, long_s = 1e300;
  double short_ghz = 0, long_ghz = 0;
};

// The kernel alone's windows, in turn; `read_ghz` (nullable) reads the clock before the first window
// and after every window, so that each window has the readings right before and after it.
template <typename ReadGhz>
Expected<StepWindows> time_step_windows(Gemm& gemm, int mr, int nv, int cpu, bool a_in_place, const ReadGhz& read_ghz) {
  const isa::MicroKernelShape shape = gemm.micro_kernel_shape(mr, nv, a_in_place);
  auto fn = gemm.tile_kernel(mr, nv, a_in_place);
  if (!fn) return make_error(fn.error());
  const int nr = shape.nr();
  // A packed: mr words a step. A in place: mr rows of a word a step, each row a line longer than
  // the long call reads, so that the rows start on different sets of L1 as a product's rows do
  // where its K is not a multiple of 1 KiB.
  const int64_t row_words = kLongSteps + 16;
  const uint64_t lda_bytes = a_in_place ? uint64_t(row_words) * 4 : 0;
  Words a = zeroed_words(size_t((a_in_place ? row_words : kLongSteps) * mr));
  Words b = zeroed_words(size_t(b_panel_words(kLongSteps, nr, gemm.b_panels_have_sums())));
  auto c = c_region(0, mr, nr);
  if (!a || !b) return make_error("cannot allocate the panels of the kernel's timing");
  if (!c) return make_error(c.error());
  AffinityGuard caller_affinity;
  if (cpu >= 0) pin_current_thread(cpu);
  else pin_to_first_core(gemm);
  StepWindows w;
  double before = read_ghz();
  auto window = [&](int64_t steps, double& best, double& best_ghz) {
    const double s = window_call_timing(*fn, steps, a.get(), lda_bytes, b.get(), *c);
    const double after = read_ghz();
    if (s < best) {
      best = s;
      // A reading that failed (0) leaves the other alone.
      best_ghz = before > 0 && after > 0 ? 0.5 * (before + after) : std::max(before, after);
    }
    before = after;
  };
  for (int round = 0; round < kStepWindows; ++round) {
    window(kShortSteps, w.short_s, w.short_ghz);
    window(kLongSteps, w.long_s, w.long_ghz);
  }
  return w;
}

}  // namespace

Expected<double> measure_step_seconds(Gemm& gemm, int mr, int nv, int cpu, bool a_in_place) {
  auto w = time_step_windows(gemm, mr, nv, cpu, a_in_place, [] { return 0.0; });
  if (!w) return make_error(w.error());
  const double step = step_and_call(w->short_s, w->long_s).step;
  if (!(step > 0)) return make_error("the kernel's long calls ran no longer than its short ones");
  return step;
}

Expected<StepAtClock> measure_step_at_clock(Gemm& gemm, ClockCalibrator& clock, int mr, int nv, int cpu,
                                            bool a_in_place) {
  // One round of the chain, the clock alone: about 50 us beside windows of 2-20 us.
  auto w = time_step_windows(gemm, mr, nv, cpu, a_in_place, [&] { return clock.measure(1, true).ghz; });
  if (!w) return make_error(w.error());
  // Without the clock around both fastest windows: the wall-time step, its clock unknown (0).
  if (!(w->short_ghz > 0 && w->long_ghz > 0)) {
    const double step = step_and_call(w->short_s, w->long_s).step;
    if (!(step > 0)) return make_error("the kernel's long calls ran no longer than its short ones");
    return StepAtClock{step, 0.0};
  }
  // Each window in cycles at its own clock: the fastest window ran at a fast moment of a moving
  // clock, and a clock read around all of them would take it for a faster loop. The fastest by
  // seconds, not by cycles: the least of products of noisy readings would lean low.
  const double step_gigacycles = step_and_call(w->short_s * w->short_ghz, w->long_s * w->long_ghz).step;
  if (!(step_gigacycles > 0)) return make_error("the kernel's long calls ran no longer than its short ones");
  StepAtClock r;
  r.ghz = w->long_ghz;
  r.seconds = step_gigacycles / r.ghz;
  return r;
}

Expected<double> measure_handoff(Gemm& gemm) {
  // A shared B block's slice: 128 KiB, in the writer's L2 and far from filling it.
  constexpr size_t kBytes = 128 << 10, kLine = 64, kWords = kBytes / 8, kWordsPerLine = kLine / 8;
  constexpr int kRounds = 24;
  Words buffer = zeroed_words(kBytes / 4);
  if (!buffer) return make_error("cannot allocate the hand-off buffer");
  auto* words = reinterpret_cast<uint64_t*>(buffer.get());
  AffinityGuard caller_affinity;
  pin_to_first_core(gemm);
  std::atomic<int> written{0};
  std::atomic<uint64_t> sink{0};
  double best = 1e300;
  for (int round = 0; round < kRounds; ++round) {
    double seconds = 0;
    written.store(0, std::memory_order_relaxed);
    gemm.run_on_team(2, [&](int t) {
      if (t == 1) {
        // Every line written: the lines are modified in the writer's cache, as a packed panel is.
        for (size_t w = 0; w < kWords; ++w) words[w] = uint64_t(round) + w;
        written.store(1, std::memory_order_release);
        return;
      }
      // Pause while the writer writes; yield after a while, in case it shares this CPU.
      for (int spins = 0; written.load(std::memory_order_acquire) == 0; ++spins)
        if (spins < 20000) isa::spin_pause();
        else std::this_thread::yield();
      const auto t0 = Clock::now();
      uint64_t sum = 0;
      // One word a line: the time is the lines' transfer, not the loads.
      for (size_t w = 0; w < kWords; w += kWordsPerLine) sum += words[w];
      seconds = seconds_since(t0);
      sink.fetch_add(sum, std::memory_order_relaxed);
    });
    if (round > 0) best = std::min(best, seconds);  // the first round starts the helper
  }
  if (!(best > 0 && best < 1e300)) return make_error("the hand-off read took no measurable time");
  return double(kBytes) / best / 1e9;
}

namespace {

// The barrier measurement's block of work: about kBarrierBlockSeconds (a B block of a medium
// product) of the GEMM's own micro-kernel calls, each thread on panels of its own. The kernels'
// multiply-adds, not any work: on the Zen 5 VM a pair of threads meeting after blocks of a scalar
// multiply chain lost 0.25-0.8 us a meeting, after blocks of kernel calls 0.25-8.7 us depending on
// the minute; a 2x1 grid's threads waited 13-43 us a B block for each other inside the GEMM
// (instrumented once).
constexpr double kBarrierBlockSeconds = 50e-6;
constexpr int kBarrierRounds = 40, kBarrierTrials = 5;
// No barrier is free: at least one cache-line round trip between two cores.
constexpr double kBarrierFloorSeconds = 0.25e-6;

}  // namespace

Expected<double> measure_barrier(Gemm& gemm, const MachineModel& machine) {
  if (machine.tiles) return make_error("not measured for tile kernels");
  if (gemm.cpu().core_order.size() < 2) return make_error("fewer than two CPUs: two threads did not run at once");
  const auto [mr, nv] = calibration_block(machine, gemm.dtype());
  auto fn = gemm.tile_kernel(mr, nv);
  if (!fn) return make_error(fn.error());
  const int nr = gemm.micro_kernel_shape(mr, nv, false).nr();
  struct Panels {
    Words a, b, c;
  };
  std::array<Panels, 2> panels;
  for (Panels& p : panels) {
    p.a = zeroed_words(size_t(kLongSteps * mr));
    p.b = zeroed_words(size_t(b_panel_words(kLongSteps, nr, gemm.b_panels_have_sums())));
    p.c = zeroed_words(size_t(mr * nr));
    if (!p.a || !p.b || !p.c) return make_error("cannot allocate the barrier measurement's panels");
  }
  AffinityGuard caller_affinity;
  pin_to_first_core(gemm);
  auto calls_of = [&](int t, int64_t calls) {
    const Panels& p = panels[size_t(t)];
    for (int64_t i = 0; i < calls; ++i)
      (*fn)(uint64_t(kLongSteps), p.a.get(), p.b.get(), p.c.get(), uint64_t(nr) * 4, 1, 0, 0, nullptr, 1);
  };
  // Calls a block: scaled from timed runs of calls, the fastest of a few.
  constexpr int64_t kProbeCalls = 256;
  double probe = 1e300;
  for (int i = 0; i < 5; ++i) probe = std::min(probe, seconds_of([&] { calls_of(0, kProbeCalls); }));
  if (!(probe > 0 && probe < 1)) return make_error("the barrier measurement's kernel calls took no measurable time");
  const int64_t calls = std::max<int64_t>(1, int64_t(double(kProbeCalls) * kBarrierBlockSeconds / probe));
  SpinBarrier barrier(2);
  std::vector<double> waits, blocks;
  for (int trial = 0; trial < kBarrierTrials; ++trial) {
    // The rounds on the caller alone, then on two cores that meet after every block. The pair is
    // timed by the caller from a first meeting to the last, after an untimed block each: the
    // helper's wake-up and its core's slow start stay out.
    const double alone = seconds_of([&] {
      for (int r = 0; r < kBarrierRounds; ++r) calls_of(0, calls);
    });
    blocks.push_back(alone / kBarrierRounds);
    double together = 0;
    gemm.run_on_team(2, [&](int t) {
      calls_of(t, calls);
      barrier.wait();
      const auto t0 = Clock::now();
      for (int r = 0; r < kBarrierRounds; ++r) {
        calls_of(t, calls);
        barrier.wait();
      }
      if (t == 0) together = seconds_since(t0);
    });
    waits.push_back(std::max(0.0, together - alone) / kBarrierRounds);
  }
  return barrier_wait(waits, blocks);
}

Expected<double> barrier_wait(const std::vector<double>& waits, const std::vector<double>& blocks) {
  if (waits.empty() || blocks.empty()) return make_error("no barrier trial ran");
  const double wait = median(waits), block = median(blocks);
  if (!std::isfinite(wait) || !std::isfinite(block) || !(block > 0))
    return make_error("the barrier trials gave no finite time");
  // A pair that lost a whole block at each meeting did not run at once (the helper's core was
  // taken): that says nothing about barriers, and would price every shared B block as a block.
  if (wait >= block)
    return make_error(fmt::format("two threads lost {:.1f} us a barrier after blocks of {:.1f} us: they did not run at once",
                                  wait * 1e6, block * 1e6));
  return std::max(wait, kBarrierFloorSeconds);
}

std::string calibrate_team(MachineModel& machine, Gemm& gemm, int threads) {
  machine.fork_join_seconds.assign(size_t(std::max(threads, 1)) + 1, 0.0);
  for (int t : thread_counts(threads))
    if (t > 1) machine.fork_join_seconds[size_t(t)] = gemm.fork_join_seconds(t);
  machine.handoff_gbps = 0;
  machine.barrier_seconds = 0;
  std::string missing;
  if (threads > 1) {
    if (auto gbps = measure_handoff(gemm)) machine.handoff_gbps = *gbps;
    else missing = "hand-off: " + gbps.error();
    if (auto wait = measure_barrier(gemm, machine)) machine.barrier_seconds = *wait;
    else missing += (missing.empty() ? "" : "; ") + std::string("barrier: ") + wait.error();
  }
  return missing;
}

std::string calibrate_machine(MachineModel& machine, Gemm& gemm) {
  const auto [mr, nv] = calibration_block(machine, gemm.dtype());
  std::string missing;
  if (auto calls = machine.tiles ? measure_tile_rows(gemm, machine, mr, nv) : measure_calls(gemm, machine, mr, nv))
    machine.calls = *calls;
  else missing = "calls: " + calls.error();
  if (auto packing = measure_packing(gemm, machine, mr, nv)) {
    machine.pack_a_gbps = packing->a_gbps;
    machine.pack_b_gbps = packing->b_gbps;
  } else {
    missing += (missing.empty() ? "" : "; ") + std::string("packing: ") + packing.error();
  }
  return missing;
}

}  // namespace peakprobe
