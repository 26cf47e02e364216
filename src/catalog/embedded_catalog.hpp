// The catalogs in probes/, compiled into the binary by cmake/embed_catalog.cmake.
#pragma once
#include <string>
#include <vector>

namespace peakprobe {

struct EmbeddedCatalog {
  std::string name;  // "probes/<isa>.catalog"
  std::string text;
};

const std::vector<EmbeddedCatalog>& embedded_catalogs();

}  // namespace peakprobe
