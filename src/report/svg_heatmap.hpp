// A pair matrix drawn as a self-contained SVG heatmap: one cell per (row A, column B) coloured by the
// same-port measure, names on both axes, a legend, the inferred pipe groups, and the matrix itself
// as JSON in <metadata> so tools can read the values back without scraping the drawing.
//
// Self-contained means no scripts, no external fonts or images and no stylesheet: the file renders
// the same in a browser, an image viewer or a document, and is safe to open from anywhere.
#pragma once
#include <string>
#include <string_view>

#include "peakprobe/pair_result.hpp"

namespace peakprobe {

// Replaces & < > " ' with entities. Control characters, which XML 1.0 does not allow in text,
// become spaces.
std::string xml_escape(std::string_view text);

// The whole SVG document, ending with a newline. Rows and columns follow m.instructions; a cell
// missing from m.same_port is drawn grey with "n/a". The groups listed are m.groups, or, when the
// caller left them empty, the ones cluster_pipe_groups infers from the matrix at its default
// threshold. The output depends only on m and title, so it can be compared byte for byte.
std::string pair_heatmap_svg(const PairMatrix& m, const std::string& title);

}  // namespace peakprobe
