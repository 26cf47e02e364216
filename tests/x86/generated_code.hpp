// Test helper: emits a plan into an asmjit Builder and reads the loop body back as instructions with
// the physical registers each one reads and writes, as asmjit's database describes them.
#pragma once
#include <set>
#include <utility>
#include <vector>

#include <asmjit/x86.h>

#include "asm/x86/stream_emitter.hpp"

namespace peakprobe::test {

using PhysReg = std::pair<int, uint32_t>;  // (register group, id): xmm3, ymm3 and zmm3 are one register

struct BodyInst {
  asmjit::InstId id = 0;
  std::set<PhysReg> reads, writes;
};

inline PhysReg phys(const asmjit::BaseReg& r) { return {int(r.group()), r.id()}; }

inline std::vector<BodyInst> loop_body(const x86::StreamPlan& plan, int copies, const x86::HostIsa& isa) {
  using namespace asmjit;
  CodeHolder code;
  code.init(Environment(Arch::kX64));
  asmjit::x86::Builder b(&code);
  x86::emit_stream_function(*b.as<asmjit::x86::Emitter>(), plan, copies, isa);
  std::vector<BodyInst> body;
  bool in_loop = false;
  for (BaseNode* n = b.firstNode(); n; n = n->next()) {
    if (n->isLabel()) in_loop = true;
    if (!in_loop || !n->isInst()) continue;
    InstNode* in = n->as<InstNode>();
    if (in->id() == asmjit::x86::Inst::kIdDec) break;  // loop counter: end of the body
    BodyInst bi;
    bi.id = in->id();
    InstRWInfo rw;
    InstAPI::queryRWInfo(Arch::kX64, in->baseInst(), in->operands(), in->opCount(), &rw);
    for (uint32_t i = 0; i < in->opCount(); ++i) {
      const Operand& op = in->op(i);
      if (op.isReg()) {
        if (rw.operand(i).isRead()) bi.reads.insert(phys(op.as<BaseReg>()));
        if (rw.operand(i).isWrite()) bi.writes.insert(phys(op.as<BaseReg>()));
      } else if (op.isMem()) {
        const auto& m = op.as<asmjit::x86::Mem>();
        if (m.hasBaseReg()) bi.reads.insert({int(RegGroup::kGp), m.baseId()});
        if (m.hasIndexReg()) bi.reads.insert({int(m.indexType() == RegType::kX86_Gpq ? RegGroup::kGp : RegGroup::kVec), m.indexId()});
      }
    }
    if (in->hasExtraReg()) bi.reads.insert({int(RegGroup::kX86_K), in->extraReg().id()});
    body.push_back(bi);
  }
  return body;
}

inline bool intersects(const std::set<PhysReg>& a, const std::set<PhysReg>& b) {
  for (const auto& x : a)
    if (b.count(x)) return true;
  return false;
}

}  // namespace peakprobe::test
