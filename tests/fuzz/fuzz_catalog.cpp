// Catalog files (src/catalog/catalog): rows "instruction | ops | dtype | requires | group".
#include "catalog/catalog.hpp"
#include "fuzz_util.hpp"

using namespace peakprobe;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 16384) return 0;
  const std::string text = fuzz::text_of(data, size);
  auto rows = parse_catalog(text, "fuzz.catalog");
  if (rows) {
    for (const auto& r : *rows) {
      if (r.text.empty() || r.group.empty()) fuzz::fail("a parsed row lacks text or group", r.origin);
      if (!(r.ops_per_instruction >= 0)) fuzz::fail("negative ops", r.origin);
      (void)matches_filter(r, "fp,zmm");
    }
  } else if (rows.error().rfind("fuzz.catalog:", 0) != 0) {
    fuzz::fail("a catalog error does not name file and line", rows.error());
  }
  return 0;
}
