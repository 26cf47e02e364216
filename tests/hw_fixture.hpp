// Shared by the hardware tests: this machine's description and one warmed-up probe runner per test
// process (creating a runner pins the thread and calibrates the clock, so it is done once).
#pragma once
#include <memory>

#include <catch2/catch.hpp>

#include "cpu/cpu_info.hpp"
#include "harness/probe_runner.hpp"

namespace peakprobe::test {

inline const CpuInfo& this_cpu() {
  static CpuInfo c = detect_cpu_info();
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

}  // namespace peakprobe::test
