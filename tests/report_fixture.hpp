// Shared by the reporter tests: one fixed RunDocument with every row shape a reporter must handle,
// and byte-for-byte comparison with golden files in tests/golden/.
//
// After an intended format change, rewrite the golden files instead of comparing:
//   PEAKPROBE_UPDATE_GOLDEN=1 build/tests/peakprobe_tests "[report]"
// then review the diff of tests/golden/ like any other change.
#pragma once
#include <catch2/catch.hpp>

#include <cstdlib>
#include <fstream>
#include <iterator>
#include <limits>
#include <string>

#include "peakprobe/run_document.hpp"

namespace peakprobe::test {

inline CpuInfo fixture_host() {
  CpuInfo h;
  h.vendor = "Intel";
  h.brand = "Intel(R) Xeon(R) Platinum 8480+";
  h.family = 6;
  h.model = 143;
  h.stepping = 8;
  h.hypervisor = true;
  h.isa_state = {{"xcr0", 0x2e7, false}, {"os_avx", 1, true}, {"os_avx512", 1, true}, {"os_amx", 0, true}};
  h.features = {"sse2", "avx", "avx2", "fma", "avx512_f", "avx512_vl"};
  h.os_disabled = {"amx_tile"};
  h.logical_cpus = 8;
  h.physical_cores = 4;
  h.packages = 1;
  h.smt_per_core = 2;
  h.core_order = {0, 2, 4, 6, 1, 3, 5, 7};
  h.caches = {{1, "data", 48 * 1024, 64, 12, 2, 4},
              {1, "instruction", 32 * 1024, 64, 8, 2, 4},
              {2, "unified", 2 * 1024 * 1024, 64, 16, 2, 4},
              {3, "unified", 105 * 1024 * 1024, 64, 15, 8, 1}};
  h.tsc_hz = 2.0e9;
  h.tsc_invariant = true;
  return h;
}

inline ClockReading fixture_clock() { return {"tsc + add-chain calibration", 3.65, 3.649, 3.651, 0.000548}; }

inline ProbeResult fp_ok_row() {
  ProbeResult r;
  r.instruction = "vfmadd231ps zmm, zmm, zmm";
  r.group = "fma";
  r.dtype = "f32";
  r.origin = "builtin";
  r.latency_cycles = 4.0;
  r.latency_method = "chain through dest";
  r.recip_throughput_cycles = 0.5;
  r.throughput_ipc = 2.0;
  r.ops_per_instruction = 32;
  r.gflops = 233.6;
  r.accumulators = 8;
  r.cpu = 0;
  r.throughput_stats = {0.5, 0.5012, 0.5101, 0.0084, 7};
  r.latency_stats = {4.0, 4.0021, 4.013, 0.0025, 7};
  r.clock = fixture_clock();
  r.repro = "peakprobe inst \"vfmadd231ps zmm, zmm, zmm\"";
  return r;
}

// Two threads: per-thread figures and all-core totals are filled.
inline ProbeResult int_ok_row() {
  ProbeResult r;
  r.instruction = "vpaddd ymm, ymm, ymm";
  r.group = "int-simd";
  r.dtype = "i32";
  r.origin = "builtin";
  r.latency_cycles = 1.0;
  r.latency_method = "chain through dest";
  r.latencies = {{2, "ymm", 1.0, "chain through operand 2", false}, {3, "ymm", 1.02, "chain through operand 3", false}};
  r.recip_throughput_cycles = 1.0 / 3.0;
  r.throughput_ipc = 3.0;
  r.ops_per_instruction = 8;
  r.gops = 87.6;
  r.accumulators = 12;
  r.threads = 2;
  r.total_gops = 175.2;
  r.per_thread_recip_throughput = {0.33334, 0.33341};
  r.per_thread_core = {0, 1};
  r.threads_shortfall = -0.00012;
  r.cpu = 0;
  r.throughput_stats = {1.0 / 3.0, 0.3341, 0.3399, 0.0151, 7};
  r.latency_stats = {1.0, 1.0004, 1.002, 0.0011, 7};
  r.clock = {"tsc + add-chain calibration", 3.6497, 3.6491, 3.6503, 0.000329};
  r.repro = "peakprobe inst \"vpaddd ymm, ymm, ymm\" --threads 2";
  return r;
}

inline ProbeResult skipped_row() {
  ProbeResult r;
  r.instruction = "vfmadd231ph zmm, zmm, zmm";
  r.group = "fma";
  r.dtype = "f16";
  r.origin = "builtin";
  r.ops_per_instruction = 64;
  r.status = Status::skipped;
  r.reason = "needs avx512_fp16";
  r.repro = "peakprobe inst \"vfmadd231ph zmm, zmm, zmm\"";
  return r;
}

// Its latency spread is NaN (as 0/0 would give) to prove no reporter prints "nan".
inline ProbeResult mistrusted_row() {
  ProbeResult r;
  r.instruction = "div r64";
  r.group = "int-scalar";
  r.dtype = "i64";
  r.origin = "x86.catalog:42";
  r.latency_cycles = 13.71;
  r.latency_method = "chain through dest";
  r.recip_throughput_cycles = 13.52;
  r.throughput_ipc = 0.0739645;
  r.ops_per_instruction = 1;
  r.gops = 0.27;
  r.accumulators = 4;
  r.cpu = 2;
  r.throughput_stats = {13.52, 14.9, 18.3, 0.2485, 7};
  r.latency_stats = {13.71, 14.05, 15.2, std::numeric_limits<double>::quiet_NaN(), 7};
  r.clock = fixture_clock();
  r.status = Status::mistrusted;
  r.reason = "spread 24.9% over 7 runs (limit 5%)";
  r.repro = "peakprobe inst \"div r64\"";
  return r;
}

// Its reason holds a comma, a quote and a pipe; its clock drift is infinite.
inline ProbeResult error_row() {
  ProbeResult r;
  r.instruction = "vpgatherdd ymm, [rax+ymm*4], ymm";
  r.group = "gather";
  r.dtype = "i32";
  r.origin = "x86.catalog:77";
  r.ops_per_instruction = 8;
  r.cpu = 0;
  r.clock = {"tsc + add-chain calibration", 3.65, 3.65, 0, std::numeric_limits<double>::infinity()};
  r.status = Status::error;
  r.reason = "probe crashed, SIGSEGV in \"vpgatherdd\" | operand 2";
  r.repro = "peakprobe inst \"vpgatherdd ymm, [rax+ymm*4], ymm\"";
  return r;
}

inline RunDocument report_fixture() {
  RunDocument d;
  d.command = "peakprobe run --json out.json";
  d.version = "0.1.0";
  d.started_utc = "2024-05-01T12:00:00Z";
  d.host = fixture_host();
  d.clock = fixture_clock();
  d.results = {fp_ok_row(), int_ok_row(), skipped_row(), mistrusted_row(), error_row()};
  return d;
}

inline std::string golden_path(const std::string& name) {
  return std::string(PEAKPROBE_SOURCE_DIR) + "/tests/golden/" + name;
}

inline bool updating_golden() {
  const char* v = std::getenv("PEAKPROBE_UPDATE_GOLDEN");
  return v != nullptr && std::string(v) == "1";
}

// Compares with tests/golden/<name>, or rewrites it when PEAKPROBE_UPDATE_GOLDEN=1.
inline void check_golden(const std::string& name, const std::string& actual) {
  const std::string path = golden_path(name);
  if (updating_golden()) {
    std::ofstream(path, std::ios::binary) << actual;
    WARN("rewrote " << path);
    return;
  }
  std::ifstream in(path, std::ios::binary);
  INFO("golden file " << path << " (PEAKPROBE_UPDATE_GOLDEN=1 rewrites it)");
  REQUIRE(in.good());
  const std::string expected((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CHECK(actual == expected);
}

}  // namespace peakprobe::test
