#include "harness/stream_listing.hpp"

#include <fmt/format.h>

#include "harness/probe_runner_impl.hpp"

namespace peakprobe {

std::vector<isa::MixPart> balanced_parts(const isa::ProbeForm& form, const isa::ProbeForm& companion,
                                         bool companion_first) {
  std::vector<isa::MixPart> parts = {{&form, 1}, {&companion, 1}};
  if (companion_first) std::swap(parts[0], parts[1]);
  return parts;
}

namespace {

// The stream's short function as the harness times it, under a title that says how many copies it holds.
Expected<StreamListing> listed(const isa::StreamHandle& stream, int copies, const std::string& what) {
  auto code = stream->listing(copies);
  if (!code) return make_error(what + ": " + code.error());
  const int per_copy = stream->measured_per_copy();
  return StreamListing{fmt::format("{}: {} cop{} of {} measured instruction{} a loop iteration (the long function "
                                   "of its pair twice as many)",
                                   what, copies, copies == 1 ? "y" : "ies", per_copy, per_copy == 1 ? "" : "s"),
                       std::move(*code)};
}

}  // namespace

Expected<std::vector<StreamListing>> probe_listings(const isa::Target& target, const CpuInfo& cpu,
                                                    const ProbeSpec& spec, const ProbeResult& result) {
  auto resolved = target.probe_form(spec.text, cpu);
  if (!resolved) return make_error(resolved.error());
  isa::ProbeForm& form = *resolved.value();
  if (spec.imm) form.set_immediates(*spec.imm);
  if (auto why = form.refusal()) return make_error("refused before running: " + *why);
  const std::string dtype =
      !result.dtype.empty() ? result.dtype : spec.dtype != "-" ? spec.dtype : form.default_dtype();
  std::vector<StreamListing> out;
  const auto add = [&](Expected<isa::StreamHandle> plan, int copies, const std::string& what) -> Expected<bool> {
    if (!plan) return make_error(what + ": " + plan.error());
    auto l = listed(*plan, copies, what);
    if (!l) return make_error(l.error());
    out.push_back(std::move(*l));
    return true;
  };
  if (auto companion = form.companion()) {
    auto other = target.probe_form(companion->text, cpu);
    if (!other) return make_error("companion '" + companion->text + "': " + other.error());
    const std::vector<isa::MixPart> parts = balanced_parts(form, *other.value(), companion->first);
    const int rounds = result.accumulators > 0 ? result.accumulators : target.max_rounds(parts);
    if (rounds <= 0) return make_error("not enough registers for the balanced pair");
    auto plan = target.plan_mix(parts, rounds, dtype);
    const int per_copy = plan ? plan.value()->measured_per_copy() : 1;
    if (auto ok = add(std::move(plan), detail::throughput_copies(per_copy),
                      fmt::format("balanced with '{}' ({}), {} round{} of the pair", other.value()->display(),
                                  companion->why, rounds, rounds == 1 ? "" : "s"));
        !ok)
      return make_error(ok.error());
    return out;
  }
  // A form without a register result has no latency chain: its throughput stream alone is listed.
  if (auto chain = form.plan_latency(dtype))
    if (auto ok = add(chain, detail::kLatencyCopies, "latency chain, " + chain.value()->method()); !ok)
      return make_error(ok.error());
  const std::vector<int> operands = form.latency_operands();
  if (operands.size() > 1)
    for (int op : operands) {
      auto through = form.plan_latency_through(op, dtype);
      if (!through) continue;  // the measurement skips an operand without a chain too
      if (auto ok = add(through, detail::kLatencyCopies,
                        fmt::format("latency through operand {} ({}), {}", op + 1, form.operand_kind(op),
                                    through.value()->method()));
          !ok)
        return make_error(ok.error());
    }
  const int chains = result.accumulators > 0 ? result.accumulators : form.max_chains();
  // The sweep compiles K chains at throughput_copies(K) copies (ProbeRunner::Impl::measure_throughput).
  if (auto ok = add(form.plan_throughput(chains, dtype), detail::throughput_copies(chains),
                    fmt::format("throughput stream, {} chain{}", chains, chains == 1 ? "" : "s"));
      !ok)
    return make_error(ok.error());
  return out;
}

}  // namespace peakprobe
