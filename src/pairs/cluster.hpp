// Pipe groups from a pair matrix, without performance counters: instructions that contend with each
// other (high same-port value) likely share an execution pipe, so they are grouped by clustering.
#pragma once
#include <optional>
#include <string>
#include <vector>

namespace peakprobe {

// Average-linkage agglomerative clustering of a symmetric contention matrix (higher = contend more).
// Starts from singletons and repeatedly merges the two clusters with the highest average contention
// over their measured cross pairs, while that average is >= threshold. The diagonal is ignored
// (an instruction always contends with itself), as are missing and non-finite values; two clusters
// with no measured value between them never merge. Where [i][j] and [j][i] are both present their
// mean is used. Ties go to the pair of clusters that comes first, so the result is deterministic.
// Returns groups of indices, each sorted ascending, ordered by their smallest index.
std::vector<std::vector<int>> cluster_pipe_groups(const std::vector<std::vector<std::optional<double>>>& same_port,
                                                  double threshold = 0.5);

// The groups with each index replaced by names[index]; an index outside names becomes "#<index>".
std::vector<std::vector<std::string>> name_groups(const std::vector<std::vector<int>>& groups,
                                                  const std::vector<std::string>& names);

}  // namespace peakprobe
