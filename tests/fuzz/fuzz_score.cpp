// `score`'s inputs (src/report/ceiling_report): a saved ceiling table (--table) and a kernel list
// (--kernels), separated by a NUL byte (one document alone serves as both). Every kernel read is
// scored against the table read, and the result written in every output form.
#include <sstream>

#include "fuzz_util.hpp"
#include "report/ceiling_report.hpp"
#include "report/json_report.hpp"
#include "roofline/ceilings.hpp"

using namespace peakprobe;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 65536) return 0;
  std::string table_text, kernels_text;
  fuzz::split_two(fuzz::text_of(data, size), table_text, kernels_text);
  const auto table_doc = nlohmann::json::parse(table_text, nullptr, false);
  const auto kernels_doc = nlohmann::json::parse(kernels_text, nullptr, false);
  RunDocument doc;
  if (!table_doc.is_discarded()) {
    auto table = ceilings_from_json(table_doc);
    if (table) doc.ceilings = *table;
  }
  if (!kernels_doc.is_discarded()) {
    auto requests = score_requests_from_json(kernels_doc, 1);
    if (requests && doc.ceilings) {
      for (const auto& r : *requests) {
        auto s = score_kernel(*doc.ceilings, r);
        if (s) doc.scores.push_back(*s);
      }
    }
  }
  if (doc.ceilings) {
    doc.ceilings->ridges = ridge_points(doc.ceilings->compute, doc.ceilings->memory);
    (void)json_text(to_json(*doc.ceilings));
  }
  for (const auto& s : doc.scores) (void)json_text(to_json(s));
  std::ostringstream csv, md, console;
  write_ceilings_csv(csv, doc);
  write_ceilings_markdown(md, doc);
  write_ceilings_console(console, doc);
  return 0;
}
