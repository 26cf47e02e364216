// Pipe groups of a whole instruction table (`peakprobe table --pipes`), found without counters: a
// small basis of instructions that each stand for one kind of pipe on this CPU (found by clustering
// a seed set's pair matrix), and, for every form, how much it contends with each basis member.
#pragma once
#include <optional>
#include <string>
#include <vector>

namespace peakprobe {

// How a form and one basis member share the machine, from their interleaved stream.
enum class Contention {
  none,         // they issue together: the pair runs as fast as its slower part alone
  partial,      // some of their pipes are shared
  shared,       // one pipe: the pair runs as slowly as both parts in sequence
  issue_width,  // the pair runs at the core's issue width: co-issue and sharing cannot be told apart
  penalty,      // the pair runs far slower than its parts one after the other: a penalty on every switch
                // between them (a state transition, say), which hides whatever pipes they share
  unmeasured,   // no verdict (the mix could not run or its timing was not trusted): see `reason`
};
const char* to_string(Contention c);

struct PipeVerdict {
  std::string basis;                // the basis member's instruction
  Contention contention = Contention::unmeasured;
  std::optional<double> same_port;  // 0 = none ... 1 = shared, on the scale between the two floors
  int weight_form = 1, weight_basis = 1;  // instances of each per group of the mix
  std::optional<double> ipc;        // instructions per cycle of the mix
  std::string reason;               // why there is no verdict, or what limited it
};

// One member of the basis: the representative seed of one cluster of the seed matrix.
struct PipeBasisMember {
  std::string instruction;            // the representative, as `inst` prints it
  std::vector<std::string> members;   // every seed of its cluster (the representative included)
  double recip_throughput = 0;        // cycles per instruction alone, measured as a one-part mix
  double latency = 0;                 // its chain through the destination, from `inst` (0: none): its chains in a pair
};

struct PipeGroups {
  std::vector<PipeBasisMember> basis;
  // Most instructions per cycle any mix of the seed matrix (or any seed alone) ran at: the issue
  // width this machine was seen to sustain, below which a pair's slowdown is a pipe's.
  double issue_width = 0;
  std::vector<std::string> seeds;                               // the seed forms measured
  std::vector<std::vector<std::optional<double>>> seed_same_port;  // [i][j], null where not measured
  std::vector<std::string> skipped_seeds;                       // "text: why" for seeds not measured
  double seconds = 0;                                           // time the basis took to find
};

}  // namespace peakprobe
