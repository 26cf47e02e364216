// The page of `peakprobe table --html FILE`: every row of a table run in one self-contained HTML
// file (inline CSS and one inline script, no external resource): a text filter, a status and a
// family filter, and columns sorted by a click on their heading. Every text from the measurements is
// HTML-escaped; without scripts the page is still the whole table.
#pragma once
#include <string>

#include "peakprobe/run_document.hpp"

namespace peakprobe {

// Depends only on `doc` (host, clock, command, results).
std::string table_html(const RunDocument& doc);

}  // namespace peakprobe
