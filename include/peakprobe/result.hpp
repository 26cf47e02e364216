// Finished measurements handed to reporters. Units are in the field names.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "peakprobe/pipe_result.hpp"

namespace peakprobe {

enum class Status { ok, skipped, mistrusted, error };
const char* to_string(Status s);

// Summary of repeated measurements of one quantity (cycles per instruction, say).
struct Stats {
  double min = 0, median = 0, max = 0;
  double spread = 0;   // (median - min) / min: how far a typical run sits above the best one
  int samples = 0;
};

// Where the core-cycle figures come from and how steady the clock stayed around a probe.
struct ClockReading {
  std::string source;        // "perf_event cycles" or "tsc + add-chain calibration"
  double ghz = 0;            // core clock during the probe
  double ghz_before = 0, ghz_after = 0;
  double drift = 0;          // |after - before| / before
};

// The latency from one input operand to the result (uops.info's "operand i -> result").
struct OperandLatency {
  int operand = 0;           // 1-based, as written in the form
  std::string kind;          // the operand's kind as the instruction text writes it
  double cycles = 0;         // best of the samples, known helpers subtracted
  std::string method;        // how the chain was built
  bool upper_bound = false;  // includes a helper of unknown latency
};

struct ProbeResult {
  std::string instruction;           // text as given
  std::string group, dtype, origin;
  std::optional<double> latency_cycles;
  std::string latency_method;        // "chain through the destination", "pointer chase", a bridge ...
  std::vector<OperandLatency> latencies;  // per input operand, when the form has more than one path
  std::optional<double> recip_throughput_cycles;
  std::optional<double> throughput_ipc;
  double ops_per_instruction = 0;
  std::optional<double> gflops;      // per core, for floating-point dtypes
  std::optional<double> gops;        // per core, for integer dtypes
  int accumulators = 0;              // K used by the throughput stream
  bool chains_limited_by_registers = false;  // K hit the register file while still latency-bound
  int threads = 1;
  // All threads together (--threads N); unset when the threaded run is not `ok` (threads_status).
  std::optional<double> total_gflops, total_gops;
  std::vector<double> per_thread_recip_throughput; // one per pinned thread when threads > 1
  std::vector<int> per_thread_core;  // each pinned thread's physical core (-1: unknown), beside the above
  // 1 - (the threaded run's rate per core) / (the one-core rate of the same code): how far running on
  // every core at once fell short of one core alone (negative: faster); unset with one thread, and
  // when a thread gave no timing.
  std::optional<double> threads_shortfall;
  // The threaded run's own verdict, apart from `status` (which judges the one-core figures): a busy
  // host, cores that disagree, or a stream the cores share hardware for (non-temporal stores) doubt
  // the all-cores figure, not the one-core one. `ok` with one thread.
  Status threads_status = Status::ok;
  std::string threads_reason;
  int cpu = -1;                      // logical CPU of the (first) pinned thread
  Stats throughput_stats, latency_stats;  // cycles per instruction
  // `table --pipes`: this form against each member of the document's pipe basis, in basis order
  // (RunDocument::pipe_groups); empty without --pipes.
  std::vector<PipeVerdict> pipes;
  ClockReading clock;
  Status status = Status::ok;
  std::string reason;
  std::string repro;
};

// A run on several cores whose all-cores figure is doubted (threads_status): its one-core figures may
// still be `ok`, so the counts and cells that show only `status` must look at this too.
inline bool multi_core_doubted(const ProbeResult& r) { return r.threads > 1 && r.threads_status != Status::ok; }

}  // namespace peakprobe
