// The reader of `table --resume` (report/result_reader): any JSON as a peakprobe/1 document. Every row
// it accepts must write out and read back to the same row (what --resume keeps is what it wrote).
#include "fuzz_util.hpp"
#include "report/json_report.hpp"
#include "report/result_reader.hpp"

using namespace peakprobe;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 65536) return 0;
  const auto doc = nlohmann::json::parse(fuzz::text_of(data, size), nullptr, false);
  if (doc.is_discarded()) return 0;
  auto rows = probe_results_from_document(doc);
  if (!rows) return 0;
  for (const auto& r : *rows) {
    const nlohmann::json once = to_json(r);
    auto again = probe_result_from_json(once);
    if (!again) fuzz::fail("a written row does not read back", again.error());
    if (to_json(*again) != once) fuzz::fail("a row changed on its way back", once.dump());
  }
  return 0;
}
