// `--autotune`: measure a grid of tilings and keep the fastest, and say how far the cost model's
// own pick is from it. The grid is exhaustive over a few values of each factor (register blocks,
// kc, mc, nc, thread grids) plus the model's best candidates; timing is injected so the search
// itself is tested without a JIT.
#pragma once
#include <functional>
#include <string>
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
  std::vector<AutotunePoint> points;  // the finalists (re-timed) fastest first, then the rest fastest first
  size_t finalists = 0;               // how many of points, from the front, were timed again in turns
  AutotunePoint model_pick;           // the model's first choice, measured (always a finalist)
  AutotunePoint best;                 // the fastest finalist
  double model_gap = 0;               // model_pick / best - 1: 0 when the model found the best
};

// Times candidates 0..candidates-1 in `turns` round-robin turns (time_one(i): ms of one turn) and
// returns each one's fastest turn; 0 for one that failed in any turn (it is not timed again), the
// first failure's message in `first_error` when given. Against a host busy in stretches: no single
// stretch decides which candidate looks fastest.
std::vector<double> time_in_turns(size_t candidates, int turns,
                                  const std::function<Expected<double>(size_t)>& time_one,
                                  std::string* first_error = nullptr);

// The configurations the search measures: the grid (operands packed), then the model's top
// `model_top` candidates, each also with the operands the model reads in place packed instead,
// without repeats; every one is valid for the problem.
std::vector<MatmulConfig> autotune_grid(const MachineModel& machine, const MatmulProblem& problem,
                                        int model_top = 8);

using MeasureConfig = std::function<Expected<double>(const MatmulConfig&)>;  // ms, lower is better
// Measures the grid once, then times the finalists again (the sweep's kAutotuneFinalists fastest and
// the model's pick) in kAutotuneFinalTurns turns: best and model_gap come from those timings only.
constexpr int kAutotuneFinalists = 4, kAutotuneFinalTurns = 3;
Expected<AutotuneResult> autotune(const MachineModel& machine, const MatmulProblem& problem,
                                  const MeasureConfig& measure, int model_top = 8);

}  // namespace peakprobe
