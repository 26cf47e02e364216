// The host target's instruction texts as the command-line tests pass them to the executable (the
// ISA-neutral tests never spell one ISA's forms: tests/test_isa_seam.cpp).
#pragma once
#include <string>

#include "target_fixture.hpp"

namespace peakprobe::test {

// The target's one-cycle add and its multiply (the clock's ruler), as `inst` takes them.
inline std::string add_form() { return target().ruler_forms().one_cycle; }
inline std::string mul_form() { return target().ruler_forms().multi_cycle; }

// One instruction text as a double-quoted shell word (the target's forms hold no '"', '$' or '\').
inline std::string arg(const std::string& text) { return "\"" + text + "\""; }

}  // namespace peakprobe::test
