// The results of a batch of pair jobs kept per logical CPU, and which pairs must be measured again so
// that each pair is judged against references (its parts alone) from the core the pair ran on.
//
// The runner moves to a quieter core when the one it is on runs slowed (ProbeRunner). A pair's
// verdict compares the pair's time with its parts' times alone; taken on two cores, the comparison
// says as much about the cores as about the pipes. Seen in CI on a Sapphire Rapids-class VM: the
// runner left a slowed CPU 0 while the pipe basis was measured, and the integer add against itself
// read "partial" (its reference alone from the slowed core, the pair from the quiet one).
#pragma once
#include <cstddef>
#include <vector>

#include "peakprobe/pair_result.hpp"

namespace peakprobe {

// Every job's latest result on each core it ran on.
class ResultsByCore {
 public:
  // Forgets everything: `jobs` jobs, none measured.
  void reset(size_t jobs);
  // Keeps `m` as job's result on m.cpu (replacing that core's earlier one, unless that one was `ok` and
  // `m` is not) and that core's result as the job's latest.
  void store(size_t job, const MixResult& m);
  const MixResult* latest(size_t job) const;
  const MixResult* on(size_t job, int cpu) const;
  size_t jobs() const { return by_core_.size(); }

 private:
  std::vector<std::vector<MixResult>> by_core_;  // per job, one result per core, in order of first run
  std::vector<int> latest_;                      // per job, index into by_core_ of the latest (-1: none)
};

// One pair of the batch: its own job and the jobs of its references (each part alone; with fewer
// chains too where the batch measures that).
struct PairJobs {
  size_t pair = 0;
  std::vector<size_t> references;
};

// What to measure on the core the runner is on now (`here`) so that every measured pair has its
// references from its own core. A pair is settled when all its references have a result on the pair's
// core and either it ran `here`, or its references there are all `ok`, or one of them is measured
// `here` and not `ok` (no better here). Otherwise: references missing on the pair's core are measured `here` when the pair ran here;
// a pair that ran elsewhere is measured again `here` with whatever references are missing here.
// Pairs whose own job failed (not ok or mistrusted) or never ran need nothing.
struct SettlePlan {
  std::vector<size_t> jobs;   // each once: references first, then pairs, each in batch order
  std::vector<size_t> pairs;  // indices into the `pairs` argument of the pairs this settles
  bool empty() const { return jobs.empty(); }
};
SettlePlan plan_settle(const ResultsByCore& results, const std::vector<PairJobs>& pairs, int here);

}  // namespace peakprobe
