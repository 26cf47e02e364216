// Shared pieces of the SVG plots and the HTML report: number labels, tick positions on log and linear
// axes, the mapping from values to pixels, estimated text extents, and a small label placer that
// keeps labels from covering each other or the lines they sit next to.
//
// Everything here is deterministic (no fonts are measured, no clocks read), so the drawings built on
// it can be compared byte for byte with golden files.
#pragma once
#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "report/svg_heatmap.hpp"  // xml_escape: one escaping rule for every SVG and HTML writer

namespace peakprobe {

// ---- numbers ----

// At most three significant digits, never an exponent, trailing zeros dropped: 118, 31.4, 0.467,
// 1230, 0.0156, 2. "-" for NaN and infinities, so a label can never read "nan".
std::string fmt_si(double v);

// A pixel coordinate with one decimal ("12.5"); -0 prints as 0 so that output stays stable.
std::string fmt_px(double v);

// ---- ticks ----

// Tick values for a log axis over [lo, hi]: the powers of ten inside it (every k-th decade when
// there are more than eight), with 2 and 5 steps added when the range spans three decades or less,
// and 1..9 steps when it is narrower than one. Empty for lo <= 0, hi <= lo or non-finite bounds.
std::vector<double> log_ticks(double lo, double hi);

// Powers of two inside [lo, hi], every k-th one so that there are at most max_ticks; the kept ones
// are multiples of the stride in the exponent, so 2^10 (1 KiB) and 2^20 (1 MiB) survive a stride of
// two. Empty for lo <= 0, hi <= lo or non-finite bounds.
std::vector<double> log2_ticks(double lo, double hi, int max_ticks = 10);

// Multiples of a 1, 2 or 5 x 10^k step inside [lo, hi], at most about eight of them.
std::vector<double> linear_ticks(double lo, double hi);

// The smallest 1, 2 or 5 x 10^k at or above v (v > 0), and the largest at or below it.
double nice_ceil(double v);
double nice_floor(double v);

// ---- axes ----

// Maps data values to pixels. A y scale runs from the bottom (from > to), since SVG y grows downwards.
struct Scale {
  double lo = 1, hi = 10;    // data range
  double from = 0, to = 1;   // pixel positions of lo and hi
  bool log = true;
  double operator()(double v) const;
};

// ---- text extents ----
// Widths are estimated, not measured: a self-contained SVG cannot know the viewer's font. 0.54 em per
// character covers common sans-serif faces (the same estimate as svg_heatmap.cpp's 6.5 px at 12 px).

inline constexpr double kCharEm = 0.54;
inline constexpr double kAscentEm = 0.78;   // baseline to the top of capitals and digits
inline constexpr double kDescentEm = 0.24;  // baseline to the bottom of descenders

// Characters, not bytes: a UTF-8 continuation byte adds no width.
double text_width(std::string_view text, double font_size);

// ---- label placement ----

// An oriented rectangle: centre, half extents along its own axes, and its rotation in degrees
// (SVG's sense: clockwise on screen, because y grows downwards).
struct Box {
  double cx = 0, cy = 0;
  double half_w = 0, half_h = 0;
  double angle_deg = 0;
};

// The extent of a <text> element whose baseline starts at (x, y), anchored "start", "middle" or
// "end", rotated by angle_deg about (x, y) as transform="rotate(angle x y)" does. pad widens it
// on every side, so that labels keep a little air between them.
Box text_box(double x, double y, std::string_view text, std::string_view anchor, double angle_deg,
             double font_size, double pad = 1.5);

// A line segment as a thin box of the given half thickness.
Box segment_box(double x1, double y1, double x2, double y2, double half_thickness = 1.0);

// Separating-axis test for two oriented rectangles; touching edges do not count as overlap.
bool overlaps(const Box& a, const Box& b);

// True when every corner of b lies inside the axis-aligned rectangle.
bool inside(const Box& b, double left, double top, double right, double bottom);

// What a label may cover when every free place is taken, from worst to least bad: another label
// (both become unreadable), a mark such as a point or circle (it disappears under the halo), a line
// (it runs under the label's white halo and stays visible on both sides).
enum class Obstacle { label, mark, line };

// Places labels one at a time, each at the first of its candidate positions that stays inside the
// area and covers nothing placed or blocked before it. When every candidate collides, the one inside
// the area that covers the fewest labels, then marks, then lines wins (the first of those on a tie):
// a label drawn over something is still better than a label missing. The chosen box then blocks
// later labels.
class LabelPlacer {
 public:
  LabelPlacer(double left, double top, double right, double bottom);
  void block(const Box& b, Obstacle kind);
  // The index of the chosen candidate; candidates must not be empty.
  std::size_t place(const std::vector<Box>& candidates);
  std::size_t blocked_count() const { return blocked_.size(); }

 private:
  long cost(const Box& b) const;
  double left_, top_, right_, bottom_;
  std::vector<std::pair<Box, Obstacle>> blocked_;
};

}  // namespace peakprobe
