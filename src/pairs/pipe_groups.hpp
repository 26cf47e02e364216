// Pipe groups without counters (`peakprobe table --pipes`): a basis of instructions that each occupy
// one kind of pipe on this CPU, found by clustering a seed set's pair matrix (the seeds come from the
// ISA's target, the grouping from this machine's measurements), then every form classified by which
// basis members it contends with, as uops.info classifies with blocking instructions and counters.
//
// The judgement of one interleaved pair (judge_contention) places the pair's time between two
// floors measured from the parts alone:
//   co-issue:  max(a's time, b's time, instructions / issue width)
//   shared:    a's pipe time + b's pipe time (one pipe does both in sequence)
// where a part's time in the mix is the larger of its pipe time (weight x cycles alone) and what its
// own chains allow (chain latency x links on its busiest chain per copy / rounds); a part short of chains slows by
// itself, which must not read as contention. A part whose latency is known gets the chains its rate
// needs and no more (latency x instances per cycle, with a margin), so the registers left give the
// other part more chains: a one-pipe multiply beside five adds would otherwise run on two chains,
// bound by its own latency, where its contention is hidden. Every figure alone is measured
// as a one-part mix, so it has the layout of the pair (a store stream in a mix is not the store
// stream of `inst`). When the issue-width floor leaves no room between the two, the
// pair runs at the core's issue width and says so instead of claiming a shared pipe; a pair more
// than kPenaltyAbove times slower than the shared floor pays a cost only together (`penalty`).
#pragma once
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "harness/probe_runner.hpp"
#include "pairs/mix_layout.hpp"
#include "peakprobe/pipe_result.hpp"
#include "peakprobe/result.hpp"

namespace peakprobe {

// PartTiming (pairs/mix_layout.hpp): a pair's part alone, as a one-part mix; its chain latency is
// measured with the fewest chains any of its pairs gives it (0 when that ran as fast as with all).

// Weights a:b (each >= 1, a + b <= max_total) that make both parts take about the same time per group
// (a x recip_a ~ b x recip_b): a balanced pair has the widest gap between its co-issue and shared
// floors, so noise moves its verdict least. Non-positive inputs give 1:1.
std::pair<int, int> balanced_weights(double recip_a, double recip_b, int max_total = 8);

// The verdict on a pair measured at `cycles_per_group` with `rounds` rounds and weights wa:wb, the
// parts' instances on `chains_a` and `chains_b` chains (0: weight x rounds, one per instance).
// `issue_width` <= 0: unknown (no issue-width floor). A pair is `shared` above kSharedAbove and
// `none` below a bound that is kCoIssueBelow where the parts run at the same rate and lower where one
// is much faster (see contained_same_port). Checked before all of these: a pair more than kPenaltyAbove
// times the shared floor (both parts in sequence, their chains included) is `penalty`.
PipeVerdict judge_contention(double cycles_per_group, int rounds, int wa, int wb, const PartTiming& a,
                             const PartTiming& b, double issue_width, int chains_a = 0, int chains_b = 0);

// The same-port measure of a pair whose narrow part (fewer instructions per cycle alone) runs only on
// pipes of the wide part, each of its instructions holding one of them for the wide part's cycles
// per instruction: 1 when the parts run at one rate, the ratio of their rates (a fifth for a
// one-pipe form beside a five-pipe add) when weights balance them. co_issue and shared are the
// pair's two floors (judge_contention).
double contained_same_port(double co_issue, double shared, int wa, int wb, const PartTiming& a, const PartTiming& b);

// How a pair is laid out: groups per copy and each part's chain limit (0: one chain per instance).
struct PairLayout {
  int rounds = 0;
  int chains_a = 0, chains_b = 0;
};

// The layout of a pair at weights wa:wb whose parts alone run at `recip` cycles per instruction with
// a chain of `chain_latency` cycles through the destination (0: none). `rounds_with(ca, cb)` gives
// the most rounds the registers allow with those chain limits (0, 0: one chain per instance; 0: none).
// Every instance on its own chain, at the most rounds, as long as that covers each part's latency at
// the pair's rate with a margin. Otherwise (a 3-cycle multiply beside five adds gets two chains, as
// the adds take ten registers, and runs at 1.5 cycles a group on its own chains, which hides whether
// it takes an add's pipe) each part gets the chains its latency and rate need, with the margin, and
// the fewest rounds that give them all, when that is more rounds than before. A layout keeps its
// rounds otherwise: more rounds than needed change a mix (five adds and two vector loads ran 1.21
// cycles a group at 2 rounds, 1.29 at 8).
PairLayout plan_pair_layout(int wa, int wb, const PartTiming& a, const PartTiming& b,
                            const std::function<int(int, int)>& rounds_with);

// The chains, one link each, that bind a part as much as `weight` x `rounds` instances rotating
// through `limit` chains (0: one per instance) do: instances / links on the busiest chain. A part's
// fewest-chains reference is measured with this many.
int equivalent_chains(int limit, int weight, int rounds);

// The basis from a seed matrix: clusters by average linkage (pairs/cluster.hpp), then one
// representative per cluster: the fastest member that contends with the rest of its cluster at least
// as much as the cluster holds together (ties: the purest, contending most inside its cluster and
// least outside it). `timings` gives each seed's figures alone.
std::vector<PipeBasisMember> choose_basis(const std::vector<std::string>& seeds,
                                          const std::vector<PartTiming>& timings,
                                          const std::vector<std::vector<std::optional<double>>>& same_port);

// One pair of the seed matrix from several passes: the median of the passes that gave a value, when
// at least half of them did (a pair mostly at the issue width, or doubted, stays without one).
std::optional<double> median_of_passes(const std::vector<std::optional<double>>& passes);

using PipeProgress = std::function<void(size_t done, size_t total, const std::string& what)>;

// How the reason of a verdict that a later run may still give starts (`table --resume` measures
// those pairs again), as the reason of a table row never reached does.
inline constexpr const char* kNotMeasured = "not measured: ";

// The seeds this CPU can run, from the target's candidates (the first alternative of each whose
// features the CPU has).
std::vector<std::string> pipe_seeds(const CpuInfo& cpu);

// Measures the seeds alone (as `inst` does) and every pair of them (three passes over the matrix,
// each pair's median kept), and finds the basis. Seeds that
// cannot be measured are listed in `skipped_seeds`. `stop()` ends it early (budget, Ctrl-C): the
// basis is then empty.
PipeGroups find_pipe_basis(ProbeRunner& runner, const std::vector<ProbeSpec>& seeds,
                           const PipeProgress& progress = {}, const std::function<bool()>& stop = {});

// One form to classify: its spec and its figures alone (the table's row).
struct PipeSubject {
  ProbeSpec spec;
  const ProbeResult* alone = nullptr;
};

// Every subject against every basis member: result[i][k] is subject i against basis member k. A
// subject without trusted figures alone, or refused in mixes, gets `unmeasured` verdicts saying why.
// `on_done(i, verdicts)` is called with subject i's verdicts so far whenever one of them is judged
// (again after a retry or after the runner moved to another core, so not always in subject order;
// once up front for a subject without figures alone); `stop()` ends early.
// Verdicts that another run may give (not reached, or doubted: a mistrusted pair or reference) have
// reasons starting with kNotMeasured.
std::vector<std::vector<PipeVerdict>> classify_against_basis(
    ProbeRunner& runner, const PipeGroups& groups, const std::vector<PipeSubject>& subjects,
    const PipeProgress& progress = {}, const std::function<bool()>& stop = {},
    const std::function<void(size_t, const std::vector<PipeVerdict>&)>& on_done = {});

}  // namespace peakprobe
