#include <catch2/catch.hpp>

#include "asm/x86/inst_form.hpp"
#include "asm/x86/stream_plan.hpp"

#include <algorithm>
#include <optional>
#include <set>
#include <utility>
#include <vector>

using namespace peakprobe;

namespace {
x86::HostIsa avx512() {
  x86::HostIsa isa;
  isa.avx = isa.avx2 = isa.fma = isa.avx512f = isa.avx512bw = isa.avx512dq = true;
  return isa;
}
}  // namespace

TEST_CASE("dtype follows the mnemonic's suffix", "[stream_plan]") {
  CHECK(x86::infer_dtype("vfmadd231ps") == "f32");
  CHECK(x86::infer_dtype("vaddpd") == "f64");
  CHECK(x86::infer_dtype("vaddsd") == "f64");
  CHECK(x86::infer_dtype("vaddph") == "f16");
  CHECK(x86::infer_dtype("vdpbf16ps") == "bf16");
  CHECK(x86::infer_dtype("vpaddd") == "-");
}

TEST_CASE("register budget: EVEX forms get 32 vector registers, VEX forms 16", "[stream_plan]") {
  auto z = x86::resolve_inst("vfmadd231ps zmm, zmm, zmm");
  auto y = x86::resolve_inst("vfmadd231ps ymm, ymm, ymm");
  REQUIRE(z.ok());
  REQUIRE(y.ok());
  CHECK(x86::max_chains(z.value()) == 30);  // 32 minus two shared sources
  CHECK(x86::max_chains(y.value()) == 14);
  auto g = x86::resolve_inst("vgatherdps ymm, vm32y, ymm");
  REQUIRE(g.ok());
  CHECK(x86::max_chains(g.value()) == 7);  // each chain needs a destination and a mask; one index
}

TEST_CASE("register budget: at least 12 general-purpose chains when no reset value is needed", "[stream_plan]") {
  // 3-cycle multipliers x 3 units (Zen 5) need 9 chains; 1-cycle ALUs x 6 need 6; leave room.
  for (const char* text : {"add r64, r64", "imul r64, r64", "popcnt r64, r64"}) {
    auto f = x86::resolve_inst(text);
    REQUIRE(f.ok());
    INFO(text);
    CHECK(x86::max_chains(f.value()) >= 12);
    auto plan = x86::plan_throughput(f.value(), x86::max_chains(f.value()), x86::HostIsa{}, "-");
    REQUIRE(plan.ok());
    std::set<uint32_t> dests(plan->dest_ids.begin(), plan->dest_ids.end());
    CHECK(dests.size() == plan->dest_ids.size());  // every chain its own register
    CHECK(dests.count(asmjit::x86::Gp::kIdDi) == 0);   // never the loop counter
    CHECK(dests.count(asmjit::x86::Gp::kIdSi) == 0);   // nor the buffer
    CHECK(dests.count(asmjit::x86::Gp::kIdSp) == 0);
  }
  // div re-loads its dividend from r11 before each instance: r11 is not a chain register there.
  auto div = x86::resolve_inst("div r64");
  REQUIRE(div.ok());
  auto plan = x86::plan_throughput(div.value(), x86::max_chains(div.value()), x86::HostIsa{}, "-");
  REQUIRE(plan.ok());
  for (uint32_t id : plan->dest_ids) CHECK(id != uint32_t(asmjit::x86::Gp::kIdR11));
}

TEST_CASE("throughput plan: one measured instance per chain and resets for clobbered inputs", "[stream_plan]") {
  auto g = x86::resolve_inst("vgatherdps ymm, vm32y, ymm");
  REQUIRE(g.ok());
  auto plan = x86::plan_throughput(g.value(), 4, avx512(), "f32");
  REQUIRE(plan.ok());
  CHECK(plan->measured_per_copy == 4);
  int measured = 0, resets = 0;
  for (const auto& p : plan->copy) {
    measured += p.role == x86::PlannedInst::Role::measured;
    resets += p.role == x86::PlannedInst::Role::reset;
  }
  CHECK(measured == 4);
  CHECK(resets == 4);  // the AVX2 gather clears its mask: set again before every gather
  CHECK(plan->dest_ids.size() == 4);
  CHECK_FALSE(x86::plan_throughput(g.value(), 8, avx512(), "f32").ok());
}

TEST_CASE("throughput plan: div re-zeroes rdx so the quotient fits", "[stream_plan]") {
  auto d = x86::resolve_inst("div r64");
  REQUIRE(d.ok());
  auto plan = x86::plan_throughput(d.value(), 2, avx512(), "-");
  REQUIRE(plan.ok());
  bool zeroes_rdx = false;
  for (const auto& p : plan->copy)
    if (p.role == x86::PlannedInst::Role::reset && p.inst.id() == asmjit::x86::Inst::kIdXor) zeroes_rdx = true;
  CHECK(zeroes_rdx);
}

TEST_CASE("divide plans: dividends that fit, and a memory divisor of 1", "[stream_plan]") {
  // An 8-bit divide puts its quotient in al: the dividend ax is reset to a value below 128, not to
  // the wide reset value the other widths divide.
  auto b = x86::resolve_inst("idiv r8");
  REQUIRE(b.ok());
  auto tp = x86::plan_throughput(b.value(), 4, avx512(), "-");
  REQUIRE(tp.ok());
  int small_dividends = 0;
  for (const auto& p : tp->copy)
    if (p.role == x86::PlannedInst::Role::reset && p.inst.id() == asmjit::x86::Inst::kIdMov && p.ops.size() == 2 &&
        p.ops[1].isImm())
      if (p.ops[1].as<asmjit::Imm>().value() < 128) ++small_dividends;
  CHECK(small_dividends == 4);
  for (const auto& p : tp->copy)  // ax and dx are never the divisor
    if (p.role == x86::PlannedInst::Role::measured)
      CHECK(p.ops[1].id() != asmjit::x86::Gp::kIdAx);

  // Memory divisors read a constant 1 through one base register set up to point at it; the probe
  // buffer's pointer words could be 0 in their low bits.
  for (const char* text : {"div m8", "idiv m16", "div m32", "idiv m64"}) {
    INFO(text);
    auto f = x86::resolve_inst(text);
    REQUIRE(f.ok());
    for (bool latency : {false, true}) {
      auto plan = latency ? x86::plan_latency(f.value(), avx512(), "-") : x86::plan_throughput(f.value(), 3, avx512(), "-");
      REQUIRE(plan.ok());
      if (latency) CHECK(plan->method.find("divisor 1 in memory") != std::string::npos);
      uint32_t base = 0;
      int inits = 0;
      for (const auto& r : plan->inits)
        if (r.kind == x86::InitKind::constant_one) {
          base = r.id;
          ++inits;
        }
      REQUIRE(inits == 1);
      for (const auto& p : plan->copy) {
        if (p.role != x86::PlannedInst::Role::measured) continue;
        const auto& m = p.ops.back().as<asmjit::x86::Mem>();
        REQUIRE(p.ops.back().isMem());
        CHECK(m.baseId() == base);
        CHECK(m.offset() == 0);
      }
    }
  }
  auto w = x86::resolve_inst("div r16");
  REQUIRE(w.ok());
  auto lat = x86::plan_latency(w.value(), avx512(), "-");
  REQUIRE(lat.ok());
  CHECK(lat->method == "chain through the implicit registers (dx:ax)");
}

TEST_CASE("call and ret: a pair per call, the target the function's return stub", "[stream_plan]") {
  auto ret = x86::resolve_inst("ret");
  REQUIRE(ret.ok());
  struct Case { const char* text; x86::InitKind init; };
  for (const Case& c : {Case{"call rel32", x86::InitKind::gp_value}, Case{"call r64", x86::InitKind::return_stub},
                        Case{"call m64", x86::InitKind::return_stub_pointer}}) {
    INFO(c.text);
    auto call = x86::resolve_inst(c.text);
    REQUIRE(call.ok());
    for (bool call_first : {true, false}) {
      std::vector<x86::MixEntry> entries = {{&call.value(), 1}, {&ret.value(), 1}};
      if (!call_first) std::swap(entries[0], entries[1]);
      auto plan = x86::plan_mix(entries, 3, avx512(), "-");
      REQUIRE(plan.ok());
      CHECK(plan->return_stub);
      CHECK(plan->measured_per_copy == 6);  // three calls and the three rets they return through
      REQUIRE(plan->copy.size() == 3);
      for (const auto& p : plan->copy) {
        CHECK(p.inst.id() == asmjit::x86::Inst::kIdCall);
        REQUIRE(p.ops.size() == 1);
        if (c.init == x86::InitKind::gp_value) CHECK(p.ops[0].isLabel());
        else {
          const uint32_t target = p.ops[0].isReg() ? p.ops[0].id() : p.ops[0].as<asmjit::x86::Mem>().baseId();
          bool set_up = false;
          for (const auto& r : plan->inits)
            if (r.cls == x86::OpClass::gp && r.id == target) set_up = r.kind == c.init;
          CHECK(set_up);
        }
      }
    }
  }
  // Neither runs in any other company: a ret without its call would return into nowhere.
  auto call = x86::resolve_inst("call rel32");
  auto add = x86::resolve_inst("add r64, r64");
  REQUIRE(add.ok());
  CHECK_FALSE(x86::plan_mix({{&ret.value(), 1}}, 1, avx512(), "-").ok());
  CHECK_FALSE(x86::plan_mix({{&call.value(), 1}, {&add.value(), 1}}, 1, avx512(), "-").ok());
  CHECK_FALSE(x86::plan_mix({{&call.value(), 2}, {&ret.value(), 1}}, 1, avx512(), "-").ok());
}

TEST_CASE("transactions: each xbegin straight followed by its xend, only as a pair", "[stream_plan]") {
  auto xbegin = x86::resolve_inst("xbegin rel32");
  auto xend = x86::resolve_inst("xend");
  auto add = x86::resolve_inst("add r64, r64");
  REQUIRE(xbegin.ok());
  REQUIRE(xend.ok());
  REQUIRE(add.ok());
  for (bool begin_first : {true, false}) {
    std::vector<x86::MixEntry> entries = {{&xbegin.value(), 1}, {&xend.value(), 1}};
    if (!begin_first) std::swap(entries[0], entries[1]);
    auto plan = x86::plan_mix(entries, 3, avx512(), "-");
    REQUIRE(plan.ok());
    CHECK(plan->transactions);
    CHECK(plan->measured_per_copy == 6);
    CHECK(plan->measured_per_form == std::vector<int>{3, 3});
    REQUIRE(plan->copy.size() == 6);
    for (size_t i = 0; i < plan->copy.size(); i += 2) {
      CHECK(plan->copy[i].inst.id() == asmjit::x86::Inst::kIdXbegin);
      REQUIRE(plan->copy[i].ops.size() == 1);
      CHECK(plan->copy[i].ops[0].isLabel());  // the fallback, bound by the emitter
      CHECK(plan->copy[i + 1].inst.id() == asmjit::x86::Inst::kIdXend);
    }
  }
  // An xend alone faults outside a transaction; an xbegin alone never ends one.
  CHECK_FALSE(x86::plan_mix({{&xend.value(), 1}}, 1, avx512(), "-").ok());
  CHECK_FALSE(x86::plan_mix({{&xbegin.value(), 1}}, 1, avx512(), "-").ok());
  CHECK_FALSE(x86::plan_mix({{&xbegin.value(), 1}, {&add.value(), 1}}, 1, avx512(), "-").ok());
  CHECK_FALSE(x86::plan_mix({{&xbegin.value(), 2}, {&xend.value(), 1}}, 1, avx512(), "-").ok());
}

TEST_CASE("latency plan: methods name how the chain is built", "[stream_plan]") {
  struct Case { const char* text; const char* method; };
  const Case cases[] = {
      {"vfmadd231ps ymm, ymm, ymm", "chain through the destination"},
      {"popcnt r64, r64", "chain through source operand 2"},
      {"vpermps ymm, ymm, ymm", "chain through source operand 2"},  // the index operand
      // mulx's operand 2 is a second, write-only destination: the chain must come back through a
      // register the form reads (a chain through lo measured throughput, 1 cycle for a 4-cycle op).
      {"mulx r64, r64, r64", "chain through source operand 3"},
      {"mov r64, m64", "pointer chase (load-to-use)"},
      {"lea r64, m", "chain through the base register"},
      {"div r64", "chain through the implicit registers (rdx:rax)"},
      {"vmovd r32, xmm", "round trip through bridge 'vmovq xmm, r64' (upper bound: includes the bridge)"},
  };
  for (const auto& c : cases) {
    INFO(c.text);
    auto f = x86::resolve_inst(c.text);
    REQUIRE(f.ok());
    auto plan = x86::plan_latency(f.value(), avx512(), "f32");
    REQUIRE(plan.ok());
    CHECK(plan->method == c.method);
    CHECK(plan->chains == 1);
  }
  // Dataflow of the mulx chain: the high result register is the one read next time.
  auto mulx = x86::resolve_inst("mulx r64, r64, r64");
  REQUIRE(mulx.ok());
  auto plan = x86::plan_latency(mulx.value(), avx512(), "i64");
  REQUIRE(plan.ok());
  REQUIRE(plan->dest_ids.size() == 1);
  const auto& ops = plan->copy.back().ops;
  REQUIRE(ops.size() == 3);
  CHECK(ops[0].id() == plan->dest_ids[0]);
  CHECK(ops[2].id() == plan->dest_ids[0]);
  CHECK(ops[1].id() != plan->dest_ids[0]);
}

TEST_CASE("latency plan: a bridge the CPU cannot run means no latency, not a wrong one", "[stream_plan]") {
  x86::HostIsa no_dq = avx512();
  no_dq.avx512dq = false;
  auto f = x86::resolve_inst("vpcmpeqd k, zmm, zmm");
  REQUIRE(f.ok());
  CHECK_FALSE(x86::plan_latency(f.value(), no_dq, "-").ok());
  CHECK(x86::plan_latency(f.value(), avx512(), "-").ok());
}

TEST_CASE("mix plan: sources are shared, destinations never", "[stream_plan]") {
  auto a = x86::resolve_inst("vfmadd231ps ymm, ymm, ymm");
  auto b = x86::resolve_inst("vaddps ymm, ymm, ymm");
  REQUIRE(a.ok());
  REQUIRE(b.ok());
  std::vector<x86::MixEntry> e = {{&a.value(), 1}, {&b.value(), 1}};
  // 16 registers, two shared sources: 14 destinations. The add only writes its destination: its
  // instances rotate through kWholeWriteChains registers, and the FMA chains get the other 10.
  CHECK(x86::max_rounds(e) == 14 - x86::kWholeWriteChains);
  auto plan = x86::plan_mix(e, 10, avx512(), "f32");
  REQUIRE(plan.ok());
  std::set<uint32_t> dests(plan->dest_ids.begin(), plan->dest_ids.end());
  CHECK(dests.size() == 14);
  CHECK(plan->measured_per_form == std::vector<int>{10, 10});
  CHECK_FALSE(x86::plan_mix(e, 11, avx512(), "f32").ok());
  CHECK_FALSE(x86::plan_mix({}, 1, avx512(), "f32").ok());
  CHECK_FALSE(x86::plan_mix({{&a.value(), 0}}, 1, avx512(), "f32").ok());
}

x86::InstForm form_of(const char* text) {
  auto f = x86::resolve_inst(text);
  REQUIRE(f.ok());
  return f.value();
}

// The buffer lines (offset / 64 from rsi) the memory operands of one form's instructions touch.
std::set<int64_t> lines_of(const x86::StreamPlan& plan, uint32_t inst_id) {
  std::set<int64_t> out;
  for (const auto& p : plan.copy)
    if (p.inst.id() == inst_id)
      for (const auto& op : p.ops)
        if (op.isMem()) out.insert(op.as<asmjit::x86::Mem>().offset() / 64);
  return out;
}

TEST_CASE("mix plan: each form's memory operands have lines of their own, loads and stores share one, and copies "
          "move past all of them",
          "[stream_plan]") {
  const x86::InstForm store = form_of("mov m32, r32"), load = form_of("mov r64, m64"), rmw = form_of("add m64, r64");
  // A store and a load on the same lines made each load wait for a store to forward.
  auto plan = x86::plan_mix({{&store, 2}, {&load, 3}}, 2, avx512(), "-");
  REQUIRE(plan.ok());
  const auto all_lines = lines_of(*plan, asmjit::x86::Inst::kIdMov);  // both forms are mov
  std::set<int64_t> store_lines, load_lines;
  for (const auto& p : plan->copy) {
    REQUIRE(p.ops.size() == 2);
    if (p.ops[0].isMem()) store_lines.insert(p.ops[0].as<asmjit::x86::Mem>().offset() / 64);
    else load_lines.insert(p.ops[1].as<asmjit::x86::Mem>().offset() / 64);
  }
  CHECK(all_lines.size() == 2);
  CHECK(store_lines.size() == 1);  // every store chain writes the form's one line
  CHECK(load_lines.size() == 1);   // every load chain reads the form's one line
  for (int64_t l : store_lines) CHECK(load_lines.count(l) == 0);
  CHECK(plan->memory_stride_per_copy == 0);  // no read-modify-write: every copy uses the same lines
  // With a read-modify-write part the copies advance past every form's lines.
  auto with_rmw = x86::plan_mix({{&rmw, 1}, {&load, 1}}, 3, avx512(), "-");
  REQUIRE(with_rmw.ok());
  CHECK(with_rmw->memory_stride_per_copy == 64 * 4);
  const auto rmw_lines = lines_of(*with_rmw, asmjit::x86::Inst::kIdAdd);
  const auto read_lines = lines_of(*with_rmw, asmjit::x86::Inst::kIdMov);
  CHECK(rmw_lines.size() == 3);
  CHECK(read_lines.size() == 1);
  for (int64_t l : rmw_lines) CHECK(read_lines.count(l) == 0);
  // A store that bypasses the caches keeps a line per chain: one line written to memory again and
  // again waits for each store to get there. A load that names non-temporal reads one line.
  const x86::InstForm nt = form_of("vmovntps m512, zmm"), direct = form_of("movdiri m64, r64"),
                      nt_load = form_of("vmovntdqa ymm, m256");
  auto nts = x86::plan_mix({{&nt, 1}, {&direct, 1}, {&nt_load, 1}}, 4, avx512(), "-");
  REQUIRE(nts.ok());
  CHECK(lines_of(*nts, asmjit::x86::Inst::kIdVmovntps).size() == 4);
  CHECK(lines_of(*nts, asmjit::x86::Inst::kIdMovdiri).size() == 4);
  CHECK(lines_of(*nts, asmjit::x86::Inst::kIdVmovntdqa).size() == 1);
  // A half-register store writes its memory and reads none: one line, as any store.
  const x86::InstForm high = form_of("movhps m64, xmm");
  CHECK_FALSE(high.roles[0].read);
  auto highs = x86::plan_mix({{&high, 1}}, 4, avx512(), "-");
  REQUIRE(highs.ok());
  CHECK(lines_of(*highs, asmjit::x86::Inst::kIdMovhps).size() == 1);
  CHECK(highs->memory_stride_per_copy == 0);
  // Memory of no definite size (cache control) keeps a line per chain: flushing one line again and
  // again is another measurement.
  const x86::InstForm flush = form_of("clflush m");
  auto flushes = x86::plan_mix({{&flush, 1}}, 4, avx512(), "-");
  REQUIRE(flushes.ok());
  CHECK(lines_of(*flushes, asmjit::x86::Inst::kIdClflush).size() == 4);
  // Whatever size the text spells.
  const x86::InstForm flush8 = form_of("clflush m8");
  auto flushes8 = x86::plan_mix({{&flush8, 1}}, 4, avx512(), "-");
  REQUIRE(flushes8.ok());
  CHECK(lines_of(*flushes8, asmjit::x86::Inst::kIdClflush).size() == 4);
  // A wide load of many chains (12 FMA chains from memory) reads one line.
  const x86::InstForm fma = form_of("vfmadd231ps ymm, ymm, m256");
  auto fmas = x86::plan_throughput(fma, 12, avx512(), "f32");
  REQUIRE(fmas.ok());
  CHECK(lines_of(*fmas, asmjit::x86::Inst::kIdVfmadd231ps).size() == 1);
  // A broadcast is memory of a definite size too (its element).
  const x86::InstForm bcst = form_of("vfmadd231ps zmm, zmm, m32bcst");
  auto bcsts = x86::plan_throughput(bcst, 12, avx512(), "f32");
  REQUIRE(bcsts.ok());
  CHECK(lines_of(*bcsts, asmjit::x86::Inst::kIdVfmadd231ps).size() == 1);
  // Beside a scatter, whose lanes write the buffer's first 128 bytes, the loads read a line past them.
  const x86::InstForm scatter = form_of("vpscatterdd vm32z {k}, zmm");
  auto mixed = x86::plan_mix({{&scatter, 1}, {&load, 1}}, 2, avx512(), "-");
  REQUIRE(mixed.ok());
  const auto scattered_loads = lines_of(*mixed, asmjit::x86::Inst::kIdMov);
  REQUIRE(scattered_loads.size() == 1);
  CHECK(*scattered_loads.begin() >= 2);
}

TEST_CASE("mix plan: a 16-register part keeps the whole mix below register 16", "[stream_plan]") {
  auto z = x86::resolve_inst("vfmadd231ps zmm, zmm, zmm");
  auto y = x86::resolve_inst("vperm2f128 ymm, ymm, ymm, imm8");
  REQUIRE(z.ok());
  REQUIRE(y.ok());
  std::vector<x86::MixEntry> e = {{&z.value(), 1}, {&y.value(), 1}};
  auto plan = x86::plan_mix(e, x86::max_rounds(e), avx512(), "f32");
  REQUIRE(plan.ok());
  CHECK(plan->vec_regs == 16);
  for (uint32_t id : plan->dest_ids) CHECK(id < 16);
}

TEST_CASE("latency per operand: every read input of the result's class, and a load's address", "[stream_plan]") {
  auto add = x86::resolve_inst("add r64, m64");
  REQUIRE(add.ok());
  CHECK(x86::latency_operands(add.value()) == std::vector<int>{0, 1});
  auto through_mem = x86::plan_latency_through(add.value(), 1, x86::HostIsa{}, "-");
  REQUIRE(through_mem.ok());
  CHECK(through_mem->bridge_cycles == 1);
  REQUIRE(through_mem->copy.size() == 2);
  // The result feeds `and zero, result`, and `zero` is the index of the next load's address.
  const auto& inst = through_mem->copy[0];
  const auto& bridge = through_mem->copy[1];
  CHECK(bridge.inst.id() == asmjit::x86::Inst::kIdAnd);
  const uint32_t result = inst.ops[0].as<asmjit::BaseReg>().id();
  const uint32_t zero = bridge.ops[0].as<asmjit::BaseReg>().id();
  CHECK(bridge.ops[1].as<asmjit::BaseReg>().id() == result);
  REQUIRE(inst.ops[1].isMem());
  CHECK(inst.ops[1].as<asmjit::x86::Mem>().indexId() == zero);
  CHECK(zero != result);

  auto fma = x86::resolve_inst("vfmadd231ps ymm, ymm, ymm");
  REQUIRE(fma.ok());
  CHECK(x86::latency_operands(fma.value()) == std::vector<int>{0, 1, 2});
  // Through operand 2 while the destination is also read: two registers alternate, each instance
  // reads the other's result in operand 2 and never its own result there.
  auto p = x86::plan_latency_through(fma.value(), 1, x86::HostIsa{}, "f32");
  REQUIRE(p.ok());
  REQUIRE(p->copy.size() == 2);
  CHECK(p->measured_per_copy == 2);
  const uint32_t d0 = p->copy[0].ops[0].as<asmjit::BaseReg>().id(), s0 = p->copy[0].ops[1].as<asmjit::BaseReg>().id();
  const uint32_t d1 = p->copy[1].ops[0].as<asmjit::BaseReg>().id(), s1 = p->copy[1].ops[1].as<asmjit::BaseReg>().id();
  CHECK(s0 == d1);
  CHECK(s1 == d0);
  CHECK(d0 != d1);
  // A write-only destination chains through the operand directly.
  auto vadd = x86::resolve_inst("vaddps ymm, ymm, ymm");
  REQUIRE(vadd.ok());
  CHECK(x86::latency_operands(vadd.value()) == std::vector<int>{1, 2});
  auto q = x86::plan_latency_through(vadd.value(), 2, x86::HostIsa{}, "f32");
  REQUIRE(q.ok());
  REQUIRE(q->copy.size() == 1);
  CHECK(q->copy[0].ops[0].as<asmjit::BaseReg>().id() == q->copy[0].ops[2].as<asmjit::BaseReg>().id());
  CHECK(q->copy[0].ops[1].as<asmjit::BaseReg>().id() != q->copy[0].ops[0].as<asmjit::BaseReg>().id());
  // No path through an immediate or an operand that is only written.
  CHECK_FALSE(x86::plan_latency_through(vadd.value(), 0, x86::HostIsa{}, "f32").ok());
}

TEST_CASE("ldmxcsr streams load a valid MXCSR from the buffer", "[stream_plan]") {
  auto f = x86::resolve_inst("ldmxcsr m32");
  REQUIRE(f.ok());
  auto plan = x86::plan_throughput(f.value(), 1, x86::HostIsa{}, "-");
  REQUIRE(plan.ok());
  CHECK(plan->buffer_holds_mxcsr);
  auto add = x86::resolve_inst("add r64, m64");
  REQUIRE(add.ok());
  CHECK_FALSE(x86::plan_throughput(add.value(), 1, x86::HostIsa{}, "-")->buffer_holds_mxcsr);
}

TEST_CASE("latency: a pointer chase only through loads whose result is the loaded value", "[stream_plan]") {
  // popcnt, lzcnt, bsf, rorx, aesimc turn the loaded address into a number that points nowhere: their
  // chase faulted. They get throughput only; mov and movbe (stored swapped) still chase.
  for (const char* t : {"popcnt r64, m64", "lzcnt r64, m64", "bsf r32, m32", "rorx r64, m64, imm8", "aesimc xmm, m128"}) {
    INFO(t);
    auto f = x86::resolve_inst(t);
    REQUIRE(f.ok());
    auto plan = x86::plan_latency(f.value(), avx512(), "-");
    REQUIRE_FALSE(plan.ok());
    CHECK_THAT(plan.error(), Catch::Contains("throughput only"));
  }
  for (const char* t : {"mov r64, m64", "movbe r64, m64", "movsxd r64, m32", "vmovups ymm, m256", "vbroadcastss zmm, m32"}) {
    INFO(t);
    auto f = x86::resolve_inst(t);
    REQUIRE(f.ok());
    auto plan = x86::plan_latency(f.value(), avx512(), "-");
    REQUIRE(plan.ok());
    CHECK_THAT(plan->method, Catch::Contains("pointer chase"));
  }
}

TEST_CASE("stream plan: rdpkru starts with ecx 0, the only register index it knows", "[stream_plan]") {
  auto f = x86::resolve_inst("rdpkru");
  REQUIRE(f.ok());
  auto plan = x86::plan_throughput(f.value(), 4, avx512(), "-");
  REQUIRE(plan.ok());
  // Inits run in order: the last one that names ecx is its value when the loop starts.
  std::optional<uint64_t> ecx;
  for (const auto& r : plan->inits)
    if (r.cls == x86::OpClass::gp && r.id == asmjit::x86::Gp::kIdCx) ecx = r.kind == x86::InitKind::gp_value ? r.value : 99;
  REQUIRE(ecx);
  CHECK(*ecx == 0);
}

TEST_CASE("stream plan: each branch goes to the next instruction, its direction held by the flags", "[stream_plan]") {
  for (const auto& [text, taken] : std::vector<std::pair<const char*, bool>>{
           {"jmp rel8", true}, {"jnz rel8", true}, {"jg rel32", true}, {"jz rel8", false}, {"jc rel32", false},
           {"jle rel8", false}}) {
    INFO(text);
    auto f = x86::resolve_inst(text);
    REQUIRE(f.ok());
    CHECK(x86::is_direct_branch(f.value()));
    CHECK(x86::branch_taken(f.value()) == taken);
    auto plan = x86::plan_throughput(f.value(), 4, avx512(), "-");
    REQUIRE(plan.ok());
    CHECK(plan->branch_to_next);
    CHECK(plan->copy.size() == 4);
    CHECK(plan->measured_per_copy == 4);
    for (const auto& p : plan->copy) {
      REQUIRE(p.ops.size() == 1);
      CHECK(p.ops[0].isLabel());
    }
    CHECK(plan->method.find(taken ? ", taken" : "not taken") != std::string::npos);
    // A taken branch lands at the next 32 bytes (the bytes between never run); one not taken runs on
    // into the next branch, so nothing may lie between them.
    CHECK(plan->branch_target_align == (taken ? 32 : 0));
    // No register result: throughput only, and the reason says which way the branch goes.
    auto lat = x86::plan_latency(f.value(), avx512(), "-");
    REQUIRE_FALSE(lat.ok());
    CHECK(lat.error().find("throughput only") != std::string::npos);
  }
  auto add = x86::resolve_inst("add r64, r64");
  auto jz = x86::resolve_inst("jz rel8");
  REQUIRE(add.ok());
  REQUIRE(jz.ok());
  CHECK_FALSE(x86::is_direct_branch(add.value()));
  CHECK_FALSE(x86::plan_mix({{&jz.value(), 1}, {&add.value(), 1}}, 2, avx512(), "-").ok());
}

TEST_CASE("mix: every register starts once, and a later form never resets what an earlier one set", "[stream_plan]") {
  // A memory divisor's base points at a constant 1; the add's defaults once reset it to 1 (a pointer
  // to address 1): every mix with `div m32` faulted.
  auto div = x86::resolve_inst("div m32");
  auto add = x86::resolve_inst("add r64, r64");
  auto vadd = x86::resolve_inst("vpaddd ymm, ymm, ymm");
  REQUIRE(div.ok());
  REQUIRE(add.ok());
  REQUIRE(vadd.ok());
  for (const auto& second : {&add.value(), &vadd.value()}) {
    INFO(second->display);
    auto plan = x86::plan_mix({{&div.value(), 1}, {second, 3}}, 2, avx512(), "-");
    REQUIRE(plan.ok());
    std::set<std::pair<int, uint32_t>> seen;
    size_t constant_one = 0;
    for (const auto& r : plan->inits) {
      CHECK(seen.insert({int(r.cls), r.id}).second);  // one start value per register
      if (r.kind == x86::InitKind::constant_one) ++constant_one;
    }
    CHECK(constant_one == 1);
  }
}

TEST_CASE("implicit general registers are never chain or source registers, and start sane", "[stream_plan]") {
  using asmjit::x86::Gp;
  auto xgetbv = x86::resolve_inst("xgetbv");
  auto imul = x86::resolve_inst("imul r64, r64");
  auto cmpxchg = x86::resolve_inst("cmpxchg r64, r64");
  auto add = x86::resolve_inst("add r64, r64");
  REQUIRE(xgetbv.ok());
  REQUIRE(imul.ok());
  REQUIRE(cmpxchg.ok());
  REQUIRE(add.ok());
  const auto& x = xgetbv->implicit_gp;
  CHECK(std::find(x.begin(), x.end(), uint32_t(Gp::kIdCx)) != x.end());
  CHECK(std::find(x.begin(), x.end(), uint32_t(Gp::kIdAx)) != x.end());
  CHECK(imul->implicit_gp.empty());  // the two-operand spelling has none of imul r64's rdx:rax
  CHECK(std::find(cmpxchg->implicit_gp.begin(), cmpxchg->implicit_gp.end(), uint32_t(Gp::kIdAx)) !=
        cmpxchg->implicit_gp.end());
  // Beside an add, xgetbv's ecx (its register index) is no add chain, and it starts at 0 (XCR0).
  auto plan = x86::plan_mix({{&xgetbv.value(), 1}, {&add.value(), 1}}, 4, avx512(), "-");
  REQUIRE(plan.ok());
  for (uint32_t id : plan->dest_ids) CHECK(std::find(x.begin(), x.end(), id) == x.end());
  bool ecx_zero = false;
  for (const auto& r : plan->inits)
    if (r.cls == x86::OpClass::gp && r.id == Gp::kIdCx) ecx_zero = r.kind == x86::InitKind::gp_value && r.value == 0;
  CHECK(ecx_zero);
}

TEST_CASE("mix plan: a part that only writes its whole destination rotates through a few registers", "[stream_plan]") {
  const auto rounds = [](const char* a, const char* b) {
    auto fa = x86::resolve_inst(a);
    auto fb = x86::resolve_inst(b);
    REQUIRE(fa.ok());
    REQUIRE(fb.ok());
    return x86::max_rounds({{&fa.value(), 1}, {&fb.value(), 1}});
  };
  // 32 registers, sources shared: 30 destinations, 15 rounds a chain per instance; 26 with the add's four.
  CHECK(rounds("vfmadd231ps zmm, zmm, zmm", "vaddps zmm, zmm, zmm") == 30 - x86::kWholeWriteChains);
  // A merge mask keeps the destination's other lanes: a chain, an instance on each.
  CHECK(rounds("vfmadd231ps zmm, zmm, zmm", "vaddps zmm {k}, zmm, zmm") < 30 - x86::kWholeWriteChains);
  // A legacy SSE form keeps the upper lanes of its register, a 16-bit write the upper bits: chains.
  CHECK(rounds("vfmadd231ps xmm, xmm, xmm", "movaps xmm, xmm") == rounds("vfmadd231ps xmm, xmm, xmm", "addps xmm, xmm"));
  CHECK(rounds("add r64, r64", "popcnt r64, r64") > rounds("add r64, r64", "popcnt r16, r16"));
  CHECK(rounds("add r64, r64", "popcnt r32, r32") == rounds("add r64, r64", "popcnt r64, r64"));
  CHECK(x86::writes_whole_destination(form_of("vaddps ymm, ymm, ymm")));
  CHECK(x86::writes_whole_destination(form_of("vmovups zmm, m512")));
  CHECK(x86::writes_whole_destination(form_of("mov r32, r32")));
  CHECK_FALSE(x86::writes_whole_destination(form_of("mov r16, r16")));
  CHECK_FALSE(x86::writes_whole_destination(form_of("vaddps zmm {k}, zmm, zmm")));
  CHECK_FALSE(x86::writes_whole_destination(form_of("movaps xmm, xmm")));
  CHECK_FALSE(x86::writes_whole_destination(form_of("vfmadd231ps ymm, ymm, ymm")));  // reads it
  CHECK_FALSE(x86::writes_whole_destination(form_of("mov m64, r64")));             // memory
  CHECK_FALSE(x86::writes_whole_destination(form_of("mul r64")));                  // two results
  // Alone, a form's K is its sweep's: every chain its own register, as before.
  auto add = x86::resolve_inst("vaddps ymm, ymm, ymm");
  REQUIRE(add.ok());
  CHECK(x86::max_chains(add.value()) == 14);
  // A limit the caller set stands (table --pipes sets each part's chains from its latency).
  auto fma = x86::resolve_inst("vfmadd231ps ymm, ymm, ymm");
  REQUIRE(fma.ok());
  CHECK(x86::max_rounds({{&fma.value(), 1}, {&add.value(), 1, 6}}) == 8);  // not 10
}

TEST_CASE("mix plan: chain limits free registers for more rounds, instances stay counted", "[stream_plan]") {
  auto add = x86::resolve_inst("add r64, r64");
  auto crc = x86::resolve_inst("crc32 r64, r64");
  REQUIRE(add.ok());
  REQUIRE(crc.ok());
  // Five adds and one crc32 a group: one register per instance leaves the crc32 two or three chains.
  const int plain = x86::max_rounds({{&add.value(), 5}, {&crc.value(), 1}});
  CHECK(plain <= 3);
  const std::vector<x86::MixEntry> limited = {{&add.value(), 5, 8}, {&crc.value(), 1, 5}};
  const int rounds = x86::max_rounds(limited);
  REQUIRE(rounds >= 4);  // eight add and four crc32 chains beside the shared sources
  CHECK(rounds > plain);
  auto plan = x86::plan_mix(limited, 4, avx512(), "-");
  REQUIRE(plan.ok());
  CHECK(plan->chains == 12);
  CHECK(plan->measured_per_form == std::vector<int>{20, 4});
  CHECK(plan->measured_per_copy == 24);
  CHECK(plan->copy.size() == 24);
  // A limit the registers cannot hold fails to plan, as too many rounds do.
  CHECK_FALSE(x86::plan_mix({{&add.value(), 5, 30}, {&crc.value(), 1}}, 6, avx512(), "-").ok());
}

TEST_CASE("stream plan: x87 forms on the stack top are one chain through st(0), which starts at 1.0", "[stream_plan]") {
  for (const char* text : {"fadd m64", "fmul m32", "fidiv m16", "fsqrt", "fchs", "fsin", "fcos"}) {
    INFO(text);
    auto f = x86::resolve_inst(text);
    REQUIRE(f.ok());
    CHECK(x86::works_on_x87_stack_top(f.value()));
    // Every instance reads and writes st(0): no second chain exists to plan.
    CHECK(x86::max_chains(f.value()) == 1);
    CHECK_FALSE(x86::plan_throughput(f.value(), 2, avx512(), "-").ok());
    auto tput = x86::plan_throughput(f.value(), 1, avx512(), "-");
    REQUIRE(tput.ok());
    CHECK(tput->x87_top_one);
    // The latency is that chain, named as such (not "flags only").
    auto lat = x86::plan_latency(f.value(), avx512(), "-");
    REQUIRE(lat.ok());
    CHECK(lat->kind == x86::StreamKind::latency);
    CHECK(lat->x87_top_one);
    CHECK(lat->method.find("st(0)") != std::string::npos);
    CHECK(lat->copy.size() == tput->copy.size());
  }
  // Loads, stores, pops and compares move the stack or write no result: not these.
  for (const char* text : {"fld m32", "fstp m64", "faddp", "fcom m64", "fist m32", "fscale", "add r64, r64"}) {
    INFO(text);
    auto f = x86::resolve_inst(text);
    REQUIRE(f.ok());
    CHECK_FALSE(x86::works_on_x87_stack_top(f.value()));
  }
}

TEST_CASE("mix plan: a chain limit frees registers of a register chain, not of a memory writer", "[stream_plan]") {
  // `mix` and `pair` (src/pairs/pair_runner.cpp) never limit a part whose limit changes nothing at
  // weight 8: the planner keeps an instance per chain for a form that writes memory.
  auto mul = x86::resolve_inst("imul r64, r64");
  auto rmw = x86::resolve_inst("add m64, r64");
  REQUIRE(mul.ok());
  REQUIRE(rmw.ok());
  CHECK(x86::max_rounds({{&mul.value(), 8, 1}}) > x86::max_rounds({{&mul.value(), 8}}));
  CHECK(x86::max_rounds({{&rmw.value(), 8, 1}}) == x86::max_rounds({{&rmw.value(), 8}}));
}
