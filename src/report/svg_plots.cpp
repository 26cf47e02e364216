#include "report/svg_plots.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <numbers>
#include <optional>
#include <string_view>
#include <tuple>
#include <utility>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "memory/sizes.hpp"
#include "report/svg_util.hpp"
#include "roofline/ceilings.hpp"

namespace peakprobe {

namespace {

using nlohmann::json;

// ---- layout, in pixels ----
constexpr double kWidth = 900;
constexpr double kHeight = 560;
constexpr double kPad = 16;
constexpr double kFont = 12;        // labels, legend, axis titles
constexpr double kTickFont = 11;
constexpr double kTitleFont = 16;
constexpr double kBoldWidth = 1.12;  // bold glyphs run about this much wider than regular ones
constexpr double kTickLen = 5;
constexpr double kLegendRow = 18;
constexpr double kSwatch = 24;
constexpr double kLabelInset = 2;    // labels keep this far inside the plot area
// Labels sit this far from the line they name, beyond their own descent or ascent, so the line
// (up to 2 px wide) never touches the glyphs.
constexpr double kLineGap = 2.5;

constexpr const char* kInk = "#222222";
constexpr const char* kGrid = "#e6e6e6";
constexpr const char* kAxis = "#808080";
constexpr const char* kDashed = "6 4";
constexpr const char* kDotted = "2 3";

// Okabe-Ito without its yellow (too light on white), then brown: distinguishable with the common
// forms of colour blindness.
constexpr const char* kSeriesColours[] = {"#0072B2", "#D55E00", "#009E73", "#CC79A7",
                                          "#E69F00", "#56B4E9", "#000000", "#8C564B"};
// Memory levels and compute dtypes draw from separate palettes, so a diagonal roof never shares its
// colour with a horizontal one. Labels take their roof's colour: all keep 4.5:1 contrast on white.
constexpr const char* kLevelColours[] = {"#0067A5", "#00795C", "#A85A00", "#C0392B", "#6A3D9A", "#4D4D4D"};
// Each common dtype keeps its colour from plot to plot; others take the spares in turn.
constexpr std::pair<const char*, const char*> kDtypeColours[] = {
    {"f64", "#332288"}, {"f32", "#882255"}, {"bf16", "#AA4499"}, {"f16", "#7A5C00"}, {"tf32", "#5E4FA2"}};
constexpr const char* kSpareDtypeColours[] = {"#8C510A", "#3F3F7F", "#7F3F5F"};
constexpr const char* kIntegerColour = "#6B6B6B";
constexpr const char* kEdgeColour = "#444444";
constexpr const char* kReportedColour = "#6F6F6F";

// ---- drawing primitives ----
struct Pen {
  std::string colour = kInk;
  std::string dash;  // stroke-dasharray, "" = solid
  double width = 1.5;
};

std::string pen_attributes(const Pen& p) {
  std::string s = fmt::format("stroke=\"{}\" stroke-width=\"{}\" fill=\"none\"", p.colour, fmt_px(p.width));
  if (!p.dash.empty()) s += fmt::format(" stroke-dasharray=\"{}\"", p.dash);
  return s;
}

std::string line_element(double x1, double y1, double x2, double y2, const Pen& p) {
  return fmt::format("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" {}/>\n", fmt_px(x1), fmt_px(y1), fmt_px(x2),
                     fmt_px(y2), pen_attributes(p));
}

std::string circle_element(double x, double y, double r, const std::string& stroke, const std::string& fill) {
  return fmt::format("<circle cx=\"{}\" cy=\"{}\" r=\"{}\" stroke=\"{}\" stroke-width=\"1.5\" fill=\"{}\"/>\n",
                     fmt_px(x), fmt_px(y), fmt_px(r), stroke, fill);
}

// One <text>: baseline start at (x, y), rotated about that point by angle degrees.
struct Label {
  double x = 0, y = 0;
  std::string text;
  std::string anchor = "start";
  double angle = 0;
  double font = kFont;
  std::string colour = kInk;
  double spacing = 0;  // extra air before and after the text when placing it
};

std::string text_element(const Label& l) {
  std::string a = fmt::format("x=\"{}\" y=\"{}\"", fmt_px(l.x), fmt_px(l.y));
  if (l.anchor != "start") a += fmt::format(" text-anchor=\"{}\"", l.anchor);
  if (l.angle != 0) a += fmt::format(" transform=\"rotate({} {} {})\"", fmt_px(l.angle), fmt_px(l.x), fmt_px(l.y));
  if (l.font != kFont) a += fmt::format(" font-size=\"{}\"", fmt_px(l.font));
  return fmt::format("<text {} fill=\"{}\">{}</text>\n", a, l.colour, xml_escape(l.text));
}

Box label_box(const Label& l) {
  Box b = text_box(l.x, l.y, l.text, l.anchor, l.angle, l.font);
  b.half_w += l.spacing;
  return b;
}

// The first candidate the placer accepts; see LabelPlacer for how it picks.
Label place(LabelPlacer& placer, const std::vector<Label>& candidates) {
  std::vector<Box> boxes;
  boxes.reserve(candidates.size());
  for (const auto& c : candidates) boxes.push_back(label_box(c));
  return candidates[placer.place(boxes)];
}

// Labels drawn over lines and grid stay legible on a white halo (painted under the glyphs).
std::string draw_labels(const std::vector<Label>& labels) {
  std::string s = "<g stroke=\"#ffffff\" stroke-width=\"3\" stroke-linejoin=\"round\" paint-order=\"stroke\">\n";
  for (const auto& l : labels) s += text_element(l);
  return s + "</g>\n";
}

// ---- frame: title, axes, ticks, grid, legend ----
struct Tick {
  double value = 0;
  std::string text;
};

struct Axis {
  double lo = 1, hi = 10;
  bool log = true;
  std::vector<Tick> ticks;
  std::string title;
};

enum class Symbol { line, line_dot, dot, ring };

struct LegendEntry {
  std::string text;
  Pen pen;
  Symbol symbol = Symbol::line;
};

struct Frame {
  double width = kWidth, height = kHeight;
  double left = 0, top = 0, right = 0, bottom = 0;  // the plot area
  Scale x, y;
  Axis x_axis, y_axis;
  std::string title;
  std::vector<LegendEntry> legend;
};

double max_text_width(const std::vector<Tick>& ticks, double font) {
  double w = 0;
  for (const auto& t : ticks) w = std::max(w, text_width(t.text, font));
  return w;
}

double legend_width(const std::vector<LegendEntry>& entries) {
  double w = 0;
  for (const auto& e : entries) w = std::max(w, text_width(e.text, kFont));
  return entries.empty() ? 0 : kSwatch + 8 + w;
}

// Margins follow the labels they hold: the widest y tick label and the rotated axis title on the
// left, the legend on the right, tick labels and the axis title below, the title above.
Frame make_frame(const std::string& title, Axis x_axis, Axis y_axis, std::vector<LegendEntry> legend) {
  Frame f;
  f.title = title;
  f.legend = std::move(legend);
  f.width = std::max(kWidth, std::ceil(2 * kPad + text_width(title, kTitleFont) * kBoldWidth));
  f.left = std::ceil(kPad + kFont + 10 + max_text_width(y_axis.ticks, kTickFont) + kTickLen + 4);
  f.top = kPad + kTitleFont + 16;
  const double last_tick = x_axis.ticks.empty() ? 0 : text_width(x_axis.ticks.back().text, kTickFont) / 2;
  const double legend_w = legend_width(f.legend);
  f.right = f.width - std::ceil(legend_w > 0 ? legend_w + 2 * kPad : kPad + last_tick);
  const double bottom_margin = kTickLen + 4 + kTickFont + 10 + kFont + kPad + 4;
  const double legend_h = static_cast<double>(f.legend.size()) * kLegendRow + 10;
  f.height = std::max(kHeight, std::ceil(f.top + legend_h + bottom_margin));
  f.bottom = f.height - bottom_margin;
  f.x = {x_axis.lo, x_axis.hi, f.left, f.right, x_axis.log};
  f.y = {y_axis.lo, y_axis.hi, f.bottom, f.top, y_axis.log};
  f.x_axis = std::move(x_axis);
  f.y_axis = std::move(y_axis);
  return f;
}

std::string draw_grid(const Frame& f) {
  std::string s = fmt::format("<g stroke=\"{}\" stroke-width=\"1\">\n", kGrid);
  for (const auto& t : f.x_axis.ticks) {
    const double x = f.x(t.value);
    s += fmt::format("<line x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\"/>\n", fmt_px(x), fmt_px(f.top), fmt_px(f.bottom));
  }
  for (const auto& t : f.y_axis.ticks) {
    const double y = f.y(t.value);
    s += fmt::format("<line x1=\"{1}\" y1=\"{0}\" x2=\"{2}\" y2=\"{0}\"/>\n", fmt_px(y), fmt_px(f.left), fmt_px(f.right));
  }
  return s + "</g>\n";
}

std::string draw_axes(const Frame& f) {
  std::string s = fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\" stroke=\"{}\"/>\n",
                              fmt_px(f.left), fmt_px(f.top), fmt_px(f.right - f.left), fmt_px(f.bottom - f.top), kAxis);
  s += fmt::format("<g stroke=\"{}\" stroke-width=\"1\">\n", kAxis);
  for (const auto& t : f.x_axis.ticks) {
    const double x = f.x(t.value);
    s += fmt::format("<line x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\"/>\n", fmt_px(x), fmt_px(f.bottom),
                     fmt_px(f.bottom + kTickLen));
  }
  for (const auto& t : f.y_axis.ticks) {
    const double y = f.y(t.value);
    s += fmt::format("<line x1=\"{1}\" y1=\"{0}\" x2=\"{2}\" y2=\"{0}\"/>\n", fmt_px(y), fmt_px(f.left - kTickLen),
                     fmt_px(f.left));
  }
  s += "</g>\n<g fill=\"" + std::string(kInk) + "\">\n";
  const double x_label_y = f.bottom + kTickLen + 4 + kTickFont * kAscentEm;
  for (const auto& t : f.x_axis.ticks)
    s += text_element({f.x(t.value), x_label_y, t.text, "middle", 0, kTickFont});
  for (const auto& t : f.y_axis.ticks)
    s += text_element({f.left - kTickLen - 4, f.y(t.value) + kTickFont * 0.35, t.text, "end", 0, kTickFont});
  s += text_element({(f.left + f.right) / 2, x_label_y + kTickFont * kDescentEm + 10 + kFont * kAscentEm,
                     f.x_axis.title, "middle"});
  // Rotated a quarter turn anticlockwise, the glyphs rise to the left of the baseline.
  const double y_title_x = kPad + kFont * kAscentEm;
  s += text_element({y_title_x, (f.top + f.bottom) / 2, f.y_axis.title, "middle", -90});
  return s + "</g>\n";
}

std::string draw_title(const Frame& f) {
  return fmt::format("<text x=\"{}\" y=\"{}\" font-size=\"{}\" font-weight=\"bold\" fill=\"{}\">{}</text>\n",
                     fmt_px(kPad), fmt_px(kPad + kTitleFont * kAscentEm), fmt_px(kTitleFont), kInk,
                     xml_escape(f.title));
}

std::string legend_symbol(const LegendEntry& e, double x, double y) {
  const double mid = y - kFont * 0.3;
  std::string s;
  if (e.symbol == Symbol::line || e.symbol == Symbol::line_dot) s += line_element(x, mid, x + kSwatch, mid, e.pen);
  if (e.symbol == Symbol::line_dot || e.symbol == Symbol::dot)
    s += circle_element(x + kSwatch / 2, mid, 2.5, e.pen.colour, e.pen.colour);
  if (e.symbol == Symbol::ring) s += circle_element(x + kSwatch / 2, mid, 4, e.pen.colour, "#ffffff");
  return s;
}

std::string draw_legend(const Frame& f) {
  if (f.legend.empty()) return "";
  const double x = f.right + kPad;
  double y = f.top + kFont;
  std::string s = "<g>\n";
  for (const auto& e : f.legend) {
    s += legend_symbol(e, x, y);
    s += text_element({x + kSwatch + 8, y, e.text});
    y += kLegendRow;
  }
  return s + "</g>\n";
}

// Said in the middle of the plot when there is nothing to draw, so an empty plot is not mistaken for
// a broken one.
std::string draw_note(const Frame& f, const std::string& note) {
  return text_element({(f.left + f.right) / 2, (f.top + f.bottom) / 2, note, "middle"});
}

// A name or value that is not valid UTF-8 must not make the whole plot throw; it gets U+FFFD instead.
std::string metadata_element(const std::string& id, const json& data) {
  const std::string text = data.dump(-1, ' ', false, json::error_handler_t::replace);
  return fmt::format("<metadata id=\"{}\">{}</metadata>\n", id, xml_escape(text));
}

std::string document(const Frame& f, const std::string& metadata_id, const json& data, const std::string& body) {
  std::string s = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  s += fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" viewBox=\"0 0 {0} {1}\" "
      "font-family=\"sans-serif\" font-size=\"{2}\">\n",
      fmt_px(f.width), fmt_px(f.height), fmt_px(kFont));
  s += "<title>" + xml_escape(f.title) + "</title>\n";
  s += metadata_element(metadata_id, data);
  // An explicit background: viewers with a dark page would otherwise show dark text on black.
  s += fmt::format("<rect width=\"{}\" height=\"{}\" fill=\"#ffffff\"/>\n", fmt_px(f.width), fmt_px(f.height));
  s += draw_grid(f) + body + draw_axes(f) + draw_legend(f) + draw_title(f);
  return s + "</svg>\n";
}

bool usable(double v) { return std::isfinite(v) && v > 0; }
bool usable(const std::optional<double>& v) { return v && usable(*v); }

json number(double v) { return std::isfinite(v) ? json(v) : json(); }

// Blocks the inside of the plot area minus a small inset, so labels never touch its border.
LabelPlacer plot_placer(const Frame& f) {
  return LabelPlacer(f.left + kLabelInset, f.top + kLabelInset, f.right - kLabelInset, f.bottom - kLabelInset);
}

// ===================================================================================================
// Roofline
// ===================================================================================================

// "512-bit" for a vector width, the name itself for "scalar" and anything else.
std::string isa_text(const std::string& isa) {
  const bool digits = !isa.empty() && std::all_of(isa.begin(), isa.end(), [](char c) { return c >= '0' && c <= '9'; });
  return digits ? isa + "-bit" : isa;
}

std::string roof_name(const ComputeCeiling& c) { return c.dtype + " " + isa_text(c.isa); }

std::string roof_label(const ComputeCeiling& c) {
  return fmt::format("{} {} {}", roof_name(c), fmt_si(c.gops), c.integer ? "GOP/s" : "GFLOP/s");
}

// A kernel's own roof (RoofModel::kernel_roofs) by its instruction's mnemonic and rate, short enough
// to sit next to its line where a kernel's dot and the other roofs crowd: "<mnemonic> 233 GFLOP/s"
// (its colour gives the dtype; the metadata keeps the whole name).
std::string kernel_roof_label(const ComputeCeiling& c) {
  // c.isa is "f32 512 <instruction text>": the dtype, the width, then the instruction.
  std::string_view name = c.isa;
  for (int skip = 0; skip < 2 && name.find(' ') != std::string_view::npos; ++skip) name.remove_prefix(name.find(' ') + 1);
  // An encoding prefix in braces ("{...} <mnemonic> ...") is not the instruction's name.
  while (name.starts_with('{') && name.find(' ') != std::string_view::npos) name.remove_prefix(name.find(' ') + 1);
  name = name.substr(0, name.find(' '));
  return fmt::format("{} {} {}", name, fmt_si(c.gops), c.integer ? "GOP/s" : "GFLOP/s");
}

// "L1 222 GB/s"; a roof that is not the load kernel says which one it is.
std::string roof_label(const MemoryCeiling& m) {
  std::string s = fmt::format("{} {} GB/s", m.level, fmt_si(m.gbps));
  if (m.kernel != "load") s += " (" + m.kernel + ")";
  return s;
}

// Caches nearest the core first, DRAM last, anything unknown in between in table order.
int level_rank(const std::string& level) {
  if (level.size() == 2 && level[0] == 'L' && level[1] >= '1' && level[1] <= '9') return level[1] - '0';
  if (level == "DRAM" || level == "MEM" || level == "memory") return 100;
  return 50;
}

struct RoofModel {
  int threads = 1;
  std::vector<ComputeCeiling> compute;  // best per dtype: floating ones first, each part by falling rate
  std::vector<MemoryCeiling> memory;    // one per level, nearest the core first
  std::vector<KernelScore> kernels;
  // Roofs a kernel was scored against that are none of the drawn ones (ScoreRequest::roof_gflops:
  // a matmul's multiply-add alone below its dtype's FMA:add mix): without them the dot would sit at
  // a share of the drawn roof that is not its efficiency. isa holds the roof's name.
  std::vector<ComputeCeiling> kernel_roofs;
  double peak = 0;                      // the highest floating roof (integer when there is none)
  std::string peak_dtype, peak_isa;
  double top_bandwidth = 0;
  double x_lo = 1.0 / 64, x_hi = 256, y_lo = 0.1, y_hi = 1000;
};

std::vector<ComputeCeiling> best_compute(const CeilingTable& t, int threads) {
  std::map<std::pair<bool, std::string>, ComputeCeiling> best;
  for (const auto& c : t.compute) {
    if (c.threads != threads || !usable(c.gops)) continue;
    auto [it, inserted] = best.try_emplace({c.integer, c.dtype}, c);
    if (!inserted && c.gops > it->second.gops) it->second = c;
  }
  std::vector<ComputeCeiling> roofs;
  for (auto& [key, c] : best) roofs.push_back(std::move(c));
  std::stable_sort(roofs.begin(), roofs.end(), [](const ComputeCeiling& a, const ComputeCeiling& b) {
    return std::make_tuple(a.integer, -a.gops, a.dtype) < std::make_tuple(b.integer, -b.gops, b.dtype);
  });
  return roofs;
}

// The load kernel names a level's roof where it was measured: it is the bandwidth a kernel that
// only reads its data can reach, the usual reference of a roofline.
std::vector<MemoryCeiling> memory_roofs(const CeilingTable& t, int threads) {
  std::vector<MemoryCeiling> roofs;
  for (const auto& m : t.memory) {
    if (m.threads != threads || !usable(m.gbps)) continue;
    auto same = std::find_if(roofs.begin(), roofs.end(), [&](const MemoryCeiling& r) { return r.level == m.level; });
    if (same == roofs.end())
      roofs.push_back(m);
    else if (same->kernel != "load" && m.kernel == "load")
      *same = m;
  }
  std::stable_sort(roofs.begin(), roofs.end(), [](const MemoryCeiling& a, const MemoryCeiling& b) {
    return level_rank(a.level) < level_rank(b.level);
  });
  return roofs;
}

double pow2_floor(double v) { return std::ldexp(1.0, static_cast<int>(std::floor(std::log2(v)))); }
double pow2_ceil(double v) { return std::ldexp(1.0, static_cast<int>(std::ceil(std::log2(v)))); }

// Intensity from 1/64 to 256 FLOP/byte at least, wider when a ridge or kernel lies outside, with room
// for the ridge labels; rates from the lowest visible roof start to well above the highest roof,
// where the highest roof's label goes.
void set_ranges(RoofModel& m) {
  double x_lo = 1.0 / 64, x_hi = 256, rate_hi = 0, rate_lo = HUGE_VAL;
  for (const auto& r : m.memory) {
    if (m.peak > 0) {
      x_lo = std::min(x_lo, m.peak / r.gbps / 4);
      x_hi = std::max(x_hi, m.peak / r.gbps * 4);
    }
  }
  for (const auto& k : m.kernels) {
    x_lo = std::min(x_lo, k.ai / 2);
    x_hi = std::max(x_hi, k.ai * 2);
    rate_hi = std::max(rate_hi, k.achieved_gflops);
    rate_lo = std::min(rate_lo, k.achieved_gflops / 2);
  }
  m.x_lo = pow2_floor(x_lo);
  m.x_hi = pow2_ceil(x_hi);
  for (const auto* roofs : {&m.compute, &m.kernel_roofs}) {
    for (const auto& c : *roofs) {
      rate_hi = std::max(rate_hi, c.gops);
      rate_lo = std::min(rate_lo, c.gops / 2);
    }
  }
  for (const auto& r : m.memory) {
    rate_lo = std::min(rate_lo, r.gbps * m.x_lo);
    if (m.peak <= 0) rate_hi = std::max(rate_hi, r.gbps * m.x_hi);
  }
  if (rate_hi <= 0) return;  // nothing to draw: keep the default ranges
  m.y_hi = nice_ceil(rate_hi * 1.6);
  // Six decades at most: a roof starting far below the rest would squash everything else.
  m.y_lo = std::max(nice_floor(rate_lo), m.y_hi * 1e-6);
}

// The compute roof a kernel's score is bound by when it is none of the drawn roofs (no drawn roof
// within kSameRoof of its attainable rate), each roof once. Its name is bound_by's text after
// "compute ": the dtype, width and instruction of the kernel's own roof.
constexpr double kSameRoof = 0.005;
std::vector<ComputeCeiling> kernel_roofs(const std::vector<ComputeCeiling>& drawn, const std::vector<KernelScore>& kernels) {
  constexpr std::string_view kCompute = "compute ";
  auto near = [](double a, double b) { return std::abs(a - b) <= kSameRoof * std::max(a, b); };
  std::vector<ComputeCeiling> roofs;
  for (const auto& k : kernels) {
    if (!k.bound_by.starts_with(kCompute) || !usable(k.attainable_gflops)) continue;
    auto same = [&](const ComputeCeiling& c) { return c.dtype == k.dtype && near(c.gops, k.attainable_gflops); };
    if (std::any_of(drawn.begin(), drawn.end(), same) || std::any_of(roofs.begin(), roofs.end(), same)) continue;
    ComputeCeiling c;
    c.dtype = k.dtype;
    c.integer = !is_float_dtype(k.dtype);  // an int8 kernel's roof is in GOP/s
    c.isa = k.bound_by.substr(kCompute.size());
    c.threads = k.threads;
    c.gops = k.attainable_gflops;
    c.source = k.name;
    roofs.push_back(std::move(c));
  }
  return roofs;
}

RoofModel make_model(const CeilingTable& t, const std::vector<KernelScore>& kernels, int threads) {
  RoofModel m;
  m.threads = threads;
  m.compute = best_compute(t, threads);
  m.memory = memory_roofs(t, threads);
  for (const auto& k : kernels) {
    if (k.threads == threads && usable(k.ai) && usable(k.achieved_gflops)) m.kernels.push_back(k);
  }
  // compute is sorted floating first, each part by falling rate: its front is the highest floating
  // roof, or the highest integer one when no floating roof was measured.
  if (!m.compute.empty()) {
    m.peak = m.compute.front().gops;
    m.peak_dtype = m.compute.front().dtype;
    m.peak_isa = m.compute.front().isa;
  }
  for (const auto& r : m.memory) m.top_bandwidth = std::max(m.top_bandwidth, r.gbps);
  m.kernel_roofs = kernel_roofs(m.compute, m.kernels);
  set_ranges(m);
  return m;
}

// A roof in data coordinates, clipped to the plot.
struct Segment {
  double x1 = 0, y1 = 0, x2 = 0, y2 = 0;
};

// A compute roof starts where it meets the highest memory roof: to its left, no kernel could reach it.
Segment compute_segment(const RoofModel& m, const ComputeCeiling& c) {
  const double start = m.top_bandwidth > 0 ? std::max(m.x_lo, c.gops / m.top_bandwidth) : m.x_lo;
  return {std::min(start, m.x_hi), c.gops, m.x_hi, c.gops};
}

std::optional<Segment> memory_segment(const RoofModel& m, const MemoryCeiling& r) {
  const double start = std::max(m.x_lo, m.y_lo / r.gbps);
  const double end = std::min(m.x_hi, (m.peak > 0 ? m.peak : m.y_hi) / r.gbps);
  if (!(end > start)) return std::nullopt;
  return Segment{start, start * r.gbps, end, end * r.gbps};
}

struct PixelSegment {
  double x1, y1, x2, y2;
  double length() const { return std::hypot(x2 - x1, y2 - y1); }
};

PixelSegment to_pixels(const Frame& f, const Segment& s) { return {f.x(s.x1), f.y(s.y1), f.x(s.x2), f.y(s.y2)}; }

// spare counts the roofs of uncommon dtypes drawn so far.
Pen compute_pen(const ComputeCeiling& c, std::size_t& spare) {
  if (c.integer) return {kIntegerColour, kDashed, 1.5};
  for (const auto& [dtype, colour] : kDtypeColours) {
    if (c.dtype == dtype) return {colour, "", 2};
  }
  return {kSpareDtypeColours[spare++ % std::size(kSpareDtypeColours)], "", 2};
}

// Colours follow the level, not its position, so DRAM is the same red in every plot.
Pen memory_pen(const std::string& level) {
  const int rank = level_rank(level);
  const std::size_t index = rank >= 1 && rank <= 3 ? rank - 1 : rank == 100 ? 3 : rank == 4 ? 4 : 5;
  return {kLevelColours[index], "", 2};
}

// Fractions below 1 read better as 1/64 than as 0.0156.
std::string intensity_text(double v) { return v < 1 ? "1/" + fmt_si(1 / v) : fmt_si(v); }

Axis intensity_axis(const RoofModel& m) {
  Axis a{m.x_lo, m.x_hi, true, {}, "arithmetic intensity (FLOP/byte)"};
  for (const double v : log2_ticks(m.x_lo, m.x_hi, 10)) a.ticks.push_back({v, intensity_text(v)});
  return a;
}

Axis rate_axis(double lo, double hi, bool log, const std::string& title) {
  Axis a{lo, hi, log, {}, title};
  for (const double v : log ? log_ticks(lo, hi) : linear_ticks(lo, hi)) a.ticks.push_back({v, fmt_si(v)});
  return a;
}

std::vector<LegendEntry> roofline_legend(const RoofModel& m) {
  std::vector<LegendEntry> entries;
  std::size_t spare = 0;
  for (const auto& c : m.compute) {
    const std::string unit = c.integer ? " (GOP/s)" : "";
    entries.push_back({roof_name(c) + unit, compute_pen(c, spare), Symbol::line});
  }
  for (const auto& r : m.memory) entries.push_back({r.level + " " + r.kernel, memory_pen(r.level), Symbol::line});
  if (!m.kernel_roofs.empty()) entries.push_back({"a kernel's own roof", {kInk, kDotted, 1.5}, Symbol::line});
  if (m.peak > 0 && !m.memory.empty()) entries.push_back({"ridge (FLOP/byte)", {kInk, "", 1.5}, Symbol::ring});
  if (!m.kernels.empty()) entries.push_back({"kernel", {kInk, "", 1.5}, Symbol::dot});
  return entries;
}

// ---- roofline labels ----

// Right-aligned just above or just below a horizontal roof, stepping leftwards when the right end is
// taken. Roofs a few pixels apart leave no room next to each line: then a row further out, where
// the label's colour still ties it to its roof.
std::vector<Label> compute_label_candidates(const Frame& f, const PixelSegment& s, const std::string& text,
                                            const std::string& colour) {
  std::vector<Label> c;
  const double width = text_width(text, kFont);
  const double row = kFont + 2;
  for (int k = 0; k < 3; ++k) {
    const double above = s.y1 - kLineGap - 1 - kFont * kDescentEm - k * row;
    const double below = s.y1 + kLineGap + 1 + kFont * kAscentEm + k * row;
    for (double end = f.right - 6; end - width >= std::min(s.x1, f.right - width - 6) - 1e-9; end -= 20) {
      c.push_back({end, above, text, "end", 0, kFont, colour});
      c.push_back({end, below, text, "end", 0, kFont, colour});
    }
  }
  return c;
}

// Rotated along a diagonal roof, above or below it, at positions spreading out from a third of the
// way along: parallel roofs a few pixels apart then get their labels staggered along the lines.
std::vector<Label> memory_label_candidates(const PixelSegment& s, const std::string& text, const std::string& colour) {
  const double length = s.length();
  const double width = text_width(text, kFont);
  const double angle = std::atan2(s.y2 - s.y1, s.x2 - s.x1);
  const double ux = std::cos(angle), uy = std::sin(angle);
  const double up_x = uy, up_y = -ux;  // the glyphs' up direction
  const double above = kLineGap + 1 + kFont * kDescentEm;
  const double below = -(kLineGap + 1 + kFont * kAscentEm);
  std::vector<double> positions;
  for (double p = 6; p + width <= length - 6; p += 6) positions.push_back(p);
  if (positions.empty()) positions.push_back(std::max(0.0, (length - width) / 2));
  const double preferred = (length - width) / 3;
  std::stable_sort(positions.begin(), positions.end(),
                   [&](double a, double b) { return std::abs(a - preferred) < std::abs(b - preferred); });
  std::vector<Label> c;
  const double degrees = angle * 180 / std::numbers::pi;
  for (const double p : positions) {
    for (const double offset : {above, below}) {
      const double x = s.x1 + ux * p + up_x * offset, y = s.y1 + uy * p + up_y * offset;
      c.push_back({x, y, text, "start", degrees, kFont, colour});
    }
  }
  return c;
}

// Beside the ridge circle, first on the row just below the top roof, then further rows above and below.
// Ridges close together would put their numbers side by side on one row, where "2 2.38" reads as
// one label; the extra spacing sends the second number to another row instead.
std::vector<Label> ridge_label_candidates(double cx, double cy, const std::string& text) {
  constexpr double kRidgePad = 4;
  std::vector<Label> c;
  const double row = kTickFont + 3;
  for (int k = 0; k < 4; ++k) {
    c.push_back({cx + 6, cy + 6 + kTickFont * kAscentEm + k * row, text, "start", 0, kTickFont, kInk, kRidgePad});
    c.push_back({cx, cy - 7 - k * row, text, "middle", 0, kTickFont, kInk, kRidgePad});
    c.push_back({cx - 6, cy + 6 + kTickFont * kAscentEm + k * row, text, "end", 0, kTickFont, kInk, kRidgePad});
  }
  return c;
}

// Next to the dot first; then rows further above and below it, where a roof label or another
// kernel's took the places beside it (a kernel just under its own roof meets that roof's label).
std::vector<Label> point_label_candidates(double cx, double cy, const std::string& text) {
  const double mid = cy + kFont * 0.35;
  std::vector<Label> c = {{cx + 7, mid, text, "start"},
                          {cx - 7, mid, text, "end"},
                          {cx, cy - 8, text, "middle"},
                          {cx, cy + 8 + kFont * kAscentEm, text, "middle"},
                          {cx + 5, cy - 6, text, "start"},
                          {cx + 5, cy + 6 + kFont * kAscentEm, text, "start"},
                          {cx - 5, cy - 6, text, "end"},
                          {cx - 5, cy + 6 + kFont * kAscentEm, text, "end"}};
  const double row = kFont + 2;
  for (int k = 1; k <= 3; ++k) {
    for (const auto& [anchor, dx] : {std::pair{"middle", 0.0}, std::pair{"start", 5.0}, std::pair{"end", -5.0}}) {
      c.push_back({cx + dx, cy + 8 + kFont * kAscentEm + k * row, text, anchor});
      c.push_back({cx + dx, cy - 8 - k * row, text, anchor});
    }
  }
  return c;
}

// ---- roofline drawing ----

struct RoofDrawing {
  std::string lines, marks;
  std::vector<Label> labels;
  json ridges = json::array();
};

struct RoofPieces {
  std::vector<std::pair<PixelSegment, Label>> compute;  // each roof with its label's text and colour
  std::vector<std::pair<PixelSegment, Label>> memory;
  struct Ridge {
    double x, y;
    std::string text;
  };
  std::vector<Ridge> ridges;
  std::vector<std::pair<double, double>> kernels;  // pixel positions, in m.kernels order
};

RoofPieces layout_roofs(const Frame& f, const RoofModel& m, RoofDrawing& d) {
  RoofPieces p;
  std::size_t spare = 0;
  for (const auto& c : m.compute) {
    const Pen pen = compute_pen(c, spare);
    const PixelSegment s = to_pixels(f, compute_segment(m, c));
    d.lines += line_element(s.x1, s.y1, s.x2, s.y2, pen);
    p.compute.push_back({s, {0, 0, roof_label(c), "end", 0, kFont, pen.colour}});
  }
  // A kernel's own roof: dotted, in its dtype's colour, labelled like a compute roof.
  for (const auto& c : m.kernel_roofs) {
    Pen pen = compute_pen(c, spare);
    pen.dash = kDotted;
    pen.width = 1.5;
    const PixelSegment s = to_pixels(f, compute_segment(m, c));
    d.lines += line_element(s.x1, s.y1, s.x2, s.y2, pen);
    p.compute.push_back({s, {0, 0, kernel_roof_label(c), "end", 0, kFont, pen.colour}});
  }
  for (const auto& r : m.memory) {
    const auto seg = memory_segment(m, r);
    if (!seg) continue;
    const Pen pen = memory_pen(r.level);
    const PixelSegment s = to_pixels(f, *seg);
    d.lines += line_element(s.x1, s.y1, s.x2, s.y2, pen);
    p.memory.push_back({s, {0, 0, roof_label(r), "start", 0, kFont, pen.colour}});
    if (m.peak > 0 && seg->x2 < m.x_hi) {
      const double ai = m.peak / r.gbps;
      p.ridges.push_back({s.x2, s.y2, fmt_si(ai)});
      d.ridges.push_back({{"level", r.level}, {"kernel", r.kernel}, {"dtype", m.peak_dtype}, {"isa", m.peak_isa},
                          {"ai", number(ai)}, {"gflops", number(m.peak)}});
    }
  }
  for (const auto& k : m.kernels) p.kernels.push_back({f.x(k.ai), f.y(k.achieved_gflops)});
  return p;
}

// Every line and mark is placed first, so no label covers one; then the ridges' labels, then the
// kernels' (a name belongs next to its dot, and a roof's label can still slide along its line), then
// the horizontal roofs' and the diagonals'.
std::vector<Label> place_roof_labels(const Frame& f, const RoofModel& m, const RoofPieces& p) {
  LabelPlacer placer = plot_placer(f);
  for (const auto& [s, l] : p.compute) placer.block(segment_box(s.x1, s.y1, s.x2, s.y2), Obstacle::line);
  for (const auto& [s, l] : p.memory) placer.block(segment_box(s.x1, s.y1, s.x2, s.y2), Obstacle::line);
  for (const auto& r : p.ridges) placer.block({r.x, r.y, 5, 5, 0}, Obstacle::mark);
  for (const auto& [x, y] : p.kernels) placer.block({x, y, 5, 5, 0}, Obstacle::mark);
  std::vector<Label> labels;
  for (const auto& r : p.ridges) labels.push_back(place(placer, ridge_label_candidates(r.x, r.y, r.text)));
  // A kernel's name stays next to its dot, where the roofs' labels crowd when it runs near a roof
  // (a GEMM): it goes before them, as they can still slide along their lines.
  for (std::size_t i = 0; i < p.kernels.size(); ++i) {
    const auto [x, y] = p.kernels[i];
    labels.push_back(place(placer, point_label_candidates(x, y, m.kernels[i].name)));
  }
  for (const auto& [s, l] : p.compute) labels.push_back(place(placer, compute_label_candidates(f, s, l.text, l.colour)));
  for (const auto& [s, l] : p.memory) labels.push_back(place(placer, memory_label_candidates(s, l.text, l.colour)));
  return labels;
}

RoofDrawing draw_roofs(const Frame& f, const RoofModel& m) {
  RoofDrawing d;
  const RoofPieces p = layout_roofs(f, m, d);
  for (const auto& r : p.ridges) d.marks += circle_element(r.x, r.y, 4, kInk, "#ffffff");
  for (const auto& [x, y] : p.kernels) d.marks += circle_element(x, y, 4, "#ffffff", kInk);
  d.labels = place_roof_labels(f, m, p);
  return d;
}

json roofline_json(const RoofModel& m, const std::string& title, const json& ridges) {
  json compute = json::array(), memory = json::array(), kernels = json::array(), kernel_roofs = json::array();
  for (const auto& c : m.kernel_roofs)
    kernel_roofs.push_back({{"dtype", c.dtype}, {"name", c.isa}, {"gops", number(c.gops)}, {"kernel", c.source},
                            {"label", kernel_roof_label(c)}});
  for (const auto& c : m.compute)
    compute.push_back({{"dtype", c.dtype}, {"isa", c.isa}, {"gops", number(c.gops)}, {"integer", c.integer},
                       {"unit", c.integer ? "GOP/s" : "GFLOP/s"}, {"source", c.source}, {"label", roof_label(c)}});
  for (const auto& r : m.memory)
    memory.push_back({{"level", r.level}, {"kernel", r.kernel}, {"gbps", number(r.gbps)}, {"label", roof_label(r)}});
  for (const auto& k : m.kernels)
    kernels.push_back({{"name", k.name}, {"ai", number(k.ai)}, {"achieved_gflops", number(k.achieved_gflops)},
                       {"attainable_gflops", number(k.attainable_gflops)}, {"bound_by", k.bound_by},
                       {"efficiency", number(k.efficiency)}});
  return {{"plot", "roofline"},
          {"schema", kCeilingSchema},
          {"title", title},
          {"threads", m.threads},
          {"x", {{"unit", "FLOP/byte"}, {"min", m.x_lo}, {"max", m.x_hi}}},
          {"y", {{"unit", "GFLOP/s"}, {"min", m.y_lo}, {"max", m.y_hi}}},
          {"compute", compute},
          {"memory", memory},
          {"ridges", ridges},
          {"kernels", kernels},
          {"kernel_roofs", kernel_roofs}};
}

// ===================================================================================================
// Bandwidth and latency by working set
// ===================================================================================================

struct Series {
  std::string name;
  json key;                                      // what identifies it in the metadata
  std::vector<std::pair<double, double>> points;  // (bytes, value), by size
};

// A vertical line at a working-set size: a detected level edge or a reported cache size.
struct SizeMark {
  double bytes = 0;
  std::string text;
  Pen pen;
};

struct SweepPlot {
  std::string title, y_title, empty_note, metadata_id;
  bool y_log = true;
  std::vector<Series> series;
  std::vector<SizeMark> marks;
  std::vector<LegendEntry> mark_legend;  // one entry per kind of mark present
  json meta;                             // plot-specific keys; points, ranges and marks are added
};

Pen series_pen(std::size_t index) {
  const std::size_t n = std::size(kSeriesColours);
  // Past the palette, colours repeat with a dash pattern so lines stay distinguishable.
  return {kSeriesColours[index % n], index < n ? "" : (index < 2 * n ? kDashed : kDotted), 1.75};
}

// Groups rows into series in the order their keys first appear, points sorted by size.
template <typename Row, typename KeyFn, typename ValueFn>
std::vector<Series> group_series(const std::vector<Row>& rows, KeyFn key_of, ValueFn value_of) {
  std::vector<Series> series;
  for (const auto& r : rows) {
    const std::optional<double> v = value_of(r);
    if (!usable(v) || r.size_bytes == 0) continue;
    auto [name, key] = key_of(r);
    auto it = std::find_if(series.begin(), series.end(), [&key = key](const Series& s) { return s.key == key; });
    if (it == series.end()) it = series.insert(series.end(), Series{name, key, {}});
    it->points.push_back({static_cast<double>(r.size_bytes), *v});
  }
  for (auto& s : series) std::stable_sort(s.points.begin(), s.points.end());
  return series;
}

// One data cache per level, as one instance holds it: the data or unified cache, never instructions.
std::vector<SizeMark> reported_marks(const std::vector<CacheLevel>& caches) {
  std::vector<SizeMark> marks;
  std::vector<int> seen;
  for (const auto& c : caches) {
    if (c.type == "instruction" || c.size_bytes == 0) continue;
    if (std::find(seen.begin(), seen.end(), c.level) != seen.end()) continue;
    seen.push_back(c.level);
    marks.push_back({static_cast<double>(c.size_bytes),
                     fmt::format("L{} {} (reported)", c.level, format_bytes(c.size_bytes)),
                     {kReportedColour, kDotted, 1.25}});
  }
  return marks;
}

std::vector<SizeMark> edge_marks(const std::vector<CacheLevelEdge>& levels) {
  std::vector<SizeMark> marks;
  for (const auto& l : levels) {
    if (!l.edge_bytes || *l.edge_bytes == 0) continue;
    marks.push_back({static_cast<double>(*l.edge_bytes), fmt::format("{} edge {}", l.name, format_bytes(*l.edge_bytes)),
                     {kEdgeColour, kDashed, 1.25}});
  }
  return marks;
}

Axis size_axis(const SweepPlot& p) {
  double lo = HUGE_VAL, hi = 0;
  for (const auto& s : p.series) {
    for (const auto& [x, y] : s.points) lo = std::min(lo, x), hi = std::max(hi, x);
  }
  for (const auto& m : p.marks) lo = std::min(lo, m.bytes), hi = std::max(hi, m.bytes);
  if (hi <= 0) lo = 4096, hi = 1 << 30;
  // A quarter octave of air at both ends keeps the first and last points off the frame.
  const double x_lo = std::ldexp(1.0, static_cast<int>(std::floor(std::log2(lo) - 0.25)));
  const double x_hi = std::ldexp(1.0, static_cast<int>(std::ceil(std::log2(hi) + 0.25)));
  Axis a{x_lo, x_hi, true, {}, "working set"};
  for (const double v : log2_ticks(x_lo, x_hi, 10)) a.ticks.push_back({v, format_bytes(static_cast<uint64_t>(v))});
  return a;
}

Axis value_axis(const SweepPlot& p) {
  double lo = HUGE_VAL, hi = 0;
  for (const auto& s : p.series) {
    for (const auto& [x, y] : s.points) lo = std::min(lo, y), hi = std::max(hi, y);
  }
  if (hi <= 0) return rate_axis(p.y_log ? 1 : 0, p.y_log ? 1000 : 100, p.y_log, p.y_title);
  if (p.y_log) {
    const double y_lo = nice_floor(lo / 1.15), y_hi = nice_ceil(hi * 1.15);
    return rate_axis(y_lo, y_hi > y_lo ? y_hi : y_lo * 10, true, p.y_title);
  }
  // From zero to the first tick step above the highest point, so the top is a labelled value.
  const double step = nice_ceil(hi * 1.1 / 7);
  return rate_axis(0, std::ceil(hi * 1.1 / step) * step, false, p.y_title);
}

std::vector<LegendEntry> sweep_legend(const SweepPlot& p) {
  std::vector<LegendEntry> entries;
  for (std::size_t i = 0; i < p.series.size(); ++i) entries.push_back({p.series[i].name, series_pen(i), Symbol::line_dot});
  for (const auto& e : p.mark_legend) entries.push_back(e);
  return entries;
}

std::string draw_series(const Frame& f, const Series& s, const Pen& pen) {
  std::string points;
  for (const auto& [x, y] : s.points) {
    if (!points.empty()) points += ' ';
    points += fmt_px(f.x(x)) + "," + fmt_px(f.y(y));
  }
  std::string out = fmt::format("<polyline points=\"{}\" {} stroke-linejoin=\"round\"/>\n", points, pen_attributes(pen));
  for (const auto& [x, y] : s.points) out += circle_element(f.x(x), f.y(y), 2.5, pen.colour, pen.colour);
  return out;
}

// Rotated to read upwards, beside its line on either side, at the top, bottom or middle of the plot.
std::vector<Label> mark_label_candidates(const Frame& f, double x, const SizeMark& m) {
  // Turned a quarter anticlockwise, the glyphs rise to the left of their baseline.
  const double left = x - (kLineGap + 1 + kFont * kDescentEm);
  const double right = x + kLineGap + 1 + kFont * kAscentEm;
  const double top = f.top + 6, bottom = f.bottom - 6, middle = (f.top + f.bottom) / 2;
  std::vector<Label> c;
  for (const auto& [y, anchor] : {std::pair{top, "end"}, std::pair{bottom, "start"}, std::pair{middle, "middle"}}) {
    c.push_back({right, y, m.text, anchor, -90, kFont, m.pen.colour});
    c.push_back({left, y, m.text, anchor, -90, kFont, m.pen.colour});
  }
  return c;
}

std::string draw_sweep_body(const Frame& f, const SweepPlot& p) {
  LabelPlacer placer = plot_placer(f);
  std::string s;
  for (const auto& m : p.marks) {
    const double x = f.x(m.bytes);
    s += line_element(x, f.top, x, f.bottom, m.pen);
    placer.block(segment_box(x, f.top, x, f.bottom), Obstacle::line);
  }
  for (std::size_t i = 0; i < p.series.size(); ++i) {
    s += draw_series(f, p.series[i], series_pen(i));
    const auto& pts = p.series[i].points;
    for (std::size_t k = 0; k < pts.size(); ++k) {
      const double x1 = f.x(pts[k].first), y1 = f.y(pts[k].second);
      const auto& next = pts[std::min(k + 1, pts.size() - 1)];
      placer.block(segment_box(x1, y1, f.x(next.first), f.y(next.second), 2), Obstacle::line);
    }
  }
  std::vector<Label> labels;
  for (const auto& m : p.marks) labels.push_back(place(placer, mark_label_candidates(f, f.x(m.bytes), m)));
  if (p.series.empty()) s += draw_note(f, p.empty_note);
  return s + draw_labels(labels);
}

json sweep_json(const SweepPlot& p, const Frame& f) {
  json series = json::array(), marks = json::array();
  for (const auto& s : p.series) {
    json points = json::array();
    for (const auto& [x, y] : s.points) points.push_back({static_cast<uint64_t>(x), number(y)});
    json entry = s.key;
    entry["name"] = s.name;
    entry["points"] = points;
    series.push_back(entry);
  }
  for (const auto& m : p.marks) marks.push_back({{"bytes", static_cast<uint64_t>(m.bytes)}, {"label", m.text}});
  json meta = p.meta;
  meta["title"] = p.title;
  meta["x"] = {{"unit", "bytes"}, {"min", f.x.lo}, {"max", f.x.hi}, {"log", true}};
  meta["series"] = series;
  meta["marks"] = marks;
  return meta;
}

std::string sweep_svg(SweepPlot p) {
  // Lines are drawn in size order, so a mark's neighbours in the file are its neighbours on the plot.
  std::stable_sort(p.marks.begin(), p.marks.end(), [](const SizeMark& a, const SizeMark& b) { return a.bytes < b.bytes; });
  const Frame f = make_frame(p.title, size_axis(p), value_axis(p), sweep_legend(p));
  json meta = sweep_json(p, f);
  meta["y"] = {{"unit", p.meta.value("unit", "")}, {"min", f.y.lo}, {"max", f.y.hi}, {"log", f.y.log}};
  return document(f, p.metadata_id, meta, draw_sweep_body(f, p));
}

// Reported sizes first, so that where an edge and the reported size coincide, the edge's label gets
// the second choice of side and both stay readable.
void add_marks(SweepPlot& p, std::vector<SizeMark> reported, std::vector<SizeMark> edges) {
  if (!reported.empty()) p.mark_legend.push_back({"reported cache size", reported.front().pen, Symbol::line});
  if (!edges.empty()) p.mark_legend.push_back({"detected level edge", edges.front().pen, Symbol::line});
  for (auto& m : reported) p.marks.push_back(std::move(m));
  for (auto& m : edges) p.marks.push_back(std::move(m));
}

std::string threads_text(int n) { return n == 1 ? "1 thread" : fmt::format("{} threads", n); }
std::string chains_text(int n) { return n == 1 ? "1 chain" : fmt::format("{} chains", n); }

}  // namespace

std::string roofline_svg(const CeilingTable& t, const std::vector<KernelScore>& kernels, int threads,
                         const std::string& title) {
  const RoofModel m = make_model(t, kernels, threads);
  const Frame f = make_frame(title, intensity_axis(m), rate_axis(m.y_lo, m.y_hi, true, "performance (GFLOP/s)"),
                             roofline_legend(m));
  const RoofDrawing d = draw_roofs(f, m);
  std::string body = d.lines + d.marks;
  if (m.compute.empty() && m.memory.empty()) body += draw_note(f, "no ceilings measured with " + threads_text(threads));
  body += draw_labels(d.labels);
  return document(f, "peakprobe-roofline", roofline_json(m, title, d.ridges), body);
}

std::string bandwidth_svg(const std::vector<BandwidthResult>& rows, const std::vector<CacheLevelEdge>& levels,
                          const std::vector<CacheLevel>& caches, const std::string& title) {
  SweepPlot p;
  p.title = title;
  p.y_title = "bandwidth (GB/s)";
  p.empty_note = "no bandwidth measured";
  p.metadata_id = "peakprobe-bandwidth";
  p.series = group_series(
      rows,
      [](const BandwidthResult& r) {
        return std::pair{fmt::format("{} {}, {}", r.kernel, r.isa, threads_text(r.threads)),
                         json{{"kernel", r.kernel}, {"isa", r.isa}, {"threads", r.threads}}};
      },
      // A row whose threads waited for their CPUs in every repetition measured another program's
      // share of the CPU, not memory: no point of its curve.
      [](const BandwidthResult& r) { return r.waited_every_repetition ? std::nullopt : r.gbps; });
  double lo = HUGE_VAL, hi = 0;
  for (const auto& s : p.series) {
    for (const auto& [x, y] : s.points) lo = std::min(lo, y), hi = std::max(hi, y);
  }
  // Linear reads best while the curve's steps are comparable; a span of more than 20x (one thread
  // beside many) would flatten the lower curves against the axis.
  p.y_log = hi > 0 && hi / lo > 20;
  p.meta = {{"plot", "bandwidth"}, {"unit", "GB/s"}};
  add_marks(p, reported_marks(caches), edge_marks(levels));
  return sweep_svg(std::move(p));
}

std::string latency_svg(const std::vector<LatencyResult>& rows, const std::vector<CacheLevel>& caches,
                        const std::string& title) {
  SweepPlot p;
  p.title = title;
  p.y_title = "latency (ns)";
  p.empty_note = "no latency measured";
  p.metadata_id = "peakprobe-latency";
  p.y_log = true;
  p.series = group_series(
      rows,
      [](const LatencyResult& r) {
        return std::pair{fmt::format("{}, {} pages, {}", r.mode, r.pages, chains_text(r.chains)),
                         json{{"mode", r.mode}, {"pages", r.pages}, {"chains", r.chains}}};
      },
      [](const LatencyResult& r) { return r.latency_ns; });
  p.meta = {{"plot", "latency"}, {"unit", "ns"}};
  add_marks(p, reported_marks(caches), {});
  return sweep_svg(std::move(p));
}

}  // namespace peakprobe
