#include "report/pair_report.hpp"

#include <fmt/format.h>

#include "report/csv_report.hpp"
#include "report/json_report.hpp"

namespace peakprobe {
namespace {

using nlohmann::json;

std::string parts_text(const MixResult& m) {
  std::string s;
  for (const auto& p : m.parts) s += (s.empty() ? "" : " + ") + fmt::format("{}:{}", p.instruction, p.weight);
  return s;
}

std::string fixed(const std::optional<double>& v, int decimals) {
  return v ? fmt::format("{:.{}f}", *v, decimals) : "";
}

std::string md_escape(std::string s) {
  std::string out;
  for (char c : s) out += c == '|' ? std::string("\\|") : std::string(1, c);
  return out;
}

}  // namespace

json to_json(const MixResult& m) {
  json parts = json::array();
  for (const auto& p : m.parts)
    parts.push_back({{"instruction", p.instruction},
                     {"weight", p.weight},
                     {"ops_per_instruction", p.ops_per_instruction},
                     {"dtype", p.dtype},
                     {"alone_cycles", json_number(p.alone_cycles)}});
  json j = {{"parts", parts},
          {"cycles_per_group", json_number(m.cycles_per_group)},
          {"ipc", json_number(m.ipc)},
          {"flops_per_cycle", json_number(m.flops_per_cycle)},
          {"ops_per_cycle", json_number(m.ops_per_cycle)},
          {"gflops", json_number(m.gflops)},
          {"gops", json_number(m.gops)},
          {"rounds", m.rounds},
          {"stats", to_json(m.stats)},
          {"clock", to_json(m.clock)},
          {"clock_ghz", json_number(m.clock.ghz)},
          {"status", to_string(m.status)},
          {"reason", m.reason},
          {"repro", m.repro}};
  // Only a mix measured on several cores at once carries the all-cores figures.
  if (m.threads > 1) {
    j["threads"] = m.threads;
    j["total_gflops"] = json_number(m.total_gflops);
    j["total_gops"] = json_number(m.total_gops);
    json cycles = json::array();
    for (double c : m.per_thread_cycles_per_group) cycles.push_back(json_number(c));
    j["per_thread_cycles_per_group"] = cycles;
  }
  return j;
}

std::string pair_class_text(const PairResult& p) {
  if (!p.classification) return "";
  return p.penalty ? "penalty" : to_string(*p.classification);
}

json to_json(const PairResult& p) {
  json j = to_json(p.mix);
  j["same_port"] = json_number(p.same_port);
  j["classification"] = p.classification ? json(pair_class_text(p)) : json(nullptr);
  j["at_issue_width"] = p.at_issue_width;
  j["penalty"] = p.penalty;
  return j;
}

json to_json(const PairMatrix& m) {
  json rows = json::array();
  for (const auto& row : m.same_port) {
    json r = json::array();
    for (const auto& v : row) r.push_back(json_number(v));
    rows.push_back(r);
  }
  json pairs = json::array();
  for (const auto& p : m.pairs) pairs.push_back(to_json(p));
  json alone = json::array();
  for (double a : m.alone_cycles) alone.push_back(json_number(a));
  return {{"instructions", m.instructions}, {"alone_cycles", alone}, {"same_port", rows},
          {"groups", m.groups},             {"pairs", pairs},       {"issue_width", json_number(m.issue_width)}};
}

json to_json(const FlopMixSearch& s) {
  json tried = json::array();
  for (size_t i = 0; i < s.tried.size(); ++i) {
    json t = to_json(s.tried[i]);
    if (i < s.ratios.size()) t["ratio"] = {s.ratios[i].first, s.ratios[i].second};
    tried.push_back(t);
  }
  return {{"a", s.a},
          {"b", s.b},
          {"best_ratio", {s.best_a, s.best_b}},
          {"best_flops_per_cycle", json_number(s.best_flops_per_cycle)},
          {"best_gflops", json_number(s.best_gflops)},
          {"exhaustive", s.exhaustive},
          {"best_all_threads", s.best_all_threads ? to_json(*s.best_all_threads) : json(nullptr)},
          {"tried", tried}};
}

void add_dual_issue(json& doc, const RunDocument& d) {
  if (!d.mixes.empty()) {
    json a = json::array();
    for (const auto& m : d.mixes) a.push_back(to_json(m));
    doc["mixes"] = a;
  }
  if (!d.pairs.empty()) {
    json a = json::array();
    for (const auto& p : d.pairs) a.push_back(to_json(p));
    doc["pairs"] = a;
  }
  if (d.matrix) doc["matrix"] = to_json(*d.matrix);
  if (!d.flop_mixes.empty()) {
    json a = json::array();
    for (const auto& s : d.flop_mixes) a.push_back(to_json(s));
    // "flop_mix": the first search alone, the key documents before flop_mixes had.
    doc["flop_mix"] = a.front();
    doc["flop_mixes"] = a;
  }
}

namespace {

constexpr const char* kCsvHeader =
    "kind,parts,status,cycles_per_group,ipc,flops_per_cycle,gflops,ops_per_cycle,gops,same_port,"
    "classification,clock_ghz,rounds,reason,repro";

void csv_row(std::ostream& out, const char* kind, const MixResult& m, const std::optional<double>& same_port,
             const std::string& cls) {
  out << kind << ',' << csv_field(parts_text(m)) << ',' << to_string(m.status) << ',' << fixed(m.cycles_per_group, 3)
      << ',' << fixed(m.ipc, 3) << ',' << fixed(m.flops_per_cycle, 3) << ',' << fixed(m.gflops, 2) << ','
      << fixed(m.ops_per_cycle, 3) << ',' << fixed(m.gops, 2) << ',' << fixed(same_port, 3) << ',' << cls << ','
      << fixed(m.clock.ghz > 0 ? std::optional<double>(m.clock.ghz) : std::nullopt, 3) << ',' << m.rounds << ','
      << csv_field(m.reason) << ',' << csv_field(m.repro) << '\n';
}

std::vector<const PairResult*> all_pairs(const RunDocument& d) {
  std::vector<const PairResult*> v;
  for (const auto& p : d.pairs) v.push_back(&p);
  if (d.matrix)
    for (const auto& p : d.matrix->pairs) v.push_back(&p);
  return v;
}

}  // namespace

void write_dual_issue_csv(std::ostream& out, const RunDocument& d) {
  out << kCsvHeader << '\n';
  for (const auto& m : d.mixes) csv_row(out, "mix", m, std::nullopt, "");
  for (const PairResult* p : all_pairs(d)) csv_row(out, "pair", p->mix, p->same_port, pair_class_text(*p));
  for (const auto& s : d.flop_mixes)
    for (const auto& m : s.tried) csv_row(out, "flopmix", m, std::nullopt, "");
}

void write_dual_issue_markdown(std::ostream& out, const RunDocument& d) {
  out << fmt::format("**{}** at {:.2f} GHz ({})\n\n", md_escape(d.host.brand), d.clock.ghz, d.clock.source);
  out << "| instructions (name:weight) | cycles/group | IPC | FLOP/cycle | same-port | class | status |\n"
      << "|---|---:|---:|---:|---:|---|---|\n";
  auto row = [&](const MixResult& m, const std::optional<double>& sp, const std::string& cls) {
    out << "| " << md_escape(parts_text(m)) << " | " << fixed(m.cycles_per_group, 3) << " | " << fixed(m.ipc, 2)
        << " | " << fixed(m.flops_per_cycle, 2) << " | " << fixed(sp, 2) << " | " << cls << " | "
        << to_string(m.status) << " |\n";
  };
  for (const auto& m : d.mixes) row(m, std::nullopt, "");
  for (const PairResult* p : all_pairs(d)) row(p->mix, p->same_port, pair_class_text(*p));
  for (const auto& s : d.flop_mixes)
    for (const auto& m : s.tried) row(m, std::nullopt, "");
  if (d.matrix && !d.matrix->groups.empty()) {
    out << "\nInferred pipe groups:\n\n";
    for (size_t g = 0; g < d.matrix->groups.size(); ++g)
      out << fmt::format("{}. {}\n", g + 1, md_escape(fmt::format("{}", fmt::join(d.matrix->groups[g], "; "))));
  }
  for (const auto& s : d.flop_mixes) {
    out << fmt::format("\nBest FLOP mix: {}:{} of `{}` : `{}` = {:.2f} FLOP/cycle ({:.1f} GFLOP/s)\n", s.best_a,
                       s.best_b, s.a, s.b, s.best_flops_per_cycle, s.best_gflops);
    if (const auto& all = s.best_all_threads; all && all->total_gflops)
      out << fmt::format("On {} cores at once: {:.1f} GFLOP/s in all.\n", all->threads, *all->total_gflops);
  }
}

void write_dual_issue_console(std::ostream& out, const RunDocument& d) {
  out << fmt::format("peakprobe {} on {}, {:.2f} GHz ({})\n\n", d.version, d.host.brand, d.clock.ghz,
                     d.clock.source);
  auto show_mix = [&](const MixResult& m) {
    for (const auto& p : m.parts)
      out << fmt::format("  {:>2} x {:<38} alone {:>7} cycles/inst\n", p.weight, p.instruction,
                         p.alone_cycles ? fmt::format("{:.3f}", *p.alone_cycles) : std::string("-"));
    if (m.status == Status::skipped || m.status == Status::error) {
      out << fmt::format("  {}: {}\n", to_string(m.status), m.reason);
      return;
    }
    out << fmt::format("  group: {} cycles, IPC {}", fixed(m.cycles_per_group, 3), fixed(m.ipc, 2));
    if (m.flops_per_cycle) out << fmt::format(", {:.2f} FLOP/cycle = {:.1f} GFLOP/s", *m.flops_per_cycle, *m.gflops);
    if (m.ops_per_cycle) out << fmt::format(", {:.2f} ops/cycle = {:.1f} GOP/s", *m.ops_per_cycle, *m.gops);
    out << "\n";
    if (m.status == Status::mistrusted) out << "  mistrusted: " << m.reason << "\n";
  };
  for (const auto& m : d.mixes) {
    show_mix(m);
    out << "\n";
  }
  for (const auto& p : d.pairs) {
    show_mix(p.mix);
    if (p.classification && p.penalty && p.mix.parts.size() == 2 && p.mix.cycles_per_group) {
      const double serial = p.mix.parts[0].weight * p.mix.parts[0].alone_cycles.value_or(0) +
                            p.mix.parts[1].weight * p.mix.parts[1].alone_cycles.value_or(0);
      out << fmt::format("  => penalty: {:.1f}x as slow as the two one after the other ({:.3f} cycles): not a shared "
                         "pipe but a cost paid only together (at every switch between them: a state transition, a "
                         "fault or an assist; or a rate a part reaches alone only); which pipes they share stays "
                         "unknown\n",
                         *p.mix.cycles_per_group / serial, serial);
    } else if (p.classification) {
      out << fmt::format("  => {} (same-port measure {:.2f}: 0 = issue together, 1 = one shared pipe)\n",
                         to_string(*p.classification), *p.same_port);
    }
    out << "\n";
  }
  auto width_note = [&](const PairMatrix& m) {
    std::vector<std::string> at;
    for (const auto& p : m.pairs)
      if (p.at_issue_width && p.mix.parts.size() == 2)
        at.push_back(p.mix.parts[0].instruction + " + " + p.mix.parts[1].instruction);
    if (at.empty()) return;
    out << fmt::format("\nat the issue width ({:.2f} instructions/cycle, the most any mix here ran at), so left out "
                       "of the groups: co-issue would be no faster than one shared pipe:\n",
                       m.issue_width);
    for (const auto& a : at) out << "  " << a << "\n";
  };
  if (d.matrix) {
    const auto& m = *d.matrix;
    out << "same-port measure (0 = co-issue, 1 = shared):\n";
    for (size_t i = 0; i < m.instructions.size(); ++i) {
      out << fmt::format("  [{}] {:<34}", i + 1, m.instructions[i].substr(0, 34));
      for (size_t j = 0; j < m.instructions.size(); ++j)
        out << fmt::format(" {:>5}", m.same_port[i][j] ? fmt::format("{:.2f}", *m.same_port[i][j]) : "-");
      out << "\n";
    }
    out << "\ninferred pipe groups:\n";
    for (size_t g = 0; g < m.groups.size(); ++g)
      out << fmt::format("  {}: {}\n", g + 1, fmt::join(m.groups[g], "; "));
    width_note(m);
    std::vector<std::string> paid;
    for (const auto& p : m.pairs)
      if (p.penalty && p.mix.parts.size() == 2) paid.push_back(p.mix.parts[0].instruction + " + " + p.mix.parts[1].instruction);
    if (!paid.empty()) {
      out << "\nfar slower than their parts one after the other (a cost paid only together, not a pipe), so left out "
             "of the groups:\n";
      for (const auto& a : paid) out << "  " << a << "\n";
    }
  }
  for (const auto& s : d.flop_mixes) {
    out << fmt::format("FLOP mix search{}: {}  vs  {}\n", s.exhaustive ? " (exhaustive)" : "", s.a, s.b);
    for (size_t i = 0; i < s.tried.size(); ++i) {
      const MixResult& m = s.tried[i];
      const auto [ra, rb] = i < s.ratios.size() ? s.ratios[i] : std::pair<int, int>{0, 0};
      out << fmt::format("  {:>2}:{:<2} {:>7} FLOP/cycle {}\n", ra, rb, fixed(m.flops_per_cycle, 2),
                         m.status == Status::ok ? "" : to_string(m.status));
    }
    out << fmt::format("best {}:{} = {:.2f} FLOP/cycle, {:.1f} GFLOP/s per core\n", s.best_a, s.best_b,
                       s.best_flops_per_cycle, s.best_gflops);
    if (s.best_all_threads && s.best_all_threads->total_gflops)
      out << fmt::format("     on {} cores at once: {:.1f} GFLOP/s in all\n", s.best_all_threads->threads,
                         *s.best_all_threads->total_gflops);
  }
}

}  // namespace peakprobe
