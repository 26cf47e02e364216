#include "memory/sizes.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <fstream>
#include <sstream>
#include <string_view>

namespace peakprobe {

namespace {

constexpr uint64_t kMaxSize = uint64_t{1} << 50;
constexpr uint64_t kPage = 4096;

struct Unit {
  std::string_view name;  // lower case
  uint64_t multiplier;
};

constexpr uint64_t kKi = uint64_t{1} << 10;
constexpr std::array<Unit, 14> kUnits = {{
    {"", 1},
    {"b", 1},
    {"k", kKi},
    {"kib", kKi},
    {"m", kKi * kKi},
    {"mib", kKi * kKi},
    {"g", kKi * kKi * kKi},
    {"gib", kKi * kKi * kKi},
    {"t", kKi * kKi * kKi * kKi},
    {"tib", kKi * kKi * kKi * kKi},
    {"kb", 1000},
    {"mb", 1000 * 1000},
    {"gb", 1000 * 1000 * 1000},
    {"tb", uint64_t{1000} * 1000 * 1000 * 1000},
}};

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

bool is_digit(char c) { return c >= '0' && c <= '9'; }

std::optional<uint64_t> unit_multiplier(std::string_view unit) {
  const std::string u = lower(trim(unit));
  for (const Unit& known : kUnits)
    if (known.name == u) return known.multiplier;
  return std::nullopt;
}

// The leading number of a size: whole part kept exact as an integer (large byte counts must not
// pass through a double), the fraction apart. `whole` saturates above kMaxSize; the caller reports
// that as an overflow once the unit is known to be valid.
struct Number {
  uint64_t whole = 0;
  double fraction = 0;
  bool any_digit = false;
  bool saturated = false;
  std::size_t end = 0;  // index of the first character after the number
};

Number read_number(std::string_view t) {
  Number n;
  std::size_t i = 0;
  for (; i < t.size() && is_digit(t[i]); ++i) {
    n.any_digit = true;
    if (n.whole > kMaxSize) {
      n.saturated = true;
      continue;
    }
    n.whole = n.whole * 10 + static_cast<uint64_t>(t[i] - '0');
  }
  if (i < t.size() && t[i] == '.') {
    double scale = 0.1;
    for (++i; i < t.size() && is_digit(t[i]); ++i) {
      n.any_digit = true;
      n.fraction += scale * (t[i] - '0');
      scale /= 10;
    }
  }
  n.end = i;
  return n;
}

Failure too_large(const std::string& text) {
  return make_error(fmt::format("size '{}' is above the largest supported size, 2^50 bytes (1024 TiB)", text));
}

}  // namespace

Expected<uint64_t> parse_size(const std::string& text) {
  const std::string_view t = trim(text);
  if (t.empty()) return make_error("empty size: give a number of bytes, e.g. 16KiB, 4MiB or 1G");
  if (t.front() == '-') return make_error(fmt::format("size '{}' is negative", text));
  const Number n = read_number(t);
  if (!n.any_digit)
    return make_error(fmt::format("size '{}' does not start with a number (e.g. 16KiB, 4MiB, 1G)", text));
  const std::string_view unit = trim(t.substr(n.end));
  const std::optional<uint64_t> mult = unit_multiplier(unit);
  if (!mult)
    return make_error(fmt::format("size '{}' has an unknown unit '{}' (binary: K, KiB, M, MiB, G, GiB, T, TiB; "
                                  "decimal: KB, MB, GB, TB; bytes: B or none)",
                                  text, unit));
  if (n.saturated || n.whole > kMaxSize / *mult) return too_large(text);
  if (*mult == 1 && n.fraction != 0)
    return make_error(fmt::format("size '{}' is a fraction of a byte; give a unit (e.g. 1.5MiB)", text));
  const uint64_t bytes = n.whole * *mult + static_cast<uint64_t>(std::llround(n.fraction * static_cast<double>(*mult)));
  if (bytes > kMaxSize) return too_large(text);
  if (bytes == 0) return make_error(fmt::format("size '{}' is zero; a working set needs at least one byte", text));
  return bytes;
}

Expected<std::vector<uint64_t>> parse_size_list(const std::string& text) {
  if (trim(text).empty()) return make_error("empty size list: give sizes separated by commas, e.g. 32K,1M,64M");
  std::vector<uint64_t> sizes;
  std::size_t start = 0;
  while (true) {
    const std::size_t comma = text.find(',', start);
    const std::string item = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    if (trim(item).empty()) return make_error(fmt::format("size list '{}' has an empty item", text));
    Expected<uint64_t> size = parse_size(item);
    if (!size) return make_error(fmt::format("in size list '{}': {}", text, size.error()));
    sizes.push_back(*size);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return sizes;
}

std::vector<uint64_t> sweep_sizes(uint64_t from, uint64_t to, int points_per_octave) {
  if (from > to) return {};
  from = std::max<uint64_t>(from, 1);
  to = std::max<uint64_t>(to, 1);
  const int ppo = std::max(points_per_octave, 1);
  const double octaves = std::log2(static_cast<double>(to) / static_cast<double>(from));
  // The small tolerance keeps an exact power-of-two span (e.g. 4 KiB to 64 KiB at 4 per octave)
  // from gaining an extra step through rounding of the logarithm.
  const long steps = static_cast<long>(std::ceil(octaves * ppo - 1e-9));
  auto to_page = [](double bytes) {
    const auto pages = static_cast<uint64_t>(std::llround(bytes / static_cast<double>(kPage)));
    return std::max<uint64_t>(pages, 1) * kPage;
  };
  std::vector<uint64_t> sizes;
  for (long i = 0; i <= steps; ++i) {
    const double bytes = i == steps ? static_cast<double>(to)
                                    : static_cast<double>(from) * std::exp2(static_cast<double>(i) / ppo);
    const uint64_t rounded = to_page(bytes);
    if (sizes.empty() || rounded > sizes.back()) sizes.push_back(rounded);
  }
  return sizes;
}

std::vector<uint64_t> tapered_sweep_sizes(uint64_t from, uint64_t dense_to, uint64_t to, int points_per_octave) {
  std::vector<uint64_t> sizes = sweep_sizes(from, std::min(dense_to, to), points_per_octave);
  if (sizes.empty()) return sweep_sizes(from, to, 1);
  for (uint64_t s : sweep_sizes(sizes.back(), to, 1))
    if (s > sizes.back()) sizes.push_back(s);
  return sizes;
}

std::vector<uint64_t> tapered_sweep_sizes(uint64_t from, uint64_t fine_to, uint64_t dense_to, uint64_t to,
                                          int points_per_octave) {
  std::vector<uint64_t> sizes = sweep_sizes(from, std::min(fine_to, to), points_per_octave);
  if (sizes.empty()) return tapered_sweep_sizes(from, dense_to, to, std::max(1, points_per_octave / 2));
  for (uint64_t s : tapered_sweep_sizes(sizes.back(), dense_to, to, std::max(1, points_per_octave / 2)))
    if (s > sizes.back()) sizes.push_back(s);
  return sizes;
}

uint64_t last_level_cache_bytes(const CpuInfo& cpu) {
  int last_level = 0;
  uint64_t last_level_total = 0;
  for (const CacheLevel& c : cpu.caches) {
    if (c.type == "instruction") continue;
    const uint64_t total = c.size_bytes * static_cast<uint64_t>(std::max(c.instances, 1));
    if (c.level > last_level) {
      last_level = c.level;
      last_level_total = total;
    } else if (c.level == last_level) {
      last_level_total = std::max(last_level_total, total);
    }
  }
  return last_level_total;
}

uint64_t default_sweep_top(const CpuInfo& cpu) {
  constexpr uint64_t kFloor = uint64_t{512} << 20;
  return std::max(4 * last_level_cache_bytes(cpu), kFloor);
}

uint64_t parse_mem_available(const std::string& meminfo_text) {
  std::istringstream in(meminfo_text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("MemAvailable:", 0) != 0) continue;
    std::istringstream fields(line.substr(13));
    uint64_t value = 0;
    std::string unit;
    if (!(fields >> value)) return 0;
    fields >> unit;
    // The kernel has always written kB (meaning KiB) here; anything else is not a format we know.
    if (unit != "kB") return 0;
    return value * 1024;
  }
  return 0;
}

uint64_t available_memory_bytes() {
  std::ifstream in("/proc/meminfo");
  if (!in) return 0;
  std::stringstream text;
  text << in.rdbuf();
  return parse_mem_available(text.str());
}

std::optional<std::string> check_fits(uint64_t bytes_needed, uint64_t available_bytes) {
  if (available_bytes == 0) return std::nullopt;
  if (static_cast<double>(bytes_needed) <= 0.8 * static_cast<double>(available_bytes)) return std::nullopt;
  return fmt::format("working set {} exceeds 80% of the {} available", format_bytes(bytes_needed),
                     format_bytes(available_bytes));
}

std::optional<std::string> check_fits(uint64_t bytes_needed) {
  return check_fits(bytes_needed, available_memory_bytes());
}

std::string format_bytes(uint64_t bytes) {
  static constexpr std::array<const char*, 6> kNames = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  std::size_t u = 0;
  while (u + 1 < kNames.size() && bytes >= (uint64_t{1} << (10 * (u + 1)))) ++u;
  if (u == 0) return fmt::format("{} B", bytes);
  const uint64_t unit = uint64_t{1} << (10 * u);
  if (bytes % unit == 0) return fmt::format("{} {}", bytes / unit, kNames[u]);
  double value = static_cast<double>(bytes) / static_cast<double>(unit);
  // Just below the next unit, one decimal would print "1024.0 KiB"; say "1.0 MiB" instead.
  if (std::round(value * 10) / 10 >= 1024.0 && u + 1 < kNames.size()) {
    value /= 1024.0;
    ++u;
  }
  return fmt::format("{:.1f} {}", value, kNames[u]);
}

}  // namespace peakprobe
