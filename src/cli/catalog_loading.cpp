#include "cli/catalog_loading.hpp"

#include <algorithm>

#include "catalog/catalog.hpp"

namespace peakprobe::cli {

Expected<std::vector<ProbeSpec>> load_catalogs(const GlobalOptions& g) {
  auto all = default_catalog();
  if (!all) return make_error(all.error());
  for (const auto& path : g.catalogs) {
    auto extra = load_catalog_file(path);
    if (!extra) return make_error(extra.error());
    for (auto& row : extra.value()) {
      auto same = std::find_if(all->begin(), all->end(), [&](const ProbeSpec& s) { return s.text == row.text; });
      if (same != all->end()) *same = row;
      else all->push_back(row);
    }
  }
  return all;
}

}  // namespace peakprobe::cli
