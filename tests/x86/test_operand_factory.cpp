// The one place that turns an operand kind and a number into an asmjit operand (operand_factory):
// every register class and width gives asmjit's register of that type, size and number; memory
// operands carry the kind's access size, an embedded broadcast of the kind's element across the
// form's widest vector, a gather's vector index at the scale of its elements; literal registers
// (cl, rax, xmm0, k0) their own number at their own width; the probe immediate its value. A wrong
// type or size here encodes another instruction than the one the stream was meant to measure.
#include <catch2/catch.hpp>

#include <string>

#include "asm/x86/operand_factory.hpp"

using namespace peakprobe;
namespace ax = asmjit::x86;
using asmjit::RegType;

namespace {

x86::OperandKind kind_of(const std::string& token) {
  auto k = x86::parse_operand_kind(token);
  INFO(token);
  REQUIRE(k.ok());
  return *k;
}

// asmjit leaves a mask register's size out of its signature (0 in 1.9): take its own value, the
// type alone tells a mask register apart.
const uint32_t kMaskBytes = ax::k(0).size();

struct RegExpect {
  RegType type;
  uint32_t size;  // bytes
  uint32_t id;
};

void check_reg(const asmjit::Operand& op, const RegExpect& want) {
  REQUIRE(op.isReg());
  const auto& r = op.as<asmjit::BaseReg>();
  CHECK(r.type() == want.type);
  CHECK(r.size() == want.size);
  CHECK(r.id() == want.id);
}

}  // namespace

TEST_CASE("operand factory: registers of each class and width", "[operand_factory]") {
  struct Case {
    x86::OpClass cls;
    int bits;
    uint32_t id;
    RegExpect want;
  };
  const Case cases[] = {
      {x86::OpClass::gp, 8, 3, {RegType::kX86_GpbLo, 1, 3}},
      {x86::OpClass::gp, 8, 12, {RegType::kX86_GpbLo, 1, 12}},  // r12b: a low byte, never ah..bh
      {x86::OpClass::gp, 16, 9, {RegType::kX86_Gpw, 2, 9}},
      {x86::OpClass::gp, 32, 0, {RegType::kX86_Gpd, 4, 0}},
      {x86::OpClass::gp, 64, 15, {RegType::kX86_Gpq, 8, 15}},
      {x86::OpClass::vec, 128, 1, {RegType::kX86_Xmm, 16, 1}},
      {x86::OpClass::vec, 256, 17, {RegType::kX86_Ymm, 32, 17}},
      {x86::OpClass::vec, 512, 31, {RegType::kX86_Zmm, 64, 31}},
      {x86::OpClass::mask, 64, 7, {RegType::kX86_KReg, kMaskBytes, 7}},
  };
  for (const auto& c : cases) {
    INFO("class " << int(c.cls) << ", " << c.bits << " bits, id " << c.id);
    check_reg(x86::make_reg(c.cls, c.bits, c.id), c.want);
  }
  // Tiles: asmjit's tile register of that number.
  const asmjit::Operand t = x86::make_reg(x86::OpClass::tile, 8192, 5);
  REQUIRE(t.isReg());
  CHECK(t.as<asmjit::BaseReg>().type() == RegType::kX86_Tmm);
  CHECK(t.as<asmjit::BaseReg>().id() == 5);
  // Classes that are no register give an empty operand, not some register.
  for (auto cls : {x86::OpClass::imm, x86::OpClass::mem, x86::OpClass::vmem, x86::OpClass::fixed}) {
    INFO("class " << int(cls));
    CHECK(x86::make_reg(cls, 64, 1).isNone());
  }
}

TEST_CASE("operand factory: registers from parsed operand kinds", "[operand_factory]") {
  struct Case {
    const char* token;
    RegExpect want;
  };
  const Case cases[] = {
      {"r8", {RegType::kX86_GpbLo, 1, 6}},   {"r16", {RegType::kX86_Gpw, 2, 6}},
      {"r32", {RegType::kX86_Gpd, 4, 6}},    {"r64", {RegType::kX86_Gpq, 8, 6}},
      {"xmm", {RegType::kX86_Xmm, 16, 6}},   {"ymm", {RegType::kX86_Ymm, 32, 6}},
      {"zmm", {RegType::kX86_Zmm, 64, 6}},   {"zmm {k}", {RegType::kX86_Zmm, 64, 6}},
      {"k", {RegType::kX86_KReg, kMaskBytes, 6}},
  };
  for (const auto& c : cases) {
    INFO(c.token);
    check_reg(x86::make_reg(kind_of(c.token), 6), c.want);
  }
  const asmjit::Operand t = x86::make_reg(kind_of("tmm"), 2);
  REQUIRE(t.isReg());
  CHECK(t.as<asmjit::BaseReg>().type() == RegType::kX86_Tmm);
  CHECK(t.as<asmjit::BaseReg>().id() == 2);
}

TEST_CASE("operand factory: memory operands take the kind's access size", "[operand_factory]") {
  struct Case {
    const char* token;
    uint32_t bytes;
  };
  // "m" is an untyped address (lea, AMX): no size.
  for (const Case c : {Case{"m8", 1}, Case{"m16", 2}, Case{"m32", 4}, Case{"m64", 8}, Case{"m80", 10},
                       Case{"m128", 16}, Case{"m256", 32}, Case{"m512", 64}, Case{"m", 0}}) {
    INFO(c.token);
    const asmjit::Operand op = x86::make_mem(kind_of(c.token), ax::Gp::kIdSi, asmjit::BaseReg::kIdBad, 24, 512);
    REQUIRE(op.isMem());
    const auto& m = op.as<ax::Mem>();
    CHECK(m.size() == c.bytes);
    CHECK(m.baseType() == RegType::kX86_Gpq);
    CHECK(m.baseId() == ax::Gp::kIdSi);
    CHECK_FALSE(m.hasIndex());
    CHECK(m.offset() == 24);
    CHECK_FALSE(m.hasBroadcast());
  }
}

TEST_CASE("operand factory: a general index register is a 64-bit index of that number, unscaled", "[operand_factory]") {
  // lea's [base + index + disp], as the catalog describes it: a scaled index (asmjit's shift 1 is
  // x 2) can take another pipe or latency on some cores, so the probe would time another form.
  const asmjit::Operand op = x86::make_mem(kind_of("m"), 3, 9, -8, 0);
  REQUIRE(op.isMem());
  const auto& m = op.as<ax::Mem>();
  CHECK(m.baseId() == 3);
  CHECK(m.baseType() == RegType::kX86_Gpq);
  REQUIRE(m.hasIndex());
  CHECK(m.indexType() == RegType::kX86_Gpq);
  CHECK(m.indexId() == 9);
  CHECK(m.shift() == 0);
  CHECK(m.offset() == -8);
}

TEST_CASE("operand factory: broadcasts repeat the element across the widest vector", "[operand_factory]") {
  struct Case {
    const char* token;
    int vec_bits;
    uint32_t bytes;
    ax::Mem::Broadcast bcst;
  };
  const Case cases[] = {
      {"m16bcst", 128, 2, ax::Mem::Broadcast::k1To8},  {"m16bcst", 256, 2, ax::Mem::Broadcast::k1To16},
      {"m16bcst", 512, 2, ax::Mem::Broadcast::k1To32}, {"m32bcst", 128, 4, ax::Mem::Broadcast::k1To4},
      {"m32bcst", 256, 4, ax::Mem::Broadcast::k1To8},  {"m32bcst", 512, 4, ax::Mem::Broadcast::k1To16},
      {"m64bcst", 128, 8, ax::Mem::Broadcast::k1To2},  {"m64bcst", 256, 8, ax::Mem::Broadcast::k1To4},
      {"m64bcst", 512, 8, ax::Mem::Broadcast::k1To8},
      // No vector width known: the broadcast spans a zmm (the only width without AVX512VL).
      {"m32bcst", 0, 4, ax::Mem::Broadcast::k1To16},   {"m64bcst", 0, 8, ax::Mem::Broadcast::k1To8},
  };
  for (const auto& c : cases) {
    INFO(c.token << " over " << c.vec_bits << " bits");
    const asmjit::Operand op = x86::make_mem(kind_of(c.token), 4, asmjit::BaseReg::kIdBad, 64, c.vec_bits);
    REQUIRE(op.isMem());
    const auto& m = op.as<ax::Mem>();
    CHECK(m.size() == c.bytes);  // the element read, not the vector
    CHECK(m.hasBroadcast());
    CHECK(m.getBroadcast() == c.bcst);
    CHECK(m.baseId() == 4);
    CHECK(m.offset() == 64);
  }
}

TEST_CASE("operand factory: gather addresses index a vector at the scale of its elements", "[operand_factory]") {
  struct Case {
    const char* token;
    RegType index_type;
    uint32_t shift;  // log2 of the scale: lane i reads element i
  };
  const Case cases[] = {
      {"vm32x", RegType::kX86_Xmm, 2}, {"vm32y", RegType::kX86_Ymm, 2}, {"vm32z", RegType::kX86_Zmm, 2},
      {"vm64x", RegType::kX86_Xmm, 3}, {"vm64y", RegType::kX86_Ymm, 3}, {"vm64z", RegType::kX86_Zmm, 3},
  };
  for (const auto& c : cases) {
    INFO(c.token);
    const asmjit::Operand op = x86::make_mem(kind_of(c.token), 5, 21, 16, 512);
    REQUIRE(op.isMem());
    const auto& m = op.as<ax::Mem>();
    CHECK(m.baseType() == RegType::kX86_Gpq);
    CHECK(m.baseId() == 5);
    REQUIRE(m.hasIndex());
    CHECK(m.indexType() == c.index_type);
    CHECK(m.indexId() == 21);
    CHECK(m.shift() == c.shift);
    CHECK(m.offset() == 16);
    CHECK_FALSE(m.hasBroadcast());
  }
}

TEST_CASE("operand factory: literal registers are their own number at their own width", "[operand_factory]") {
  struct Case {
    const char* token;
    RegExpect want;
  };
  const Case cases[] = {
      {"al", {RegType::kX86_GpbLo, 1, ax::Gp::kIdAx}}, {"ax", {RegType::kX86_Gpw, 2, ax::Gp::kIdAx}},
      {"eax", {RegType::kX86_Gpd, 4, ax::Gp::kIdAx}},  {"rax", {RegType::kX86_Gpq, 8, ax::Gp::kIdAx}},
      {"cl", {RegType::kX86_GpbLo, 1, ax::Gp::kIdCx}}, {"cx", {RegType::kX86_Gpw, 2, ax::Gp::kIdCx}},
      {"ecx", {RegType::kX86_Gpd, 4, ax::Gp::kIdCx}},  {"rcx", {RegType::kX86_Gpq, 8, ax::Gp::kIdCx}},
      {"dl", {RegType::kX86_GpbLo, 1, ax::Gp::kIdDx}}, {"dx", {RegType::kX86_Gpw, 2, ax::Gp::kIdDx}},
      {"edx", {RegType::kX86_Gpd, 4, ax::Gp::kIdDx}},  {"rdx", {RegType::kX86_Gpq, 8, ax::Gp::kIdDx}},
      {"ebx", {RegType::kX86_Gpd, 4, ax::Gp::kIdBx}},  {"rbx", {RegType::kX86_Gpq, 8, ax::Gp::kIdBx}},
      {"esi", {RegType::kX86_Gpd, 4, ax::Gp::kIdSi}},  {"rsi", {RegType::kX86_Gpq, 8, ax::Gp::kIdSi}},
      {"edi", {RegType::kX86_Gpd, 4, ax::Gp::kIdDi}},  {"rdi", {RegType::kX86_Gpq, 8, ax::Gp::kIdDi}},
      {"xmm0", {RegType::kX86_Xmm, 16, 0}},            {"k0", {RegType::kX86_KReg, kMaskBytes, 0}},
  };
  for (const auto& c : cases) {
    INFO(c.token);
    const auto k = kind_of(c.token);
    REQUIRE(k.cls == x86::OpClass::fixed);
    check_reg(x86::make_fixed(k), c.want);
  }
  // A name outside the table gives an empty operand rather than a guess.
  x86::OperandKind unknown;
  unknown.cls = x86::OpClass::fixed;
  unknown.fixed = "rbp";
  unknown.bits = 64;
  CHECK(x86::make_fixed(unknown).isNone());
}

TEST_CASE("operand factory: the probe immediate is 1 unless given", "[operand_factory]") {
  const asmjit::Imm one = x86::probe_imm();
  CHECK(one.isImm());
  CHECK(one.value() == 1);
  CHECK(x86::probe_imm(0).value() == 0);
  CHECK(x86::probe_imm(200).value() == 200);
  CHECK(x86::probe_imm(-5).value() == -5);
  CHECK(x86::probe_imm(int64_t{1} << 40).value() == int64_t{1} << 40);
}
