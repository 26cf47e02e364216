// Which of the ISA's whole form list (isa::Target::all_forms) a `peakprobe table` run measures:
// --filter on the text, --group on the family, --isa on the features a form needs.
#pragma once
#include <string>
#include <vector>

#include "asm/target.hpp"
#include "peakprobe/expected.hpp"

namespace peakprobe {

struct FormSelection {
  std::string filter;               // 'a,b': the text contains a or b (case-insensitive); "" = all
  std::vector<std::string> groups;  // family names; empty = all
  std::string isa;                  // a form needs a feature whose name starts with this; "" = all
};

// The chosen forms, in list order. An unknown family is an error that names the known ones.
Expected<std::vector<isa::ListedForm>> select_forms(const std::vector<isa::ListedForm>& all,
                                                    const std::vector<std::string>& families,
                                                    const FormSelection& selection);

}  // namespace peakprobe
