// Operations per instruction for AArch64 forms no catalog row describes (a64::arithmetic_of),
// checked against values worked out by hand from the catalog's convention (probes/a64.catalog
// header): a multiply-accumulate lane counts 2, other arithmetic 1 per lane, a pairwise add 1 per
// result lane, a reduction of n lanes n - 1, a dot product or matrix multiply-accumulate 2 per
// element product; scalar general-register forms count once. Each arrangement (8b..2d), scalar and
// vector, by-element and whole-vector forms are listed: the count follows the result's lanes, and a
// wrong lane count would scale a roof without any other sign. Forms without arithmetic (moves,
// logic, loads and stores, permutes, conversions) must give nothing, so `peakprobe table` does not
// invent a roof for them.
#include <catch2/catch.hpp>

#include <optional>
#include <string>

#include "arithmetic_check.hpp"
#include "asm/a64/arithmetic.hpp"
#include "catalog/catalog.hpp"

using namespace peakprobe;

namespace {

using Expect = test::ArithmeticExpect;

std::optional<a64::Arithmetic> arithmetic(const std::string& text) {
  return test::arithmetic_of_text(text, [](const std::string& t) { return a64::resolve_inst(t); },
                                  [](const a64::InstForm& f) { return a64::arithmetic_of(f); });
}

void check_all(std::initializer_list<Expect> cases) {
  test::check_arithmetic(cases, [](const std::string& t) { return a64::resolve_inst(t); },
                         [](const a64::InstForm& f) { return a64::arithmetic_of(f); });
}

}  // namespace

TEST_CASE("a64 arithmetic: multiply-accumulate lanes count 2", "[a64][arithmetic]") {
  check_all({
      {"fmla v.4s, v.4s, v.4s", 8, "f32"},  // the catalog header's examples: 8, 4, 16
      {"fmla v.2d, v.2d, v.2d", 4, "f64"},
      {"fmla v.8h, v.8h, v.8h", 16, "f16"},
      {"fmla v.2s, v.2s, v.2s", 4, "f32"},
      {"fmla v.4h, v.4h, v.4h", 8, "f16"},
      {"fmls v.2d, v.2d, v.2d", 4, "f64"},
      // By element: the lanes of the result, not of the indexed operand.
      {"fmla v.4s, v.4s, v.s[1]", 8, "f32"},
      {"fmla v.8h, v.8h, v.h[1]", 16, "f16"},
      {"fmla v.2d, v.2d, v.d[1]", 4, "f64"},
      // Scalar fused multiply-adds: one lane.
      {"fmadd d, d, d, d", 2, "f64"},
      {"fmadd s, s, s, s", 2, "f32"},
      {"fmadd h, h, h, h", 2, "f16"},
      {"fnmsub d, d, d, d", 2, "f64"},
      // Integer vector multiply-accumulate.
      {"mla v.16b, v.16b, v.16b", 32, "i8"},
      {"mla v.4s, v.4s, v.4s", 8, "i32"},
      {"mls v.8h, v.8h, v.8h", 16, "i16"},
      {"sqrdmlah v.8h, v.8h, v.8h", 16, "i16"},
      {"saba v.16b, v.16b, v.16b", 32, "i8"},
      {"uaba v.4s, v.4s, v.4s", 8, "i32"},
      // General-register multiply-adds: one each.
      {"madd x, x, x, x", 2, "i64"},
      {"madd w, w, w, w", 2, "i32"},
      {"msub x, x, x, x", 2, "i64"},
  });
}

TEST_CASE("a64 arithmetic: other arithmetic counts 1 per result lane", "[a64][arithmetic]") {
  check_all({
      // Floating point: each arrangement, scalar once.
      {"fadd v.4s, v.4s, v.4s", 4, "f32"},
      {"fadd v.2s, v.2s, v.2s", 2, "f32"},
      {"fadd v.2d, v.2d, v.2d", 2, "f64"},
      {"fadd v.8h, v.8h, v.8h", 8, "f16"},
      {"fadd d, d, d", 1, "f64"},
      {"fadd s, s, s", 1, "f32"},
      {"fadd h, h, h", 1, "f16"},
      {"fsub v.4s, v.4s, v.4s", 4, "f32"},
      {"fmul v.2d, v.2d, v.2d", 2, "f64"},
      {"fmul v.4s, v.4s, v.s[0]", 4, "f32"},
      {"fmulx v.2d, v.2d, v.d[1]", 2, "f64"},
      {"fdiv v.4s, v.4s, v.4s", 4, "f32"},
      {"fdiv d, d, d", 1, "f64"},
      {"fsqrt v.2d, v.2d", 2, "f64"},
      {"fmaxnm v.8h, v.8h, v.8h", 8, "f16"},
      {"fmin s, s, s", 1, "f32"},
      {"fabd v.4s, v.4s, v.4s", 4, "f32"},
      {"fabs v.2d, v.2d", 2, "f64"},
      {"fneg v.4s, v.4s", 4, "f32"},
      {"fcmeq v.4s, v.4s, v.4s", 4, "f32"},
      {"fcmgt v.2d, v.2d, v.2d", 2, "f64"},
      {"frecpe v.4s, v.4s", 4, "f32"},
      // Integer vectors: the arrangement's element size.
      {"add v.16b, v.16b, v.16b", 16, "i8"},
      {"add v.8b, v.8b, v.8b", 8, "i8"},
      {"add v.8h, v.8h, v.8h", 8, "i16"},
      {"add v.4s, v.4s, v.4s", 4, "i32"},
      {"add v.2d, v.2d, v.2d", 2, "i64"},
      {"sub v.4h, v.4h, v.4h", 4, "i16"},
      {"mul v.4s, v.4s, v.4s", 4, "i32"},
      {"mul v.8h, v.8h, v.h[1]", 8, "i16"},
      {"sqadd v.16b, v.16b, v.16b", 16, "i8"},
      {"abs v.2d, v.2d", 2, "i64"},
      {"smax v.4s, v.4s, v.4s", 4, "i32"},
      {"umin v.8h, v.8h, v.8h", 8, "i16"},
      {"cmeq v.16b, v.16b, v.16b", 16, "i8"},
      {"cmhi v.2d, v.2d, v.2d", 2, "i64"},
      {"shl v.4s, v.4s, #imm", 4, "i32"},
      {"sshr v.2d, v.2d, #imm", 2, "i64"},
      {"ushl v.8h, v.8h, v.8h", 8, "i16"},
      {"sqdmulh v.4s, v.4s, v.4s", 4, "i32"},
      {"cnt v.16b, v.16b", 16, "i8"},
      {"cnt v.8b, v.8b", 8, "i8"},
      {"urhadd v.16b, v.16b, v.16b", 16, "i8"},
      // Pairwise adds: one per result lane.
      {"addp v.4s, v.4s, v.4s", 4, "i32"},  // the catalog header's example
      {"faddp v.2d, v.2d, v.2d", 2, "f64"},
      {"faddp s, v.2s", 1, "f32"},
      {"addp d, v.2d", 1, "i64"},
      // General registers: once per instruction, in the register's width.
      {"add x, x, x", 1, "i64"},
      {"add w, w, w", 1, "i32"},
      {"sub x, x, #imm", 1, "i64"},
      {"adds w, w, w", 1, "i32"},
      {"neg x, x", 1, "i64"},
      {"cmp w, w", 1, "i32"},
      {"mul x, x, x", 1, "i64"},
      {"udiv w, w, w", 1, "i32"},
      {"sdiv x, x, x", 1, "i64"},
      {"umulh x, x, x", 1, "i64"},
      {"lsl x, x, #imm", 1, "i64"},
      {"asrv w, w, w", 1, "i32"},
      {"clz x, x", 1, "i64"},
  });
}

TEST_CASE("a64 arithmetic: reductions of n lanes count n - 1", "[a64][arithmetic]") {
  check_all({
      {"addv s, v.4s", 3, "i32"},  // the catalog header's example
      {"addv b, v.16b", 15, "i8"},
      {"addv b, v.8b", 7, "i8"},
      {"addv h, v.8h", 7, "i16"},
      {"addv h, v.4h", 3, "i16"},
      {"smaxv b, v.16b", 15, "i8"},
      {"uminv s, v.4s", 3, "i32"},
      {"fmaxv s, v.4s", 3, "f32"},
      {"fminnmv h, v.8h", 7, "f16"},
      {"fmaxnmv h, v.4h", 3, "f16"},
  });
}

TEST_CASE("a64 arithmetic: dot products and matrix multiplies count 2 per element product",
          "[a64][arithmetic]") {
  check_all({
      // Four byte products per 32-bit lane.
      {"sdot v.4s, v.16b, v.16b", 32, "i8"},  // the catalog header's example
      {"udot v.2s, v.8b, v.8b", 16, "i8"},
      {"sdot v.4s, v.16b, v.4b[1]", 32, "i8"},
      {"udot v.2s, v.8b, v.4b[3]", 16, "i8"},
      {"usdot v.4s, v.16b, v.16b", 32, "i8"},
      {"usdot v.2s, v.8b, v.8b", 16, "i8"},
      {"sudot v.4s, v.16b, v.4b[0]", 32, "i8"},
      // Two bf16 products per f32 lane.
      {"bfdot v.4s, v.8h, v.8h", 16, "bf16"},  // the catalog header's example
      {"bfdot v.2s, v.4h, v.4h", 8, "bf16"},
      {"bfdot v.4s, v.8h, v.2h[1]", 16, "bf16"},
      // A 2 x 8 by 8 x 2 byte matrix product: 32 products; a 2 x 4 by 4 x 2 bf16 one: 16.
      {"smmla v.4s, v.16b, v.16b", 64, "i8"},  // the catalog header's example
      {"ummla v.4s, v.16b, v.16b", 64, "i8"},
      {"usmmla v.4s, v.16b, v.16b", 64, "i8"},
      {"bfmmla v.4s, v.8h, v.8h", 32, "bf16"},  // the catalog header's example
      // One bf16 product (even or odd halves) into each of 4 f32 lanes.
      {"bfmlalb v.4s, v.8h, v.8h", 8, "bf16"},
      {"bfmlalt v.4s, v.8h, v.8h", 8, "bf16"},
      {"bfmlalb v.4s, v.8h, v.h[1]", 8, "bf16"},
  });
}

TEST_CASE("a64 arithmetic: moves, logic, memory, permutes and conversions give nothing", "[a64][arithmetic]") {
  for (const char* text : {
           // moves and bitwise logic
           "mov v.16b, v.16b", "mov x, x", "orr v.16b, v.16b, v.16b", "and x, x, x", "eor v.16b, v.16b, v.16b",
           "bic v.16b, v.16b, v.16b", "bsl v.16b, v.16b, v.16b", "movi v.4s, #imm",
           // loads and stores
           "ldr q, [x]", "str q, [x]", "ldr x, [x, #imm]", "ldp q, q, [x, #imm]", "ld1 {v.16b, v.16b}, [x]",
           // lane transfers, permutes and table lookups
           "dup v.4s, w", "dup v.4s, v.s[1]", "ext v.16b, v.16b, v.16b, #imm", "zip1 v.4s, v.4s, v.4s",
           "uzp2 v.8h, v.8h, v.8h", "rev64 v.16b, v.16b", "tbl v.16b, {v.16b, v.16b}, v.16b",
           // conversions and bit-field moves
           "fcvtzs w, s", "scvtf s, w", "fcvtzs v.4s, v.4s", "ubfx x, x, #imm, #imm", "rbit x, x"}) {
    INFO(text);
    CHECK_FALSE(arithmetic(text).has_value());
  }
}

// Forms whose counts follow rules beyond "per lane of the result": a widening or narrowing form is
// counted in its source element type (smull v.8h, v.8b, v.8b is i8, fmlal f16, saddlv h, v.16b i8,
// shrn v.8b, v.8h i16), frecps and frsqrts are fused (2 - a x b: 2 a lane), shift-and-accumulate
// 2 a lane, an add of a shifted register 2, an LSE atomic add or compare 1.
TEST_CASE("a64 arithmetic: widening forms, fused steps and shifted operands as the catalog counts them",
          "[a64][arithmetic]") {
  check_all({
      {"smull v.8h, v.8b, v.8b", 8, "i8"},
      {"umull2 v.2d, v.4s, v.4s", 2, "i32"},
      {"smlal v.4s, v.4h, v.4h", 8, "i16"},
      {"smull x, w, w", 1, "i32"},
      {"umaddl x, w, w, x", 2, "i32"},
      {"saddlv h, v.16b", 15, "i8"},
      {"sadalp v.4s, v.8h", 8, "i16"},
      {"uaddlp v.8h, v.16b", 8, "i8"},
      {"shrn v.8b, v.8h, #imm", 8, "i16"},
      {"fmlal v.4s, v.4h, v.4h", 8, "f16"},
      {"frecps v.4s, v.4s, v.4s", 8, "f32"},
      {"frsqrts v.2d, v.2d, v.2d", 4, "f64"},
      {"add x, x, x, lsl #imm", 2, "i64"},
      {"sub x, x, x, lsl #imm", 2, "i64"},
      {"usra v.4s, v.4s, #imm", 8, "i32"},
      {"ssra v.2d, v.2d, #imm", 4, "i64"},
      {"fcmla v.4s, v.4s, v.4s, #imm", 8, "f32"},
      {"fcadd v.4s, v.4s, v.4s, #imm", 4, "f32"},
      {"frintn v.4s, v.4s", 4, "f32"},
      {"frintz s, s", 1, "f32"},
      {"fcmp d, d", 1, "f64"},
      {"sli v.4s, v.4s, #imm", 4, "i32"},
      {"extr x, x, x, #imm", 1, "i64"},
      {"csinc x, x, x, ne", 1, "i64"},
      {"ldadd x, x, [x]", 1, "i64"},
      {"stadd x, [x]", 1, "i64"},
      {"cas x, x, [x]", 1, "i64"},
      // The aliases of a shifted-register add or subtract are two ops too; an immediate shifted by
      // 12 is one add.
      {"cmp x, x, lsl #imm", 2, "i64"},
      {"neg x, x, lsl #imm", 2, "i64"},
      {"add x, x, #imm, lsl #imm", 1, "i64"},
      // A narrow atomic adds bytes or halfwords, whatever its register.
      {"ldaddb w, w, [x]", 1, "i8"},
      {"ldaddalh w, w, [x]", 1, "i16"},
      {"casb w, w, [x]", 1, "i8"},
      // Upper-half widening forms count like their lower-half twins.
      {"saddl2 v.4s, v.8h, v.8h", 4, "i16"},
      {"umlsl2 v.2d, v.4s, v.4s", 4, "i32"},
      {"sqdmull v.4s, v.4h, v.4h", 4, "i16"},
  });
}

// arithmetic_of is for forms the catalog does not describe, by the catalog's convention: wherever
// it gives a count for a catalog row, the count and type must be the row's (a row it leaves out is
// no error: the catalog has the figure).
TEST_CASE("a64 arithmetic: every catalog row it counts agrees with the catalog", "[a64][arithmetic]") {
  auto rows = default_catalog();
  REQUIRE(rows.ok());
  size_t counted = 0;
  for (const auto& row : *rows) {
    auto f = a64::resolve_inst(row.text);
    if (!f) continue;  // rows the catalog test checks resolve; this one is about counts
    const auto a = a64::arithmetic_of(*f);
    if (!a) continue;
    ++counted;
    INFO(row.origin << ": " << row.text << " counted " << a->ops << " " << a->dtype);
    CHECK(a->ops == row.ops_per_instruction);
    if (row.ops_per_instruction > 0) CHECK(a->dtype == row.dtype);
  }
  CHECK(counted >= rows->size() / 2);
}
