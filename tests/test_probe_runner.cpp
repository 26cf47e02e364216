// Hardware tests: physical invariants of modern x86-64 cores, with tolerances. They run the real
// harness on this machine; nothing here is a value hard-coded for one CPU model.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <thread>

#include "cpu/cpu_info.hpp"
#include "hw_fixture.hpp"
#include "skip.hpp"
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

// A row the harness itself mistrusted after all its attempts (the core shared with a busy sibling
// thread, the clock moving) cannot check a physical invariant: the test says so and skips.
#define REQUIRE_OK_OR_SKIP(r) \
  do { \
    if ((r).status == Status::mistrusted) PP_SKIP((r).instruction << " stayed mistrusted: " << (r).reason); \
    REQUIRE_STATUS(r, Status::ok); \
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
  REQUIRE_OK_OR_SKIP(r);
  REQUIRE(r.latency_cycles);
  CHECK(*r.latency_cycles == Approx(1.0).margin(0.07));
  // Every x86-64 core since the Pentium Pro has at least two integer ALUs.
  CHECK(*r.recip_throughput_cycles <= 0.55);
}

TEST_CASE("hw: imul r64, r64 is a 3-cycle chain and its throughput is bounded by its own chains",
          "[hw][probe_runner]") {
  ProbeResult r = measure("imul r64, r64");
  REQUIRE_OK_OR_SKIP(r);
  // Three times the 1-cycle ruler on every x86-64 core since the Pentium Pro.
  CHECK(*r.latency_cycles == Approx(3.0).epsilon(0.07).margin(0.2));
  const double rt = *r.recip_throughput_cycles;
  // K chains cannot finish faster than one chain's latency over K, nor slower than one chain.
  CHECK(rt * r.accumulators >= 0.93 * *r.latency_cycles);
  CHECK(rt <= 1.07 * *r.latency_cycles);
  // The sweep went on while chains were the limit: either K covers latency x rate, or the
  // register file stopped it and the row says so.
  const bool enough_chains = r.accumulators * rt >= 0.85 * *r.latency_cycles * 0.999 &&
                             r.accumulators >= int(std::floor(*r.latency_cycles / rt * 0.9));
  CHECK((enough_chains || r.chains_limited_by_registers));
}

TEST_CASE("hw: at least two vector loads per cycle", "[hw][probe_runner]") {
  ProbeResult r = measure(cpu().has("avx") ? "vmovups xmm, m128" : "movups xmm, m128");
  REQUIRE_OK_OR_SKIP(r);
  // Every x86-64 core since Sandy Bridge and Zen 1 has two load ports.
  CHECK(*r.recip_throughput_cycles <= 0.55);
}

TEST_CASE("hw: a latency chain is never faster than the same instruction's throughput", "[hw][probe_runner]") {
  for (const char* text : {"imul r64, r64", "popcnt r64, r64", "vaddps xmm, xmm, xmm"}) {
    ProbeResult r = measure(text);
    if (r.status == Status::skipped) continue;
    REQUIRE_OK_OR_SKIP(r);
    CHECK(*r.latency_cycles >= 0.93 * *r.recip_throughput_cycles);
  }
}

TEST_CASE("hw: no ok figure beats what this core was seen to issue", "[hw][probe_runner]") {
  // The widest rate of these is the core's own measured issue limit; every other form must stay
  // under it (or be mistrusted), whatever the clock did meanwhile.
  double widest = 0;
  for (const char* text : {"nop", "mov r64, r64", "add r64, r64"}) {
    ProbeResult r = measure(text);
    if (r.status == Status::ok) widest = std::max(widest, *r.throughput_ipc);
  }
  if (widest <= 0) PP_SKIP("the issue-width forms stayed mistrusted on this machine");
  for (const char* text : {"imul r64, r64", "vaddps xmm, xmm, xmm", "mov r64, m64", "xor r64, r64"}) {
    ProbeResult r = measure(text);
    if (r.status != Status::ok) continue;
    INFO(text << ": " << *r.throughput_ipc << " instructions/cycle, widest " << widest);
    CHECK(*r.throughput_ipc <= widest * 1.05);
  }
}

TEST_CASE("hw: stack and flag forms are measured balanced, the harness survives", "[hw][probe_runner]") {
  for (const char* text : {"pop r64", "pop r16", "pop m64", "push r64", "push imm8", "pushf", "popf", "std",
                           "enter imm16, imm8", "leave"}) {
    ProbeResult r = measure(text);
    INFO(text << ": " << to_string(r.status) << " " << r.reason << " / " << r.latency_method);
    REQUIRE(r.status != Status::error);
    CHECK(r.latency_method.find("balanced with") == 0);
    CHECK_FALSE(r.latency_cycles);
    REQUIRE(r.recip_throughput_cycles);
    // Every pair stores once (push, pushf, enter, or std/cld's flag write is no store: see below),
    // and no x86 core stores more than 3 times per cycle: a pair takes at least 1/3 cycle, so each
    // instruction at least 1/6. (std/cld serialise on the flags and are far slower.)
    CHECK(*r.recip_throughput_cycles >= 1.0 / 6 * 0.95);
  }
  // State loads are measured with the state restored after the stream: ldmxcsr loads a valid value.
  ProbeResult ld = measure("ldmxcsr m32");
  INFO("ldmxcsr m32: " << to_string(ld.status) << " " << ld.reason);
  CHECK(ld.status != Status::error);
  // The harness still works after all of them.
  ProbeResult after = measure("add r64, r64");
  CHECK(after.status != Status::error);
}

TEST_CASE("hw: x87, MMX and SSE control state set by a probe does not leak into the process",
          "[hw][probe_runner]") {
  auto control_word = [] {
    uint16_t cw = 0;
    asm volatile("fnstcw %0" : "=m"(cw));
    return cw;
  };
  // The control bits only (rounding, flush-to-zero, masks, DAZ): bits 0-5 are sticky exception
  // flags that any inexact SSE arithmetic of this process sets.
  auto mxcsr = [] {
    uint32_t v = 0;
    asm volatile("stmxcsr %0" : "=m"(v));
    return v & ~0x3Fu;
  };
  const uint16_t cw_before = control_word();
  const uint32_t mxcsr_before = mxcsr();
  for (const char* text : {"fldcw m16", "fninit", "ldmxcsr m32", "fld1", "fldz"}) {
    ProbeResult r = measure(text);
    INFO(text << ": " << to_string(r.status) << " " << r.reason);
    CHECK(r.status != Status::error);
    CHECK(control_word() == cw_before);
    CHECK(mxcsr() == mxcsr_before);
    // x87 arithmetic still works: a stream that left the x87 registers tagged in use (fld1 pushes
    // without popping) would turn this into a NaN (stack overflow on the first load).
    volatile long double a = 1.5L, b = 2.25L;
    CHECK(double(a * b) == 3.375);
  }
}

TEST_CASE("hw: forms that leave the process or move reserved registers are refused, not run",
          "[hw][probe_runner]") {
  for (const char* text : {"syscall", "int3", "hlt", "wrfsbase r64", "add rdi, imm8", "xor rsi, rsi",
                           "maskmovdqu xmm, xmm", "movsb"}) {
    ProbeResult r = measure(text);
    INFO(text << ": " << to_string(r.status) << " " << r.reason);
    CHECK(r.status != Status::ok);
    if (r.status == Status::skipped) CHECK(r.reason.find("refused before running") == 0);
    CHECK_FALSE(r.recip_throughput_cycles);
  }
}

TEST_CASE("hw: a movbe pointer chase follows the pointer it byte-swaps back", "[hw][probe_runner]") {
  if (!cpu().has("movbe")) PP_SKIP("this CPU has no movbe");
  ProbeResult r = measure("movbe r64, m64");
  REQUIRE(r.status != Status::error);
  REQUIRE(r.latency_cycles);
  CHECK(r.latency_method == "pointer chase (load-to-use)");
  CHECK(*r.latency_cycles >= 2.0);  // a load is never faster than the L1 hit time
}

TEST_CASE("hw: FMA peak is consistent with its own throughput and clock", "[hw][probe_runner]") {
  if (!cpu().has("fma")) PP_SKIP("this CPU has no FMA");
  ProbeResult r = measure("vfmadd231ps ymm, ymm, ymm", 16, "f32");
  REQUIRE_OK_OR_SKIP(r);
  REQUIRE(r.gflops);
  CHECK(*r.gflops == Approx(16.0 / *r.recip_throughput_cycles * r.clock.ghz).epsilon(1e-9));
  CHECK(*r.latency_cycles >= 3.0);
  CHECK(*r.recip_throughput_cycles <= 1.05);  // every FMA core issues at least one 256-bit FMA per cycle
}

TEST_CASE("hw: features the CPU lacks are skipped and named, never executed", "[hw][probe_runner]") {
  const char* absent = nullptr;
  if (!cpu().has("amx_bf16")) absent = "tdpbf16ps tmm, tmm, tmm";
  else if (!cpu().has("avx512_fp16")) absent = "vaddph zmm, zmm, zmm";
  if (!absent) PP_SKIP("this CPU has every feature the test would probe without");
  ProbeResult r = measure(absent);
  CHECK(r.status == Status::skipped);
  CHECK(r.reason.find("needs") != std::string::npos);
  CHECK_FALSE(r.latency_cycles);
}

TEST_CASE("hw: stores report throughput only, with the reason", "[hw][probe_runner]") {
  ProbeResult r = measure("mov m64, r64");
  REQUIRE_OK_OR_SKIP(r);
  CHECK_FALSE(r.latency_cycles);
  CHECK(r.reason.find("throughput only") != std::string::npos);
  CHECK(*r.recip_throughput_cycles <= 1.05);
}

TEST_CASE("hw: every result carries its repro line and clock", "[hw][probe_runner]") {
  ProbeResult r = measure("add r64, r64");
  CHECK(r.repro.find("peakprobe inst \"add r64, r64\" --cpu ") == 0);
  CHECK(r.clock.ghz > 0);
  // Both ends of the probe are reported; how far they differ is the host's doing (a paired row is
  // not judged by it), so only its form is checked.
  CHECK(r.clock.ghz_before > 0);
  CHECK(r.clock.ghz_after > 0);
  CHECK(std::isfinite(r.clock.drift));
  CHECK(r.clock.drift >= 0);
}

TEST_CASE("hw: threads run the same stream on several cores at once", "[hw][probe_runner]") {
  if (cpu().core_order.size() < 2) PP_SKIP("one core only");
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
    PP_SKIP("the threaded run stayed mistrusted: " << r.reason);
  }
  // Separate cores do not share a multiplier: each keeps its single-core rate (within VM noise). A
  // VM's two CPUs may be hyper-threads of one host core, which do share it: then this cannot be
  // checked here.
  if (*r.total_gops <= 1.6 * *r.gops)
    PP_SKIP("the CPUs share one core's multiplier (SMT siblings on the host?): " << *r.total_gops << " vs "
                                                                                   << *r.gops << " GOP/s");
  for (double rt : r.per_thread_recip_throughput) CHECK(rt == Approx(*r.recip_throughput_cycles).epsilon(0.15));
}

// The trust rules themselves, on made-up inputs (no hardware involved).
#include "harness/probe_runner_impl.hpp"

TEST_CASE("a moving clock spoils an unpaired timing, not a paired one", "[probe_runner]") {
  ProbeOptions options;
  detail::TrustInputs in;
  in.before = {0.75, 3.20, 0.001};
  in.after = {0.78, 3.08, 0.001};  // 3.8% slower after the probe than before it
  in.ipc = 1.0;
  in.overhead = 0.05;
  auto unpaired = detail::timing_doubts(in, options);
  REQUIRE(unpaired.size() == 1);
  CHECK(unpaired[0].find("drifted") != std::string::npos);
  in.clean_samples = 40;  // paired: every sample carried its own clock
  in.slowed_samples = 2;
  CHECK(detail::timing_doubts(in, options).empty());
  // The ruler still judges the samples themselves.
  in.clean_samples = 3;
  in.slowed_samples = 30;
  in.slowdown = 0.4;
  auto slowed = detail::timing_doubts(in, options);
  REQUIRE(slowed.size() == 1);
  CHECK(slowed[0].find("slowed in 30 of 33") != std::string::npos);
}

TEST_CASE("an issue rate beyond the core's widest is doubted whatever the clock", "[probe_runner]") {
  ProbeOptions options;
  detail::TrustInputs in;
  in.before = in.after = {0.75, 3.2, 0.001};
  in.overhead = 0.05;
  in.clean_samples = 40;
  in.issue_width = 4.0;
  in.ipc = 4.1;
  CHECK(detail::timing_doubts(in, options).empty());  // within the tolerance
  in.ipc = 4.6;
  REQUIRE(detail::timing_doubts(in, options).size() == 1);
}

TEST_CASE("timings of one stream that no second timing reproduces are doubted", "[probe_runner]") {
  ProbeOptions options;
  detail::TrustInputs in;
  in.before = in.after = {0.75, 3.2, 0.001};
  in.overhead = 0.05;
  in.ipc = 2.0;
  in.clean_samples = 40;
  in.repeat_disagreement = 0.04;  // the nearest other layout within 5%: one odd layout outvoted
  CHECK(detail::timing_doubts(in, options).empty());
  in.repeat_disagreement = 0.07;
  auto d = detail::timing_doubts(in, options);
  REQUIRE(d.size() == 1);
  CHECK(d[0].find("disagree") != std::string::npos);
}

TEST_CASE("retries: every item once, then the doubtful ones in rounds, and a stop keeps a prefix", "[probe_runner]") {
  struct Row {
    Status status = Status::ok;
    std::string reason;
  };
  // Item 1 is doubtful twice, then trusted; item 3 stays doubtful.
  std::vector<int> calls(4, 0);
  std::vector<std::pair<size_t, Status>> seen;
  auto once = [&](size_t i) {
    ++calls[i];
    Row r;
    if ((i == 1 && calls[i] < 3) || i == 3) r.status = Status::mistrusted;
    return r;
  };
  std::vector<size_t> order;
  auto rows = detail::measure_with_retries<Row>(
      4, once, [&](size_t i) { order.push_back(i); }, [&](size_t i, const Row& r) { seen.emplace_back(i, r.status); });
  REQUIRE(rows.size() == 4);
  CHECK(order == std::vector<size_t>{0, 1, 2, 3});  // first attempts in order, each started once
  CHECK(calls == std::vector<int>{1, 3, 1, detail::kAttempts});
  CHECK(rows[1].status == Status::ok);
  CHECK(rows[3].status == Status::mistrusted);
  CHECK(rows[3].reason.find(std::to_string(detail::kAttempts) + " attempts") != std::string::npos);
  CHECK(seen.size() == size_t(1 + 3 + 1 + detail::kAttempts));  // every attempt reported
  // The first pass ends before any retry: all four first attempts come first.
  for (size_t k = 0; k < 4; ++k) CHECK(seen[k].first == k);

  // A stop after two first attempts: two rows, nothing retried.
  std::fill(calls.begin(), calls.end(), 0);
  int asked = 0;
  auto part = detail::measure_with_retries<Row>(4, once, {}, {}, [&] { return ++asked > 2; });
  CHECK(part.size() == 2);
  CHECK(calls == std::vector<int>{1, 1, 0, 0});
}

TEST_CASE("retries: a round that cures almost nothing ends the retries of a large batch", "[probe_runner]") {
  struct Row {
    Status status = Status::ok;
    std::string reason;
  };
  // Every item doubtful every time (a sibling thread busy all along): one retry round tells.
  const size_t n = detail::kPersistentRoundItems;
  std::vector<int> calls(n, 0);
  auto always = [&](size_t i) {
    ++calls[i];
    return Row{Status::mistrusted, "slowed"};
  };
  auto rows = detail::measure_with_retries<Row>(n, always, {});
  for (size_t i = 0; i < n; ++i) CHECK(calls[i] == 2);
  CHECK(rows[0].reason.find("2 attempts") != std::string::npos);
  // A small batch (an `inst` of a few forms) keeps every attempt: one round says little there.
  std::vector<int> few(3, 0);
  auto small = detail::measure_with_retries<Row>(3, [&](size_t i) { ++few[i]; return Row{Status::mistrusted, ""}; }, {});
  CHECK(few == std::vector<int>(3, detail::kAttempts));
  // A round that cures enough goes on to the next.
  std::vector<int> some(n, 0);
  auto cured_some = detail::measure_with_retries<Row>(
      n, [&](size_t i) { return Row{++some[i] == 2 && i % 2 == 0 ? Status::ok : Status::mistrusted, ""}; }, {});
  CHECK(some[1] == detail::kAttempts);
  CHECK(some[0] == 2);
}
