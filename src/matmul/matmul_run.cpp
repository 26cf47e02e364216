#include "matmul/matmul_run.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <optional>
#include <random>
#include <thread>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <spdlog/spdlog.h>

#include "asm/target.hpp"
#include "harness/clock.hpp"
#include "matmul/call_clock.hpp"
#include "harness/core_availability.hpp"
#include "harness/cycle_counter.hpp"
#include "harness/pin.hpp"
#include "harness/run_delay.hpp"
#include "matmul/baseline_worker.hpp"
#include "matmul/blas_baseline.hpp"
#include "matmul/call_calibration.hpp"
#include "matmul/reference.hpp"
#include "matmul/retime_while_crowded.hpp"
#include "matmul/team_witness.hpp"

namespace peakprobe {
namespace {

struct FreeDeleter {
  void operator()(void* p) const { std::free(p); }
};
using Bytes = std::unique_ptr<uint8_t, FreeDeleter>;

Bytes aligned_bytes(size_t n) {
  n = (std::max<size_t>(n, 64) + 4095) / 4096 * 4096;
  return Bytes(static_cast<uint8_t*>(std::aligned_alloc(4096, n)));
}

// The three operands of the whole batch, item i at i x (its size).
struct Operands {
  int64_t m, n, k, batch;
  MatmulDtype dtype;
  Bytes a, b, c;
  size_t a_bytes() const { return size_t(m * k * batch) * size_t(element_bytes(dtype)); }
  size_t b_bytes() const { return size_t(k * n * batch) * size_t(element_bytes(dtype)); }
  size_t c_bytes() const { return size_t(m * n * batch) * 4; }
};

// Values in [-1, 1] for f32 and bf16 (rounded to bf16); for int8 the whole ranges, A in [0, 255] and
// B in [-128, 127], as quantized data uses them: no s32 sum overflows for K up to the 65536 a shape
// may have (255 x 128 x 65536 < 2^31), and a kernel that sums byte products in 16 bits (u8 x s8
// pairs saturate past 32767) shows as wrong instead of passing on small values.
void fill(Operands& op, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> real(-1, 1);
  auto fill_one = [&](uint8_t* p, size_t count) {
    switch (op.dtype) {
      case MatmulDtype::f32:
        for (size_t i = 0; i < count; ++i) reinterpret_cast<float*>(p)[i] = real(rng);
        break;
      case MatmulDtype::bf16:
        for (size_t i = 0; i < count; ++i) reinterpret_cast<uint16_t*>(p)[i] = float_to_bf16(real(rng));
        break;
      case MatmulDtype::i8:
        for (size_t i = 0; i < count; ++i)
          p[i] = uint8_t(rng() & 255);  // u8 for A, the same bits read as s8 for B
        break;
    }
  };
  fill_one(op.a.get(), size_t(op.m * op.k * op.batch));
  fill_one(op.b.get(), size_t(op.k * op.n * op.batch));
  std::memset(op.c.get(), 0, op.c_bytes());
}

Expected<Operands> make_operands(int64_t m, int64_t n, int64_t k, int64_t batch, MatmulDtype dtype) {
  Operands op{m, n, k, batch, dtype, nullptr, nullptr, nullptr};
  op.a = aligned_bytes(op.a_bytes());
  op.b = aligned_bytes(op.b_bytes());
  op.c = aligned_bytes(op.c_bytes());
  if (!op.a || !op.b || !op.c) return make_error(fmt::format("cannot allocate {:.1f} MB of operands",
                                                             matmul_bytes(m, n, k, batch, dtype) / 1e6));
  fill(op, uint32_t(m * 131 + n * 17 + k));
  return op;
}

// One timed call: the whole batch (item i of A, B and C at i x its size from the pointers given).
using Call = std::function<Expected<bool>(const uint8_t* a, const uint8_t* b, uint8_t* c)>;

// Rows checked: all of a small problem, 64 spread rows of a large one (the reference is O(MNK)),
// in the first and the last batch item.
double check(const Operands& op, const uint8_t* c, int64_t& rows_checked) {
  const int es = element_bytes(op.dtype);
  const int64_t step = double(op.m) * double(op.n) * double(op.k) > 2e9 ? std::max<int64_t>(1, (op.m + 63) / 64) : 1;  // at most 64
  std::vector<double> ref(size_t(op.n));
  double worst = 0, scale = 1e-30;
  rows_checked = 0;
  for (int64_t item : {int64_t(0), op.batch - 1}) {
    const uint8_t* a = op.a.get() + size_t(item * op.m * op.k * es);
    const uint8_t* b = op.b.get() + size_t(item * op.k * op.n * es);
    const uint8_t* ci = c + size_t(item * op.m * op.n * 4);
    for (int64_t i = 0; i < op.m; i += step) {
      reference_row(op.dtype, i, op.n, op.k, a, op.k, b, op.n, ref.data());
      for (int64_t j = 0; j < op.n; ++j) {
        worst = std::max(worst, std::fabs(c_value(op.dtype, ci, i * op.n + j) - ref[size_t(j)]));
        scale = std::max(scale, std::fabs(ref[size_t(j)]));
      }
      ++rows_checked;
    }
    if (op.batch == 1) break;
  }
  return worst / scale;
}

struct Timed {
  TimingSummary timing;
  double max_rel_error = 0;
  int64_t rows_checked = 0;
  ClockReading clock;  // the caller's core, read right before and after the fastest call's segment (CallClock)
  // The caller's core (a team: the core whose stops cost the fastest call the most), the quieter of
  // a scan before the warm-up and one after.
  CoreAvailability availability;
};

// Where a timed call runs: the core the calling thread sits on meanwhile (-1: left unpinned, so
// that a threaded library's own threads can spread), and the cold-cache pile size.
struct TimingPlace {
  int pin_cpu = -1;
  uint64_t pile_bytes = 0;
};

// Check once, then warm up and time `call` over the batch, cold or warm. A pinned caller is given its
// CPU set back after, so threads a BLAS library starts later are not born on one core.
// `at_timing_start`, when given, is called right before the first timed repetition (after the check
// and the warm-up), and `at_timing_end` right after the last, to watch the timed stretch only. With `clock`, the caller's core clock is
// calibrated right before the first timed repetition (the warm-up has loaded the core), read between
// the calls every kClockSegmentMs of them, and calibrated after the last: the clock around the
// fastest call, which its compute roof is scaled to (score_matmul; matmul/call_clock.hpp).
// With `scan_availability`, the product's cores are scanned for interruptions before the warm-up and
// after the clock's last calibration (score_matmul: efficiency while running).
Expected<Timed> time_calls(const TimingPlace& place, Operands& op, const MatmulRequest& rq, const Call& call,
                           const std::function<void()>& at_timing_start = nullptr,
                           const std::function<void()>& at_timing_end = nullptr, ClockCalibrator* clock = nullptr,
                           const std::function<std::vector<CoreAvailability>()>& scan_availability = nullptr) {
  AffinityGuard caller_affinity;
  if (place.pin_cpu >= 0) pin_current_thread(place.pin_cpu);
  const Call& run_batch = call;
  Timed out;
  std::memset(op.c.get(), 0x7f, op.c_bytes());  // stale C must not pass the check
  if (auto ok = run_batch(op.a.get(), op.b.get(), op.c.get()); !ok) return make_error(ok.error());
  out.max_rel_error = check(op, op.c.get(), out.rows_checked);

  // In mode wei only B (the weights) rotates; in mode all every operand does.
  std::vector<ColdCacheArg> args = {{op.a.get(), op.a_bytes(), false},
                                    {op.b.get(), op.b_bytes(), true},
                                    {op.c.get(), op.c_bytes(), false}};
  auto cache = ColdCache::create(rq.cold_cache, args, place.pile_bytes, rq.flush_tlb);
  if (!cache) return make_error(cache.error());
  std::vector<double> ms;
  // The budget counts wall time, cold-cache preparation included: on a CPU with 480 MiB of L3 the
  // pile and TLB walk took ~15 ms a repetition against 0.02 ms of product, and a budget of product
  // time alone ran 10000 repetitions (157 s for one 29x70x33 batch).
  double spent_ms = 0;
  CallClock call_clock;  // the clock between the timed calls: the fastest one's is scored
  bool clock_ok = false;
  std::vector<CoreAvailability> scans_before;  // one a thread of the product, in team order
  for (int i = 0; i < rq.warmup + rq.max_repetitions; ++i) {
    // Before the warm-up: the scan idles the vector units, and the clock read after the warm-up
    // must find the core loaded.
    if (i == 0 && scan_availability) scans_before = scan_availability();
    if (i == rq.warmup && clock) {
      const ClockSample before = clock->measure();
      clock_ok = before.ghz > 0;
      call_clock.start(before);
    }
    if (i == rq.warmup && at_timing_start) at_timing_start();
    const auto prepared = std::chrono::steady_clock::now();
    const auto& p = cache->next();
    cache->flush_tlb();
    const auto t0 = std::chrono::steady_clock::now();
    if (auto ok = run_batch(static_cast<const uint8_t*>(p[0]), static_cast<const uint8_t*>(p[1]),
                            static_cast<uint8_t*>(p[2]));
        !ok)
      return make_error(ok.error());
    const auto t1 = std::chrono::steady_clock::now();
    const double t = std::chrono::duration<double, std::milli>(t1 - t0).count();
    if (i < rq.warmup) continue;
    ms.push_back(t);
    spent_ms += std::chrono::duration<double, std::milli>(t1 - prepared).count();
    const bool last = int(ms.size()) >= rq.min_repetitions && spent_ms >= rq.min_seconds * 1e3;
    if (clock_ok) {
      call_clock.add_call(t, std::chrono::duration<double, std::milli>(t1 - prepared).count());
      // One short round between calls (about 0.1 ms), the clock alone; the last call's segment is
      // closed below. A wait for the CPU during it counts in the run-queue watch as the product's.
      if (call_clock.due() && !last && i + 1 < rq.warmup + rq.max_repetitions)
        call_clock.read(clock->measure(1, true));
    }
    if (last) break;
  }
  if (at_timing_end && !ms.empty()) at_timing_end();
  if (clock_ok) {
    call_clock.read(clock->measure());
    out.clock = call_clock.fastest(clock->source());
  }
  out.timing = summarize_times(ms, rq.warmup);
  if (scan_availability && !ms.empty()) {
    // Each core's quieter scan; of those, the core whose stops the fastest call could least avoid.
    const std::vector<CoreAvailability> scans_after = scan_availability();
    std::vector<CoreAvailability> kept(std::max(scans_before.size(), scans_after.size()));
    for (size_t t = 0; t < kept.size(); ++t)
      kept[t] = quieter(t < scans_before.size() ? scans_before[t] : CoreAvailability{},
                        t < scans_after.size() ? scans_after[t] : CoreAvailability{});
    out.availability = least_available(kept, out.timing.min_ms);
  }
  return out;
}

}  // namespace

double rate_at_clock(double rate, double timed_ghz, double at_ghz) {
  return timed_ghz > 0 && at_ghz > 0 ? rate * at_ghz / timed_ghz : rate;
}

TimingSummary summarize_times(const std::vector<double>& ms, int warmup) {
  TimingSummary t;
  t.repetitions = int(ms.size());
  t.warmup = warmup;
  if (ms.empty()) return t;
  t.min_ms = *std::min_element(ms.begin(), ms.end());
  t.max_ms = *std::max_element(ms.begin(), ms.end());
  for (double x : ms) t.mean_ms += x / double(ms.size());
  double var = 0;
  for (double x : ms) var += (x - t.mean_ms) * (x - t.mean_ms) / double(ms.size());
  t.std_ms = std::sqrt(var);
  return t;
}

double matmul_bytes(int64_t m, int64_t n, int64_t k, int64_t batch, MatmulDtype dtype) {
  const double es = element_bytes(dtype);
  return double(batch) * (es * double(m) * double(k) + es * double(k) * double(n) + 4.0 * double(m) * double(n));
}

std::string matmul_name(int64_t m, int64_t n, int64_t k, int64_t batch, MatmulDtype dtype, int threads,
                        ColdCacheMode cold, const std::string& isa_level) {
  std::string name = fmt::format("matmul {} {}x{}x{} batch {}, {} thread{}", to_string(dtype), m, n, k, batch,
                                 threads, threads == 1 ? "" : "s");
  if (cold != ColdCacheMode::none) name += fmt::format(", cold {}", to_string(cold));
  if (!isa_level.empty()) name += ", isa " + isa_level;
  return name;
}

double matmul_error_limit(MatmulDtype dtype) { return dtype == MatmulDtype::i8 ? 0.0 : 1e-4; }

Expected<MatmulResult> run_matmul(const CpuInfo& cpu, Gemm& gemm, const MatmulRequest& rq) {
  auto op = make_operands(rq.m, rq.n, rq.k, rq.batch, rq.dtype);
  if (!op) return make_error(op.error());
  MatmulResult r;
  r.m = rq.m, r.n = rq.n, r.k = rq.k, r.batch = rq.batch, r.dtype = rq.dtype;
  r.threads = std::max(rq.threads, rq.config.threads);
  r.cold_cache = to_string(rq.cold_cache);
  if (rq.flush_tlb) r.cold_cache += "+tlb";
  r.name = matmul_name(rq.m, rq.n, rq.k, rq.batch, rq.dtype, r.threads, rq.cold_cache, rq.isa_level);
  r.isa_level = rq.isa_level;
  r.kernel = gemm.kernel_name(rq.config);
  r.config = rq.config;
  r.config_source = rq.config_source;
  const int64_t m = rq.m, n = rq.n, k = rq.k;
  TimingPlace place;
  place.pin_cpu = cpu.core_order.empty() ? -1 : cpu.core_order.front();
  place.pile_bytes = cold_cache_pile_bytes(cpu, rq.config.threads);
  const auto ours_start = std::chrono::steady_clock::now();
  const Call call_ours = [&](const uint8_t* a, const uint8_t* b, uint8_t* c) {
    return gemm.run_batch(GemmArgs{m, n, k, a, k, b, n, c, n}, rq.batch, BatchStrides{m * k, k * n, m * n},
                          rq.config);
  };
  // The product's threads (the caller first), to watch how long they wait for their CPUs.
  const int product_threads = std::max(1, rq.config.threads);
  {
    std::vector<int> team(cpu.core_order.begin(),
                          cpu.core_order.begin() + std::min<long>(product_threads, long(cpu.core_order.size())));
    if (!team.empty())
      spdlog::debug("{}: the caller runs on CPU {}, its threads on CPUs {}", r.name, team.front(), fmt::join(team, ", "));
  }
  std::vector<int> tids(size_t(product_threads), 0);
  gemm.run_on_team(product_threads, [&](int t) { tids[size_t(t)] = current_tid(); });
  std::optional<RunDelayWatch> watch;
  // The clock around the timed calls: without it the product is scored against its roof's clock.
  CycleCounter counter;
  std::unique_ptr<ClockCalibrator> calibrator;
  if (cpu.emulator.empty() && cpu.tsc_hz > 0) {
    if (auto c = ClockCalibrator::create(counter, cpu.tsc_hz, cpu)) {
      calibrator = std::move(*c);
      calibrator->set_ratio_window(0);  // only the clock is read: the ruler's ratios are not needed
      calibrator->measure();            // sizes the chain's calls, before any timing
    } else {
      spdlog::debug("{}: no clock around the product ({})", r.name, c.error());
    }
  }
  // The cores of the threads the product starts, scanned for interruptions beside the timed calls
  // (not where the timestamp says nothing of the core: an emulator). A team's threads each scan
  // their own core in one run of the team; time_calls keeps the core whose stops cost the fastest
  // call the most (least_available). A team larger than the core order (through the library) has
  // threads the team does not pin, and a team whose scans did not land on distinct known CPUs says
  // nothing of a core each: neither is scanned (or kept).
  const int started = std::max(1, gemm.threads_started(m, n, k, rq.batch, rq.config));
  std::function<std::vector<CoreAvailability>()> scan_availability;
  if (cpu.emulator.empty() && cpu.tsc_hz > 0 && (started == 1 || started <= int(cpu.core_order.size()))) {
    scan_availability = [&] {
      std::vector<CoreAvailability> scans(static_cast<size_t>(started));
      gemm.run_on_team(started, [&](int t) {  // one thread: the caller itself
        try {  // a team job must not throw (ThreadTeam::run)
          scans[size_t(t)] = scan_core_availability(kAvailabilityScanMs, cpu.tsc_hz);
        } catch (...) {
          scans[size_t(t)] = {};
        }
      });
      if (started == 1) return scans;
      std::vector<int> cpus;
      for (const CoreAvailability& a : scans) cpus.push_back(a.cpu);
      std::sort(cpus.begin(), cpus.end());
      if (cpus.front() < 0 || std::adjacent_find(cpus.begin(), cpus.end()) != cpus.end()) return std::vector<CoreAvailability>{};
      return scans;
    };
  }
  std::chrono::steady_clock::time_point timing_start;
  RunDelayWatch::Longest waited;
  double wall_seconds = 0;
  auto time_watched = [&]() -> Expected<Timed> {
    watch.reset();
    waited = {};
    wall_seconds = 0;
    auto t = time_calls(
        place, *op, rq, call_ours,
        [&] {
          watch.emplace(tids);
          timing_start = std::chrono::steady_clock::now();
        },
        [&] {
          // Before the clock's closing calibration: the watch covers the timed calls alone.
          if (!watch) return;
          wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - timing_start).count();
          waited = watch->longest_wait();
        },
        calibrator.get(),
        scan_availability);
    if (t && watch) {
      spdlog::debug("{}: the longest wait of a thread for its CPU: {:.3f} ms of {:.1f} ms (thread {})", r.name,
                    double(waited.ns) * 1e-6, wall_seconds * 1e3, waited.index);
    }
    return t;
  };
  // Ours, timed and judged: taken again while its waits or the team's witness doubt it.
  const bool emulated = !cpu.emulator.empty();
  struct OursRound {
    Timed timed;
    std::optional<std::string> crowded;
  };
  auto time_ours = [&]() -> Expected<OursRound> {
    auto ours = time_watched();
    if (!ours) return make_error(ours.error());
    OursRound round{std::move(*ours), std::nullopt};
    // Judged where it says something about this machine: not emulated, and a product whose result is
    // right (a wrong one is an error whatever its time). The witness only where the threads have cores
    // of their own: threads asked to share cores lose side by side by design.
    if (emulated || round.timed.max_rel_error > matmul_error_limit(rq.dtype)) return round;
    double worst_error = round.timed.max_rel_error;
    round.crowded = retime_while_crowded<Timed>(
        gemm, rq.config, team_shares_cores(cpu, product_threads) ? 1 : product_threads, place.pin_cpu, r.name,
        round.timed,
        [&]() -> Expected<Timed> {
          auto again = time_watched();
          if (!again) return again;
          worst_error = std::max(worst_error, again->max_rel_error);
          // A wrong product is an error whatever its time: no further timings.
          if (again->max_rel_error > matmul_error_limit(rq.dtype)) return make_error("the product came out wrong");
          return again;
        },
        [](const Timed& t) { return t.timing.min_ms; },
        [&] { return run_delay_doubt(waited.ns, waited.index, wall_seconds); });
    // The product is checked on every timing; a fault in one is an error whichever is kept.
    round.timed.max_rel_error = worst_error;
    return round;
  };
  auto first = time_ours();
  if (!first) return make_error(first.error());
  OursRound ours = std::move(*first);
  const bool judged = !emulated && ours.timed.max_rel_error <= matmul_error_limit(rq.dtype);
  const int witness_threads = team_shares_cores(cpu, product_threads) ? 1 : product_threads;
  const double ours_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - ours_start).count();
  // The plan's block alone, its k loop in L1, where the product's first thread ran, once the product
  // is known right: the ceiling of the kernel's own instructions (MatmulResult::kernel_l1_gflops),
  // one core's times the threads the product started. Not where those threads share cores: one
  // core's loop times its threads is then no ceiling.
  // The clock is read on that core around each of its windows: the loop's rate is taken to the clock
  // of the product's fastest call once the rounds below have settled which call that is.
  std::optional<double> kernel_wall_gflops;
  double kernel_ghz = 0;
  if (judged && !team_shares_cores(cpu, started)) {
    // The product's own kernel: the one that reads A's rows where the product leaves A unpacked.
    const isa::MicroKernelShape shape = gemm.product_kernel_shape(rq.config);
    const bool a_in_place = shape.a_direct;
    AffinityGuard caller_affinity;
    if (place.pin_cpu >= 0) pin_current_thread(place.pin_cpu);
    // A first, untimed measurement loads the core again after the scalar scan of its interruptions
    // (10 ms): a core whose clock drops under wide vector work would read high right after it.
    auto step = [&]() -> Expected<StepAtClock> {
      if (!calibrator) {
        auto seconds = measure_step_seconds(gemm, rq.config.mr, rq.config.nv, place.pin_cpu, a_in_place);
        if (!seconds) return make_error(seconds.error());
        return StepAtClock{*seconds, 0.0};
      }
      (void)measure_step_seconds(gemm, rq.config.mr, rq.config.nv, place.pin_cpu, a_in_place);
      return measure_step_at_clock(gemm, *calibrator, rq.config.mr, rq.config.nv, place.pin_cpu, a_in_place);
    }();
    if (step.ok()) {
      const double ops = 2.0 * shape.mr * shape.nr() * shape.k_group();
      kernel_wall_gflops = ops / step->seconds / 1e9 * started;
      kernel_ghz = step->ghz;
    } else {
      spdlog::debug("matmul: the {}x{} kernel's k loop in L1 was not timed: {}", rq.config.mr, rq.config.nv,
                    step.error());
    }
  }

  // The libraries this dtype can be compared with, each timed in a worker process.
  std::vector<std::string> libraries;
  for (const std::string& name : rq.baselines) {
    if (rq.dtype != MatmulDtype::f32 && (name == "openblas" || name == "blis")) {
      spdlog::info("baseline {}: only f32 is compared (its CBLAS has no {} GEMM)", name, to_string(rq.dtype));
      continue;
    }
    libraries.push_back(name);
  }
  struct LibraryRound {
    BaselineResult result;
    bool available = false;
    bool wrong = false;     // its result differs from the reference
    bool doubted = false;   // its timing was doubted (the witness beside it)
    bool retime_failed = false;  // timed again because doubted, it failed (a crash, a hang)
  };
  // OpenBLAS where it fell back to a generic core on this CPU: the core type its features run, found
  // at its first round and kept for the rest (Target::openblas_cores).
  std::string openblas_coretype;
  bool openblas_core_tried = false;  // once: a core type that failed is not tried again each round
  auto time_library = [&](const std::string& name) {
    BaselineJob job;
    job.library = name;
    job.m = m, job.n = n, job.k = k, job.batch = rq.batch;
    job.dtype = rq.dtype;
    job.threads = r.threads;
    job.cold_cache = rq.cold_cache;
    job.flush_tlb = rq.flush_tlb;
    job.warmup = rq.warmup, job.min_repetitions = rq.min_repetitions, job.max_repetitions = rq.max_repetitions;
    job.min_seconds = rq.min_seconds;
    job.pin_cpu = r.threads == 1 ? place.pin_cpu : -1;  // a threaded library's own threads must be free to spread
    job.pile_bytes = place.pile_bytes;
    job.isa_level = rq.isa_level;
    // A library may be several times slower than ours, never a hundred: past this it hangs.
    const double limit = rq.baseline_time_limit_s > 0 ? rq.baseline_time_limit_s : 30 + 20 * ours_seconds;
    if (name == "openblas") job.openblas_coretype = openblas_coretype;
    BaselineOutcome outcome = run_baseline_isolated(job, limit);
    if (name == "openblas" && rq.isa_level.empty() && !openblas_core_tried && openblas_fell_back(outcome, cpu)) {
      openblas_core_tried = true;
      const auto cores = isa::host_target().openblas_cores(cpu);
      job.openblas_coretype = cores.for_features;
      BaselineOutcome forced = run_baseline_isolated(job, limit);
      if (forced.available && forced.result.status == Status::ok) {
        spdlog::info("baseline openblas: it runs its generic {} kernels on this CPU (a model it does not know); "
                     "timed with OPENBLAS_CORETYPE={}, the kernels this CPU's features run",
                     cores.fallback, job.openblas_coretype);
        openblas_coretype = job.openblas_coretype;
        outcome = std::move(forced);
      } else {
        job.openblas_coretype.clear();
      }
    }
    // The library's threads side by side, as ours: it ran a moment ago, on the same cores.
    std::optional<std::string> their_crowding;
    bool retime_failed = false;
    if (judged && witness_threads > 1 && outcome.available && outcome.result.status == Status::ok &&
        outcome.result.max_rel_error <= matmul_error_limit(rq.dtype)) {
      double worst_error = outcome.result.max_rel_error;
      their_crowding = retime_while_crowded<BaselineOutcome>(
          gemm, rq.config, witness_threads, place.pin_cpu, fmt::format("baseline {} of {}", name, r.name), outcome,
          [&]() -> Expected<BaselineOutcome> {
            BaselineOutcome again = run_baseline_isolated(job, limit);
            if (!again.available || again.result.status != Status::ok) {
              retime_failed = true;
              return make_error(again.available ? again.result.reason : again.unavailable);
            }
            worst_error = std::max(worst_error, again.result.max_rel_error);
            return again;
          },
          [](const BaselineOutcome& o) { return o.result.timing.min_ms; }, nullptr);
      outcome.result.max_rel_error = worst_error;
    }
    LibraryRound round;
    round.retime_failed = retime_failed;
    if (!outcome.available) {
      // The default names are looked for and may simply not be installed; a path was asked for.
      const bool named_file = name.find('/') != std::string::npos || name.find(".so") != std::string::npos;
      if (named_file) spdlog::warn("baseline {}: {}", name, outcome.unavailable);
      else spdlog::info("baseline {}: {}", name, outcome.unavailable);
      return round;
    }
    round.available = true;
    round.result = outcome.result;
    BaselineResult& br = round.result;
    if (br.status == Status::ok) {
      // A library's wrong answer is not a speed to beat; its figures stay for the record.
      if (br.max_rel_error > matmul_error_limit(rq.dtype)) {
        br.status = Status::mistrusted;
        br.reason = fmt::format("its result differs from the reference: max_rel_error {:.2e} (limit {:.0e})",
                                br.max_rel_error, matmul_error_limit(rq.dtype));
        round.wrong = true;
        spdlog::warn("baseline {}: {}", name, br.reason);
      } else if (their_crowding) {
        br.status = Status::mistrusted;
        br.reason = *their_crowding;
        round.doubted = true;
      }
    } else {
      spdlog::warn("baseline {}: {}", name, br.reason);
    }
    return round;
  };

  // The side by side, in rounds (side_by_side_order). Each side's time is its fastest round: a doubt
  // (a wait for a CPU, a slow witness) only ever adds time, so a doubted round's minimum still bounds
  // the truth from above, and a side is doubted only when every round of it was.
  // A wrong product of ours is an error whatever its time: one round says so.
  const bool ours_wrong = ours.timed.max_rel_error > matmul_error_limit(rq.dtype);
  const int rounds = libraries.empty() || ours_wrong ? 1 : std::max(1, rq.rounds);
  const size_t libs = libraries.size();
  std::vector<std::vector<LibraryRound>> lib_rounds(libs);
  // Each side's minimum in each round (0: not timed in that round), for the per-round ratios.
  std::vector<double> ours_round_ms(size_t(rounds), 0.0);
  std::vector<std::vector<double>> lib_round_ms(libs, std::vector<double>(size_t(rounds), 0.0));
  ours_round_ms[0] = ours.timed.timing.min_ms;
  bool ours_doubted_always = ours.crowded.has_value();
  std::string later_failure;  // a later round of ours that failed
  // A library is timed again while its rounds so far were timed and right: a wrong answer settles the
  // row, and one that crashed or hung would only cost its time limit again.
  auto still_timed = [&](size_t i) {
    const std::vector<LibraryRound>& done = lib_rounds[i];
    if (done.empty()) return true;
    const LibraryRound& last = done.back();
    return last.available && !last.wrong && last.result.status != Status::error && !last.retime_failed;
  };
  const std::vector<int> order = side_by_side_order(rounds, int(libs));
  int ours_rounds = 1;  // round 1's timing of ours is the one taken above
  for (size_t at = 0; at < order.size(); ++at) {
    const int who = order[at];
    const size_t round = at / (libs + 1);
    if (who < 0) {
      if (round == 0) continue;
      // Nothing left to be fair to: ours is not timed again for nobody. In an even round ours closes
      // the round after the libraries; in an odd one it opens it, before them.
      bool any = false;
      for (size_t i = 0; i < libs; ++i) any = any || (still_timed(i) && (round % 2 == 0 || lib_round_ms[i][round] > 0));
      if (!any) continue;
      auto later = time_ours();
      if (!later) {
        later_failure = later.error();
        spdlog::warn("{}: round {} failed ({}); the other rounds are kept", r.name, round + 1, later.error());
        continue;
      }
      ++ours_rounds;
      ours_round_ms[round] = later->timed.timing.min_ms;
      ours_doubted_always = ours_doubted_always && later->crowded.has_value();
      spdlog::debug("{}: round {} ran {:.3f} ms at best (best so far {:.3f} ms)", r.name, round + 1,
                    later->timed.timing.min_ms, ours.timed.timing.min_ms);
      const double worst_error = std::max(ours.timed.max_rel_error, later->timed.max_rel_error);
      if (later->timed.timing.min_ms < ours.timed.timing.min_ms) ours = std::move(*later);
      ours.timed.max_rel_error = worst_error;
      continue;
    }
    const size_t i = size_t(who);
    if (!still_timed(i)) continue;
    LibraryRound got = time_library(libraries[i]);
    if (got.available && !got.wrong && got.result.status != Status::error) lib_round_ms[i][round] = got.result.timing.min_ms;
    if (round > 0 && got.available)
      spdlog::debug("baseline {} of {}: round {} ran {:.3f} ms at best", libraries[i], r.name, round + 1,
                    got.result.timing.min_ms);
    lib_rounds[i].push_back(std::move(got));
  }
  r.rounds = ours_rounds;
  if (!ours_doubted_always) ours.crowded.reset();

  r.timing = ours.timed.timing;
  r.clock = ours.timed.clock;
  if (kernel_wall_gflops) {
    r.kernel_l1_ghz = kernel_ghz;
    r.kernel_l1_gflops = rate_at_clock(*kernel_wall_gflops, kernel_ghz, r.clock.ghz);
    spdlog::debug("{}: the kernel alone ran {:.1f} at {:.3f} GHz: {:.1f} at the fastest call's {:.3f} GHz", r.name,
                  *kernel_wall_gflops, kernel_ghz, *r.kernel_l1_gflops, r.clock.ghz);
  }
  if (r.clock.ghz > 0)
    spdlog::debug("{}: clock {:.3f} GHz on CPU {} ({:.3f} before the fastest call's segment of calls, {:.3f} after)",
                  r.name, r.clock.ghz, place.pin_cpu, r.clock.ghz_before, r.clock.ghz_after);
  r.availability = ours.timed.availability;
  if (r.availability.scanned_ms > 0)
    spdlog::debug("{}: CPU {} ran {} {:.1f}% of {:.0f} ms scanned beside the timed calls ({} interruptions, "
                  "median {:.1f} us, longest {:.1f} us)",
                  r.name, r.availability.cpu,
                  started == 1 ? "the caller" : "its thread (the team's least available core)",
                  100 * r.availability.share, r.availability.scanned_ms,
                  r.availability.interruptions, r.availability.median_interruption_us,
                  r.availability.longest_interruption_us);
  r.max_rel_error = ours.timed.max_rel_error;
  r.rows_checked = ours.timed.rows_checked;
  const double flops = 2.0 * double(m) * double(n) * double(k) * double(rq.batch);
  r.gflops = flops / (r.timing.min_ms * 1e-3) / 1e9;
  r.arithmetic_intensity = flops / matmul_bytes(m, n, k, rq.batch, rq.dtype);
  if (r.max_rel_error > matmul_error_limit(rq.dtype)) {
    r.status = Status::error;
    r.reason = fmt::format("result differs from the reference: max_rel_error {:.2e} (limit {:.0e})",
                           r.max_rel_error, matmul_error_limit(rq.dtype));
  } else if (emulated) {
    // The result is checked and right; its time is the emulator's.
    r.status = Status::mistrusted;
    r.reason = "emulated: " + cpu.emulator;
  } else if (ours.crowded) {
    r.status = Status::mistrusted;
    r.reason = *ours.crowded;
  } else if (!later_failure.empty()) {
    r.status = Status::mistrusted;
    r.reason = "a later round of the side by side with the baselines failed: " + later_failure;
  }
  for (size_t i = 0; i < libs; ++i) {
    const std::vector<LibraryRound>& done = lib_rounds[i];
    if (done.empty() || !done.front().available) continue;
    std::vector<RoundVerdict> verdicts;
    double worst_error = 0;
    for (const LibraryRound& x : done) {
      const bool failed = !x.available || x.result.status == Status::error;
      verdicts.push_back({x.wrong, x.doubted, failed, x.result.timing.min_ms});
      if (!failed) worst_error = std::max(worst_error, x.result.max_rel_error);
    }
    bool doubted_always = false;
    const LibraryRound& kept = done[kept_library_round(verdicts, doubted_always)];
    BaselineResult br = kept.result;
    if (br.status != Status::error) br.max_rel_error = worst_error;
    // A round the witness doubted is kept for its time (a doubt only adds time); another round that
    // was not doubted vouches for the row.
    if (kept.doubted && !doubted_always) br.status = Status::ok, br.reason.clear();
    // A round that failed after a timed one (a crash, a hang, gone) is the row's news as ours' is.
    if (br.status == Status::ok)
      for (size_t k = 1; k < done.size(); ++k)
        if (verdicts[k].failed) {
          br.status = Status::mistrusted;
          br.reason = fmt::format("round {} of the side by side failed: {}", k + 1,
                                  done[k].available ? done[k].result.reason : std::string("the library was gone"));
          break;
        }
    if (br.status != Status::error && br.timing.repetitions > 0 && br.timing.min_ms > 0) {
      br.gflops = flops / (br.timing.min_ms * 1e-3) / 1e9;
      br.speedup = br.timing.min_ms / r.timing.min_ms;
      std::vector<std::string> ratios;  // what each round alone said, for the reader of a doubt
      for (size_t round = 0; round < size_t(rounds); ++round)
        if (lib_round_ms[i][round] > 0 && ours_round_ms[round] > 0)
          ratios.push_back(fmt::format("{:.2f}", lib_round_ms[i][round] / ours_round_ms[round]));
      if (ratios.size() > 1)
        spdlog::debug("baseline {} of {}: speedup {:.2f} from the best rounds; round by round {}", libraries[i], r.name,
                      br.speedup, fmt::join(ratios, ", "));
    }
    r.baselines.push_back(br);
  }
  return r;
}

std::vector<int> side_by_side_order(int rounds, int libraries) {
  std::vector<int> order;
  for (int round = 0; round < rounds; ++round) {
    if (round % 2 == 0) {
      order.push_back(-1);
      for (int i = 0; i < libraries; ++i) order.push_back(i);
    } else {
      for (int i = libraries - 1; i >= 0; --i) order.push_back(i);
      order.push_back(-1);
    }
  }
  return order;
}

size_t kept_library_round(const std::vector<RoundVerdict>& rounds, bool& doubted_always) {
  doubted_always = false;
  for (size_t i = 0; i < rounds.size(); ++i)
    if (rounds[i].wrong) return i;
  std::optional<size_t> fastest;
  bool any_clean = false;
  for (size_t i = 0; i < rounds.size(); ++i) {
    if (rounds[i].failed) continue;
    any_clean = any_clean || !rounds[i].doubted;
    if (!fastest || rounds[i].min_ms < rounds[*fastest].min_ms) fastest = i;
  }
  if (!fastest) return 0;
  doubted_always = !any_clean;
  return *fastest;
}

Expected<BaselineResult> measure_baseline_here(const BaselineJob& job) {
  isa::LibraryIsaLimit limit = isa::host_target().library_isa_limit(job.isa_level);
  if (limit.level.empty() && !job.openblas_coretype.empty()) limit.openblas_coretype = job.openblas_coretype;
  auto lib = BlasLibrary::open(job.library, limit);
  if (!lib) return make_error(lib.error());
  if (!(*lib)->supports(job.dtype))
    return make_error(fmt::format("{} has no {} GEMM", (*lib)->name(), to_string(job.dtype)));
  auto op = make_operands(job.m, job.n, job.k, job.batch, job.dtype);
  if (!op) return make_error(op.error());
  MatmulRequest rq;
  rq.m = job.m, rq.n = job.n, rq.k = job.k, rq.batch = job.batch, rq.threads = job.threads;
  rq.dtype = job.dtype;
  rq.cold_cache = job.cold_cache;
  rq.flush_tlb = job.flush_tlb;
  rq.warmup = job.warmup, rq.min_repetitions = job.min_repetitions, rq.max_repetitions = job.max_repetitions;
  rq.min_seconds = job.min_seconds;
  BaselineResult br;
  br.library = (*lib)->name();
  br.path = (*lib)->path();
  // Before the first GEMM: oneDNN fixes its ISA at its first use.
  if (std::string why = (*lib)->hold_to(limit); !why.empty()) {
    br.version = (*lib)->version();
    br.status = Status::error;
    br.reason = why;
    return br;
  }
  br.version = (*lib)->version();
  if (!job.openblas_coretype.empty())
    br.version += fmt::format(" (OPENBLAS_CORETYPE={}: its own pick on this CPU was a generic core)",
                              job.openblas_coretype);
  // A library we know must run on the threads asked for, or the comparison is not like for like. A
  // file given by path may have no thread control at all: it runs as it is.
  const bool known = br.library == "onednn" || br.library == "openblas" || br.library == "blis";
  if (!(*lib)->set_threads(job.threads) && known) {
    br.status = Status::error;
    br.reason = fmt::format("cannot set {} to {} thread{}", br.library, job.threads, job.threads == 1 ? "" : "s");
    return br;
  }
  const int64_t m = job.m, n = job.n, k = job.k;
  const int es = element_bytes(job.dtype);
  auto theirs = time_calls(TimingPlace{job.pin_cpu, job.pile_bytes}, *op, rq,
                           [&](const uint8_t* a, const uint8_t* b, uint8_t* c) -> Expected<bool> {
                             // One library call per item, as a caller of its BLAS interface would.
                             for (int64_t i = 0; i < job.batch; ++i)
                               if (auto ok = (*lib)->gemm(job.dtype, m, n, k, a + i * m * k * es, k,
                                                          b + i * k * n * es, n, c + i * m * n * 4, n);
                                   !ok)
                                 return ok;
                             return true;
                           });
  if (!theirs) {
    br.status = Status::error;
    br.reason = theirs.error();
    return br;
  }
  br.timing = theirs->timing;
  br.max_rel_error = theirs->max_rel_error;
  return br;
}

Expected<double> time_matmul_config(Gemm& gemm, int64_t m, int64_t n, int64_t k, const MatmulConfig& config,
                                    int64_t batch, double budget_ms) {
  static thread_local std::unique_ptr<Operands> cached;
  batch = std::max<int64_t>(batch, 1);
  if (!cached || cached->m != m || cached->n != n || cached->k != k || cached->batch != batch ||
      cached->dtype != gemm.dtype()) {
    auto op = make_operands(m, n, k, batch, gemm.dtype());
    if (!op) return make_error(op.error());
    cached = std::make_unique<Operands>(std::move(*op));
  }
  Operands& op = *cached;
  const GemmArgs args{m, n, k, op.a.get(), k, op.b.get(), n, op.c.get(), n};
  AffinityGuard caller_affinity;
  if (!gemm.cpu().core_order.empty()) pin_current_thread(gemm.cpu().core_order.front());
  const BatchStrides strides{m * k, k * n, m * n};
  if (auto ok = gemm.run_batch(args, batch, strides, config); !ok) return make_error(ok.error());
  double best = 1e300, total = 0;
  for (int i = 0; i < 3 || (total < budget_ms && i < 1000); ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    gemm.run_batch(args, batch, strides, config);
    const double t = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    best = std::min(best, t);
    total += t;
  }
  return best;
}

}  // namespace peakprobe
