#include "catalog/sets.hpp"

#include <sstream>

#include "asm/target.hpp"
#include "catalog/embedded_catalog.hpp"
#include "util/text.hpp"

namespace peakprobe {
Expected<std::vector<InstructionSet>> parse_sets(const std::string& text, const std::string& file) {
  std::vector<InstructionSet> sets;
  std::istringstream in(text);
  std::string line;
  int n = 0;
  while (std::getline(in, line)) {
    ++n;
    const std::string t = trim(line);
    if (t.empty() || t[0] == '#') continue;
    const std::string where = file + ":" + std::to_string(n);
    const size_t bar = t.find('|');
    if (bar == std::string::npos) return make_error(where + ": expected 'name | instruction; instruction; ...'");
    InstructionSet s;
    s.name = trim(t.substr(0, bar));
    s.origin = where;
    if (s.name.empty()) return make_error(where + ": empty set name");
    std::istringstream list(t.substr(bar + 1));
    std::string item;
    while (std::getline(list, item, ';')) {
      item = trim(item);
      if (item.empty()) continue;
      auto form = isa::host_target().resolve(item);
      if (!form) return make_error(where + ": " + form.error());
      s.instructions.push_back(form->display);
    }
    if (s.instructions.size() < 2) return make_error(where + ": a set needs at least two instructions");
    for (const auto& other : sets)
      if (other.name == s.name) return make_error(where + ": set '" + s.name + "' repeats " + other.origin);
    sets.push_back(std::move(s));
  }
  return sets;
}

Expected<std::vector<InstructionSet>> default_sets() {
  std::vector<InstructionSet> all;
  for (const auto& c : embedded_catalogs()) {
    if (!c.name.ends_with(".sets")) continue;
    auto sets = parse_sets(c.text, c.name);
    if (!sets) return make_error(sets.error());
    all.insert(all.end(), sets->begin(), sets->end());
  }
  return all;
}

}  // namespace peakprobe
