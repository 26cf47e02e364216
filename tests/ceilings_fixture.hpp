// Shared by the ceiling tests: results and caches to build tables from, and the two checks whose
// width classes each ISA names in its own forms (tests/<isa>/test_ceilings.cpp gives the forms).
#pragma once
#include <catch2/catch.hpp>

#include <cmath>
#include <string>
#include <vector>

#include "roofline/ceilings.hpp"

namespace peakprobe::test {


inline ProbeResult probe(const std::string& text, const std::string& dtype, double rate, int threads = 1, double total = 0) {
  ProbeResult r;
  r.instruction = text;
  r.group = dtype == "i8" ? "vec.int.dot" : "fp.fma";
  r.dtype = dtype;
  r.ops_per_instruction = 16;
  r.clock.ghz = 4.0;
  r.threads = threads;
  if (is_float_dtype(dtype)) {
    r.gflops = rate;
    if (threads > 1) r.total_gflops = total;
  } else {
    r.gops = rate;
    if (threads > 1) r.total_gops = total;
  }
  return r;
}

inline std::vector<CacheLevel> caches() {
  CacheLevel l1{1, "data", 32 << 10, 64, 8, 1, 2}, l2{2, "unified", 1 << 20, 64, 8, 1, 2},
      l3{3, "unified", 32 << 20, 64, 16, 2, 1}, li{1, "instruction", 32 << 10, 64, 8, 1, 2};
  return {l1, li, l2, l3};
}

inline BandwidthResult bw(const std::string& kernel, uint64_t size, double gbps, int threads = 1) {
  BandwidthResult b;
  b.kernel = kernel;
  b.size_bytes = size;
  b.gbps = gbps;
  b.threads = threads;
  b.bytes_per_cycle = gbps / 4.0 / threads;
  return b;
}


// Forms of one ISA for the width checks: multiply-add, add, f64 multiply-add and multiply at the
// wide width, a multiply-add at the narrow one, an int8 dot product; and the two width classes.
struct WidthForms {
  std::string mul_add, add, mul_add_f64, mul, mul_add_narrow, dot;
  std::string wide, narrow;
};

// The best rate per dtype, width and thread count; a mistrusted row sets nothing.
inline void check_best_rate_per_width(const WidthForms& w) {
  std::vector<ProbeResult> r = {probe(w.mul_add, "f32", 118, 2, 236),
                                probe(w.add, "f32", 59),
                                probe(w.mul_add_f64, "f64", 59),
                                probe(w.mul_add_narrow, "f32", 118),
                                probe(w.dot, "i8", 473)};
  r.push_back(probe(w.mul, "f32", 500));
  r.back().status = Status::mistrusted;  // never a ceiling
  auto c = compute_ceilings(r);
  auto find = [&](const std::string& d, const std::string& isa, int t) -> const ComputeCeiling* {
    for (const auto& x : c)
      if (x.dtype == d && x.isa == isa && x.threads == t) return &x;
    return nullptr;
  };
  REQUIRE(find("f32", w.wide, 1));
  CHECK(find("f32", w.wide, 1)->gops == 118);
  CHECK(find("f32", w.wide, 1)->source == w.mul_add);
  CHECK(find("f32", w.wide, 1)->ops_per_cycle == Approx(118 / 4.0));
  REQUIRE(find("f32", w.wide, 2));
  CHECK(find("f32", w.wide, 2)->gops == 236);
  CHECK(find("f32", w.wide, 2)->ops_per_cycle == Approx(236 / 4.0 / 2));
  REQUIRE(find("i8", w.wide, 1));
  CHECK(find("i8", w.wide, 1)->integer);
  CHECK(find("f32", w.narrow, 1));
  CHECK(c.size() == 5);
}

// Attainable rate, binding roof, efficiency and ridge distance of a scored kernel.
inline void check_score(const WidthForms& w) {
  auto t = make_ceiling_table({probe(w.mul_add, "f32", 100)}, {},
                              {bw("load", 1ull << 30, 20), bw("load", 16 << 10, 200)}, caches());
  // AI 1 FLOP/byte against DRAM at 20 GB/s: memory-bound at 20 GFLOP/s; it reaches 10.
  auto s = score_kernel(t, {"k", 1e9, 1e9, 0.1, "f32", "", 1});
  REQUIRE(s.ok());
  CHECK(s->ai == Approx(1));
  CHECK(s->achieved_gflops == Approx(10));
  CHECK(s->attainable_gflops == Approx(20));
  CHECK(s->bound_by == "memory DRAM load");
  CHECK(s->efficiency == Approx(0.5));
  CHECK(s->ridge_ai == Approx(5));
  CHECK(s->distance_to_ridge == Approx(0.2));
  // From L1 the same kernel is compute-bound.
  auto l1 = score_kernel(t, {"k", 1e9, 1e9, 0.1, "f32", "L1", 1});
  REQUIRE(l1.ok());
  CHECK(l1->bound_by == "compute f32 " + w.wide);
  CHECK(l1->attainable_gflops == Approx(100));
  CHECK_FALSE(score_kernel(t, {"k", 0, 1, 1, "f32", "", 1}).ok());
  CHECK_FALSE(score_kernel(t, {"k", 1, 1, 1, "f64", "", 1}).ok());
  CHECK_FALSE(score_kernel(t, {"k", 1, 1, 1, "f32", "L9", 1}).ok());
}

}  // namespace peakprobe::test
