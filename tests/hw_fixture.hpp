// Shared by the hardware tests: this machine's description and one warmed-up probe runner per test
// process (creating a runner pins the thread and calibrates the clock, so it is done once).
#pragma once
#include <algorithm>
#include <cstdint>
#include <memory>

#include <catch2/catch.hpp>

#include "cpu/cpu_info.hpp"
#include "harness/probe_runner.hpp"
#include "harness/quiet_core.hpp"
#include "skip.hpp"

namespace peakprobe::test {

// This machine, its cores ordered quietest first as the measuring commands order them: a VM whose host
// keeps one vCPU busy (the first, on the 16-vCPU Emerald Rapids device: wide/chain ratio 0.88-1.84
// against 0.61-0.71 on the others) would otherwise have every hardware test measure on that one,
// where its rows stay mistrusted and the tests skip (13 of them there).
inline const CpuInfo& this_cpu() {
  static CpuInfo c = [] {
    CpuInfo info = detect_cpu_info();
    order_cores_quietest_first(info);
    return info;
  }();
  return c;
}

inline ProbeRunner& shared_runner() {
  static std::unique_ptr<ProbeRunner> r = [] {
    auto made = ProbeRunner::create(this_cpu(), ProbeOptions{});
    if (!made) FAIL("cannot create the probe runner: " << made.error());
    return std::move(made.value());
  }();
  return *r;
}

// One instance of the data (or unified) cache of this level as the OS reports it; 0 when none is.
inline std::uint64_t data_cache_bytes(const CpuInfo& cpu, int level) {
  for (const auto& c : cpu.caches)
    if (c.level == level && (c.type == "data" || c.type == "unified")) return c.size_bytes;
  return 0;
}

// The largest cache instance the OS reports (the last level); 0 when none is.
inline std::uint64_t largest_cache_bytes(const CpuInfo& cpu) {
  std::uint64_t most = 0;
  for (const auto& c : cpu.caches) most = std::max(most, c.size_bytes);
  return most;
}

// A form to measure: its text, operations per instruction and their dtype.
inline ProbeSpec spec(const std::string& text, double ops = 0, const std::string& dtype = "-") {
  ProbeSpec s;
  s.text = text;
  s.ops_per_instruction = ops;
  s.dtype = dtype;
  return s;
}

// One form measured by the shared runner.
inline ProbeResult measure_form(const std::string& text, double ops = 0, const std::string& dtype = "-") {
  return shared_runner().run(spec(text, ops, dtype));
}

// Noise on a shared VM only ever slows a stream down, and kernel threads (huge-page compaction after
// the memory tests) can disturb a whole measurement; an invariant of the undisturbed machine holds
// if one of a few attempts shows it.
template <typename F>
bool in_one_of(int attempts, F&& attempt) {
  for (int i = 0; i < attempts; ++i)
    if (attempt()) return true;
  return false;
}

}  // namespace peakprobe::test

// Fails with the result's own reason, so a mistrusted row explains itself.
#define REQUIRE_STATUS(r, want) \
  do { \
    INFO((r).instruction << ": " << to_string((r).status) << " " << (r).reason); \
    REQUIRE((r).status == (want)); \
  } while (0)

// A row the harness itself mistrusted after all its attempts (the core shared with a busy sibling
// thread, the clock moving) cannot check a physical invariant: the test says so and skips.
#define REQUIRE_OK_OR_SKIP(r) \
  do { \
    if ((r).status == peakprobe::Status::mistrusted) PP_SKIP((r).instruction << " stayed mistrusted: " << (r).reason); \
    REQUIRE_STATUS(r, peakprobe::Status::ok); \
  } while (0)
