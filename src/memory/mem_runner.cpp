#include "memory/mem_runner.hpp"

#include "memory/sizes.hpp"

#include <algorithm>
#include <atomic>
#include <barrier>
#include <cmath>
#include <cstring>
#include <optional>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "asm/target.hpp"
#include "harness/clock.hpp"
#include "harness/cycle_counter.hpp"
#include "harness/pin.hpp"
#include "harness/run_delay.hpp"
#include "harness/signal_guard.hpp"
#include "harness/stats.hpp"
#include "memory/mem_buffer.hpp"
#include "memory/permutation.hpp"
#include "memory/sizes.hpp"

namespace peakprobe {
namespace {

constexpr double kTargetCallSeconds = 0.004;  // one timed call of a bandwidth kernel
constexpr int kMinReps = 5, kMaxReps = 25;
// Fewer repetitions than this spared by other tasks on the cores: too few to trust their best.
constexpr int kMinSparedReps = 3;
constexpr double kRepBudgetSeconds = 0.35;    // per working-set size
// At least this many spared repetitions, half of them within kSettledSpread of the best (their
// spans): the best has settled, and the median the row reports beside it says so from enough
// samples that a minority of slow repetitions cannot hide a slow majority. A cache level's reps agree
// to 0.1-0.3%; all 25 of them, at every point of a sweep, took 7.6 s of a 46 s report (Emerald
// Rapids VM).
constexpr double kSettledSpread = 0.005;
constexpr int kSettledReps = 8;
constexpr uint64_t kLine = 64;

// Fills an array with 1.0 doubles: finite values for triad and update, and the first touch that
// places the pages on the touching thread's node.
void first_touch(uint8_t* p, size_t bytes) {
  const double one = 1.0;
  for (size_t i = 0; i + 8 <= bytes; i += 8) std::memcpy(p + i, &one, 8);
}

std::string repro_bw(const BandwidthRequest& r, int width, int cpu) {
  return fmt::format("peakprobe mem --kernel {} --isa {} --sizes {} --threads {} --cpu {}", r.kernel,
                     isa::host_target().width_name(width), r.size_bytes, r.threads, cpu);
}

}  // namespace

bool best_settled(std::vector<double> spans) {
  if (spans.size() < size_t(kSettledReps)) return false;
  // The shortest half and one more: the median of an odd count, the later of the middle two of an even.
  const size_t half = spans.size() / 2;
  std::nth_element(spans.begin(), spans.begin() + ptrdiff_t(half), spans.end());
  const double best = *std::min_element(spans.begin(), spans.begin() + ptrdiff_t(half) + 1);
  return best > 0 && (spans[half] - best) / best <= kSettledSpread;
}

std::optional<double> bytes_per_core_cycle(double gbps, double first_ghz, int threads,
                                           const std::vector<double>& per_thread_ghz) {
  double sum = 0;
  for (double g : per_thread_ghz) sum += g;
  const bool each_known = threads > 0 && int(per_thread_ghz.size()) == threads &&
                          std::all_of(per_thread_ghz.begin(), per_thread_ghz.end(), [](double g) { return g > 0; });
  if (each_known && sum > 0) return gbps / sum;
  if (first_ghz > 0 && threads > 0) return gbps / first_ghz / double(threads);
  return std::nullopt;
}

struct MemRunner::Impl {
  CpuInfo cpu;
  int first_cpu = 0;
  CycleCounter counter;
  std::unique_ptr<ClockCalibrator> clock;
  ClockReading start;
  // Each bandwidth thread's buffer, kept for the next request of about the same size: the roofline
  // measures three kernels on one working set per level, and mapping and faulting in a buffer of
  // several GiB costs more than measuring it (0.5-2.4 s per GiB in a VM, whose host backs the guest's
  // memory on first touch).
  std::vector<std::unique_ptr<MemBuffer>> buffers;
  uint64_t last_level_end = 0;  // set_last_level_end
  // The pointer chase's buffer, kept from one latency request to the next (set_latency_top).
  std::unique_ptr<MemBuffer> chase;
  uint64_t latency_top = 0;
};


MemRunner::MemRunner(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
MemRunner::~MemRunner() = default;
const ClockReading& MemRunner::start_clock() const { return impl_->start; }
void MemRunner::set_last_level_end(uint64_t bytes) { impl_->last_level_end = bytes; }
void MemRunner::set_latency_top(uint64_t bytes) { impl_->latency_top = bytes; }

Expected<std::unique_ptr<MemRunner>> MemRunner::create(const CpuInfo& cpu, int first_cpu) {
  auto impl = std::make_unique<Impl>();
  impl->cpu = cpu;
  impl->first_cpu = first_cpu >= 0 ? first_cpu : (cpu.core_order.empty() ? 0 : cpu.core_order.front());
  std::string err;
  if (!pin_current_thread(impl->first_cpu, &err)) return make_error(err);
  auto cal = ClockCalibrator::create(impl->counter, cpu.tsc_hz, cpu);
  if (!cal) return make_error("clock calibration: " + cal.error());
  impl->clock = std::move(cal.value());
  ClockSample s = impl->clock->warm_up();
  impl->start.source = impl->counter.source();
  impl->start.ghz = impl->start.ghz_before = impl->start.ghz_after = s.ghz;
  return std::unique_ptr<MemRunner>(new MemRunner(std::move(impl)));
}

BandwidthResult MemRunner::bandwidth(const BandwidthRequest& req) {
  Impl& m = *impl_;
  m.chase.reset();  // as latency() unmaps the bandwidth buffers: one sweep's top held at a time
  BandwidthResult r;
  r.kernel = req.kernel;
  r.size_bytes = req.size_bytes;
  r.threads = req.threads;
  const isa::Target& target = isa::host_target();
  auto info = isa::find_mem_kernel(req.kernel);
  auto widths = target.mem_widths(m.cpu);
  const int width = req.width_bits ? req.width_bits : widths.back();
  r.isa = isa::host_target().width_name(width);
  r.repro = repro_bw(req, width, m.first_cpu);
  r.clock.source = m.counter.source();
  if (!info) {
    r.status = Status::error;
    r.reason = info.error();
    return r;
  }
  if (std::find(widths.begin(), widths.end(), width) == widths.end()) {
    r.status = Status::skipped;
    r.reason = target.mem_width_unsupported(width) + ", not available on this CPU";
    return r;
  }
  if (req.threads < 1 || req.threads > int(m.cpu.core_order.size())) {
    r.status = Status::error;
    r.reason = fmt::format("threads must be 1..{}", m.cpu.core_order.size());
    return r;
  }
  auto code = target.compile_mem_kernel(info->kernel, width, m.cpu);
  if (!code) {
    r.status = Status::error;
    r.reason = code.error();
    return r;
  }
  // Each thread gets an equal share; each array a whole number of loop iterations.
  const int n = req.threads;
  const uint64_t per_thread = req.size_bytes / uint64_t(n);
  const uint64_t per_array = per_thread / uint64_t(info->arrays) / code->array_step * code->array_step;
  if (per_array == 0) {
    r.status = Status::error;
    r.reason = fmt::format("working set {} is below the kernel's minimum of {} bytes", req.size_bytes,
                           code->array_step * uint64_t(info->arrays) * uint64_t(n));
    return r;
  }
  r.size_bytes = per_array * uint64_t(info->arrays) * uint64_t(n);
  const uint64_t iterations = per_array / code->array_step;
  const double bytes_per_call_thread = double(iterations) * double(code->bytes_per_iteration);
  r.bytes_per_iteration = double(code->bytes_per_iteration);
  const isa::MemFn fn = code->fn;

  struct ThreadTimes {
    std::vector<uint64_t> start, end;
    std::vector<uint64_t> waited_ns;  // per repetition: how long the thread waited for its CPU (0: unknown)
    std::string error;
  };
  std::vector<ThreadTimes> times(static_cast<size_t>(n));
  std::barrier sync(n);
  // Whether a thread waited for its CPU (another task ran there) for more than kRunDelayLimit of the
  // repetition's span, earliest start to latest end. Read once every thread has stamped `rep`.
  auto rep_span = [&](int rep) {
    uint64_t first = UINT64_MAX, last = 0;
    for (int t = 0; t < n; ++t) {
      first = std::min(first, times[size_t(t)].start[size_t(rep)]);
      last = std::max(last, times[size_t(t)].end[size_t(rep)]);
    }
    return double(last - first) / m.cpu.tsc_hz;
  };
  auto rep_waited = [&](int rep) {
    const double span = rep_span(rep);
    for (int t = 0; t < n; ++t)
      if (double(times[size_t(t)].waited_ns[size_t(rep)]) * 1e-9 > kRunDelayLimit * span) return true;
    return false;
  };
  int spared_reps = 0;
  std::vector<double> spared_spans;  // seconds, of the repetitions no thread waited in
  std::atomic<uint64_t> passes{1};
  std::atomic<bool> stop{false};
  ClockSample before, after;
  // Each thread's core clock around its repetitions (thread 0's also as before/after): the cores of a
  // shared host run at clocks of their own, so the all-cores bytes per cycle divides by their sum,
  // not by n times the first core's clock.
  std::vector<double> thread_ghz(static_cast<size_t>(n), 0.0);
  int reps_done = 0;

  auto worker = [&](int t) {
    std::string err;
    const int tid = current_tid();
    const int cpu_id = m.cpu.core_order[size_t(t)];
    if (!pin_current_thread(cpu_id, &err)) times[size_t(t)].error = err;
    const MemBuffer::Pages pages = per_array >= (2u << 20) ? MemBuffer::Pages::huge : MemBuffer::Pages::small;
    MemBuffer& buf = reuse_or_map(m.buffers[size_t(t)], per_array * uint64_t(info->arrays) + 4096 * 3, pages);
    if (!buf.ok()) times[size_t(t)].error = "cannot map " + format_bytes(per_array * uint64_t(info->arrays));
    uint8_t* arr[3] = {nullptr, nullptr, nullptr};
    if (buf.ok()) {
      // Arrays offset by an odd number of 4 KiB pages so their streams do not alias in the L1 sets.
      for (int a = 0; a < info->arrays; ++a) arr[a] = buf.data() + uint64_t(a) * (per_array + 4096);
      for (int a = 0; a < info->arrays; ++a) first_touch(arr[a], per_array);
    }
    uint8_t* b = arr[1] ? arr[1] : arr[0];
    uint8_t* c = arr[2] ? arr[2] : b;
    // The clock of its own core, read by a ruler of its own: a perf cycle counter counts only the
    // thread that opened it, so the runner's (opened by the thread that made the runner) serves
    // thread 0 only with the TSC. A ruler that cannot be built is no error: that thread's clock is
    // then unknown, and the bytes per cycle fall back to the first core's clock.
    std::optional<CycleCounter> own_counter;
    std::unique_ptr<ClockCalibrator> own_clock;
    if (t > 0 || m.counter.counts_cycles()) {
      own_counter.emplace();
      if (auto made = ClockCalibrator::create(*own_counter, m.cpu.tsc_hz, m.cpu)) {
        own_clock = std::move(made.value());
        own_clock->set_ratio_window(0);  // only the clock is read: no 30 ms window of reference tries
      }
    }
    ClockCalibrator* clock = own_clock                                      ? own_clock.get()
                             : t == 0 && !m.counter.counts_cycles() ? m.clock.get()
                                                                    : nullptr;
    ClockSample clock_before;
    sync.arrive_and_wait();
    const bool ok = times[size_t(t)].error.empty();
    // Warm-up pass and sizing: thread 0 picks the passes per call for everyone.
    if (ok) {
      std::string e;
      if (!run_guarded([&] { fn(1, iterations, arr[0], b, c); }, e)) times[size_t(t)].error = e;
    }
    if (t == 0 && ok) {
      const uint64_t t0 = tsc_now();
      fn(1, iterations, arr[0], b, c);
      const double secs = double(tsc_now() - t0) / m.cpu.tsc_hz;
      passes = std::max<uint64_t>(1, uint64_t(kTargetCallSeconds / std::max(secs, 1e-9)));
    }
    // Every thread reads its clock at the same moment, each core running the same add chain, not
    // beside another thread's kernel.
    sync.arrive_and_wait();
    if (ok && clock) clock_before = clock->measure();
    sync.arrive_and_wait();
    for (int rep = 0; rep < kMaxReps; ++rep) {
      // Read before the barrier: a thread that waits for its CPU once the barrier lets it go starts
      // late, and the repetition's span (earliest start to latest end) grows by that wait.
      const RunDelayWatch watch({tid});
      sync.arrive_and_wait();
      if (stop.load()) break;
      const uint64_t s = tsc_now();
      if (times[size_t(t)].error.empty()) fn(passes.load(), iterations, arr[0], b, c);
      const uint64_t e = tsc_now();
      times[size_t(t)].waited_ns.push_back(watch.longest_wait().ns);
      times[size_t(t)].start.push_back(s);
      times[size_t(t)].end.push_back(e);
      sync.arrive_and_wait();
      if (t == 0) {
        reps_done = rep + 1;
        if (!rep_waited(rep)) {
          ++spared_reps;
          spared_spans.push_back(rep_span(rep));
        }
        double spent = 0;
        for (size_t i = 0; i < times[0].end.size(); ++i) spent += double(times[0].end[i] - times[0].start[i]);
        // Enough repetitions that no thread waited in, and either the budget spent or the best of them
        // settled; else on to kMaxReps.
        if (spared_reps >= kMinReps && (spent / m.cpu.tsc_hz > kRepBudgetSeconds || best_settled(spared_spans)))
          stop = true;
      }
    }
    const ClockSample clock_after = ok && clock ? clock->measure() : ClockSample{};
    if (t == 0) before = clock_before, after = clock_after;
    if (clock_before.ghz > 0 && clock_after.ghz > 0) thread_ghz[size_t(t)] = 0.5 * (clock_before.ghz + clock_after.ghz);
  };
  // Before the threads: each owns its slot. Slots of threads this request does not start are unmapped.
  m.buffers.resize(size_t(n));
  std::vector<std::thread> team;
  for (int t = 0; t < n; ++t) team.emplace_back(worker, t);
  for (auto& th : team) th.join();
  for (const auto& tt : times)
    if (!tt.error.empty()) {
      r.status = Status::error;
      r.reason = tt.error;
      return r;
    }
  // Aggregate per repetition: all bytes over the span from the earliest start to the latest end.
  const double bytes_per_rep = bytes_per_call_thread * double(passes.load()) * double(n);
  // A repetition in which a thread waited for its CPU (another task ran there) is left out; when
  // every one was, all are kept and the row says so.
  std::vector<char> waited(size_t(reps_done), 0);
  double most_waited_ms = 0, its_span_ms = 0;
  for (int rep = 0; rep < reps_done; ++rep) {
    waited[size_t(rep)] = rep_waited(rep);
    const double span = rep_span(rep);
    for (int t = 0; t < n; ++t) {
      const double w = double(times[size_t(t)].waited_ns[size_t(rep)]) * 1e-9;
      if (w * 1e3 >= most_waited_ms) most_waited_ms = w * 1e3, its_span_ms = span * 1e3;
    }
  }
  const int waited_reps = int(std::count(waited.begin(), waited.end(), 1));
  const bool every_rep_waited = reps_done > 0 && waited_reps == reps_done;
  std::vector<double> gbps;
  std::vector<double> thread_best(static_cast<size_t>(n), 0.0);
  for (int rep = 0; rep < reps_done; ++rep) {
    if (waited[size_t(rep)] && !every_rep_waited) continue;
    for (int t = 0; t < n; ++t) {
      const double secs = double(times[size_t(t)].end[size_t(rep)] - times[size_t(t)].start[size_t(rep)]) / m.cpu.tsc_hz;
      thread_best[size_t(t)] = std::max(thread_best[size_t(t)], bytes_per_call_thread * double(passes.load()) / secs / 1e9);
    }
    gbps.push_back(bytes_per_rep / rep_span(rep) / 1e9);
  }
  if (reps_done > 0)
    spdlog::debug("mem {} {}: the longest wait of a thread for its CPU {:.2f} ms of a {:.2f} ms repetition; {} of {} "
                  "repetitions left out for such waits",
                  r.kernel, format_bytes(r.size_bytes), most_waited_ms, its_span_ms, every_rep_waited ? 0 : waited_reps,
                  reps_done);
  Stats st = summarize(gbps);
  r.gbps_stats = st;
  // Higher is better here: spread is how far the median falls below the best.
  r.gbps_stats.spread = st.max > 0 ? (st.max - st.median) / st.max : 0.0;
  r.gbps = st.max;
  r.per_thread_gbps = thread_best;
  const auto [lo, hi] = std::minmax_element(thread_best.begin(), thread_best.end());
  r.imbalance = *hi > 0 ? (*hi - *lo) / *hi : 0.0;
  r.clock = clock_reading(m.counter.source(), before, after);
  if (n > 1 && std::all_of(thread_ghz.begin(), thread_ghz.end(), [](double g) { return g > 0; }))
    r.per_thread_ghz = thread_ghz;
  r.bytes_per_cycle = bytes_per_core_cycle(*r.gbps, r.clock.ghz, n, r.per_thread_ghz);
  if (!m.cpu.emulator.empty()) {
    r.status = Status::mistrusted;
    r.reason = "emulated: " + m.cpu.emulator;
  } else if (every_rep_waited) {
    r.status = Status::mistrusted;
    r.waited_every_repetition = true;
    r.reason = fmt::format("its threads waited for their CPUs in every repetition (up to {:.1f} ms of {:.1f}: "
                           "another program ran there)",
                           most_waited_ms, its_span_ms);
  } else if (reps_done - waited_reps < kMinSparedReps) {
    r.status = Status::mistrusted;
    r.reason = fmt::format("only {} of {} repetitions ran without a thread waiting for its CPU (another program "
                           "ran there)",
                           reps_done - waited_reps, reps_done);
  } else if (r.gbps_stats.spread > 0.15) {
    r.status = Status::mistrusted;
    r.reason = fmt::format("unsteady: median {:.0f}% below the best", r.gbps_stats.spread * 100);
  }
  return r;
}

LatencyResult MemRunner::latency(const LatencyRequest& req) {
  Impl& m = *impl_;
  LatencyResult r;
  r.mode = req.mode;
  r.pages = req.pages;
  r.chains = req.chains;
  r.size_bytes = req.size_bytes / kLine * kLine;
  r.repro = fmt::format("peakprobe latency --sizes {} --mode {} --pages {} --chains {} --cpu {}", r.size_bytes,
                        req.mode, req.pages, req.chains, m.first_cpu);
  r.clock.source = m.counter.source();
  const uint64_t lines = r.size_bytes / kLine;
  if (lines < uint64_t(req.chains) * 2 || lines > (1ull << 32) - 1) {
    r.status = Status::error;
    r.reason = "working set must hold at least two cache lines per chain (and fewer than 2^32 lines)";
    return r;
  }
  // The bandwidth runs' kept buffers are not this one's: unmapped, so that a latency sweep after a
  // bandwidth sweep does not hold both tops at once.
  m.buffers.clear();
  // A smaller working set lies in the first bytes of the kept mapping: its lines are as random in
  // physical memory as those of a mapping of its own.
  const MemBuffer::Pages pages = req.pages == "2m" ? MemBuffer::Pages::huge : MemBuffer::Pages::small;
  if (!m.chase || !m.chase->ok() || m.chase->pages() != pages || m.chase->size() < r.size_bytes) {
    m.chase.reset();
    m.chase = std::make_unique<MemBuffer>(std::max<uint64_t>(r.size_bytes, m.latency_top), pages);
    if (!m.chase->ok() && m.latency_top > r.size_bytes) m.chase = std::make_unique<MemBuffer>(r.size_bytes, pages);
  }
  MemBuffer& buf = *m.chase;
  if (!buf.ok()) {
    r.status = Status::error;
    r.reason = "cannot map " + format_bytes(r.size_bytes);
    return r;
  }
  // Each line's first word holds the address of the next line of one random cycle through all lines.
  const std::vector<uint32_t> next = req.mode == "page-local" ? page_local_cycle(uint32_t(lines), 4096 / kLine, 42)
                                                              : sattolo_cycle(uint32_t(lines), 42);
  for (uint64_t i = 0; i < lines; ++i) {
    uint8_t* target = buf.data() + uint64_t(next[i]) * kLine;
    std::memcpy(buf.data() + i * kLine, &target, sizeof(target));
  }
  r.pages_granted = buf.granted_pages();
  // Chains start evenly spaced along the cycle, so they never catch up with each other.
  std::vector<void*> starts(size_t(req.chains));
  {
    uint64_t pos = 0, step = lines / uint64_t(req.chains);
    uint64_t k = 0;
    for (int c = 0; c < req.chains; ++c) {
      while (k < uint64_t(c) * step) {
        pos = next[pos];
        ++k;
      }
      starts[size_t(c)] = buf.data() + pos * kLine;
    }
  }
  auto code = isa::host_target().compile_chase(req.chains);
  if (!code) {
    r.status = Status::error;
    r.reason = code.error();
    return r;
  }
  const isa::ChaseFn fn = code->fn;
  const int unroll = code->unroll;
  // One full lap first (caches and TLB in steady state), then timed calls of about 20 ms. A working set
  // far beyond the last-level cache is in steady state after 4 x that cache's lines (what the setup
  // left cached is gone: each line of a random cycle evicts one), not a whole lap: at 512 MiB a lap
  // is 8 M loads from DRAM, 1.5 s. Where the machine showed its last level ending sooner than reported
  // (a VM holding a part of the host's cache), 8 x that end: the end is where the rate fell, the cache
  // may hold a little more. A Zen 5 VM reporting 508 MiB of L3 and holding about 8 MiB spent 2.4 s of
  // a 9 s latency curve warming its 512 MiB point by the reported size.
  uint64_t llc_lines = last_level_cache_bytes(m.cpu) / kLine;
  if (m.last_level_end > 0) llc_lines = std::min(llc_lines, 2 * m.last_level_end / kLine);
  const uint64_t warm_lines = llc_lines > 0 ? std::min(lines, 4 * llc_lines) : lines;
  uint64_t warm_iters = std::max<uint64_t>(1, warm_lines / uint64_t(unroll));
  std::string err;
  if (!run_guarded([&] { fn(warm_iters, starts.data()); }, err)) {
    r.status = Status::error;
    r.reason = err;
    return r;
  }
  ClockSample before = m.clock->measure();
  // Calls of about kCallSeconds: grown by 4 until one lasts a millisecond, then scaled to the target
  // (growing by 4 up to the target itself left calls of 10-40 ms, and a full report's 32 latency points
  // spent about 150 ms each where 45 do).
  constexpr double kCallSeconds = 0.005, kSizingSeconds = 0.001;
  uint64_t iters = 1024;
  for (;;) {
    const uint64_t t0 = tsc_now();
    fn(iters, starts.data());
    const double secs = double(tsc_now() - t0) / m.cpu.tsc_hz;
    if (iters > (1ull << 32)) break;
    if (secs > kSizingSeconds) {
      iters = std::max<uint64_t>(1, uint64_t(double(iters) * kCallSeconds / secs));
      break;
    }
    iters *= 4;
  }
  // Repetitions in which this thread waited for its CPU (another task ran there) are left out; when
  // every one was, all are kept and the row says so.
  std::vector<double> ns, ns_waited;
  const int tid = current_tid();
  double most_waited_ms = 0;
  for (int rep = 0; rep < 7; ++rep) {
    const RunDelayWatch watch({tid});
    const uint64_t t0 = tsc_now();
    fn(iters, starts.data());
    const double secs = double(tsc_now() - t0) / m.cpu.tsc_hz;
    const double waited = double(watch.longest_wait().ns) * 1e-9;
    most_waited_ms = std::max(most_waited_ms, waited * 1e3);
    (waited > kRunDelayLimit * secs ? ns_waited : ns).push_back(secs * 1e9 / double(iters * uint64_t(unroll)));
  }
  const bool every_rep_waited = ns.empty();
  spdlog::debug("latency {}: the longest wait for its CPU {:.2f} ms; {} of {} repetitions left out for such waits",
                format_bytes(r.size_bytes), most_waited_ms, every_rep_waited ? 0 : ns_waited.size(),
                ns.size() + ns_waited.size());
  if (every_rep_waited) ns = ns_waited;
  ClockSample after = m.clock->measure();
  r.ns_stats = summarize(ns);
  r.latency_ns = r.ns_stats.min;
  r.clock = clock_reading(m.counter.source(), before, after);
  r.latency_cycles = *r.latency_ns * r.clock.ghz;
  if (!m.cpu.emulator.empty()) {
    r.status = Status::mistrusted;
    r.reason = "emulated: " + m.cpu.emulator;
    return r;
  }
  if (req.pages == "2m" && r.pages_granted != "2m")
    r.reason = "asked for 2 MiB pages, the kernel granted " + r.pages_granted;
  if (every_rep_waited) {
    r.status = Status::mistrusted;
    r.reason = fmt::format("it waited for its CPU in every repetition (up to {:.1f} ms: another program ran there){}",
                           most_waited_ms, r.reason.empty() ? "" : "; " + r.reason);
  }
  return r;
}

}  // namespace peakprobe
