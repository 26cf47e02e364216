#include "matmul/team_witness.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <memory>
#include <thread>
#include <vector>

#include "asm/target.hpp"
#include "matmul/aligned_words.hpp"
#include "matmul/packing.hpp"

namespace peakprobe {

namespace {

// k steps per call: a few thousand cycles, long against a reading of the clock.
constexpr int64_t kSteps = 128;
// Calls between two readings of the clock.
constexpr int kCallsPerCheck = 16;
// Rounds of (each thread alone, then all at once); each thread's best rate of each kind is kept.
constexpr int kRounds = 3;

// One thread's panels and C tile: its own lines, so threads share nothing but their cores.
struct Panels {
  Words a, b, c;
};

}  // namespace

bool team_shares_cores(const CpuInfo& cpu, int threads) {
  std::vector<int> cores;
  for (int i = 0; i < threads && i < int(cpu.core_order.size()); ++i) {
    const int id = cpu.core_order[size_t(i)];
    if (id < 0 || id >= int(cpu.cpu_core.size()) || cpu.cpu_core[size_t(id)] < 0) return false;  // not known
    cores.push_back(cpu.cpu_core[size_t(id)]);
  }
  std::sort(cores.begin(), cores.end());
  return std::adjacent_find(cores.begin(), cores.end()) != cores.end();
}

Expected<TeamWitness> witness_team(Gemm& gemm, int mr, int nv, int threads, double window_seconds) {
  if (threads < 2) return make_error("the witness needs two threads or more");
  auto fn = gemm.tile_kernel(mr, nv);
  if (!fn) return make_error(fn.error());
  const int nr = gemm.micro_kernel_shape(mr, nv, false).nr();
  std::vector<Panels> panels(static_cast<size_t>(threads));
  for (Panels& p : panels) {
    p.a = zeroed_words(size_t(kSteps * mr));
    p.b = zeroed_words(size_t(b_panel_words(kSteps, nr, gemm.b_panels_have_sums())));
    p.c = zeroed_words(size_t(mr * nr));
    if (!p.a || !p.b || !p.c) return make_error("cannot allocate the witness's panels");
  }
  const isa::MicroKernelFn kernel = *fn;
  // Best calls per second of each thread alone and side by side.
  std::vector<double> alone(size_t(threads), 0.0), together(size_t(threads), 0.0);
  // turn >= 0: only that thread times, the others return at once; -1: every thread times.
  int turn = -1;
  // Side by side, every thread starts its window once all have arrived: a helper woken from its
  // futex starts late (up to a millisecond on a VM), and windows that barely overlap see no sharing.
  std::atomic<int> arrived{0};
  auto job = [&](int t) {
    if (turn >= 0 && t != turn) return;
    if (turn < 0) {
      arrived.fetch_add(1, std::memory_order_acq_rel);
      // Threads made to share a CPU yield it to the one not yet arrived.
      for (int i = 0; arrived.load(std::memory_order_acquire) < threads; ++i)
        if (i < 4096) isa::spin_pause();
        else std::this_thread::yield();
    }
    Panels& p = panels[size_t(t)];
    const auto t0 = std::chrono::steady_clock::now();
    int64_t calls = 0;
    double s = 0;
    do {
      for (int i = 0; i < kCallsPerCheck; ++i)
        kernel(uint64_t(kSteps), p.a.get(), p.b.get(), p.c.get(), uint64_t(nr) * 4, 1, 0, 0, nullptr, 1);
      calls += kCallsPerCheck;
      s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    } while (s < window_seconds);
    std::vector<double>& best = turn >= 0 ? alone : together;
    best[size_t(t)] = std::max(best[size_t(t)], double(calls) / s);
  };
  auto side_by_side = [&] {
    turn = -1;
    arrived.store(0, std::memory_order_relaxed);
    gemm.run_on_team(threads, job);
  };
  side_by_side();  // warm: helpers awake, panels in their caches
  for (int round = 0; round < kRounds; ++round) {
    for (turn = 0; turn < threads; ++turn) gemm.run_on_team(threads, job);
    side_by_side();
  }
  TeamWitness w;
  w.side_by_side = 1e300;
  for (int t = 0; t < threads; ++t) {
    const double ratio = alone[size_t(t)] > 0 ? together[size_t(t)] / alone[size_t(t)] : 0.0;
    if (ratio < w.side_by_side) {
      w.side_by_side = ratio;
      w.slowest = t;
    }
  }
  return w;
}

std::optional<std::string> team_witness_doubt(const TeamWitness& w, int threads) {
  if (w.slowest < 0 || w.side_by_side >= kSideBySideLimit) return std::nullopt;
  return fmt::format("its {} threads could not run side by side: right after the timing, one register block's kernel "
                     "ran at {:.0f}% of its own speed on thread {} while the others ran it too (two threads on one "
                     "core's pipes: the host, or another program, shares these cores)",
                     threads, w.side_by_side * 100, w.slowest);
}

std::optional<std::string> run_delay_doubt(uint64_t waited_ns, int thread, double wall_seconds) {
  if (thread < 0 || !(wall_seconds > 0) || double(waited_ns) * 1e-9 <= kRunDelayLimit * wall_seconds) return std::nullopt;
  return fmt::format("thread {} waited {:.1f} ms of the {:.1f} ms timing for its CPU (another program ran there)", thread,
                     double(waited_ns) * 1e-6, wall_seconds * 1e3);
}

}  // namespace peakprobe
