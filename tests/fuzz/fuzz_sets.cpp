// Instruction-set files (src/catalog/sets): "name | instruction; instruction; ...".
#include "catalog/sets.hpp"
#include "fuzz_util.hpp"

using namespace peakprobe;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 16384) return 0;
  auto sets = parse_sets(fuzz::text_of(data, size), "fuzz.sets");
  if (sets) {
    for (const auto& s : *sets)
      if (s.name.empty() || s.instructions.size() < 2) fuzz::fail("a parsed set is incomplete", s.origin);
  } else if (sets.error().rfind("fuzz.sets:", 0) != 0) {
    fuzz::fail("a sets error does not name file and line", sets.error());
  }
  return 0;
}
