// Human table of a run for the terminal: rows grouped by `group`, columns aligned, lines kept within
// kConsoleWidth. Skipped and error rows show their reason where the numbers would be; mistrusted rows
// are marked '?' in the left margin (error rows '!') and get their reason on a line below, as do
// multi-thread rows their all-core total. A footer sums up the clock and the statuses.
#pragma once
#include <cstddef>
#include <ostream>

#include "peakprobe/run_document.hpp"

namespace peakprobe {

inline constexpr std::size_t kConsoleWidth = 110;

// color = true wraps status words in ANSI colors; color = false writes no escape codes at all.
void write_console(std::ostream& out, const RunDocument& doc, bool color);

}  // namespace peakprobe
