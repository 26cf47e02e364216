// The code a probe of `inst` times, for `inst --listing`: every stream the measurement of a form
// builds, planned again with the chains its measurement chose, as asmjit writes it. A user who
// doubts a figure reads what ran: the registers of each chain, the set-up, the loop and its restore.
#pragma once
#include <string>
#include <vector>

#include "asm/probe_form.hpp"
#include "asm/target.hpp"
#include "peakprobe/cpu_info.hpp"
#include "peakprobe/expected.hpp"
#include "peakprobe/probe_spec.hpp"
#include "peakprobe/result.hpp"

namespace peakprobe {

struct StreamListing {
  std::string title;  // what the stream measures and how it is built
  std::string code;   // the generated function, one instruction a line
};

// A form that runs beside a companion (push with pop) as the balanced pair measures it: the two,
// one of each a group, the companion first where it must come first.
std::vector<isa::MixPart> balanced_parts(const isa::ProbeForm& form, const isa::ProbeForm& companion, bool companion_first);

// The streams `result` (the measured row of `spec`) came from, in the order they run: the latency
// chain through the destination, the chain through each other input where the form has several, and
// the throughput stream at the row's chains (its `accumulators`; the pair's rounds for a balanced
// form); each at the copies its short function is timed with. A row without chains (refused,
// skipped) lists the throughput stream at the most chains the form has. A throughput figure is the
// median of this layout and two others of the same stream (3/4 and 1/2 the copies: layout_copies),
// which only repeat its pattern fewer times. An error where the form does not resolve or is refused
// before running.
Expected<std::vector<StreamListing>> probe_listings(const isa::Target& target, const CpuInfo& cpu,
                                                    const ProbeSpec& spec, const ProbeResult& result);

}  // namespace peakprobe
