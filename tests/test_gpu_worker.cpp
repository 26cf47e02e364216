#include <catch2/catch.hpp>

#include <algorithm>

#include "gpu/gpu_worker.hpp"
#include "skip.hpp"

using namespace peakprobe;
using namespace peakprobe::gpu;

TEST_CASE("gpu worker: a job survives the command line", "[gpu_worker]") {
  GpuJob job;
  job.device = 3;
  job.options.dtypes = {"f32", "i8"};
  job.options.widths = {1, 16};
  job.options.memory = false;
  job.options.kernel_seconds = 0.005;
  job.options.extra_compute_source = "// \"quoted\"\n";
  job.options.emulate_integer_dot = true;
  auto back = decode_job(encode_job(job));
  REQUIRE(back.ok());
  CHECK(back->device == 3);
  CHECK_FALSE(back->list);
  CHECK(back->options.dtypes == job.options.dtypes);
  CHECK(back->options.widths == job.options.widths);
  CHECK_FALSE(back->options.memory);
  CHECK(back->options.compute);
  CHECK(back->options.kernel_seconds == Approx(0.005));
  CHECK(back->options.extra_compute_source == job.options.extra_compute_source);
  CHECK(back->options.emulate_integer_dot);
}

TEST_CASE("gpu worker: anything else is refused", "[gpu_worker]") {
  CHECK_FALSE(decode_job("").ok());
  CHECK_FALSE(decode_job("{}").ok());
  GpuJob job;
  job.options.max_repetitions = 0;
  CHECK_FALSE(decode_job(encode_job(job)).ok());
}

namespace {

GpuOptions quick() {
  GpuOptions o;
  o.kernel_seconds = 0.003;
  o.min_repetitions = 2;
  o.max_repetitions = 3;
  o.min_total_seconds = 0;
  o.buffer_bytes = 16ull << 20;
  return o;
}

// Compute peaks of these types only.
GpuOptions compute_only(std::vector<std::string> dtypes) {
  GpuOptions o = quick();
  o.dtypes = std::move(dtypes);
  o.memory = o.latency = o.transfer = false;
  return o;
}

// Whether an OpenCL device is here (listed in a worker, as the product does).
bool have_device() {
  auto devices = list_devices_isolated(60);
  REQUIRE(devices.ok());
  return !devices->empty();
}

}  // namespace

// PoCL in CI; any OpenCL device elsewhere. The measurement runs in a worker process.
TEST_CASE("gpu: every kernel runs on the first OpenCL device and matches the host", "[gpu][hw]") {
  auto devices = list_devices_isolated(60);
  REQUIRE(devices.ok());
  if (devices->empty()) {
    PP_SKIP("no OpenCL device here (install pocl-opencl-icd)");
    return;
  }
  const GpuReport r = measure_device_isolated(0, quick(), 120);
  INFO(r.reason);
  REQUIRE(r.status == Status::ok);
  CHECK(r.device.name == (*devices)[0].name);
  // Six multiply-add types at five widths, and two dot products at one.
  CHECK(r.compute.size() == 6 * 5 + 2);
  for (const GpuComputeResult& c : r.compute) {
    INFO(c.dtype << " x" << c.width << ": " << c.reason);
    CHECK(c.status != Status::error);
    if (c.status == Status::skipped) continue;
    CHECK(c.checked);
    CHECK(c.gops > 0);
    CHECK(c.gops <= c.bound_gops * 1.0001 + (c.status == Status::mistrusted ? 1e18 : 0));
  }
  // Four kernels at five widths, and the transfers each way from pageable and from pinned memory.
  CHECK(r.memory.size() == 4 * 5 + 4);
  int pinned = 0;
  for (const GpuMemoryResult& m : r.memory) {
    INFO(m.kernel << " x" << m.width << ": " << m.reason);
    CHECK(m.status != Status::error);
    if (m.kernel.find("_pinned") != std::string::npos) {
      ++pinned;
      if (m.status == Status::skipped) {  // a driver that gives no pinned memory says why
        CHECK_FALSE(m.reason.empty());
        continue;
      }
    }
    CHECK(m.checked);
    CHECK(m.gbps > 0);
  }
  CHECK(pinned == 2);
  REQUIRE(r.latency.size() == 2);
  for (const GpuLatencyResult& l : r.latency) {
    INFO(l.space << ": " << l.reason);
    CHECK(l.status != Status::error);
    CHECK(l.checked);
  }
}

TEST_CASE("gpu: the dot-product kernels run and match the host, the built-in emulated where the device lacks it",
          "[gpu][hw]") {
  if (!have_device()) {
    PP_SKIP("no OpenCL device here (install pocl-opencl-icd)");
    return;
  }
  GpuOptions o = compute_only({"i8dot", "u8i8dot"});
  o.emulate_integer_dot = true;
  const GpuReport r = measure_device_isolated(0, o, 120);
  INFO(r.reason);
  REQUIRE(r.status == Status::ok);
  REQUIRE(r.compute.size() == 2);
  for (const GpuComputeResult& c : r.compute) {
    INFO(c.dtype << ": " << c.reason);
    CHECK(c.width == 4);
    CHECK(c.status != Status::error);
    CHECK(c.checked);
    CHECK(c.gops > 0);
    const bool offered = std::find(r.device.extensions.begin(), r.device.extensions.end(),
                                   "cl_khr_integer_dot_product") != r.device.extensions.end();
    CHECK((c.reason.find("emulated") != std::string::npos) == !offered);
  }
}

TEST_CASE("gpu: a kernel that does not build reaches the user with the runtime's build log", "[gpu][hw]") {
  if (!have_device()) {
    PP_SKIP("no OpenCL device here (install pocl-opencl-icd)");
    return;
  }
  GpuOptions o = compute_only({"f32"});
  o.widths = {1};
  o.extra_compute_source = "__kernel void broken(__global float* p) { p[0] = undeclared_name; }\n";
  const GpuReport r = measure_device_isolated(0, o, 120);
  REQUIRE(r.compute.size() == 1);
  CHECK(r.compute[0].status == Status::error);
  CHECK(r.compute[0].reason.find("did not build") != std::string::npos);
  CHECK(r.compute[0].reason.find("undeclared_name") != std::string::npos);
}

TEST_CASE("gpu: a device number that does not exist is an error, not a crash", "[gpu][hw]") {
  const GpuReport r = measure_device_isolated(1000, quick(), 60);
  CHECK(r.status != Status::ok);
  CHECK_FALSE(r.reason.empty());
}
