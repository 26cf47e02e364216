// Everything one peakprobe command measured, as reporters receive it.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "peakprobe/gpu_result.hpp"
#include "peakprobe/matmul_result.hpp"
#include "peakprobe/ceiling.hpp"
#include "peakprobe/core_availability.hpp"
#include "peakprobe/cpu_info.hpp"
#include "peakprobe/mem_result.hpp"
#include "peakprobe/pair_result.hpp"
#include "peakprobe/pipe_result.hpp"
#include "peakprobe/result.hpp"

namespace peakprobe {

inline constexpr const char* kSchema = "peakprobe/1";

struct RunDocument {
  std::string command;            // the command line that produced it
  std::string version;            // peakprobe version
  std::string started_utc;        // ISO 8601
  CpuInfo host;
  ClockReading clock;             // calibration at the start of the run
  // `report`: the cores probes run on, each scanned for the share of wall time it gives a thread.
  std::vector<CoreAvailability> availability;
  std::vector<ProbeResult> results;
  // `table --pipes`: the basis each row's `pipes` refers to.
  std::optional<PipeGroups> pipe_groups;
  // Dual-issue commands (mix, pair, pairs, flopmix) fill these instead of `results`.
  std::vector<MixResult> mixes;
  std::vector<PairResult> pairs;
  std::optional<PairMatrix> matrix;
  // `flopmix`: one search. `roofline` and the full report: one per floating-point type and vector
  // width whose FMA and add this CPU runs, the widest f32 first.
  std::vector<FlopMixSearch> flop_mixes;
  bool has_dual_issue() const { return !mixes.empty() || !pairs.empty() || matrix || !flop_mixes.empty(); }
  // Memory commands (mem, latency).
  std::vector<BandwidthResult> bandwidth;
  std::vector<LatencyResult> latency;
  std::vector<CacheLevelEdge> levels;  // from a sweep's curve, matched to the reported caches
  bool has_memory() const { return !bandwidth.empty() || !latency.empty(); }
  // Roofline commands (roofline, score).
  std::optional<CeilingTable> ceilings;
  std::vector<KernelScore> scores;
  bool has_roofline() const { return ceilings.has_value() || !scores.empty(); }
  // The full report: the bundled matmul on one core and on all (its scores are among `scores`).
  std::vector<MatmulResult> matmuls;
  // The full report: every OpenCL GPU, measured briefly (docs/gpu.md); each with its own ceilings.
  std::vector<GpuReport> gpus;
};

}  // namespace peakprobe
