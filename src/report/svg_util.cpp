#include "report/svg_util.hpp"

#include <algorithm>
#include <climits>
#include <cmath>
#include <numbers>

#include <fmt/format.h>

namespace peakprobe {

namespace {

// Tick values land on round numbers computed in floating point; this much relative slack keeps a
// tick that sits exactly on a range bound (1/64, 256) from being dropped by rounding.
constexpr double kEps = 1e-9;

// 10^e, exact for the usual small exponents: dividing by 10^-e rounds 0.01 correctly, multiplying by
// pow(10, -2) does not always.
double pow10(int e) { return e >= 0 ? std::pow(10.0, e) : 1.0 / std::pow(10.0, -e); }

bool valid_log_range(double lo, double hi) { return std::isfinite(lo) && std::isfinite(hi) && lo > 0 && hi > lo; }

bool in_range(double v, double lo, double hi) { return v >= lo * (1 - kEps) && v <= hi * (1 + kEps); }

// Drops trailing zeros after a decimal point, and the point itself when nothing follows it.
std::string trim_zeros(std::string s) {
  if (s.find('.') == std::string::npos) return s;
  while (s.back() == '0') s.pop_back();
  if (s.back() == '.') s.pop_back();
  return s;
}

std::vector<double> decade_ticks(double lo, double hi, const std::vector<int>& steps, int stride) {
  std::vector<double> ticks;
  const int e0 = static_cast<int>(std::floor(std::log10(lo)));
  const int e1 = static_cast<int>(std::ceil(std::log10(hi)));
  for (int e = e0; e <= e1; ++e) {
    if (((e % stride) + stride) % stride != 0) continue;
    for (const int m : steps) {
      const double v = m * pow10(e);
      if (in_range(v, lo, hi)) ticks.push_back(v);
    }
  }
  return ticks;
}

struct Axis2 {
  double x, y;
};

Axis2 unit_u(const Box& b) {
  const double t = b.angle_deg * std::numbers::pi / 180.0;
  return {std::cos(t), std::sin(t)};
}

Axis2 unit_v(const Box& b) {
  const auto u = unit_u(b);
  return {-u.y, u.x};
}

// Half the length of b's shadow on the unit axis a.
double radius_on(const Box& b, Axis2 a) {
  const auto u = unit_u(b), v = unit_v(b);
  return b.half_w * std::abs(u.x * a.x + u.y * a.y) + b.half_h * std::abs(v.x * a.x + v.y * a.y);
}

bool separated_on(const Box& a, const Box& b, Axis2 axis) {
  const double distance = std::abs((b.cx - a.cx) * axis.x + (b.cy - a.cy) * axis.y);
  return distance >= radius_on(a, axis) + radius_on(b, axis);
}

}  // namespace

std::string fmt_si(double v) {
  if (!std::isfinite(v)) return "-";
  if (v == 0) return "0";
  if (v < 0) return fmt::format("-{}", fmt_si(-v));
  const int exponent = static_cast<int>(std::floor(std::log10(v)));
  // Above 999 the digits past the third become zeros (1234 -> 1230) instead of an exponent.
  if (exponent > 2) return fmt::format("{:.0f}", std::round(v / pow10(exponent - 2)) * pow10(exponent - 2));
  const int decimals = 2 - exponent;
  // Rounding may carry into a new digit (9.996 -> "10.00"); trimming the zeros then keeps it short.
  return trim_zeros(fmt::format("{:.{}f}", v, decimals));
}

std::string fmt_px(double v) {
  const double rounded = std::round(v * 10) / 10;
  return fmt::format("{:.1f}", rounded == 0 ? 0.0 : rounded);
}

std::vector<double> log_ticks(double lo, double hi) {
  if (!valid_log_range(lo, hi)) return {};
  const double decades = std::log10(hi / lo);
  std::vector<double> ticks;
  if (decades < 1) {
    ticks = decade_ticks(lo, hi, {1, 2, 3, 4, 5, 6, 7, 8, 9}, 1);
  } else if (decades <= 3) {
    ticks = decade_ticks(lo, hi, {1, 2, 5}, 1);
  } else {
    const int count = static_cast<int>(std::ceil(std::log10(hi)) - std::floor(std::log10(lo))) + 1;
    ticks = decade_ticks(lo, hi, {1}, std::max(1, (count + 7) / 8));
  }
  // A range between two neighbouring steps (1.1 to 1.9) still needs both ends labelled.
  if (ticks.size() < 2) return {lo, hi};
  return ticks;
}

std::vector<double> log2_ticks(double lo, double hi, int max_ticks) {
  if (!valid_log_range(lo, hi)) return {};
  const int e0 = static_cast<int>(std::ceil(std::log2(lo) - kEps));
  const int e1 = static_cast<int>(std::floor(std::log2(hi) + kEps));
  // Strides that divide 10 keep the exponents of KiB, MiB and GiB on ticks.
  for (const int stride : {1, 2, 5, 10, 20, 50}) {
    std::vector<double> ticks;
    for (int e = e0; e <= e1; ++e) {
      if (((e % stride) + stride) % stride == 0) ticks.push_back(std::ldexp(1.0, e));
    }
    if (static_cast<int>(ticks.size()) <= std::max(1, max_ticks)) return ticks;
  }
  return {};
}

std::vector<double> linear_ticks(double lo, double hi) {
  if (!std::isfinite(lo) || !std::isfinite(hi) || !(hi > lo)) return {};
  const double step = nice_ceil((hi - lo) / 7);
  std::vector<double> ticks;
  // Integer multiples of the step, not a running sum, so that 0.1 + 0.2 never prints 0.30000000000000004.
  for (double k = std::ceil(lo / step - kEps); k * step <= hi + step * kEps; k += 1) ticks.push_back(k * step);
  return ticks;
}

double nice_ceil(double v) {
  if (!(v > 0) || !std::isfinite(v)) return 1;
  const int e = static_cast<int>(std::floor(std::log10(v)));
  const double f = v / pow10(e);
  for (const double m : {1.0, 2.0, 5.0}) {
    if (f <= m * (1 + kEps)) return m * pow10(e);
  }
  return pow10(e + 1);
}

double nice_floor(double v) {
  if (!(v > 0) || !std::isfinite(v)) return 1;
  const int e = static_cast<int>(std::floor(std::log10(v)));
  const double f = v / pow10(e);
  for (const double m : {5.0, 2.0}) {
    if (f >= m * (1 - kEps)) return m * pow10(e);
  }
  return pow10(e);
}

double Scale::operator()(double v) const {
  double t = 0;
  if (log) {
    // Callers leave out values a log axis cannot show; the guard keeps a stray one finite.
    if (!(v > 0) || !(lo > 0) || !(hi > lo)) return from;
    t = std::log(v / lo) / std::log(hi / lo);
  } else {
    if (!(hi > lo)) return from;
    t = (v - lo) / (hi - lo);
  }
  return from + t * (to - from);
}

double text_width(std::string_view text, double font_size) {
  const auto chars = std::count_if(text.begin(), text.end(), [](char c) { return (c & 0xC0) != 0x80; });
  return static_cast<double>(chars) * kCharEm * font_size;
}

Box text_box(double x, double y, std::string_view text, std::string_view anchor, double angle_deg, double font_size,
             double pad) {
  const double w = text_width(text, font_size);
  const double ascent = kAscentEm * font_size, descent = kDescentEm * font_size;
  const double start = anchor == "middle" ? -w / 2 : anchor == "end" ? -w : 0;
  // The centre in the text's own frame (x along the baseline, y down), then rotated about (x, y).
  const double lx = start + w / 2, ly = (descent - ascent) / 2;
  const double t = angle_deg * std::numbers::pi / 180.0;
  return {x + lx * std::cos(t) - ly * std::sin(t), y + lx * std::sin(t) + ly * std::cos(t), w / 2 + pad,
          (ascent + descent) / 2 + pad, angle_deg};
}

Box segment_box(double x1, double y1, double x2, double y2, double half_thickness) {
  const double dx = x2 - x1, dy = y2 - y1;
  return {(x1 + x2) / 2, (y1 + y2) / 2, std::hypot(dx, dy) / 2, half_thickness,
          std::atan2(dy, dx) * 180.0 / std::numbers::pi};
}

bool overlaps(const Box& a, const Box& b) {
  for (const Axis2 axis : {unit_u(a), unit_v(a), unit_u(b), unit_v(b)}) {
    if (separated_on(a, b, axis)) return false;
  }
  return true;
}

bool inside(const Box& b, double left, double top, double right, double bottom) {
  const auto u = unit_u(b), v = unit_v(b);
  for (const double su : {-1.0, 1.0}) {
    for (const double sv : {-1.0, 1.0}) {
      const double x = b.cx + su * b.half_w * u.x + sv * b.half_h * v.x;
      const double y = b.cy + su * b.half_w * u.y + sv * b.half_h * v.y;
      // Rounding in the rotation must not push a corner that sits on the edge outside.
      if (x < left - 1e-6 || x > right + 1e-6 || y < top - 1e-6 || y > bottom + 1e-6) return false;
    }
  }
  return true;
}

LabelPlacer::LabelPlacer(double left, double top, double right, double bottom)
    : left_(left), top_(top), right_(right), bottom_(bottom) {}

void LabelPlacer::block(const Box& b, Obstacle kind) { blocked_.push_back({b, kind}); }

long LabelPlacer::cost(const Box& b) const {
  // Each kind outweighs any number of the kinds after it that a plot can hold.
  constexpr long kLabelCost = 1'000'000, kMarkCost = 1'000, kLineCost = 1;
  long total = 0;
  for (const auto& [other, kind] : blocked_) {
    if (!overlaps(b, other)) continue;
    total += kind == Obstacle::label ? kLabelCost : kind == Obstacle::mark ? kMarkCost : kLineCost;
  }
  return total;
}

std::size_t LabelPlacer::place(const std::vector<Box>& candidates) {
  std::size_t best = 0;
  long best_cost = LONG_MAX;
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    if (!inside(candidates[i], left_, top_, right_, bottom_)) continue;
    const long c = cost(candidates[i]);
    if (c < best_cost) {
      best = i;
      best_cost = c;
    }
    if (c == 0) break;
  }
  if (!candidates.empty()) blocked_.push_back({candidates[best], Obstacle::label});
  return best;
}

}  // namespace peakprobe
