// Core-clock calibration without hardware counters: a chain of dependent register adds runs at one
// add per core cycle on every core (Target::ruler_forms names the add), so TSC ticks per add = TSC ticks per core cycle. Timed at N
// and 2N unrolled copies (loop overhead cancels), median of many samples. The calibrator also owns
// the Ruler that is timed beside every probe sample: the same chain, and the same add on every free
// register (the core's undisturbed issue rate) and a dependent multi-cycle chain, to recognise
// moments when the core is shared.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "asm/jit.hpp"
#include "harness/cycle_counter.hpp"
#include "harness/probe_buffer.hpp"
#include "harness/timing.hpp"
#include "peakprobe/cpu_info.hpp"
#include "peakprobe/expected.hpp"
#include "peakprobe/result.hpp"

namespace peakprobe {

struct ClockSample {
  double ticks_per_cycle = 0;  // counter ticks per core cycle (TSC ticks, or 1 with perf cycles)
  double ghz = 0;
  double spread = 0;
};

// The reading of a probe bracketed by two calibrations: mean clock, both ends and the drift.
ClockReading clock_reading(const char* source, const ClockSample& before, const ClockSample& after);

class ClockCalibrator {
 public:
  static Expected<std::unique_ptr<ClockCalibrator>> create(const CycleCounter& counter, double tsc_hz,
                                                           const CpuInfo& cpu);
  // The clock now: the median of `rounds` short rounds of the chain (0: the default 7, about 1-2 ms;
  // one round, about 0.1 ms, reads the clock between a product's timed calls, matmul/call_clock.hpp),
  // then a few tries of the ruler's reference calls that teach it the core's undisturbed ratios;
  // `clock_only` leaves the tries out (half of a one-round reading).
  ClockSample measure(int rounds = 0, bool clock_only = false);
  // Runs the chain until two successive readings agree within 1% (the core has left its idle
  // frequency) or `max_seconds` pass, then (the first time) learns the ruler's undisturbed ratios
  // over a window of tries: the reading returned.
  ClockSample warm_up(double max_seconds = 0.4);
  // What the ruler learned of its core: its undisturbed ratios, their floors, the multi-cycle
  // chain's modes, and whether the window of tries ran.
  struct Learned {
    double best_wide_ratio = 0, best_chain_ratio = 0, wide_ratio_floor = 0, chain_ratio_floor = 0;
    bool slow_unsteady = false, window_taken = false;
    // The last calibrations' estimates of a chain call's cost beyond its adds, in core cycles (another
    // core, another kind of core, may differ).
    std::vector<double> fixed_cost_cycles;
  };
  // Forgets what the ruler learned of its core, so that the next warm_up learns it afresh on the
  // core the thread now runs on, and returns it (restore() puts it back, for a move that failed).
  // The code stays where it is: one calibrator serves every core a runner moves to.
  Learned relearn();
  void restore(const Learned& learned);
  bool ratio_window_taken() const { return window_taken_; }
  // The undisturbed rate of the wide stream that the ruler learned (Ruler::wide_rate of its best
  // wide/chain ratio), adds per core cycle; 0 before it learned one.
  double learned_wide_rate() const { return ruler_.wide_rate(ruler_.best_wide_ratio); }
  // Takes `adds_per_cycle` as the core's undisturbed wide rate in place of what the window learned, with
  // the floor a first calibration sets: for a window that ran while the core was shared (its samples
  // then read as slowed, as they are). Nothing for a rate that is not positive.
  void assume_wide_rate(double adds_per_cycle);
  // How long the first calibration after the warm-up takes tries of the ruler's references to learn
  // their undisturbed ratio (kRatioWindowSeconds; 0: seven tries back to back, for a calibrator
  // that only sizes the reference calls).
  void set_ratio_window(double seconds) { ratio_window_seconds_ = seconds; }
  static constexpr double kRatioWindowSeconds = 0.03;
  // The second window of a core whose first one read clearly below its rate at the ranking: long
  // enough to meet the quiet moments between a sibling's bursts (100 ms to a second on the VMs seen).
  static constexpr double kLongRatioWindowSeconds = 0.25;
  const char* source() const { return counter_.source(); }
  // The reference streams to time beside every probe sample (ready after the first measure()).
  const Ruler& ruler() const { return ruler_; }
  double tsc_hz() const { return tsc_hz_; }

 private:
  ClockCalibrator(const CycleCounter& counter, double tsc_hz) : counter_(counter), tsc_hz_(tsc_hz) {}
  const CycleCounter& counter_;
  double tsc_hz_;
  isa::JitFunction short_, long_;
  isa::JitFunction wide_short_, wide_long_;
  isa::JitFunction slow_;  // the multi-cycle reference chain (see Ruler::slow)
  double wide_short_units_ = 0, wide_long_units_ = 0;
  Ruler ruler_;
  bool learn_ratio_ = true;    // false while warm_up waits for the clock to settle
  bool window_taken_ = false;  // the window of tries runs once
  double ratio_window_seconds_ = kRatioWindowSeconds;
  // The last calibrations' estimates of a chain call's cost beyond its adds, in core cycles
  // (Ruler::chain_fixed_ticks is their median at the clock of the latest: see measure()).
  static constexpr size_t kFixedCostHistory = 31;
  std::vector<double> fixed_cost_cycles_;
  isa::ProbeConstants consts_;
  ProbeBuffer buffer_;
};

}  // namespace peakprobe
