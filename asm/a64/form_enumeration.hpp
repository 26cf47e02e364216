// Every AArch64 instruction form asmjit's encoder accepts among a fixed set of operand signatures
// (general, scalar SIMD&FP, vector at each arrangement, by element, widening and narrowing, lists,
// loads and stores), spelled as `inst` takes it. What `peakprobe table` measures on AArch64.
#pragma once
#include <string>
#include <vector>

#include "asm/target.hpp"

namespace peakprobe::a64 {

// Sorted by mnemonic, then by spelling; no two entries share a text. Families: gp, fp (scalar
// SIMD&FP), asimd (vectors), mem (loads, stores, atomics), system.
const std::vector<isa::ListedForm>& enumerate_forms();
std::vector<std::string> form_families();

}  // namespace peakprobe::a64
