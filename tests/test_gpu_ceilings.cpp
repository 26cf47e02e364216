#include <catch2/catch.hpp>

#include "roofline/ceilings.hpp"
#include "roofline/gpu_ceilings.hpp"

using namespace peakprobe;

namespace {
GpuReport device() {
  GpuReport r;
  r.device.name = "G";
  r.device.clock_mhz = 2000;
  r.device.compute_units = 100;
  auto compute = [&](const char* dtype, int width, double gops, Status st = Status::ok) {
    GpuComputeResult c;
    c.dtype = dtype;
    c.width = width;
    c.integer = dtype[0] == 'i';
    c.gops = gops;
    c.status = st;
    r.compute.push_back(c);
  };
  compute("f32", 1, 50000);
  compute("f32", 4, 60000);
  compute("f32", 8, 90000, Status::mistrusted);  // beyond its bound: never a roof
  compute("i8", 4, 30000);
  auto memory = [&](const char* kernel, int width, double gbps, Status st = Status::ok) {
    GpuMemoryResult m;
    m.kernel = kernel;
    m.width = width;
    m.gbps = gbps;
    m.bytes = 1 << 30;
    m.status = st;
    r.memory.push_back(m);
  };
  memory("read", 1, 3000);
  memory("read", 4, 4000);
  memory("write", 4, 3800);
  memory("copy", 4, 3500);
  memory("local_read", 4, 30000);
  memory("host_to_device", 0, 20);
  memory("host_to_device_pinned", 0, 50);
  memory("read", 16, 9000, Status::error);
  return r;
}
}  // namespace

TEST_CASE("gpu ceilings: ok rows only, best width per memory kernel, device-wide", "[gpu][roofline]") {
  const CeilingTable t = gpu_ceiling_table(device());
  REQUIRE(t.compute.size() == 3);
  for (const auto& c : t.compute) {
    CHECK(c.threads == 1);
    CHECK(c.clock_ghz == Approx(2.0));
    CHECK(c.gops < 90000);  // the mistrusted row is left out
  }
  CHECK(t.compute[1].isa == "x4");
  CHECK(t.compute[1].ops_per_cycle == Approx(60000 / 2.0 / 100));  // per compute unit
  CHECK(t.compute[2].integer);
  auto find = [&](const char* level, const char* kernel) -> const MemoryCeiling* {
    for (const auto& m : t.memory)
      if (m.level == level && m.kernel == kernel) return &m;
    return nullptr;
  };
  REQUIRE(find("DRAM", "load"));
  CHECK(find("DRAM", "load")->gbps == Approx(4000));  // the best width, not the failed x16
  REQUIRE(find("DRAM", "store"));
  REQUIRE(find("DRAM", "copy"));
  REQUIRE(find("local", "load"));
  REQUIRE(find("host", "host_to_device"));
  REQUIRE(find("host", "host_to_device_pinned"));
  CHECK(find("host", "host_to_device_pinned")->gbps == Approx(50));
  CHECK(t.memory.size() == 6);
  // Ridges pair the best compute roof of each dtype with each level's load bandwidth.
  bool f32_dram = false;
  for (const auto& r : t.ridges)
    if (r.dtype == "f32" && r.level == "DRAM") {
      f32_dram = true;
      CHECK(r.ai == Approx(60000.0 / 4000));
    }
  CHECK(f32_dram);
}

TEST_CASE("gpu ceilings: a kernel scored against a device's roofs", "[gpu][roofline]") {
  const CeilingTable t = gpu_ceiling_table(device());
  ScoreRequest q;
  q.flops = 1e12;
  q.bytes = 1e12;  // 1 FLOP per byte: far below the ridge, memory bound
  q.seconds = 0.5;
  auto s = score_kernel(t, q);
  REQUIRE(s);
  CHECK(s->bound_by == "memory DRAM load");
  CHECK(s->attainable_gflops == Approx(4000));
  CHECK(s->efficiency == Approx(2000.0 / 4000));
}

TEST_CASE("gpu ceilings: a skipped device has no roofs", "[gpu][roofline]") {
  GpuReport r = device();
  r.status = Status::skipped;
  const CeilingTable t = gpu_ceiling_table(r);
  CHECK(t.compute.empty());
  CHECK(t.memory.empty());
  CHECK(t.ridges.empty());
}

TEST_CASE("gpu ceilings: a 4x8-bit dot product is the device's i8 roof, named as such", "[gpu][roofline]") {
  GpuReport r;
  r.device.clock_mhz = 2000;
  r.device.compute_units = 10;
  GpuComputeResult mad;
  mad.dtype = "i8";
  mad.width = 4;
  mad.integer = true;
  mad.gops = 1000;
  GpuComputeResult dot = mad;
  dot.dtype = "i8dot";
  dot.gops = 4000;
  r.compute = {mad, dot};
  const CeilingTable t = gpu_ceiling_table(r);
  REQUIRE(t.compute.size() == 2);
  CHECK(t.compute[1].dtype == "i8");
  CHECK(t.compute[1].isa == "dot4 ss");
  CHECK(t.compute[1].source.find("cl_khr_integer_dot_product") != std::string::npos);
  CHECK(t.compute[1].ops_per_cycle == Approx(4000.0 / 2.0 / 10));
}

