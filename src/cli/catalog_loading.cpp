#include "cli/catalog_loading.hpp"

#include <algorithm>

#include <spdlog/spdlog.h>

#include "asm/target.hpp"
#include "catalog/catalog.hpp"
#include "harness/probe_runner.hpp"

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

Expected<ProbeSpec> spec_for_text(const std::string& text, const std::vector<ProbeSpec>& catalog) {
  auto form = isa::host_target().resolve(text);
  if (!form) return make_error(form.error());
  ProbeSpec s;
  s.text = form->display;
  s.group = "inst";
  s.origin = "command line";
  for (const auto& row : catalog)
    if (row.text == s.text) s = row;
  return s;
}

std::vector<std::string> features_missing(const ProbeSpec& spec, const CpuInfo& cpu) {
  auto form = isa::host_target().resolve(spec.text);
  std::vector<std::string> needed = form ? form->features : std::vector<std::string>{};
  needed.insert(needed.end(), spec.requires_features.begin(), spec.requires_features.end());
  return missing_features(cpu, needed);
}

Expected<std::vector<ProbeSpec>> specs_for_texts(const std::vector<std::string>& texts,
                                                 const std::vector<ProbeSpec>& catalog) {
  std::vector<ProbeSpec> specs;
  bool bad = false;
  for (const auto& t : texts) {
    auto s = spec_for_text(t, catalog);
    if (!s) {
      spdlog::error("{}", s.error());
      bad = true;
      continue;
    }
    specs.push_back(s.value());
  }
  if (bad) return make_error("invalid instruction text");
  return specs;
}

}  // namespace peakprobe::cli
