#include "report/pipe_report.hpp"

#include <cmath>

#include <fmt/format.h>

#include "report/json_read.hpp"

namespace peakprobe {
namespace {
using nlohmann::json;
using namespace json_read;

json number(const std::optional<double>& v) { return v && std::isfinite(*v) ? json(*v) : json(nullptr); }

std::vector<std::string> texts(const json& obj, const char* key) {
  std::vector<std::string> out;
  const json* a = member(obj, key);
  if (a == nullptr || !a->is_array()) return out;
  for (const auto& v : *a)
    if (v.is_string()) out.push_back(v.get<std::string>());
  return out;
}

}  // namespace

std::optional<Contention> contention_from(const std::string& text) {
  for (Contention c : {Contention::none, Contention::partial, Contention::shared, Contention::issue_width,
                       Contention::penalty, Contention::unmeasured})
    if (text == to_string(c)) return c;
  return std::nullopt;
}

json to_json(const PipeGroups& g) {
  json basis = json::array();
  for (const auto& b : g.basis)
    basis.push_back({{"instruction", b.instruction},
                     {"members", b.members},
                     {"recip_throughput_cycles", number(b.recip_throughput)},
                     {"chain_latency_cycles", b.latency > 0 ? number(b.latency) : json(nullptr)}});
  json matrix = json::array();
  for (const auto& row : g.seed_same_port) {
    json r = json::array();
    for (const auto& v : row) r.push_back(number(v));
    matrix.push_back(std::move(r));
  }
  return {{"basis", std::move(basis)},
          {"issue_width", number(g.issue_width)},
          {"seeds", g.seeds},
          {"seed_same_port", std::move(matrix)},
          {"skipped_seeds", g.skipped_seeds},
          {"seconds", number(g.seconds)}};
}

json pipe_verdicts_json(const std::vector<PipeVerdict>& verdicts) {
  json a = json::array();
  for (const auto& v : verdicts)
    a.push_back({{"basis", v.basis},
                 {"contention", to_string(v.contention)},
                 {"same_port", number(v.same_port)},
                 {"weights", {v.weight_form, v.weight_basis}},
                 {"ipc", number(v.ipc)},
                 {"reason", v.reason}});
  return a;
}

Expected<PipeGroups> pipe_groups_from_json(const json& j) {
  if (!j.is_object()) return make_error("'pipe_groups' is not an object");
  const json* basis = member(j, "basis");
  if (basis == nullptr || !basis->is_array()) return make_error("'pipe_groups' has no 'basis' array");
  PipeGroups g;
  for (const auto& b : *basis) {
    if (!b.is_object() || text_at(b, "instruction").empty())
      return make_error("a 'pipe_groups' basis member has no 'instruction'");
    PipeBasisMember m;
    m.instruction = text_at(b, "instruction");
    m.members = texts(b, "members");
    m.recip_throughput = number_at(b, "recip_throughput_cycles");
    if (!(m.recip_throughput > 0))
      return make_error("pipe basis member '" + m.instruction + "' has no positive 'recip_throughput_cycles'");
    // Absent (documents before it was written) or null: unknown, the member gets a chain per instance.
    const double latency = number_at(b, "chain_latency_cycles", 0.0);
    m.latency = std::isfinite(latency) && latency > 0 ? latency : 0.0;
    g.basis.push_back(std::move(m));
  }
  g.issue_width = number_at(j, "issue_width");
  if (!std::isfinite(g.issue_width)) g.issue_width = 0;
  g.seeds = texts(j, "seeds");
  if (const json* m = member(j, "seed_same_port"); m != nullptr && m->is_array())
    for (const auto& row : *m) {
      std::vector<std::optional<double>> r;
      if (row.is_array())
        for (const auto& v : row) r.push_back(v.is_number() ? std::optional<double>(v.get<double>()) : std::nullopt);
      g.seed_same_port.push_back(std::move(r));
    }
  g.skipped_seeds = texts(j, "skipped_seeds");
  g.seconds = number_at(j, "seconds");
  return g;
}

std::vector<PipeVerdict> pipe_verdicts_from_json(const json& a) {
  std::vector<PipeVerdict> out;
  if (!a.is_array()) return out;
  for (const auto& e : a) {
    if (!e.is_object() || text_at(e, "basis").empty()) continue;
    PipeVerdict v;
    v.basis = text_at(e, "basis");
    v.contention = contention_from(text_at(e, "contention")).value_or(Contention::unmeasured);
    v.same_port = optional_at(e, "same_port");
    if (const json* w = member(e, "weights"); w != nullptr && w->is_array() && w->size() == 2 &&
                                              (*w)[0].is_number_integer() && (*w)[1].is_number_integer()) {
      v.weight_form = (*w)[0].get<int>();
      v.weight_basis = (*w)[1].get<int>();
    }
    v.ipc = optional_at(e, "ipc");
    v.reason = text_at(e, "reason");
    out.push_back(std::move(v));
  }
  return out;
}

std::string pipe_summary(const std::vector<PipeVerdict>& verdicts) {
  std::vector<std::string> shared, partial, width, paid;
  size_t judged = 0;
  for (size_t k = 0; k < verdicts.size(); ++k) {
    switch (verdicts[k].contention) {
      case Contention::shared: shared.push_back(verdicts[k].basis); break;
      case Contention::partial: partial.push_back(verdicts[k].basis); break;
      case Contention::issue_width: width.push_back(verdicts[k].basis); break;
      case Contention::penalty: paid.push_back(verdicts[k].basis); break;
      case Contention::none: break;
      case Contention::unmeasured: continue;
    }
    ++judged;
  }
  if (judged == 0) return "-";
  std::vector<std::string> parts;
  if (!shared.empty()) parts.push_back(fmt::format("shares {}", fmt::join(shared, " | ")));
  if (!partial.empty()) parts.push_back(fmt::format("partial {}", fmt::join(partial, " | ")));
  if (!width.empty()) parts.push_back(fmt::format("issue width with {}", fmt::join(width, " | ")));
  if (!paid.empty()) parts.push_back(fmt::format("penalty with {}", fmt::join(paid, " | ")));
  if (parts.empty()) return "none";
  return fmt::format("{}", fmt::join(parts, "; "));
}

}  // namespace peakprobe
