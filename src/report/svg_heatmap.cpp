#include "report/svg_heatmap.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <optional>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "pairs/classify.hpp"
#include "pairs/cluster.hpp"

namespace peakprobe {

namespace {

// ---- layout, in pixels ----
// Text widths are estimated, not measured: a self-contained SVG cannot know the viewer's font.
// 6.5 px per character covers common sans-serif faces at 12 px (wide glyphs such as "m" are offset
// by the many commas and spaces in operand lists); estimates only ever size margins, never clip.
constexpr int kCell = 56;
constexpr int kPad = 16;
constexpr int kFontSize = 12;
constexpr double kCharWidth = 6.5;
constexpr int kTitleFontSize = 16;
constexpr double kTitleCharWidth = 9.5;  // bold 16 px
constexpr int kLabelGap = 8;             // between an axis label and the matrix
constexpr int kTextDrop = 4;             // baseline below a line's centre for 12 px text
constexpr int kLineHeight = 18;
constexpr int kLegendBarWidth = 360;
constexpr int kLegendBarHeight = 14;
constexpr int kSwatch = 14;
// Column labels slant upwards at 45 degrees: the baselines of neighbouring labels are then
// kCell x sin 45 = 40 px apart, over three times the font size, however long the names are.
constexpr double kSlant = 0.70710678118654752;  // sin 45 = cos 45

constexpr const char* kMissingFill = "#d9d9d9";
constexpr const char* kMissingText = "#505050";
constexpr const char* kNotMeasured = "n/a = not measured";
constexpr const char* kLegendCaption = "same-port measure: 0 = issue together, 1 = one shared pipe";

// ---- colour ----
struct Rgb {
  double r, g, b;  // 0..255
};

// Viridis at nine evenly spaced points: perceptually uniform, readable in greyscale and by the
// common forms of colour blindness. It is used reversed, so that co-issue (0) is light and a
// shared pipe (1) is dark, which makes contention stand out.
constexpr std::array<Rgb, 9> kViridis = {{{68, 1, 84},
                                          {71, 44, 122},
                                          {59, 81, 139},
                                          {44, 113, 142},
                                          {33, 144, 141},
                                          {39, 173, 129},
                                          {92, 200, 99},
                                          {170, 220, 50},
                                          {253, 231, 37}}};

// Piecewise linear between the stops, the same interpolation an SVG gradient over them uses, so
// the legend bar and the cells agree.
Rgb ramp(double same_port) {
  const double t = (1.0 - std::clamp(same_port, 0.0, 1.0)) * (kViridis.size() - 1);
  const std::size_t i = std::min(static_cast<std::size_t>(t), kViridis.size() - 2);
  const double f = t - static_cast<double>(i);
  const Rgb& a = kViridis[i];
  const Rgb& b = kViridis[i + 1];
  return {a.r + (b.r - a.r) * f, a.g + (b.g - a.g) * f, a.b + (b.b - a.b) * f};
}

std::string hex(const Rgb& c) {
  auto byte = [](double v) { return static_cast<int>(std::lround(std::clamp(v, 0.0, 255.0))); };
  return fmt::format("#{:02x}{:02x}{:02x}", byte(c.r), byte(c.g), byte(c.b));
}

// WCAG relative luminance.
double luminance(const Rgb& c) {
  auto linear = [](double v) {
    v /= 255.0;
    return v <= 0.04045 ? v / 12.92 : std::pow((v + 0.055) / 1.055, 2.4);
  };
  return 0.2126 * linear(c.r) + 0.7152 * linear(c.g) + 0.0722 * linear(c.b);
}

// Black or white, whichever contrasts more with the fill (WCAG contrast ratio).
const char* text_colour(const Rgb& fill) {
  const double l = luminance(fill);
  return (l + 0.05) / 0.05 >= 1.05 / (l + 0.05) ? "#000000" : "#ffffff";
}

// ---- text ----
// Characters, not bytes: a UTF-8 continuation byte adds no width.
int text_width(std::string_view text, double char_width = kCharWidth) {
  const auto chars = std::count_if(text.begin(), text.end(), [](char c) { return (c & 0xC0) != 0x80; });
  return static_cast<int>(std::ceil(static_cast<double>(chars) * char_width));
}

std::optional<double> cell_value(const PairMatrix& m, std::size_t i, std::size_t j) {
  if (i >= m.same_port.size() || j >= m.same_port[i].size()) return std::nullopt;
  const auto& v = m.same_port[i][j];
  if (!v || !std::isfinite(*v)) return std::nullopt;
  return v;
}

// Names in the groups list are separated by "; " because instruction texts contain commas.
std::vector<std::vector<std::string>> groups_to_list(const PairMatrix& m) {
  if (!m.groups.empty()) return m.groups;
  return name_groups(cluster_pipe_groups(m.same_port), m.instructions);
}

// One text line of the groups list; continuation lines start further right (indent).
struct GroupLine {
  int indent = 0;
  std::string text;
};

// Wraps "pipe group k: a; b; c" at item boundaries to fit max_width; an item wider than the
// space left still gets a line of its own rather than being cut.
std::vector<GroupLine> wrap_group(int number, const std::vector<std::string>& names, int max_width) {
  const std::string prefix = fmt::format("pipe group {}: ", number);
  const int indent = text_width(prefix);
  std::vector<GroupLine> lines{{0, prefix}};
  bool line_has_item = false;
  for (std::size_t k = 0; k < names.size(); ++k) {
    const std::string item = names[k] + (k + 1 < names.size() ? ";" : "");
    GroupLine& line = lines.back();
    const std::string joined = line.text + (line_has_item ? " " : "") + item;
    if (!line_has_item || line.indent + text_width(joined) <= max_width) {
      line.text = joined;
    } else {
      lines.push_back({indent, item});
    }
    line_has_item = true;
  }
  return lines;
}

struct Layout {
  std::size_t n = 0;
  int label_width = 0;  // longest instruction name
  int left = 0;         // matrix left edge
  int top = 0;          // matrix top edge
  int legend_top = 0;   // legend caption baseline
  int groups_top = 0;   // groups heading baseline
  int width = 0;
  int height = 0;
  std::vector<GroupLine> group_lines;
};

int legend_right() { return kPad + kLegendBarWidth + 24 + kSwatch + 6 + text_width(kNotMeasured); }

Layout make_layout(const PairMatrix& m, const std::string& title,
                   const std::vector<std::vector<std::string>>& groups) {
  Layout l;
  l.n = m.instructions.size();
  for (const auto& name : m.instructions) l.label_width = std::max(l.label_width, text_width(name));
  const int slant = static_cast<int>(std::ceil(l.label_width * kSlant));
  const int n = static_cast<int>(l.n);

  l.left = kPad + l.label_width + kLabelGap;
  // Title line, then room for the slanted column labels, whose glyphs reach a font size above
  // their baseline.
  l.top = kPad + kTitleFontSize + 12 + slant + kFontSize + kLabelGap;
  const int matrix_bottom = l.top + n * kCell;
  l.legend_top = matrix_bottom + 28;
  // Legend: caption, bar, tick values, class names (see draw_legend); then a blank line and the
  // groups heading above the first group line.
  l.groups_top = l.legend_top + 8 + kLegendBarHeight + 32 + kLineHeight + 2 * kLineHeight;

  // The last column's label runs out to the right of the matrix.
  const int last_label_right = n > 0 ? l.left + (n - 1) * kCell + kCell / 2 + 4 + slant + kFontSize : 0;
  int right = std::max({l.left + n * kCell, last_label_right, legend_right(),
                        kPad + text_width(title, kTitleCharWidth), kPad + text_width(kLegendCaption)});

  for (std::size_t g = 0; g < groups.size(); ++g) {
    for (auto& line : wrap_group(static_cast<int>(g) + 1, groups[g], right - kPad)) {
      right = std::max(right, kPad + line.indent + text_width(line.text));
      l.group_lines.push_back(std::move(line));
    }
  }
  l.width = right + kPad;
  const int group_rows = std::max<int>(1, static_cast<int>(l.group_lines.size()));
  l.height = l.groups_top + group_rows * kLineHeight + kPad;
  return l;
}

// ---- drawing ----
std::string text_element(int x, int y, std::string_view text, std::string_view attributes = {}) {
  return fmt::format("<text x=\"{}\" y=\"{}\"{}{}>{}</text>\n", x, y, attributes.empty() ? "" : " ", attributes,
                     xml_escape(text));
}

std::string draw_title(const std::string& title) {
  return text_element(kPad, kPad + kTitleFontSize, title,
                      fmt::format("font-size=\"{}\" font-weight=\"bold\"", kTitleFontSize));
}

std::string draw_axis_labels(const PairMatrix& m, const Layout& l) {
  std::string s = "<g fill=\"#000000\">\n";
  for (std::size_t i = 0; i < l.n; ++i) {
    const int y = l.top + static_cast<int>(i) * kCell + kCell / 2 + kTextDrop;
    s += text_element(l.left - kLabelGap, y, m.instructions[i], "text-anchor=\"end\"");
  }
  // Anchored just right of the column centre: the glyphs rise to the upper left of a -45 degree
  // baseline, so this puts their middle over the column.
  for (std::size_t j = 0; j < l.n; ++j) {
    const int x = l.left + static_cast<int>(j) * kCell + kCell / 2 + 4;
    const int y = l.top - kLabelGap;
    s += text_element(x, y, m.instructions[j], fmt::format("transform=\"rotate(-45 {} {})\"", x, y));
  }
  return s + "</g>\n";
}

std::string cell_tooltip(const PairMatrix& m, std::size_t i, std::size_t j, const std::optional<double>& v) {
  const std::string what = v ? fmt::format("{:.2f} ({})", *v, to_string(classify_pair(*v))) : "not measured";
  return fmt::format("<title>{} + {}: {}</title>", xml_escape(m.instructions[i]), xml_escape(m.instructions[j]),
                     xml_escape(what));
}

std::string draw_cell(const PairMatrix& m, const Layout& l, std::size_t i, std::size_t j) {
  const int x = l.left + static_cast<int>(j) * kCell;
  const int y = l.top + static_cast<int>(i) * kCell;
  const auto v = cell_value(m, i, j);
  const Rgb fill = v ? ramp(*v) : Rgb{};
  const std::string fill_hex = v ? hex(fill) : kMissingFill;
  const std::string ink = v ? text_colour(fill) : kMissingText;
  const std::string label = v ? fmt::format("{:.2f}", *v) : "n/a";
  return fmt::format(
      "<g>{}<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\"/>"
      "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" fill=\"{}\">{}</text></g>\n",
      cell_tooltip(m, i, j, v), x, y, kCell, kCell, fill_hex, x + kCell / 2, y + kCell / 2 + kTextDrop, ink, label);
}

// White grid lines drawn over the cells keep neighbouring cells of similar colour apart.
std::string draw_grid(const Layout& l) {
  const int n = static_cast<int>(l.n);
  std::string s = "<g stroke=\"#ffffff\" stroke-width=\"2\">\n";
  for (int k = 1; k < n; ++k) {
    const int x = l.left + k * kCell, y = l.top + k * kCell;
    s += fmt::format("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\"/>\n", x, l.top, x, l.top + n * kCell);
    s += fmt::format("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\"/>\n", l.left, y, l.left + n * kCell, y);
  }
  return s + "</g>\n";
}

std::string draw_matrix(const PairMatrix& m, const Layout& l) {
  std::string s;
  for (std::size_t i = 0; i < l.n; ++i)
    for (std::size_t j = 0; j < l.n; ++j) s += draw_cell(m, l, i, j);
  return s + draw_grid(l);
}

std::string gradient_definition() {
  std::string s = "<defs>\n<linearGradient id=\"same-port-ramp\" x1=\"0\" y1=\"0\" x2=\"1\" y2=\"0\">\n";
  const std::size_t last = kViridis.size() - 1;
  for (std::size_t k = 0; k <= last; ++k) {
    s += fmt::format("<stop offset=\"{:.3f}\" stop-color=\"{}\"/>\n", static_cast<double>(k) / last,
                     hex(kViridis[last - k]));
  }
  return s + "</linearGradient>\n</defs>\n";
}

int bar_x(double value) { return kPad + static_cast<int>(std::lround(value * kLegendBarWidth)); }

std::string draw_legend(const Layout& l) {
  const int bar_top = l.legend_top + 8;
  const int bar_bottom = bar_top + kLegendBarHeight;
  std::string s = "<g fill=\"#000000\">\n" + text_element(kPad, l.legend_top, kLegendCaption);
  s += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"url(#same-port-ramp)\" "
                   "stroke=\"#808080\" stroke-width=\"1\"/>\n",
                   kPad, bar_top, kLegendBarWidth, kLegendBarHeight);
  for (const double tick : {0.0, kCoIssueBelow, kSharedAbove, 1.0}) {
    const int x = bar_x(tick);
    s += fmt::format("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"#000000\" stroke-width=\"1\"/>\n", x,
                     bar_top, x, bar_bottom + 4);
    s += text_element(x, bar_bottom + 16, fmt::format("{:g}", tick), "text-anchor=\"middle\"");
  }
  // The class names sit under their ranges, the outer two flush with the bar's ends.
  const int class_y = bar_bottom + 32;
  s += text_element(bar_x(0), class_y, fmt::format("co-issue < {:g}", kCoIssueBelow));
  s += text_element(bar_x((kCoIssueBelow + kSharedAbove) / 2), class_y,
                    fmt::format("partial {:g} to {:g}", kCoIssueBelow, kSharedAbove), "text-anchor=\"middle\"");
  s += text_element(bar_x(1), class_y, fmt::format("shared > {:g}", kSharedAbove), "text-anchor=\"end\"");

  const int swatch_x = kPad + kLegendBarWidth + 24;
  s += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\"/>\n", swatch_x, bar_top, kSwatch,
                   kSwatch, kMissingFill);
  s += text_element(swatch_x + kSwatch + 6, bar_top + kSwatch / 2 + kTextDrop, kNotMeasured);
  return s + "</g>\n";
}

std::string draw_groups(const Layout& l) {
  std::string s = "<g fill=\"#000000\">\n" +
                  text_element(kPad, l.groups_top - kLineHeight, "inferred pipe groups", "font-weight=\"bold\"");
  if (l.group_lines.empty()) return s + text_element(kPad, l.groups_top, "none") + "</g>\n";
  int y = l.groups_top;
  for (const auto& line : l.group_lines) {
    s += text_element(kPad + line.indent, y, line.text);
    y += kLineHeight;
  }
  return s + "</g>\n";
}

// ---- metadata ----
nlohmann::json number_or_null(double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(); }

nlohmann::json matrix_json(const PairMatrix& m, const std::vector<std::vector<std::string>>& groups) {
  nlohmann::json same_port = nlohmann::json::array();
  for (std::size_t i = 0; i < m.instructions.size(); ++i) {
    nlohmann::json row = nlohmann::json::array();
    for (std::size_t j = 0; j < m.instructions.size(); ++j) {
      const auto v = cell_value(m, i, j);
      row.push_back(v ? nlohmann::json(*v) : nlohmann::json());
    }
    same_port.push_back(std::move(row));
  }
  nlohmann::json alone = nlohmann::json::array();
  for (double c : m.alone_cycles) alone.push_back(number_or_null(c));
  return {{"instructions", m.instructions}, {"alone_cycles", alone},        {"same_port", same_port},
          {"groups", groups},               {"co_issue_below", kCoIssueBelow}, {"shared_above", kSharedAbove}};
}

// A name that is not valid UTF-8 must not make the whole report throw; it gets U+FFFD instead.
std::string draw_metadata(const PairMatrix& m, const std::vector<std::vector<std::string>>& groups) {
  const std::string json = matrix_json(m, groups).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  return "<metadata id=\"peakprobe-pair-matrix\">" + xml_escape(json) + "</metadata>\n";
}

}  // namespace

std::string xml_escape(std::string_view text) {
  std::string s;
  s.reserve(text.size());
  for (const char c : text) {
    switch (c) {
      case '&': s += "&amp;"; break;
      case '<': s += "&lt;"; break;
      case '>': s += "&gt;"; break;
      case '"': s += "&quot;"; break;
      case '\'': s += "&apos;"; break;
      default: s += static_cast<unsigned char>(c) < 0x20 || c == 0x7f ? ' ' : c;
    }
  }
  return s;
}

std::string pair_heatmap_svg(const PairMatrix& m, const std::string& title) {
  const auto groups = groups_to_list(m);
  const Layout l = make_layout(m, title, groups);
  std::string s = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  s += fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" viewBox=\"0 0 {0} {1}\" "
      "font-family=\"sans-serif\" font-size=\"{2}\">\n",
      l.width, l.height, kFontSize);
  s += "<title>" + xml_escape(title) + "</title>\n";
  s += draw_metadata(m, groups);
  s += gradient_definition();
  // An explicit background: viewers with a dark page would otherwise show black text on black.
  s += fmt::format("<rect width=\"{}\" height=\"{}\" fill=\"#ffffff\"/>\n", l.width, l.height);
  s += draw_title(title) + draw_axis_labels(m, l) + draw_matrix(m, l) + draw_legend(l) + draw_groups(l);
  return s + "</svg>\n";
}

}  // namespace peakprobe
