// AArch64 instruction text -> a form asmjit's AArch64 backend can encode. The text is the ARM ARM's
// assembly with operand kinds in place of registers (registers with numbers are accepted too, and
// read as their kinds):
//   x w            general registers (64/32 bits)
//   b h s d q      SIMD&FP registers as scalars of 8..128 bits
//   v.8b v.16b v.4h v.8h v.2s v.4s v.1d v.2d   vectors with an arrangement
//   v.s[1] v.4b[0] element of a vector (literal index); v.4b[i] / v.2h[i] are the dot products' groups
//   {v.16b, v.16b} consecutive registers, #imm an immediate, lsl #imm a shifted register operand,
//   [x] [x, #imm] [x, x] [x, x, lsl #imm] memory, eq ne ... a condition.
// A form is resolved by encoding it: asmjit's encoder is the judge of which operand combinations the
// ISA has (one mnemonic may name a general-register and a vector instruction, both are tried).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include <asmjit/core.h>

#include "peakprobe/expected.hpp"

namespace peakprobe::a64 {

enum class OpKind { gp, fpr, vec, elem, list, imm, shift, mem, cond };

// The register file an operand lives in: general (x/w) or SIMD&FP (b..q, v).
enum class RegFile { none, gp, simd };

struct OpSpec {
  OpKind kind = OpKind::gp;
  std::string text;     // canonical spelling
  int bits = 0;         // gp: 32/64; fpr: 8..128; vec/list: 64/128 (register part used); elem: element bits
  char elem = 0;        // vec/elem/list: 'b' 'h' 's' 'd' (elem groups: '4' for 4b, '2' for 2h)
  int lanes = 0;        // vec/list: elements of `elem` in the arrangement
  int index = 0;        // elem: element index
  int count = 0;        // list: registers in the list
  // mem: an index register, its shift, an immediate offset; gp: the zero register (xzr/wzr).
  bool mem_index = false, mem_offset = false;
  bool offset_open = false;  // mem: "#imm", the planner picks the offset (else the text's number)
  int mem_shift = -1;   // -1: none
  int shift_op = 0;     // shift: asmjit::arm::ShiftOp
  uint8_t cond = 0;     // cond: asmjit::arm::CondCode
  RegFile file() const {
    return kind == OpKind::gp ? RegFile::gp
           : (kind == OpKind::fpr || kind == OpKind::vec || kind == OpKind::elem || kind == OpKind::list) ? RegFile::simd
                                                                                                          : RegFile::none;
  }
  bool is_reg() const { return file() != RegFile::none; }
  int reg_count() const { return kind == OpKind::list ? count : is_reg() ? 1 : 0; }
};

struct InstForm {
  std::string display;   // canonical text
  std::string mnemonic;
  std::vector<OpSpec> ops;
  uint32_t inst_id = 0;  // the asmjit instruction that encodes it
  std::vector<std::string> features;  // Linux HWCAP names ("" for the base ISA)
  std::vector<int64_t> imms;          // per operand: the value of #imm operands (default 1)
  std::vector<bool> reads, writes;    // per operand, registers only (memory: the address is read)
};

Expected<InstForm> resolve_inst(const std::string& text);

// Every register and immediate operand of `f` as asmjit operands: register operand i takes ids[i]
// (a list: ids[i], ids[i]+1, ...; memory: ids[i] is the base and index_ids[i] the index).
std::vector<asmjit::Operand> make_operands(const InstForm& f, const std::vector<uint32_t>& ids,
                                           const std::vector<uint32_t>& index_ids,
                                           const std::vector<int32_t>& mem_offsets);
// Whether asmjit encodes instruction `id` with these operands.
bool encodes(uint32_t id, const std::vector<asmjit::Operand>& ops);

// The dtype a form computes in when the catalog does not say: from the mnemonic and the arrangement.
std::string infer_dtype(const InstForm& f);
// Why the form cannot be measured in a user-space loop, or "" when it can.
std::string refusal_reason(const InstForm& f);
// Every mnemonic asmjit's AArch64 backend knows, sorted, with its instruction ids.
const std::vector<std::pair<std::string, std::vector<uint32_t>>>& mnemonics();

}  // namespace peakprobe::a64
