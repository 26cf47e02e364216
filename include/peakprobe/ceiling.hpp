// The roofline: compute and memory ceilings measured on this machine, ridge points, and kernels
// scored against them.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace peakprobe {

inline constexpr const char* kCeilingSchema = "peakprobe-roofline/1";

struct ComputeCeiling {
  std::string dtype;           // f64 f32 f16 bf16 i8 i16 i32 i64
  std::string isa;             // scalar, 128, 256, 512 (vector width in bits; "scalar": general registers or one element)
  int threads = 1;
  double gops = 0;             // GFLOP/s for floating dtypes, GOP/s for integer ones
  bool integer = false;        // true: gops are integer operations
  double ops_per_cycle = 0;    // per core
  double clock_ghz = 0;
  std::string source;          // the instruction or mix that reached it
};

struct MemoryCeiling {
  std::string level;           // L1, L2, L3, DRAM
  std::string kernel;          // load, copy, triad, ...
  int threads = 1;
  double gbps = 0;
  double bytes_per_cycle = 0;  // per core
  uint64_t size_bytes = 0;     // working set used
};

struct RidgePoint {
  std::string dtype, isa, level, kernel;
  int threads = 1;
  double ai = 0;               // operations per byte where the compute and memory roofs meet
};

struct CeilingTable {
  std::vector<ComputeCeiling> compute;
  std::vector<MemoryCeiling> memory;
  std::vector<RidgePoint> ridges;
};

// A kernel placed on the roofline.
struct KernelScore {
  std::string name;
  std::string dtype = "f32";          // whose compute ceilings apply
  double flops = 0, bytes = 0, seconds = 0;
  int threads = 1;
  std::string level;                  // the memory level its bytes come from ("" = every level tried)
  double ai = 0;                      // flops / bytes
  double achieved_gflops = 0;
  double attainable_gflops = 0;       // min(peak compute, ai x bandwidth) of the binding ceiling
  std::string bound_by;               // "compute f32 512" or "memory DRAM load" (a kernel's own roof: its name)
  double efficiency = 0;              // achieved / attainable
  // The table's highest ceiling of the dtype at these threads (0: none). Against a kernel's own
  // compute roof (ScoreRequest::roof_gflops) it can be higher: the dtype's ceiling may be an FMA:add
  // mix that a kernel of multiply-adds alone cannot use. achieved / peak_gflops is the share of it.
  double peak_gflops = 0;
  double ridge_ai = 0;                // of the binding memory level's pairing with the compute peak
  double distance_to_ridge = 0;       // ai / ridge_ai: below 1 memory-bound side, above compute-bound
};

}  // namespace peakprobe
