// Markdown form of a run, for pasting into issues and READMEs: a heading with the CPU and its
// measured clock, a GitHub table of the results, and the reasons of rows that are not ok.
#pragma once
#include <ostream>

#include "peakprobe/run_document.hpp"

namespace peakprobe {

void write_markdown(std::ostream& out, const RunDocument& doc);

}  // namespace peakprobe
