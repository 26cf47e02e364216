// Hardware tests: physical invariants of modern x86-64 cores, with tolerances. They run the real
// harness on this machine; nothing here is a value hard-coded for one CPU model.
#include <catch2/catch.hpp>

#include <thread>

#include "cpu/cpu_info.hpp"
#include "hw_fixture.hpp"
#include "harness/probe_runner.hpp"

using namespace peakprobe;

namespace {

const CpuInfo& cpu() { return test::this_cpu(); }
ProbeRunner& runner() { return test::shared_runner(); }

ProbeResult measure(const std::string& text, double ops = 0, const std::string& dtype = "-") {
  ProbeSpec s;
  s.text = text;
  s.ops_per_instruction = ops;
  s.dtype = dtype;
  return runner().run(s);
}

// Fails with the result's own reason, so a mistrusted row explains itself.
#define REQUIRE_STATUS(r, want) \
  do { \
    INFO((r).instruction << ": " << to_string((r).status) << " " << (r).reason); \
    REQUIRE((r).status == (want)); \
  } while (0)

}  // namespace

TEST_CASE("hw: the calibrated clock is a plausible core clock", "[hw][probe_runner]") {
  const ClockReading& c = runner().start_clock();
  CHECK(c.ghz > 0.4);
  CHECK(c.ghz < 7.0);
  CHECK_FALSE(c.source.empty());
}

TEST_CASE("hw: a dependent register add takes one cycle", "[hw][probe_runner]") {
  ProbeResult r = measure("add r64, r64");
  REQUIRE_STATUS(r, Status::ok);
  REQUIRE(r.latency_cycles);
  CHECK(*r.latency_cycles == Approx(1.0).margin(0.07));
  // Every x86-64 core since the Pentium Pro has at least two integer ALUs.
  CHECK(*r.recip_throughput_cycles <= 0.55);
}

TEST_CASE("hw: imul r64, r64 has a 3-cycle latency and one-per-cycle throughput", "[hw][probe_runner]") {
  ProbeResult r = measure("imul r64, r64");
  REQUIRE_STATUS(r, Status::ok);
  CHECK(*r.latency_cycles == Approx(3.0).epsilon(0.07).margin(0.2));
  CHECK(*r.recip_throughput_cycles == Approx(1.0).epsilon(0.07));
  CHECK(r.accumulators >= 3);  // latency 3 at one per cycle needs at least three chains
}

TEST_CASE("hw: at least two vector loads per cycle", "[hw][probe_runner]") {
  ProbeResult r = measure(cpu().has("avx") ? "vmovups xmm, m128" : "movups xmm, m128");
  REQUIRE_STATUS(r, Status::ok);
  CHECK(*r.recip_throughput_cycles <= 0.55);
}

TEST_CASE("hw: a latency chain is never faster than the same instruction's throughput", "[hw][probe_runner]") {
  for (const char* text : {"imul r64, r64", "popcnt r64, r64", "vaddps xmm, xmm, xmm"}) {
    ProbeResult r = measure(text);
    if (r.status == Status::skipped) continue;
    REQUIRE_STATUS(r, Status::ok);
    CHECK(*r.latency_cycles >= 0.93 * *r.recip_throughput_cycles);
  }
}

TEST_CASE("hw: FMA peak is consistent with its own throughput and clock", "[hw][probe_runner]") {
  if (!cpu().has("fma")) return;
  ProbeResult r = measure("vfmadd231ps ymm, ymm, ymm", 16, "f32");
  REQUIRE_STATUS(r, Status::ok);
  REQUIRE(r.gflops);
  CHECK(*r.gflops == Approx(16.0 / *r.recip_throughput_cycles * r.clock.ghz).epsilon(1e-9));
  CHECK(*r.latency_cycles >= 3.0);
  CHECK(*r.recip_throughput_cycles <= 1.05);  // every FMA core issues at least one 256-bit FMA per cycle
}

TEST_CASE("hw: features the CPU lacks are skipped and named, never executed", "[hw][probe_runner]") {
  const char* absent = nullptr;
  if (!cpu().has("amx_bf16")) absent = "tdpbf16ps tmm, tmm, tmm";
  else if (!cpu().has("avx512_fp16")) absent = "vaddph zmm, zmm, zmm";
  if (!absent) return;
  ProbeResult r = measure(absent);
  CHECK(r.status == Status::skipped);
  CHECK(r.reason.find("needs") != std::string::npos);
  CHECK_FALSE(r.latency_cycles);
}

TEST_CASE("hw: stores report throughput only, with the reason", "[hw][probe_runner]") {
  ProbeResult r = measure("mov m64, r64");
  REQUIRE_STATUS(r, Status::ok);
  CHECK_FALSE(r.latency_cycles);
  CHECK(r.reason.find("throughput only") != std::string::npos);
  CHECK(*r.recip_throughput_cycles <= 1.05);
}

TEST_CASE("hw: every result carries its repro line and clock", "[hw][probe_runner]") {
  ProbeResult r = measure("add r64, r64");
  CHECK(r.repro.find("peakprobe inst \"add r64, r64\" --cpu ") == 0);
  CHECK(r.clock.ghz > 0);
  CHECK(r.clock.drift < 0.05);
}

TEST_CASE("hw: threads run the same stream on several cores at once", "[hw][probe_runner]") {
  if (cpu().core_order.size() < 2) return;
  ProbeOptions o;
  o.threads = 2;
  auto made = ProbeRunner::create(cpu(), o);
  REQUIRE(made.ok());
  ProbeSpec s;
  s.text = "imul r64, r64";
  s.ops_per_instruction = 1;
  s.dtype = "i64";
  ProbeResult r = (*made)->run(s);
  REQUIRE(r.status != Status::error);
  CHECK(r.threads == 2);
  REQUIRE(r.per_thread_recip_throughput.size() == 2);
  REQUIRE(r.total_gops);
  if (r.status == Status::mistrusted) {
    // Interference that outlasted every re-measurement must be said, not hidden.
    CHECK(!r.reason.empty());
    return;
  }
  // Separate cores do not share a multiplier: each keeps its single-core rate (within VM noise).
  for (double rt : r.per_thread_recip_throughput) CHECK(rt == Approx(*r.recip_throughput_cycles).epsilon(0.15));
  CHECK(*r.total_gops > 1.6 * *r.gops);
}
