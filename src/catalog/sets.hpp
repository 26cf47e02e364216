// Named instruction sets (probes/*.sets): `name | instruction; instruction; ...`, for pair matrices.
#pragma once
#include <string>
#include <vector>

#include "peakprobe/expected.hpp"

namespace peakprobe {

struct InstructionSet {
  std::string name;
  std::vector<std::string> instructions;  // canonical texts
  std::string origin;                     // file:line
};

Expected<std::vector<InstructionSet>> parse_sets(const std::string& text, const std::string& file);
// The sets shipped in the binary.
Expected<std::vector<InstructionSet>> default_sets();

}  // namespace peakprobe
