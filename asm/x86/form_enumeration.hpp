// Every instruction form asmjit's x86 database can encode, spelled as `inst` takes it: one form per
// operand signature and register width (the widths and memory sizes of a signature are expanded,
// an immediate takes its smallest encodable size). What `peakprobe table` measures.
#pragma once
#include <string>
#include <vector>

#include "asm/target.hpp"

namespace peakprobe::x86 {

// Sorted by mnemonic, then by spelling; no two entries share a text (resolve_inst(text).display ==
// text for every form without a refusal). Families: gp, x87, mmx, sse, avx (VEX), avx512 (EVEX),
// amx, system (operands of the OS's or of removed extensions). Built once (about 80 ms).
const std::vector<isa::ListedForm>& enumerate_forms();

// The family names enumerate_forms uses, in the order `table --group` lists them.
std::vector<std::string> form_families();

}  // namespace peakprobe::x86
