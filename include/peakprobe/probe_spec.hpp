// One instruction form to probe: a catalog row or an `inst` argument. Data only.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace peakprobe {

struct ProbeSpec {
  std::string text;                   // the instruction form in the ISA's notation (Target::help_texts().notation)
  double ops_per_instruction = 0.0;   // FLOPs or integer ops per instruction; 0 = not an arithmetic op
  std::string dtype = "-";            // f64 f32 f16 bf16 i64 i32 i16 i8 u8 or "-"
  std::vector<std::string> requires_features;  // lower case asmjit names; empty = derive from asmjit
  std::string group = "misc";         // e.g. fp.fma, int.alu, mem.load
  std::string origin;                 // "probes/<isa>.catalog:42", "my.catalog:3" or "command line"
  std::optional<int64_t> imm;         // value of every immediate operand (`inst --imm N`); default: per form
};

}  // namespace peakprobe
