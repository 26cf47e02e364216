// Operations per instruction for AArch64 forms no catalog row describes, by the catalog's
// convention (probes/a64.catalog header): a multiply-accumulate lane counts 2, a dot product 2 per
// element product, other arithmetic 1 per lane; moves, logic, loads, stores and conversions none.
#pragma once
#include <optional>
#include <string>

#include "asm/a64/inst_form.hpp"

namespace peakprobe::a64 {

struct Arithmetic {
  double ops = 0;
  std::string dtype;
};
std::optional<Arithmetic> arithmetic_of(const InstForm& form);

}  // namespace peakprobe::a64
