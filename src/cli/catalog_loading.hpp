#pragma once
#include <vector>

#include "cli/commands.hpp"
#include "peakprobe/cpu_info.hpp"
#include "peakprobe/expected.hpp"
#include "peakprobe/probe_spec.hpp"

namespace peakprobe::cli {
// The built-in catalog plus every --catalog file; a row of a later file replaces an equal one.
Expected<std::vector<ProbeSpec>> load_catalogs(const GlobalOptions& g);
// A spec for instruction text: validated through asmjit, with ops, dtype and group from the catalog
// row of the same form when there is one.
Expected<ProbeSpec> spec_for_text(const std::string& text, const std::vector<ProbeSpec>& catalog);
// The CPU features a catalog row needs that `cpu` lacks (its form's and the row's own); empty when
// this CPU runs it. A text the target cannot resolve needs only the row's own.
std::vector<std::string> features_missing(const ProbeSpec& spec, const CpuInfo& cpu);
// spec_for_text for each text; logs every bad one and fails if any is bad.
Expected<std::vector<ProbeSpec>> specs_for_texts(const std::vector<std::string>& texts,
                                                 const std::vector<ProbeSpec>& catalog);
}  // namespace peakprobe::cli
