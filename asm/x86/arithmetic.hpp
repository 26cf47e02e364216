// Operations per instruction from the mnemonic and the operand width, by the catalog's convention
// (probes/x86.catalog header: an element add/sub/mul/div/sqrt/min/max counts 1, an FMA lane 2, a dot
// product 2 per element product), for forms no catalog row describes (`peakprobe table`).
#pragma once
#include <optional>
#include <string>

#include "asm/x86/inst_form.hpp"

namespace peakprobe::x86 {

struct Arithmetic {
  double ops = 0;
  std::string dtype;
};

// Floating-point arithmetic (packed and scalar, SSE/AVX/AVX-512, f16/f32/f64: element arithmetic,
// compares, reciprocals, rounding, horizontal adds), packed integer arithmetic (add, subtract, abs,
// min/max, compare, shift, rotate, multiply, multiply-add, population and leading-zero counts;
// i8-i64) and the bf16/int8/int16 dot products; nullopt for anything else (the catalog's rows cover
// the rest).
std::optional<Arithmetic> arithmetic_of(const InstForm& form);

}  // namespace peakprobe::x86
