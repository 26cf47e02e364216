#include "matmul/sustained_roof.hpp"

#include <algorithm>
#include <cstdint>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "asm/target.hpp"
#include "harness/clock.hpp"
#include "harness/cycle_counter.hpp"
#include "harness/pin.hpp"
#include "harness/probe_buffer.hpp"
#include "harness/signal_guard.hpp"

namespace peakprobe {

SustainedShare measure_sustained_share(const CpuInfo& cpu, const std::string& form_text, const std::string& dtype,
                                       double per_cycle, int pin_cpu) {
  SustainedShare out;
  auto fail = [&](std::string why) {
    out.missing = std::move(why);
    spdlog::debug("sustained roof {}: {}", form_text, out.missing);
    return out;
  };
  if (per_cycle <= 0) return fail("no probed rate to compare with");
  if (cpu.tsc_hz <= 0) return fail("the timestamp counter's rate is not known");
  // An emulator's clock readings say nothing of a core (and its roof is never scaled to them).
  if (!cpu.emulator.empty()) return fail("under an emulator (" + cpu.emulator + ")");
  AffinityGuard caller_affinity;
  if (pin_cpu >= 0) {
    std::string err;
    if (!pin_current_thread(pin_cpu, &err)) return fail(err);
  }
  auto form = isa::host_target().probe_form(form_text, cpu);
  if (!form) return fail(form.error());
  const int chains = std::max(1, std::min(form.value()->max_chains(), kSustainedChains));
  auto plan = form.value()->plan_throughput(chains, dtype);
  if (!plan) return fail(plan.error());
  const int per_copy = plan.value()->measured_per_copy();
  if (per_copy <= 0) return fail("the stream measures no instruction");
  // About 64 instructions a loop, as a probe's stream has (a copy holds one of each chain).
  const int copies = std::max(1, (64 + per_copy - 1) / per_copy);
  auto code = plan.value()->compile(copies);
  if (!code) return fail(code.error());
  isa::ProbeConstants consts;
  ProbeBuffer buffer;
  if (!buffer.ok()) return fail("cannot map the probe buffer");
  const isa::BufferFill fill = plan.value()->prepare(consts, dtype);
  buffer.fill(fill.pattern, fill.chase_bits, fill.chase_byteswap);
  CycleCounter counter;
  auto clock = ClockCalibrator::create(counter, cpu.tsc_hz, cpu);
  if (!clock) return fail(clock.error());
  const isa::ProbeFn fn = code.value().fn();
  const double per_loop = double(copies) * per_copy;

  // Each stream call guarded on its own, the clock readings (which guard their own calls) outside.
  std::string err;
  uint64_t t0 = 0, t1 = 0;  // around the stream's call, inside the guard
  auto call = [&](uint64_t loops) {
    return run_guarded(
        [&] {
          t0 = tsc_now();
          fn(loops, buffer.data(), &consts);
          t1 = tsc_now();
        },
        err);
  };
  // The calibrator is new: its first reading also sizes its references, so it is taken before.
  if (clock.value()->measure(1, true).ghz <= 0) return fail("the clock could not be read");
  // Sized by first calls (about 0.01 ms, then the run's length), which also bring the vector unit up.
  uint64_t loops = 1000;
  for (int sizing = 0; sizing < 3; ++sizing) {
    if (!call(loops)) return fail(err);
    const double ms = double(t1 - t0) / cpu.tsc_hz * 1e3;
    if (ms <= 0) break;
    loops = std::max<uint64_t>(1, uint64_t(double(loops) * kSustainedRunMs / ms));
  }
  double best = 0;
  for (int run = 0; run < kSustainedRuns; ++run) {
    if (!call(loops)) return fail(err);
    // Read as a product's calls are read: right after, one short round (CallClock).
    const ClockSample after = clock.value()->measure(1, true);
    if (after.ghz <= 0 || t1 <= t0) continue;
    const double seconds = double(t1 - t0) / cpu.tsc_hz;
    const double share = double(loops) * per_loop / (seconds * after.ghz * 1e9) / per_cycle;
    spdlog::trace("sustained roof {}: {:.3f} ms at {:.3f} a cycle of {:.3f} GHz read after: share {:.4f}", form_text,
                  seconds * 1e3, share * per_cycle, after.ghz, share);
    if (share > best) best = share, out.ghz_after = after.ghz, out.run_ms = seconds * 1e3;
  }
  if (best <= 0) return fail("no run could be read against the clock");
  // A share above 1 is the clock moving up between a run and its reading: the roof keeps its rate.
  out.measured = best;
  out.share = std::min(best, 1.0);
  spdlog::debug("sustained roof {}: keeps {:.1f}% of its probed {:.3f} a cycle over {:.2f} ms runs (clock read "
                "right after: {:.2f} GHz)",
                form_text, out.share * 100, per_cycle, out.run_ms, out.ghz_after);
  return out;
}

}  // namespace peakprobe
