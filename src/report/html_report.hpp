// A whole run as one self-contained HTML page: the host, the compute and memory ceilings with their
// ridge points, the plots, and the tables of instructions, bandwidth, latency and pairs.
//
// Self-contained means inline CSS, no scripts and no external resources (fonts, images, links to
// stylesheets): the file can be mailed, archived or opened offline and looks the same. Every text
// taken from the measurements is HTML-escaped; the plots are inlined as given.
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "peakprobe/ceiling.hpp"
#include "peakprobe/run_document.hpp"

namespace peakprobe {

// The whole instruction table of `report --table`: a page of its own (table_html), which the report
// summarises and links to.
struct TablePage {
  const RunDocument* doc = nullptr;
  std::string file;  // the page, relative to the report's own file
};

// svgs: (title, SVG document) pairs, such as roofline_svg and bandwidth_svg return; each is inlined
// under its title with its XML declaration removed (an HTML page may not contain one). Sections
// without data are left out, except the host description. With `table`, an "Instruction table" section
// counts its rows, names its pipe basis and links to its page. The output depends only on the arguments.
std::string html_report(const RunDocument& doc, const CeilingTable& t,
                        const std::vector<std::pair<std::string, std::string>>& svgs,
                        const TablePage* table = nullptr);

}  // namespace peakprobe
