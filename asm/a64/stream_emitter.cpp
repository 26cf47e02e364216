#include "asm/a64/stream_emitter.hpp"

#include <cstring>
#include <new>

namespace peakprobe::a64 {
using namespace asmjit;
namespace aj = asmjit::a64;

namespace {

constexpr int kFrameBytes = 160;

}  // namespace

ConstantsLayout& fill_constants(isa::ProbeConstants& storage, const std::string& dtype) {
  std::memset(storage.bytes, 0, sizeof(storage.bytes));
  ConstantsLayout& c = *new (storage.bytes) ConstantsLayout;
  isa::fill_data_pattern(c.data, dtype);
  return c;
}

void emit_save_callee_saved(aj::Assembler& a) {
  a.sub(aj::sp, aj::sp, Imm(kFrameBytes));
  for (uint32_t i = 0; i < 6; ++i) a.stp(aj::x(19 + 2 * i), aj::x(20 + 2 * i), arm::ptr(aj::sp, int32_t(16 * i)));
  for (uint32_t i = 0; i < 4; ++i) a.stp(aj::d(8 + 2 * i), aj::d(9 + 2 * i), arm::ptr(aj::sp, int32_t(96 + 16 * i)));
}

void emit_restore_callee_saved(aj::Assembler& a) {
  for (uint32_t i = 0; i < 6; ++i) a.ldp(aj::x(19 + 2 * i), aj::x(20 + 2 * i), arm::ptr(aj::sp, int32_t(16 * i)));
  for (uint32_t i = 0; i < 4; ++i) a.ldp(aj::d(8 + 2 * i), aj::d(9 + 2 * i), arm::ptr(aj::sp, int32_t(96 + 16 * i)));
  a.add(aj::sp, aj::sp, Imm(kFrameBytes));
}

Error emit_stream_function(aj::Assembler& a, const StreamPlan& plan, int copies) {
  emit_save_callee_saved(a);
  for (uint32_t v = 0; v < 32; ++v)
    if (plan.vec_used & (1u << v)) a.ldr(aj::v(v).q(), arm::ptr(aj::x2, int32_t(offsetof(ConstantsLayout, data))));
  for (const auto& g : plan.gp_inits) {
    if (g.buffer) a.mov(aj::x(g.id), aj::x1);
    else a.mov(aj::x(g.id), Imm(int64_t(g.value)));
  }
  Label loop = a.newLabel();
  a.align(AlignMode::kCode, 64);
  a.bind(loop);
  for (int c = 0; c < copies; ++c)
    for (const auto& p : plan.copy)
      if (Error err = a.emitInst(BaseInst(p.inst_id), p.ops.data(), p.ops.size())) return err;
  a.subs(aj::x0, aj::x0, Imm(1));
  a.b_ne(loop);
  emit_restore_callee_saved(a);
  a.ret(aj::x30);
  return kErrorOk;
}

Expected<isa::JitFunction> compile_stream(const StreamPlan& plan, int copies, std::string* listing) {
  isa::HostCode code(listing);  // an instruction asmjit cannot encode fails the compile
  aj::Assembler a(code.holder());
  if (Error err = emit_stream_function(a, plan, copies))
    return make_error(std::string("code generation failed: ") + DebugUtils::errorAsString(err));
  return code.finish();
}

}  // namespace peakprobe::a64
