// Small text helpers shared by the parsers (catalog, instruction sets, form selection) and by what
// reads version strings and driver files. ASCII only and locale-independent: the texts are file formats and
// command-line values, not prose.
#pragma once
#include <string>
#include <string_view>

namespace peakprobe {

// `s` without leading and trailing white space (space, tab, CR, LF, vertical tab, form feed).
std::string trim(std::string_view s);
// `s` with its ASCII capitals in lower case; every other byte as it was.
std::string lower(std::string_view s);
// Whether `needle` occurs in `hay`, ASCII case ignored (an empty needle always does).
bool contains_nocase(std::string_view hay, std::string_view needle);

}  // namespace peakprobe
