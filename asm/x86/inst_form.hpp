// An instruction form resolved through asmjit's instruction database: which instruction, which
// operand kinds, which operands are read and written, which CPU features it needs.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include <asmjit/x86.h>

#include "asm/x86/inst_text.hpp"
#include "peakprobe/expected.hpp"

namespace peakprobe::x86 {

struct OperandRole {
  bool read = false;
  bool write = false;
};

struct InstForm {
  InstText text;                       // as parsed (after implicit operands were made explicit)
  std::string display;                 // the text the user wrote, canonicalised
  asmjit::InstId id = 0;
  asmjit::InstOptions options = asmjit::InstOptions::kNone;
  std::vector<OperandRole> roles;      // per operand of `text.operands`
  std::vector<std::string> features;   // required CPU features (lower-case asmjit names)
  bool evex_native = false;            // encoded as EVEX: vector registers 16..31 are usable
  bool is_lea = false;                 // the memory operand is an address only, never accessed
  bool is_gather = false;
  // The {k} of the masked blends (vblendmps, vpblendmd, ...) selects between the two sources rather
  // than masking a write: the destination is written whole and never read.
  bool mask_selects = false;
  // General-register operands the instruction reads or writes without naming them (xgetbv's ecx,
  // cmpxchg's rax, cpuid's four), by asmjit id: a stream never hands them out as chain or source
  // registers. (Bases of implicit memory operands are not listed: forms with them are refused.)
  std::vector<uint32_t> implicit_gp;
  // The value of each immediate operand in generated streams (per operand index; others unused).
  // Default: the common case (see default_immediates); `inst --imm N` sets them all.
  std::vector<int64_t> imms;
};

// The common case for each immediate operand: 1 for most forms; a count other than 1 for
// general-purpose shifts and rotates (a count of 1 has its own, often faster, path: rcl/rcr); a
// nesting level of 0 for enter.
std::vector<int64_t> default_immediates(const InstText& text);

// Text -> form. Errors: unknown mnemonic (with the nearest names), impossible operand form.
Expected<InstForm> resolve_inst(const std::string& text);

// Up to `count` asmjit mnemonics closest to `name` (edit distance, then shared prefix).
std::vector<std::string> nearest_mnemonics(const std::string& name, size_t count = 4);

// asmjit's lower-case name for a CPU feature id, e.g. "avx512_f".
std::string feature_name(uint32_t feature_id);

}  // namespace peakprobe::x86
