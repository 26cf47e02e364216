// `--autotune`: measure a grid of tilings and keep the fastest, and say how far the cost model's
// own pick is from it. The grid is exhaustive over a few values of each factor (register blocks,
// kc, mc, nc, thread grids) plus the model's best candidates; timing is injected so the search
// itself is tested without a JIT.
#pragma once
#include <functional>
#include <vector>

#include "matmul/cost_model.hpp"
#include "peakprobe/expected.hpp"

namespace peakprobe {

struct AutotunePoint {
  MatmulConfig config;
  double predicted_ms = 0;
  double measured_ms = 0;
};

struct AutotuneResult {
  std::vector<AutotunePoint> points;  // fastest first
  AutotunePoint model_pick;           // the model's first choice, measured
  AutotunePoint best;                 // the fastest measured
  double model_gap = 0;               // model_pick / best - 1: 0 when the model found the best
};

// The configurations the search measures: the grid (operands packed), then the model's top
// `model_top` candidates, each also with the operands the model reads in place packed instead,
// without repeats; every one is valid for the problem.
std::vector<MatmulConfig> autotune_grid(const MachineModel& machine, const MatmulProblem& problem,
                                        int model_top = 8);

using MeasureConfig = std::function<Expected<double>(const MatmulConfig&)>;  // ms, lower is better
Expected<AutotuneResult> autotune(const MachineModel& machine, const MatmulProblem& problem,
                                  const MeasureConfig& measure, int model_top = 8);

}  // namespace peakprobe
