// Parsing of instruction text in Intel-manual operand notation ("vfmadd231ps ymm, ymm, m256"),
// independent of asmjit: a mnemonic, an optional encoding prefix and a list of operand kinds.
#pragma once
#include <string>
#include <vector>

#include "peakprobe/expected.hpp"

namespace peakprobe::x86 {

enum class OpClass { gp, vec, mask, tile, imm, mem, vmem, fixed };

struct OperandKind {
  OpClass cls = OpClass::gp;
  int bits = 0;            // gp 8..64, vec 128..512, imm 8..32, mem 8..512 (0 for untyped `m`)
  int bcst_bits = 0;       // m32bcst / m64bcst: element size broadcast from memory
  int index_bits = 0;      // vm32y: index vector width (128/256/512)
  int index_elem_bits = 0; // vm32y: 32, vm64z: 64
  std::string fixed;       // a register written literally ("cl", "rax")
  bool merge_mask = false; // "{k}" after the operand (AVX-512 write mask)
  bool relative = false;   // rel8/rel32: an imm that is a branch target relative to the next instruction
  std::string text;        // canonical spelling, e.g. "zmm {k}", "m32bcst"
};

struct InstText {
  std::string encoding;    // "", "vex" or "evex"
  std::string mnemonic;    // lower case
  std::vector<OperandKind> operands;
  std::string canonical() const;  // normalised spelling, e.g. "{vex} vpdpbusd ymm, ymm, ymm"
};

// Longer instruction text (not counting spaces) is refused before it is looked at.
inline constexpr std::size_t kMaxInstTextChars = 256;
Expected<InstText> parse_inst_text(const std::string& text);
Expected<OperandKind> parse_operand_kind(const std::string& token);

}  // namespace peakprobe::x86
