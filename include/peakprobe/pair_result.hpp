// Results of dual-issue probes: instruction mixes, pairs with their classification, pair matrices
// with inferred pipe groups, and the best FLOP mix.
#pragma once
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "peakprobe/result.hpp"

namespace peakprobe {

struct MixPart {
  std::string instruction;
  int weight = 1;                        // instances per group
  double ops_per_instruction = 0;
  std::string dtype = "-";
  std::optional<double> alone_cycles;    // cycles per instruction when run alone (its own best K)
};

struct MixResult {
  std::vector<MixPart> parts;
  std::optional<double> cycles_per_group;  // one group = weight_1 + weight_2 + ... instructions
  std::optional<double> ipc;
  std::optional<double> flops_per_cycle;   // floating-point ops of the group / cycles per group
  std::optional<double> ops_per_cycle;     // integer ops of the group / cycles per group
  std::optional<double> gflops, gops;      // per core at the measured clock
  // The same stream on every --threads core at once (run_mix with on_all_threads): the threads and
  // their summed rate, each core's at its own clock. Unset when measured on one core, or when the
  // threaded run was disturbed.
  int threads = 1;
  std::optional<double> total_gflops, total_gops;
  std::vector<double> per_thread_cycles_per_group;  // each core's own cycles per group, with threads > 1
  int rounds = 0;                          // groups per copy: each part has weight x rounds instances, on as many chains unless its MixSpec limits them
  Stats stats;                             // cycles per group
  ClockReading clock;
  Status status = Status::ok;
  std::string reason;
  std::string repro;
  int cpu = -1;  // logical CPU of the (first) pinned thread it ran on
};

enum class PairClass { co_issue, partial, shared };
const char* to_string(PairClass c);

struct PairResult {
  MixResult mix;                 // the interleaved pair (parts[0] = A, parts[1] = B)
  std::optional<double> same_port;     // (t_pair - max(a*tA, b*tB)) / min(a*tA, b*tB), clamped to [0, 1]
  std::optional<PairClass> classification;
  // The pair ran at the core's issue width (pair matrices: the most instructions per cycle any of its
  // mixes reached): co-issue would be no faster than sharing a pipe, so the classification says
  // nothing about pipes, and the matrix leaves the pair out of its groups.
  bool at_issue_width = false;
  // The pair ran more than 1.5 times slower than its parts one after the other: a cost paid only
  // together (a penalty at every switch between them, say), not a pipe. Its classification stays
  // `shared` at the clamp (writers show `penalty`); matrices leave it out of their groups.
  bool penalty = false;
};

struct PairMatrix {
  std::vector<std::string> instructions;
  std::vector<double> alone_cycles;                    // per instruction
  std::vector<std::vector<std::optional<double>>> same_port;  // [i][j], symmetric, null where not measured
  std::vector<std::vector<std::string>> groups;        // inferred pipe groups (instruction texts)
  double issue_width = 0;                              // most instructions per cycle any of its mixes ran at
  std::vector<PairResult> pairs;                       // every measured pair, i <= j
};

struct FlopMixSearch {
  std::string a, b;                  // the two instructions
  int best_a = 0, best_b = 0;        // the ratio a:b that maximised FLOP/s (0 = that one alone)
  double best_flops_per_cycle = 0;
  double best_gflops = 0;
  std::vector<MixResult> tried;      // every ratio evaluated, in order
  std::vector<std::pair<int, int>> ratios;  // the a:b of each entry of `tried`
  // The best ratio again on every core of the runner at once (runners with several threads), so the
  // all-cores ceiling has the mix too, measured rather than scaled.
  std::optional<MixResult> best_all_threads;
  bool exhaustive = false;           // brute-force grid instead of the guided search
};

}  // namespace peakprobe
