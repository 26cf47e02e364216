// The planned AArch64 streams as data: independent chains write distinct registers and never read
// one another's, sources are never written, a latency chain feeds its result back into the operand
// it measures, and a load into a 64-bit register chases pointers.
#include <catch2/catch.hpp>

#include <algorithm>
#include <set>

#include <asmjit/arm.h>

#include "asm/a64/stream_plan.hpp"

using namespace peakprobe;
using namespace asmjit;

namespace {

a64::InstForm form(const std::string& text) {
  auto f = a64::resolve_inst(text);
  REQUIRE(f.ok());
  return *f;
}

uint32_t reg_id(const Operand& op) { return op.as<BaseReg>().id(); }

// The registers a mix's instances write: every instance of the form the copy starts with, in order,
// and the set the other forms write.
struct Written {
  std::vector<uint32_t> first;
  std::set<uint32_t> others;
  bool first_distinct() const { return std::set<uint32_t>(first.begin(), first.end()).size() == first.size(); }
};
Written written_by(const a64::StreamPlan& plan) {
  Written w;
  for (const auto& p : plan.copy) {
    if (p.inst_id == plan.copy.front().inst_id) w.first.push_back(reg_id(p.ops[0]));
    else w.others.insert(reg_id(p.ops[0]));
  }
  return w;
}

}  // namespace

TEST_CASE("a64 stream plan: throughput chains write distinct registers, sources stay read-only", "[a64][stream_plan]") {
  const auto f = form("fmla v.4s, v.4s, v.4s");
  const int k = a64::max_chains(f);
  CHECK(k >= 16);  // enough for 4 pipes x 4 cycles
  auto plan = a64::plan_throughput(f, k);
  REQUIRE(plan.ok());
  CHECK(plan->measured_per_copy == k);
  std::set<uint32_t> dests, sources;
  for (const auto& p : plan->copy) {
    dests.insert(reg_id(p.ops[0]));
    sources.insert(reg_id(p.ops[1]));
    sources.insert(reg_id(p.ops[2]));
  }
  CHECK(int(dests.size()) == k);
  for (uint32_t s : sources) CHECK(dests.count(s) == 0);
  CHECK_FALSE(a64::plan_throughput(f, k + 1).ok());
}

TEST_CASE("a64 stream plan: a latency chain feeds the result into the measured operand", "[a64][stream_plan]") {
  const auto fmla = form("fmla v.4s, v.4s, v.4s");
  CHECK(a64::latency_operands(fmla) == std::vector<int>{0, 1, 2});
  auto acc = a64::plan_latency(fmla);
  REQUIRE(acc.ok());
  REQUIRE(acc->copy.size() == 1);
  CHECK_THAT(acc->method, Catch::Contains("destination"));
  CHECK(reg_id(acc->copy[0].ops[0]) != reg_id(acc->copy[0].ops[1]));
  // Through operand 2: two registers alternate, each instance reads the other's result.
  auto through = a64::plan_latency_through(fmla, 1);
  REQUIRE(through.ok());
  REQUIRE(through->copy.size() == 2);
  CHECK(reg_id(through->copy[0].ops[0]) == reg_id(through->copy[1].ops[1]));
  CHECK(reg_id(through->copy[1].ops[0]) == reg_id(through->copy[0].ops[1]));
  const auto add = form("add x, x, x");
  auto chain = a64::plan_latency(add);
  REQUIRE(chain.ok());
  CHECK(reg_id(chain->copy[0].ops[0]) == reg_id(chain->copy[0].ops[1]));
}

TEST_CASE("a64 stream plan: a load into a 64-bit register chases pointers", "[a64][stream_plan]") {
  const auto ldr = form("ldr x, [x, #imm]");
  auto chase = a64::plan_latency(a64::resolve_inst("ldr x, [x]").value());
  REQUIRE(chase.ok());
  CHECK(chase->chase_bits == 64);
  const auto& m = chase->copy[0].ops[1].as<arm::Mem>();
  CHECK(m.baseId() == reg_id(chase->copy[0].ops[0]));
  CHECK_FALSE(a64::latency_operands(ldr).empty());
  // Stores and flag-only forms have no chain.
  CHECK_FALSE(a64::plan_latency(form("str q, [x]")).ok());
  CHECK_FALSE(a64::plan_latency(form("cmp x, x")).ok());
  // A result in the other register file comes back through an fmov: two instructions, one measured,
  // the bridge writes the measured input's register from the result, and the figure is an upper bound.
  auto bridged = a64::plan_latency(form("fcvtzs w, s"));
  REQUIRE(bridged.ok());
  REQUIRE(bridged->copy.size() == 2);
  CHECK(bridged->measured_per_copy == 1);
  CHECK(bridged->upper_bound);
  CHECK_FALSE(bridged->copy[1].measured);
  CHECK(reg_id(bridged->copy[1].ops[0]) == reg_id(bridged->copy[0].ops[1]));
  CHECK(reg_id(bridged->copy[1].ops[1]) == reg_id(bridged->copy[0].ops[0]));
}

TEST_CASE("a64 stream plan: a mix interleaves its forms in the ratio of their weights", "[a64][stream_plan]") {
  const auto fmla = form("fmla v.4s, v.4s, v.4s");
  const auto ldr = form("ldr q, [x]");
  const std::vector<a64::MixEntry> mix = {{&fmla, 2}, {&ldr, 1}};
  const int rounds = a64::max_rounds(mix);
  REQUIRE(rounds >= 4);
  auto plan = a64::plan_mix(mix, rounds);
  REQUIRE(plan.ok());
  CHECK(plan->measured_per_form == std::vector<int>{2 * rounds, rounds});
  // Every fmla its own accumulator; the loads, which only write theirs, rotate through four.
  const Written w = written_by(*plan);
  CHECK(w.first_distinct());
  CHECK(int(w.first.size()) == 2 * rounds);
  CHECK(int(w.others.size()) == std::min(rounds, a64::kWholeWriteChains));
  for (uint32_t id : w.first) CHECK_FALSE(w.others.count(id));
}

TEST_CASE("a64 stream plan: which forms write their whole destination and nothing else", "[a64][stream_plan]") {
  for (const char* text : {"fadd v.4s, v.4s, v.4s", "add x, x, x", "add w, w, w", "fcvtzs w, s", "ldr q, [x]",
                           "uzp2 v.4s, v.4s, v.4s", "fcvtl2 v.2d, v.4s", "dup v.4s, v.s[1]"}) {
    INFO(text);
    CHECK(a64::writes_whole_destination(form(text)));
  }
  // Accumulators read their destination; an element, a narrowing into the upper half, tbx, sri, sli
  // and the vector orr/bic with an immediate keep part of the old value; a pair load writes two
  // registers; a store and a compare none.
  for (const char* text : {"fmla v.4s, v.4s, v.4s", "movk x, #imm", "mov v.s[1], w", "xtn2 v.16b, v.8h",
                           "addhn2 v.16b, v.8h, v.8h", "fcvtn2 v.4s, v.2d", "tbx v.16b, {v.16b}, v.16b",
                           "sri v.4s, v.4s, #imm", "sli v.4s, v.4s, #imm", "shrn2 v.16b, v.8h, #imm",
                           "sqxtn2 v.16b, v.8h", "raddhn2 v.16b, v.8h, v.8h", "orr v.4s, #imm", "bic v.4s, #imm",
                           "ldp q, q, [x]", "str q, [x]", "cmp x, x"}) {
    INFO(text);
    CHECK_FALSE(a64::writes_whole_destination(form(text)));
  }
}

TEST_CASE("a64 stream plan: in a mix, a part that writes its whole destination leaves the registers to the chaining part",
          "[a64][stream_plan]") {
  const auto fmla = form("fmla v.4s, v.4s, v.4s");
  const auto fadd = form("fadd v.4s, v.4s, v.4s");
  const std::vector<a64::MixEntry> mix = {{&fmla, 1}, {&fadd, 1}};
  const int rounds = a64::max_rounds(mix);
  // One register per fadd instance would allow 14 rounds of 32 registers: fewer fmla chains
  // than four pipes of a 4-cycle multiply-add need.
  CHECK(rounds >= 16);
  auto plan = a64::plan_mix(mix, rounds);
  REQUIRE(plan.ok());
  const Written w = written_by(*plan);
  CHECK(w.first_distinct());
  CHECK(int(w.first.size()) == rounds);
  CHECK(int(w.others.size()) == a64::kWholeWriteChains);
  // The fadd reads only shared sources: no register it writes is read by any instance.
  for (const auto& p : plan->copy)
    for (size_t i = 1; i < p.ops.size(); ++i)
      if (p.ops[i].isReg()) CHECK_FALSE(w.others.count(reg_id(p.ops[i])));
  // Alone, the same form keeps a register per chain.
  auto alone = a64::plan_throughput(fadd, 8);
  REQUIRE(alone.ok());
  std::set<uint32_t> own;
  for (const auto& p : alone->copy) own.insert(reg_id(p.ops[0]));
  CHECK(own.size() == 8);
}

TEST_CASE("a64 stream plan: a number in the text is the offset used, and the zero register carries nothing", "[a64][stream_plan]") {
  auto literal = a64::plan_throughput(form("ldr q, [x, #48]"), 4);
  REQUIRE(literal.ok());
  for (const auto& p : literal->copy) CHECK(p.ops[1].as<arm::Mem>().offset() == 48);
  auto open = a64::plan_throughput(form("ldr q, [x, #imm]"), 4);
  REQUIRE(open.ok());
  CHECK(open->copy[1].ops[1].as<arm::Mem>().offset() == 64);  // each instance its own line
  // adds into the zero register writes only flags: no latency chain, and no register written per chain.
  CHECK_FALSE(a64::plan_latency(form("adds xzr, x, x")).ok());
  CHECK(a64::latency_operands(form("ldr xzr, [x]")).empty());
}

TEST_CASE("a64 stream plan: a part with a chain limit rotates its instances through that many chains", "[a64][stream_plan]") {
  const auto fmla = form("fmla v.4s, v.4s, v.4s");
  // movk keeps the rest of its register: a part that chains (an add, which writes its whole
  // register, would rotate through four registers in a mix anyway).
  const auto add = form("movk x, #imm");
  const int plain = a64::max_rounds({{&add, 5}, {&fmla, 1}});
  // Five movk a group take five registers a round; limited to eight chains they leave the rest.
  const std::vector<a64::MixEntry> mix = {{&add, 5, 8}, {&fmla, 1, 6}};
  const int rounds = a64::max_rounds(mix);
  CHECK(rounds > plain);
  REQUIRE(rounds >= 6);
  auto plan = a64::plan_mix(mix, 6);
  REQUIRE(plan.ok());
  CHECK(plan->measured_per_form == std::vector<int>{30, 6});
  CHECK(plan->measured_per_copy == 36);
  // Instance j of a part writes the register of chain j mod limit: eight add and six fmla registers.
  std::vector<uint32_t> adds, fmlas;
  for (const auto& p : plan->copy) (p.inst_id == plan->copy.front().inst_id ? adds : fmlas).push_back(reg_id(p.ops[0]));
  REQUIRE(adds.size() == 30);
  REQUIRE(fmlas.size() == 6);
  CHECK(std::set<uint32_t>(adds.begin(), adds.end()).size() == 8);
  CHECK(std::set<uint32_t>(fmlas.begin(), fmlas.end()).size() == 6);
  for (size_t j = 8; j < adds.size(); ++j) CHECK(adds[j] == adds[j - 8]);
  // A limit above the instances is no limit: one chain per instance.
  auto loose = a64::plan_mix({{&add, 5, 100}, {&fmla, 1, 100}}, 2);
  REQUIRE(loose.ok());
  std::set<std::pair<uint32_t, uint32_t>> written;  // (register file, id)
  for (const auto& p : loose->copy)
    CHECK(written.insert({uint32_t(p.ops[0].as<BaseReg>().type()), reg_id(p.ops[0])}).second);
}

TEST_CASE("a64 stream plan: a chain limit always frees registers, seen at a weight where the rounds cap cannot hide it", "[a64][stream_plan]") {
  // `mix` and `pair` (src/pairs/pair_runner.cpp) take a part whose limit changes nothing for one
  // the planner ignores the limit of. A part alone at weight 1 reaches the cap on rounds with and
  // without a limit; at weight 8 only the limited one does.
  const auto fmla = form("fmla v.4s, v.4s, v.4s");
  CHECK(a64::max_rounds({{&fmla, 1, 1}}) == a64::max_rounds({{&fmla, 1}}));
  CHECK(a64::max_rounds({{&fmla, 8, 1}}) > a64::max_rounds({{&fmla, 8}}));
}
