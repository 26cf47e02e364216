#include "catalog/catalog.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <map>
#include <sstream>

#include "asm/target.hpp"
#include "catalog/embedded_catalog.hpp"
#include "report/input_file.hpp"
#include "cpu/cpu_info.hpp"
#include "util/text.hpp"

namespace peakprobe {
namespace {

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::string cur;
  std::istringstream in(s);
  while (std::getline(in, cur, sep)) out.push_back(trim(cur));
  if (!s.empty() && s.back() == sep) out.emplace_back();
  return out;
}

Failure row_error(const std::string& file, int line, const std::string& msg) {
  // The row may hold any bytes; the message is for a terminal or a CI log.
  return make_error(file + ":" + std::to_string(line) + ": " + printable(msg, 400));
}

Expected<ProbeSpec> parse_row(const std::string& raw, const std::string& file, int line) {
  auto f = split(raw, '|');
  if (f.size() != 5)
    return row_error(file, line, "expected 5 fields 'instruction | ops | dtype | requires | group', found " +
                                     std::to_string(f.size()));
  ProbeSpec s;
  s.origin = file + ":" + std::to_string(line);
  s.text = f[0];
  if (s.text.empty()) return row_error(file, line, "empty instruction");
  auto form = isa::host_target().resolve(s.text);
  if (!form) return row_error(file, line, form.error());
  s.text = form->display;

  double ops = 0;
  auto [p, ec] = std::from_chars(f[1].data(), f[1].data() + f[1].size(), ops);
  if (ec != std::errc() || p != f[1].data() + f[1].size() || ops < 0 || !std::isfinite(ops))
    return row_error(file, line, "ops '" + f[1] + "' is not a non-negative number");
  s.ops_per_instruction = ops;

  s.dtype = lower(f[2]);
  if (std::find(std::begin(kDtypes), std::end(kDtypes), s.dtype) == std::end(kDtypes))
    return row_error(file, line, "unknown dtype '" + f[2] + "' (f64 f32 f16 bf16 i64 i32 i16 i8 u8 or -)");
  if (ops > 0 && s.dtype == "-") return row_error(file, line, "ops > 0 needs a dtype");

  if (f[3] != "-" && !f[3].empty()) {
    for (const auto& feat : split(f[3], ',')) {
      if (feat.empty()) return row_error(file, line, "empty feature name in '" + f[3] + "'");
      if (!cpu_feature_known(feat)) return row_error(file, line, "unknown CPU feature '" + feat + "'");
      s.requires_features.push_back(normalize_feature_name(feat));
    }
  }
  s.group = lower(f[4]);
  if (s.group.empty()) return row_error(file, line, "empty group");
  for (char c : s.group)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '_' && c != '-')
      return row_error(file, line, "group '" + f[4] + "' may hold letters, digits, '.', '_' and '-' only");
  return s;
}

}  // namespace

Expected<std::vector<ProbeSpec>> parse_catalog(const std::string& text, const std::string& file) {
  std::vector<ProbeSpec> rows;
  std::map<std::string, int> seen;
  std::istringstream in(text);
  std::string line;
  int n = 0;
  while (std::getline(in, line)) {
    ++n;
    std::string t = trim(line);
    if (t.empty() || t[0] == '#') continue;
    auto row = parse_row(t, file, n);
    if (!row) return make_error(row.error());
    auto [it, fresh] = seen.emplace(row->text, n);
    if (!fresh) return row_error(file, n, "'" + row->text + "' repeats line " + std::to_string(it->second));
    rows.push_back(std::move(row.value()));
  }
  return rows;
}

Expected<std::vector<ProbeSpec>> load_catalog_file(const std::string& path) {
  auto text = read_input_file(path, "catalog", kMaxCatalogBytes);
  if (!text) return make_error(text.error());
  return parse_catalog(*text, printable(path));
}

Expected<std::vector<ProbeSpec>> default_catalog() {
  std::vector<ProbeSpec> all;
  for (const auto& c : embedded_catalogs()) {
    if (!c.name.ends_with(".catalog")) continue;
    auto rows = parse_catalog(c.text, c.name);
    if (!rows) return make_error(rows.error());
    all.insert(all.end(), rows->begin(), rows->end());
  }
  return all;
}

bool matches_filter(const ProbeSpec& spec, const std::string& filter) {
  if (filter.empty()) return true;
  const std::string hay = lower(spec.text + " " + spec.group + " " + spec.dtype);
  for (const auto& term : split(filter, ','))
    if (!term.empty() && hay.find(lower(term)) != std::string::npos) return true;
  return false;
}

}  // namespace peakprobe
