// Tests for asm/x86/probe_form.cpp: the x86 forms and streams behind isa::ProbeForm / ProbeStream
// answer as the x86 planner and state rules do, and prepare the constants and buffer each stream loads.
#include <catch2/catch.hpp>

#include <cstring>

#include "asm/target.hpp"
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
