#include "catalog/form_selection.hpp"
#include "util/text.hpp"

#include <algorithm>
#include <cctype>

namespace peakprobe {
namespace {

std::vector<std::string> split_commas(const std::string& s) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= s.size()) {
    const size_t comma = s.find(',', start);
    std::string part = s.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    while (!part.empty() && std::isspace(static_cast<unsigned char>(part.front()))) part.erase(part.begin());
    while (!part.empty() && std::isspace(static_cast<unsigned char>(part.back()))) part.pop_back();
    if (!part.empty()) out.push_back(lower(part));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

}  // namespace

Expected<std::vector<isa::ListedForm>> select_forms(const std::vector<isa::ListedForm>& all,
                                                    const std::vector<std::string>& families,
                                                    const FormSelection& selection) {
  std::vector<std::string> groups;
  for (const auto& g : selection.groups)
    for (const auto& part : split_commas(g)) {
      if (std::find(families.begin(), families.end(), part) == families.end()) {
        std::string known;
        for (const auto& f : families) known += (known.empty() ? "" : ", ") + f;
        return make_error("--group '" + part + "': no such family (known: " + known + ")");
      }
      groups.push_back(part);
    }
  const std::vector<std::string> needles = split_commas(selection.filter);
  const std::string isa = lower(selection.isa);
  std::vector<isa::ListedForm> out;
  for (const auto& f : all) {
    if (!groups.empty() && std::find(groups.begin(), groups.end(), f.family) == groups.end()) continue;
    if (!needles.empty()) {
      const std::string text = lower(f.text);
      if (std::none_of(needles.begin(), needles.end(), [&](const std::string& n) { return text.find(n) != std::string::npos; }))
        continue;
    }
    if (!isa.empty() && std::none_of(f.features.begin(), f.features.end(),
                                     [&](const std::string& feat) { return feat.rfind(isa, 0) == 0; }))
      continue;
    out.push_back(f);
  }
  return out;
}

}  // namespace peakprobe
