// Working-set sizes (src/memory/sizes): "--sizes 32K,1M,1.5GiB", the sweep between two of them,
// and the MemAvailable line of /proc/meminfo.
#include "fuzz_util.hpp"
#include "memory/sizes.hpp"

using namespace peakprobe;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 4096) return 0;
  const std::string text = fuzz::text_of(data, size);
  constexpr uint64_t kMax = uint64_t{1} << 50;
  auto one = parse_size(text);
  if (one && (*one == 0 || *one > kMax)) fuzz::fail("parse_size out of range", text);
  auto list = parse_size_list(text);
  if (list) {
    for (uint64_t s : *list) {
      if (s == 0 || s > kMax) fuzz::fail("parse_size_list out of range", text);
      if (format_bytes(s).empty()) fuzz::fail("format_bytes is empty", text);
    }
    if (list->size() >= 2) {
      const int ppo = 1 + int(size % 8);
      auto sweep = sweep_sizes((*list)[0], (*list)[1], ppo);
      for (size_t i = 1; i < sweep.size(); ++i)
        if (sweep[i] <= sweep[i - 1]) fuzz::fail("sweep does not increase", text);
    }
  }
  (void)parse_mem_available(text);
  return 0;
}
