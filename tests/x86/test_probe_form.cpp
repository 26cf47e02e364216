// Tests for asm/x86/probe_form.cpp: the x86 forms and streams behind isa::ProbeForm / ProbeStream
// answer as the x86 planner and state rules do, and prepare the constants and buffer each stream loads.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>

#include "asm/target.hpp"
#include "hw_fixture.hpp"
#include "memory/mem_runner.hpp"
#include "skip.hpp"
#include "asm/x86/probe_form.hpp"
#include "asm/x86/state_forms.hpp"
#include "asm/x86/stream_emitter.hpp"
#include "x86/cpu_with.hpp"

using namespace peakprobe;

namespace {

const CpuInfo& avx512_cpu() {
  static const CpuInfo c = test::cpu_with({"avx", "avx2", "fma", "avx512_f", "avx512_bw", "avx512_dq", "avx512_vl"});
  return c;
}

std::unique_ptr<isa::ProbeForm> probe_form(const char* text, const CpuInfo& cpu = avx512_cpu()) {
  auto f = isa::host_target().probe_form(text, cpu);
  INFO(text << ": " << (f ? "" : f.error()));
  REQUIRE(f.ok());
  return std::move(f.value());
}

}  // namespace

TEST_CASE("probe form: display, features, dtype and operands come from the resolved form", "[probe_form]") {
  auto f = probe_form("VFMADD231PS zmm, zmm, zmm");
  CHECK(f->display() == "vfmadd231ps zmm, zmm, zmm");
  CHECK(f->features() == x86::resolve_inst("vfmadd231ps zmm, zmm, zmm")->features);
  CHECK(f->default_dtype() == "f32");
  CHECK(probe_form("add r64, r64")->default_dtype() == "-");
  // x87 arithmetic with memory reads 1.0 of the float's width, or integer 1 of the integer's.
  CHECK(probe_form("fadd m64")->default_dtype() == "f64");
  CHECK(probe_form("fmul m32")->default_dtype() == "f32");
  CHECK(probe_form("fimul m32")->default_dtype() == "i32");
  CHECK(probe_form("fidiv m16")->default_dtype() == "i16");
  CHECK(f->operand_kind(2) == "zmm");
  CHECK(f->latency_operands() == x86::latency_operands(x86::resolve_inst("vfmadd231ps zmm, zmm, zmm").value()));
  auto bad = isa::host_target().probe_form("vfmadd231ps zmm, zmm", avx512_cpu());
  REQUIRE_FALSE(bad.ok());
  CHECK_FALSE(bad.error().empty());
}

TEST_CASE("probe form: the CPU's ISA level sets the registers a stream may use", "[probe_form]") {
  // EVEX forms get 32 vector registers only where AVX-512 is there to encode them.
  const auto evex = probe_form("vaddps xmm, xmm, xmm", avx512_cpu())->max_chains();
  const auto vex = probe_form("vaddps xmm, xmm, xmm", test::cpu_with({"avx"}))->max_chains();
  CHECK(evex == x86::max_chains(x86::resolve_inst("vaddps xmm, xmm, xmm").value()));
  CHECK(vex >= 8);
  auto tput = probe_form("vaddps xmm, xmm, xmm", avx512_cpu())->plan_throughput(evex, "f32");
  REQUIRE(tput.ok());
  CHECK(tput.value()->chains() == evex);
  CHECK(tput.value()->measured_per_copy() == evex);
}

TEST_CASE("probe form: immediates, refusals and companions follow the x86 rules", "[probe_form]") {
  auto shl = probe_form("shl r64, imm8");
  shl->set_immediates(5);
  auto plan = shl->plan_throughput(2, "-");
  REQUIRE(plan.ok());
  const auto& copy = static_cast<const x86::X86ProbeStream&>(*plan.value()).plan().copy;
  REQUIRE_FALSE(copy.empty());
  bool saw_five = false;
  for (const auto& inst : copy)
    for (const auto& op : inst.ops)
      if (op.isImm() && op.as<asmjit::Imm>().value() == 5) saw_five = true;
  CHECK(saw_five);

  CHECK(probe_form("syscall")->refusal().has_value());
  CHECK_FALSE(probe_form("add r64, r64")->refusal().has_value());
  auto push = probe_form("push r64")->companion();
  REQUIRE(push);
  CHECK(push->text == "pop r64");
  CHECK_FALSE(probe_form("add r64, r64")->companion());
}

TEST_CASE("probe form: latency plans carry the method, bridges and bounds", "[probe_form]") {
  auto add = probe_form("add r64, r64");
  auto lat = add->plan_latency("-");
  REQUIRE(lat.ok());
  CHECK(lat.value()->chains() == 1);
  CHECK(lat.value()->method() == "chain through the destination");
  CHECK(lat.value()->bridge_cycles() == 0);
  CHECK_FALSE(lat.value()->upper_bound());
  // A store has no register result to chain.
  CHECK_FALSE(probe_form("mov m64, r64")->plan_latency("-").ok());
  auto through = probe_form("mov r64, m64")->plan_latency_through(1, "-");
  REQUIRE(through.ok());
  CHECK(through.value()->bridge_cycles() > 0);  // the `and` that feeds the result to the address
}

TEST_CASE("probe stream: copies continue their chains unless they move on to fresh memory", "[probe_form]") {
  for (const char* text : {"add r64, r64", "vfmadd231ps zmm, zmm, m512", "mov m64, r64"}) {
    auto plan = probe_form(text)->plan_throughput(3, "-");
    REQUIRE(plan.ok());
    CHECK(plan.value()->copies_continue_chains());
  }
  // A read-modify-write of memory: each copy on lines of its own, so its register result (the old
  // memory value) starts anew in every copy.
  for (const char* text : {"xadd m64, r64", "add m64, r64"}) {
    auto plan = probe_form(text)->plan_throughput(3, "-");
    REQUIRE(plan.ok());
    CHECK_FALSE(plan.value()->copies_continue_chains());
  }
}

TEST_CASE("probe stream: prepare writes the dtype's constants and says how the buffer starts", "[probe_form]") {
  isa::ProbeConstants consts;
  std::memset(consts.bytes, 0xAB, sizeof(consts.bytes));
  auto fma = probe_form("vfmadd231ps zmm, zmm, zmm")->plan_throughput(4, "f32");
  REQUIRE(fma.ok());
  const isa::BufferFill f32 = fma.value()->prepare(consts, "f32");
  float one = 0;
  std::memcpy(&one, f32.pattern, 4);
  CHECK(one == 1.0f);
  CHECK(f32.chase_bits == 0);
  const auto& layout = *reinterpret_cast<const x86::ConstantsLayout*>(consts.bytes);
  CHECK(std::memcmp(layout.data, f32.pattern, 64) == 0);
  CHECK(layout.mxcsr != 0);

  // A 64-bit pointer chase: the buffer holds its own address; movbe's words are byte-swapped.
  auto chase = probe_form("mov r64, m64")->plan_latency("-");
  REQUIRE(chase.ok());
  CHECK(chase.value()->prepare(consts, "-").chase_bits == 64);
  auto swapped = probe_form("movbe r64, m64", test::cpu_with({"movbe"}))->plan_latency("-");
  REQUIRE(swapped.ok());
  CHECK(swapped.value()->prepare(consts, "-").chase_byteswap);

  // ldmxcsr loads the harness's own MXCSR from every buffer dword.
  auto ldmxcsr = probe_form("ldmxcsr m32")->plan_throughput(1, "-");
  REQUIRE(ldmxcsr.ok());
  const isa::BufferFill m = ldmxcsr.value()->prepare(consts, "-");
  for (int i = 0; i < 64; i += 4) {
    uint32_t v = 0;
    std::memcpy(&v, m.pattern + i, 4);
    CHECK(v == layout.mxcsr);
  }
}

TEST_CASE("probe form: mixes through the target interleave the parts and count rounds", "[probe_form]") {
  const isa::Target& t = isa::host_target();
  auto fma = probe_form("vfmadd231ps zmm, zmm, zmm");
  auto add = probe_form("vaddps zmm, zmm, zmm");
  std::vector<isa::MixPart> parts = {{fma.get(), 1}, {add.get(), 2}};
  const auto fa = x86::resolve_inst("vfmadd231ps zmm, zmm, zmm").value();
  const auto aa = x86::resolve_inst("vaddps zmm, zmm, zmm").value();
  CHECK(t.max_rounds(parts) == x86::max_rounds(std::vector<x86::MixEntry>{{&fa, 1}, {&aa, 2}}));
  auto plan = t.plan_mix(parts, 2, "f32");
  REQUIRE(plan.ok());
  CHECK(plan.value()->measured_per_copy() == 6);
  CHECK_FALSE(t.plan_mix({}, 1, "f32").ok());
}

// ---- on this machine, through the probe runner ----

namespace {

const CpuInfo& cpu() { return test::this_cpu(); }

ProbeResult measure(const std::string& text, double ops = 0, const std::string& dtype = "-") {
  return test::measure_form(text, ops, dtype);
}

}  // namespace

TEST_CASE("hw: a dependent add r64 takes one cycle and at least two issue per cycle", "[hw][probe_form]") {
  ProbeResult r = measure("add r64, r64");
  REQUIRE_OK_OR_SKIP(r);
  CHECK(*r.latency_cycles == Approx(1.0).margin(0.07));
  // Every x86-64 core since the Pentium Pro has at least two integer ALUs.
  CHECK(*r.recip_throughput_cycles <= 0.55);
}

TEST_CASE("hw: imul r64, r64 is a chain of a whole number of ruler cycles, at least three", "[hw][probe_form]") {
  ProbeResult r = measure("imul r64, r64");
  REQUIRE_OK_OR_SKIP(r);
  // A multiplier's latency is a whole number of core cycles: the chain must read as a multiple of
  // the 1-cycle ruler, whatever the core (3 on current cores, 4 to 6 on older and smaller ones).
  // No x86-64 core multiplies 64 bits in fewer than three.
  const double whole = std::round(*r.latency_cycles);
  INFO("latency " << *r.latency_cycles << " cycles");
  CHECK(whole >= 3);
  CHECK(*r.latency_cycles == Approx(whole).epsilon(0.07).margin(0.2));
}

TEST_CASE("hw: x86 latency chains are never faster than their throughput", "[hw][probe_form]") {
  int checked = 0;
  for (const char* text : {"popcnt r64, r64", "vaddps xmm, xmm, xmm", "mov r64, m64", "xor r64, r64"}) {
    ProbeResult r = measure(text);
    if (r.status != Status::ok || !r.latency_cycles) continue;
    ++checked;
    INFO(text);
    CHECK(*r.latency_cycles >= 0.93 * *r.recip_throughput_cycles);
  }
  if (checked == 0) PP_SKIP("no form with a latency was measured ok on this machine");
}

TEST_CASE("hw: a vector load stream runs as fast as this core's own L1 load kernel of that width",
          "[hw][probe_form]") {
  // Two measurements of the same load ports by different code: the form's independent loads, and the
  // bandwidth kernel streaming a working set that fits L1 with loads of the same width. A form stream
  // that serialised its loads (one address chained to the last, a bank conflict of its own making)
  // would read slower than the kernel; the kernel's loop overhead only ever makes it the slower one.
  // A neighbour on the host's load ports slows the loads without slowing the ALU ruler that would
  // mark the row (a VM's vCPU may share a core): the best of three measurements is the machine's.
  const char* text = cpu().has("avx") ? "vmovups xmm, m128" : "movups xmm, m128";
  ProbeResult r = measure(text);
  for (int again = 0; again < 2; ++again) {
    ProbeResult next = measure(text);
    if (r.status != Status::ok || (next.status == Status::ok && *next.recip_throughput_cycles < *r.recip_throughput_cycles))
      r = next;
  }
  REQUIRE_OK_OR_SKIP(r);
  // Every x86-64 core loads at least once a cycle.
  CHECK(*r.recip_throughput_cycles <= 1.05);
  const std::uint64_t l1 = test::data_cache_bytes(cpu(), 1);
  if (l1 == 0) PP_SKIP("the OS reports no L1 data cache to size the load kernel's working set by");
  auto runner = MemRunner::create(cpu(), -1);
  REQUIRE(runner);
  BandwidthResult best;
  for (int attempt = 0; attempt < 3; ++attempt) {
    BandwidthResult b = (*runner)->bandwidth({"load", 128, l1 / 2, 1});
    if (b.status == Status::ok && b.bytes_per_cycle && (!best.bytes_per_cycle || *b.bytes_per_cycle > *best.bytes_per_cycle))
      best = b;
  }
  if (!best.bytes_per_cycle) PP_SKIP("the 128-bit L1 load kernel stayed mistrusted on this machine");
  const double kernel_loads_per_cycle = *best.bytes_per_cycle / 16;
  INFO(text << ": " << *r.recip_throughput_cycles << " cycles; the L1 load kernel: " << kernel_loads_per_cycle
            << " 16-byte loads a cycle");
  CHECK(*r.recip_throughput_cycles <= 1.1 / kernel_loads_per_cycle);
}

TEST_CASE("hw: stack and flag forms are measured balanced, the harness survives", "[hw][probe_form]") {
  // This core's own store rate bounds the pairs that store: see below.
  const ProbeResult store = measure("mov m64, r64");
  for (const char* text : {"pop r64", "pop r16", "pop m64", "push r64", "push imm8", "pushf", "popf", "std", "fld m32",
                           "enter imm16, imm8", "leave"}) {
    ProbeResult r = measure(text);
    INFO(text << ": " << to_string(r.status) << " " << r.reason << " / " << r.latency_method);
    REQUIRE(r.status != Status::error);
    CHECK(r.latency_method.find("balanced with") == 0);
    CHECK_FALSE(r.latency_cycles);
    REQUIRE(r.recip_throughput_cycles);
    // Every pair stores once (push, pushf, enter; std/cld's flag write is no store, but they
    // serialise on the flags and are far slower): a pair takes at least the time of one store as
    // this core runs independent stores, so each instruction at least half of it.
    if (store.status == Status::ok) CHECK(*r.recip_throughput_cycles >= *store.recip_throughput_cycles / 2 * 0.93);
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
          "[hw][probe_form]") {
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
  // fsin on 1.0 sets the x87 precision flag; the fldcw after it loads a control word that unmasks
  // precision, and a flag left set would trap (SIGFPE) at its next x87 instruction.
  for (const char* text : {"fldcw m16", "fninit", "ldmxcsr m32", "fld1", "fldz", "fsin", "fldcw m16", "fdiv m64"}) {
    ProbeResult r = measure(text);
    INFO(text << ": " << to_string(r.status) << " " << r.reason);
    CHECK(r.status != Status::error);
    CHECK(control_word() == cw_before);
    CHECK(mxcsr() == mxcsr_before);
    // x87 arithmetic still works: a stream that left the x87 registers tagged in use (the 1.0 a
    // stack-top stream starts with) would turn this into a NaN (stack overflow on the first load).
    volatile long double a = 1.5L, b = 2.25L;
    CHECK(double(a * b) == 3.375);
  }
}

TEST_CASE("hw: forms that leave the process or move reserved registers are refused, not run",
          "[hw][probe_form]") {
  for (const char* text : {"syscall", "int3", "hlt", "wrfsbase r64", "add rdi, imm8", "xor rsi, rsi",
                           "maskmovdqu xmm, xmm", "movsb"}) {
    ProbeResult r = measure(text);
    INFO(text << ": " << to_string(r.status) << " " << r.reason);
    CHECK(r.status != Status::ok);
    if (r.status == Status::skipped) CHECK(r.reason.find("refused before running") == 0);
    CHECK_FALSE(r.recip_throughput_cycles);
  }
}

TEST_CASE("hw: a movbe pointer chase follows the pointer it byte-swaps back", "[hw][probe_form]") {
  if (!cpu().has("movbe")) PP_SKIP("this CPU has no movbe");
  ProbeResult r = measure("movbe r64, m64");
  REQUIRE(r.status != Status::error);
  REQUIRE(r.latency_cycles);
  CHECK(r.latency_method == "pointer chase (load-to-use)");
  CHECK(*r.latency_cycles >= 2.0);  // a load is never faster than the L1 hit time
}

TEST_CASE("hw: FMA peak is consistent with its own throughput and clock", "[hw][probe_form]") {
  if (!cpu().has("fma")) PP_SKIP("this CPU has no FMA");
  ProbeResult r = measure("vfmadd231ps ymm, ymm, ymm", 16, "f32");
  REQUIRE_OK_OR_SKIP(r);
  REQUIRE(r.gflops);
  CHECK(*r.gflops == Approx(16.0 / *r.recip_throughput_cycles * r.clock.ghz).epsilon(1e-9));
  CHECK(*r.latency_cycles >= 3.0);
  CHECK(*r.recip_throughput_cycles <= 1.05);  // every FMA core issues at least one 256-bit FMA per cycle
}

TEST_CASE("hw: features the CPU lacks are skipped and named, never executed", "[hw][probe_form]") {
  const char* absent = nullptr;
  if (!cpu().has("amx_bf16")) absent = "tdpbf16ps tmm, tmm, tmm";
  else if (!cpu().has("avx512_fp16")) absent = "vaddph zmm, zmm, zmm";
  if (!absent) PP_SKIP("this CPU has every feature the test would probe without");
  ProbeResult r = measure(absent);
  CHECK(r.status == Status::skipped);
  CHECK(r.reason.find("needs") != std::string::npos);
  CHECK_FALSE(r.latency_cycles);
}

TEST_CASE("hw: stores report throughput only, with the reason", "[hw][probe_form]") {
  ProbeResult r = measure("mov m64, r64");
  REQUIRE_OK_OR_SKIP(r);
  CHECK_FALSE(r.latency_cycles);
  CHECK(r.reason.find("throughput only") != std::string::npos);
  CHECK(*r.recip_throughput_cycles <= 1.05);
}

