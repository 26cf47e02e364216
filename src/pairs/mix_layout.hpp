// How a mix's instances are laid out on independent chains, when a part's own latency would bound it.
//
// A mix stream repeats its group `rounds` times a copy, and a part with a chain through its
// destination (an add, a multiply, an FMA) gives each instance a register of its own: weight x
// rounds chains, each one link a copy, so a group takes at least latency / rounds whatever the
// pipes do. The registers are few (about twelve general-purpose ones), so a mix of three 3-cycle
// multiplies and three loads a group got two rounds, six multiply chains, and ran 1.5 cycles a group
// on a Zen 5 VM where its parts alone allow 1.0: the mix measured its own dependencies. Knowing each
// part's latency, the layout gives a part the chains its rate needs and no more (instances rotate
// through them), so the registers go where they are needed; what still binds is reported, not
// passed off as the machine's limit.
#pragma once
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "peakprobe/result.hpp"

namespace peakprobe {

// One part of a mix as measured alone: cycles per instruction with all the chains the registers
// allow, and the latency of the chain through its destination (0: none, or not known).
struct PartTiming {
  double recip = 0;
  double chain_latency = 0;
};

// A part gets this many times the chains its latency and rate need (five adds a cycle on six chains
// ran at 0.26 cycles each, on eight at 0.20).
inline constexpr double kChainMargin = 1.5;

// Links per copy on the busiest chain of a part with `weight` x `rounds` instances rotating through
// `limit` chains (0: one per instance).
int busiest_chain_links(int limit, int weight, int rounds);

// The fewest cycles a group can take because of one part's chains: latency x links per copy on its
// busiest chain / rounds (0 without a chain or a round).
double part_chain_floor(double latency, int limit, int weight, int rounds);

// The chains a part with `weight` instances per group and a chain of `latency` cycles needs when a
// group takes `group` cycles: latency x instances per cycle, with kChainMargin; 0 (one chain per
// instance) when it has no such chain.
int chains_needed(double latency, int weight, double group);

// The latency of the chain a throughput stream of the form carries, from its `inst` result: each
// instance reads the destination the one before it on its chain wrote. 0 when the destination is
// only written (a load, a move out of a vector register) or `inst` found no such chain.
double destination_chain_latency(const ProbeResult& r);

// Groups per copy and each part's chain limit (0: as the planner gives it: one chain per instance, at
// most 4 for a part that only writes its destination, whole).
struct MixLayout {
  int rounds = 0;
  std::vector<int> chains;
};

// What the parts alone allow a group: the slowest part's weight x cycles per instruction (0 when a
// part has no timing).
double group_rate(const std::vector<int>& weights, const std::vector<PartTiming>& parts);

// The fewest cycles a group can take with this layout because of the parts' own chains: the most,
// over the parts, of chain latency x links on the busiest chain / rounds.
double chain_floor(const MixLayout& layout, const std::vector<int>& weights, const std::vector<PartTiming>& parts);

// What the layout may do with one part's chains. `fixed`: it keeps one chain per instance whatever
// its limit (the planner ignores a limit for a form that writes memory): never limited, its floor
// its latency / rounds. `fewest`: for a part without a chain, the fewest chains its stream alone was
// measured to run as fast on (0: not measured, or its register use does not change with a limit;
// it keeps what the planner gives it).
struct PartRules {
  bool fixed = false;
  int fewest = 0;
};

// The layout of a mix of parts with these weights. `rounds_with(chains)` gives the most rounds the
// registers allow with those chain limits (all 0: one chain per instance; 0 rounds: no plan).
// Every instance on its own chain at the most rounds, while that covers each part's latency at the
// mix's rate (the slowest part's weight x cycles alone) with the margin. Otherwise each chained part
// gets the chains it needs; where the registers cannot hold them all, each chained part starts from
// its weight (from one chain where even that does not fit: a mix whose one round needs more
// registers than there are runs this way or not at all), a part without a chain rotates through its
// `fewest` where measured, and the registers left go one at a time to the part whose chains bind most.
// Its rounds: the fewest from those that give every limited part its chains, that cover the
// latencies with the margin, else those with the lowest floor (instances rotate unevenly where the
// chains do not divide them). The result is the layout with the lower chain floor; the plain one on
// a tie (within 1%).
MixLayout plan_mix_layout(const std::vector<int>& weights, const std::vector<PartTiming>& parts,
                          const std::function<int(const std::vector<int>&)>& rounds_with,
                          const std::vector<PartRules>& rules = {});

// Why a mix measured at `cycles_per_group` may show its own chains rather than the machine: its
// chains do not cover its parts' rate with kChainMargin, and it ran slower than its parts alone allow
// (by more than 3%) and from 0.97 to 1.2 times its chain floor, where its chains alone can explain it.
// (A stream can run further above its chains' floor, but so does a pair on one pipe: not doubted;
// below its floor the floor is wrong, not binding.) `alone_floor`: the highest chain floor of a
// part's own stream alone, a group's worth (weight x latency / its rounds alone); a mix no more
// bound than that is compared like with like and not doubted.
std::optional<std::string> chain_bound_doubt(const MixLayout& layout, const std::vector<int>& weights,
                                             const std::vector<PartTiming>& parts, double cycles_per_group,
                                             double alone_floor = 0);

}  // namespace peakprobe
