// `compare`'s document reader and comparison (src/compare): two peakprobe/1 documents, separated by
// a NUL byte (one document alone is compared with itself), read as `compare` reads them, compared,
// and written in every output form. The first byte picks the thresholds.
#include <sstream>

#include "compare/compare.hpp"
#include "fuzz_util.hpp"
#include "report/json_report.hpp"

using namespace peakprobe;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0 || size > 65536) return 0;
  std::string old_text, new_text;
  fuzz::split_two(fuzz::text_of(data + 1, size - 1), old_text, new_text);
  const auto old_doc = nlohmann::json::parse(old_text, nullptr, false);
  const auto new_doc = nlohmann::json::parse(new_text, nullptr, false);
  if (old_doc.is_discarded() || new_doc.is_discarded()) return 0;
  (void)schema_problem(old_doc);
  CompareOptions options;
  options.time_threshold = (data[0] & 0x0f) / 10.0;
  options.throughput_threshold = (data[0] >> 4) / 16.0;
  auto report = compare_documents(old_doc, new_doc, options);
  if (!report) return 0;
  int regressions = 0;
  for (const auto& d : report->deltas) regressions += d.verdict == Verdict::regression;
  if (regressions != report->regressions) fuzz::fail("regression count", std::to_string(regressions));
  if (deltas_by_severity(*report).size() != report->deltas.size()) fuzz::fail("sorting lost deltas", "");
  std::ostringstream md, console;
  write_compare_markdown(md, *report);
  write_compare_console(console, *report, (data[0] & 1) != 0);
  (void)json_text(to_json(*report));
  return 0;
}
