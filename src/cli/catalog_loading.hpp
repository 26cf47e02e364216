#pragma once
#include <vector>

#include "cli/commands.hpp"
#include "peakprobe/expected.hpp"
#include "peakprobe/probe_spec.hpp"

namespace peakprobe::cli {
// The built-in catalog plus every --catalog file; a row of a later file replaces an equal one.
Expected<std::vector<ProbeSpec>> load_catalogs(const GlobalOptions& g);
}  // namespace peakprobe::cli
