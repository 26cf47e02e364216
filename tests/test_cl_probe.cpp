// src/gpu/cl_probe.cpp: list_devices() and measure_device() on the OpenCL devices of this machine
// (PoCL in CI), without a runtime or a device, and on a runtime that refuses or misreports.
//
// An OpenCL runtime never runs inside the test process (drivers keep threads and have crashed in
// their exit handlers): every call goes through the worker process (gpu_worker.hpp), which runs
// list_devices() or measure_device() in a fresh process of this binary and hands the result back.
// A fresh process also reads PEAKPROBE_OPENCL_LIBRARY anew, the seam these tests use: it names a
// stand-in "loader" built here from the C source below, which forwards every call to the real
// loader and, as its PP_FAKE_CL_* variables ask, refuses one entry point with an OpenCL code, reports
// its own profiling times, flips a bit of what a blocking read returns, or changes what the device
// says of itself. The stand-in needs a C compiler; without one those tests report themselves skipped.
// Tests that load a device's runtime are named "gpu: ..." like the other OpenCL device tests: the
// sanitizer run (scripts/sanitize.sh) leaves those out.
#include <catch2/catch.hpp>

#include <dlfcn.h>
#include <stdlib.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "cli_run.hpp"
#include "gpu/cl_kernels.hpp"
#include "gpu/cl_probe.hpp"
#include "gpu/gpu_worker.hpp"
#include "scratch_dir.hpp"
#include "skip.hpp"

using namespace peakprobe;
using namespace peakprobe::gpu;

namespace {

constexpr double kListLimit = 60, kMeasureLimit = 150;

// Environment variables for the workers this test starts; the old values come back at scope exit.
class EnvGuard {
 public:
  EnvGuard() = default;
  EnvGuard(const EnvGuard&) = delete;
  EnvGuard& operator=(const EnvGuard&) = delete;
  ~EnvGuard() {
    for (auto it = saved_.rbegin(); it != saved_.rend(); ++it) {
      if (it->second) ::setenv(it->first.c_str(), it->second->c_str(), 1);
      else ::unsetenv(it->first.c_str());
    }
  }
  void set(const std::string& name, const std::string& value) {
    save(name);
    ::setenv(name.c_str(), value.c_str(), 1);
  }
  void unset(const std::string& name) {
    save(name);
    ::unsetenv(name.c_str());
  }

 private:
  void save(const std::string& name) {
    const char* v = std::getenv(name.c_str());
    saved_.emplace_back(name, v ? std::optional<std::string>(v) : std::nullopt);
  }
  std::vector<std::pair<std::string, std::optional<std::string>>> saved_;
};

// Small and quick: the smallest buffer the code allows, two repetitions, no minimum timed total.
GpuOptions tiny() {
  GpuOptions o;
  o.kernel_seconds = 0.002;
  o.min_repetitions = 2;
  o.max_repetitions = 2;
  o.min_total_seconds = 0;
  o.buffer_bytes = 1ull << 20;
  return o;
}

GpuOptions only(bool compute, bool memory, bool latency, bool transfer) {
  GpuOptions o = tiny();
  o.compute = compute;
  o.memory = memory;
  o.latency = latency;
  o.transfer = transfer;
  return o;
}

bool has_extension(const GpuDevice& d, const std::string& e) {
  return std::find(d.extensions.begin(), d.extensions.end(), e) != d.extensions.end();
}

bool starts_with(const std::string& s, const std::string& prefix) { return s.rfind(prefix, 0) == 0; }
bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// The reasons docs/gpu.md gives for `mistrusted`.
bool documented_mistrust(const std::string& reason) {
  return starts_with(reason, "repetitions disagree: the best ran ") ||
         reason == "the device's profiling clock reported no time" ||
         contains(reason, "is beyond the device's own bound") || reason == "N and 2N steps did not differ in time";
}

// What a figure and its statistics must satisfy whenever the figure was measured.
void check_figure(double figure, const Stats& s, int max_repetitions) {
  CHECK(std::isfinite(figure));
  CHECK(figure > 0);
  CHECK(figure == s.median);
  CHECK(s.samples >= 1);
  CHECK(s.samples <= max_repetitions);
  CHECK(s.min <= s.median);
  CHECK(s.median <= s.max);
  CHECK(s.spread >= 0);
}

// A measured row: ok with no reason, or mistrusted for a documented reason; checked either way.
void check_trusted_or_documented(Status status, const std::string& reason, bool checked) {
  CHECK(checked);
  CHECK((status == Status::ok || status == Status::mistrusted));
  if (status == Status::ok) CHECK(reason.empty());
  if (status == Status::mistrusted) CHECK(documented_mistrust(reason));
}

// The global-memory buffer docs/gpu.md promises: the size asked (1 GiB on a GPU, 256 MiB otherwise
// when none is), never more than half the largest allocation or an eighth of the global memory; and
// at least 1 MiB, the floor of cl_probe.cpp's buffer_bytes (docs/gpu.md does not give it; below a
// largest allocation of 2 MiB it wins over the half).
uint64_t expected_buffer(const GpuDevice& d, uint64_t asked) {
  uint64_t b = asked ? asked : d.type == "gpu" ? (1ull << 30) : (256ull << 20);
  if (d.max_alloc_bytes) b = std::min(b, d.max_alloc_bytes / 2);
  if (d.global_mem_bytes) b = std::min(b, d.global_mem_bytes / 8);
  return std::max<uint64_t>(b, 1ull << 20);
}

// The global size docs/gpu.md gives for a compute kernel.
uint64_t expected_compute_items(const GpuDevice& d) {
  const uint64_t cu = uint64_t(std::max(1, d.compute_units));
  if (d.type == "gpu") return cu * std::clamp<uint64_t>(d.max_work_group_size, 256, 1024) * 2;
  return cu * 1024;
}

// 2 (8 for a dot product) x clock x compute units x largest work-group size (docs/gpu.md).
double expected_bound(const GpuDevice& d, bool dot) {
  return (dot ? 8.0 : 2.0) * d.clock_mhz * 1e-3 * std::max(1, d.compute_units) *
         double(std::max<uint64_t>(1, d.max_work_group_size));
}

const GpuMemoryResult* find_memory(const GpuReport& r, const std::string& kernel, int width) {
  for (const GpuMemoryResult& m : r.memory)
    if (m.kernel == kernel && m.width == width) return &m;
  return nullptr;
}

const GpuLatencyResult* find_latency(const GpuReport& r, const std::string& space) {
  for (const GpuLatencyResult& l : r.latency)
    if (l.space == space) return &l;
  return nullptr;
}

bool is_transfer(const std::string& kernel) { return starts_with(kernel, "host_to_device") || starts_with(kernel, "device_to_host"); }

// Whether a transfer row was measured. Only a pinned row may be skipped (a driver without pinned
// memory), and only for that reason: a pageable transfer is always measured.
bool measured_transfer(const GpuMemoryResult& m) {
  if (m.status != Status::skipped) return true;
  CHECK(contains(m.kernel, "_pinned"));
  CHECK(starts_with(m.reason, "no pinned host memory from this driver: "));
  return false;
}

// The stand-in loader. Every entry point forwards to the real libOpenCL.so.1, except as asked:
//   PP_FAKE_CL_FAIL="name code [n]": entry point `name` returns `code` (through errcode_ret for a
//     create call, with no object) after letting its first n calls through;
//   PP_FAKE_CL_NS=t: every event lasts t ns on the profiling clock (END = START + t);
//     PP_FAKE_CL_PER_ARG2=p: plus p ns per unit of the last 4-byte argument 2 set (a chase's steps),
//     or of argument i with PP_FAKE_CL_ARG=i (5: a compute kernel's loop length, cl_kernels.hpp);
//     PP_FAKE_CL_ODD_EVERY=k, PP_FAKE_CL_ODD_NS=u: every k-th event lasts u ns instead;
//   PP_FAKE_CL_CORRUPT=1: a successful blocking read has bit 0 of its first byte flipped;
//     PP_FAKE_CL_CORRUPT=all: every read, a non-blocking one once the queue has finished it;
//   PP_FAKE_CL_TYPE=gpu, PP_FAKE_CL_CLOCK=mhz, PP_FAKE_CL_MAX_ALLOC=bytes, PP_FAKE_CL_GLOBAL_MEM=bytes,
//     PP_FAKE_CL_MAX_WG=n: what the device reports of itself; PP_FAKE_CL_HIDE="ext ...": extensions
//     it leaves out.
const char* const kStandInSource = R"C(
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int32_t cl_int;
typedef uint32_t cl_uint;
typedef uint64_t cl_ulong;
typedef void* H;

static void* real(const char* name) {
  static void* lib;
  if (!lib) lib = dlopen("libOpenCL.so.1", RTLD_NOW | RTLD_LOCAL);
  return lib ? dlsym(lib, name) : NULL;
}
#define REAL(type, name) ((type)real(#name))

static int refuse(const char* name, cl_int* code) {
  static long calls;
  const char* spec = getenv("PP_FAKE_CL_FAIL");
  char fn[128];
  int c = 0;
  long pass = 0;
  if (!spec || sscanf(spec, "%127s %d %ld", fn, &c, &pass) < 2 || strcmp(fn, name) != 0) return 0;
  if (calls++ < pass) return 0;
  *code = c;
  return 1;
}
static unsigned long long env_u(const char* name, int* set) {
  const char* v = getenv(name);
  if (set) *set = v != NULL && *v != 0;
  return v && *v ? strtoull(v, NULL, 10) : 0;
}

cl_int clGetPlatformIDs(cl_uint n, H* p, cl_uint* num) {
  cl_int code;
  if (refuse("clGetPlatformIDs", &code)) return code;
  void* f = real("clGetPlatformIDs");
  if (!f) return -1001;
  return ((cl_int(*)(cl_uint, H*, cl_uint*))f)(n, p, num);
}
cl_int clGetPlatformInfo(H p, cl_uint param, size_t size, void* v, size_t* ret) {
  return REAL(cl_int(*)(H, cl_uint, size_t, void*, size_t*), clGetPlatformInfo)(p, param, size, v, ret);
}
cl_int clGetDeviceIDs(H p, cl_ulong type, cl_uint n, H* d, cl_uint* num) {
  return REAL(cl_int(*)(H, cl_ulong, cl_uint, H*, cl_uint*), clGetDeviceIDs)(p, type, n, d, num);
}
static int hidden(const char* ext, size_t len) {
  const char* hide = getenv("PP_FAKE_CL_HIDE");
  if (!hide) return 0;
  for (const char* h = hide; *h;) {
    while (*h == ' ') ++h;
    size_t n = 0;
    while (h[n] && h[n] != ' ') ++n;
    if (n && n == len && strncmp(h, ext, n) == 0) return 1;
    h += n;
  }
  return 0;
}
cl_int clGetDeviceInfo(H d, cl_uint param, size_t size, void* v, size_t* ret) {
  cl_int (*f)(H, cl_uint, size_t, void*, size_t*) = REAL(cl_int(*)(H, cl_uint, size_t, void*, size_t*), clGetDeviceInfo);
  int set = 0;
  if (param == 0x1030 && getenv("PP_FAKE_CL_HIDE")) {  /* CL_DEVICE_EXTENSIONS */
    size_t n = 0;
    cl_int st = f(d, param, 0, NULL, &n);
    if (st) return st;
    char* all = calloc(n + 1, 1);
    char* out = calloc(n + 2, 1);
    st = f(d, param, n, all, NULL);
    if (st) { free(all); free(out); return st; }
    size_t o = 0;
    for (char* s = all; *s;) {
      while (*s == ' ') ++s;
      size_t len = 0;
      while (s[len] && s[len] != ' ') ++len;
      if (len && !hidden(s, len)) {
        if (o) out[o++] = ' ';
        memcpy(out + o, s, len);
        o += len;
      }
      s += len;
    }
    out[o] = 0;
    free(all);
    if (ret) *ret = o + 1;
    if (v) {
      if (size < o + 1) { free(out); return -30; }
      memcpy(v, out, o + 1);
    }
    free(out);
    return 0;
  }
  cl_int st = f(d, param, size, v, ret);
  if (st || !v) return st;
  if (param == 0x1000 && size >= 8 && getenv("PP_FAKE_CL_TYPE") && strcmp(getenv("PP_FAKE_CL_TYPE"), "gpu") == 0)
    *(cl_ulong*)v = 4; /* CL_DEVICE_TYPE_GPU */
  unsigned long long x = env_u("PP_FAKE_CL_CLOCK", &set);
  if (param == 0x100C && size >= 4 && set) *(cl_uint*)v = (cl_uint)x;
  x = env_u("PP_FAKE_CL_MAX_ALLOC", &set);
  if (param == 0x1010 && size >= 8 && set) *(cl_ulong*)v = x;
  x = env_u("PP_FAKE_CL_GLOBAL_MEM", &set);
  if (param == 0x101F && size >= 8 && set) *(cl_ulong*)v = x;
  x = env_u("PP_FAKE_CL_MAX_WG", &set);
  if (param == 0x1004 && size >= sizeof(size_t) && set) *(size_t*)v = (size_t)x;
  return 0;
}
H clCreateContext(const intptr_t* props, cl_uint n, const H* d, void* notify, void* user, cl_int* err) {
  cl_int code;
  if (refuse("clCreateContext", &code)) { if (err) *err = code; return NULL; }
  return REAL(H(*)(const intptr_t*, cl_uint, const H*, void*, void*, cl_int*), clCreateContext)(props, n, d, notify, user, err);
}
cl_int clReleaseContext(H c) { return REAL(cl_int(*)(H), clReleaseContext)(c); }
H clCreateCommandQueue(H c, H d, cl_ulong props, cl_int* err) {
  cl_int code;
  if (refuse("clCreateCommandQueue", &code)) { if (err) *err = code; return NULL; }
  return REAL(H(*)(H, H, cl_ulong, cl_int*), clCreateCommandQueue)(c, d, props, err);
}
cl_int clReleaseCommandQueue(H q) { return REAL(cl_int(*)(H), clReleaseCommandQueue)(q); }
H clCreateBuffer(H c, cl_ulong flags, size_t size, void* host, cl_int* err) {
  cl_int code;
  if (refuse("clCreateBuffer", &code)) { if (err) *err = code; return NULL; }
  return REAL(H(*)(H, cl_ulong, size_t, void*, cl_int*), clCreateBuffer)(c, flags, size, host, err);
}
cl_int clReleaseMemObject(H m) { return REAL(cl_int(*)(H), clReleaseMemObject)(m); }
H clCreateProgramWithSource(H c, cl_uint n, const char** s, const size_t* l, cl_int* err) {
  return REAL(H(*)(H, cl_uint, const char**, const size_t*, cl_int*), clCreateProgramWithSource)(c, n, s, l, err);
}
cl_int clBuildProgram(H p, cl_uint n, const H* d, const char* opts, void* notify, void* user) {
  cl_int code;
  if (refuse("clBuildProgram", &code)) return code;
  return REAL(cl_int(*)(H, cl_uint, const H*, const char*, void*, void*), clBuildProgram)(p, n, d, opts, notify, user);
}
cl_int clGetProgramBuildInfo(H p, H d, cl_uint param, size_t size, void* v, size_t* ret) {
  return REAL(cl_int(*)(H, H, cl_uint, size_t, void*, size_t*), clGetProgramBuildInfo)(p, d, param, size, v, ret);
}
cl_int clReleaseProgram(H p) { return REAL(cl_int(*)(H), clReleaseProgram)(p); }
H clCreateKernel(H p, const char* name, cl_int* err) {
  cl_int code;
  if (refuse("clCreateKernel", &code)) { if (err) *err = code; return NULL; }
  return REAL(H(*)(H, const char*, cl_int*), clCreateKernel)(p, name, err);
}
cl_int clReleaseKernel(H k) { return REAL(cl_int(*)(H), clReleaseKernel)(k); }
static long last_arg2;
cl_int clSetKernelArg(H k, cl_uint i, size_t size, const void* v) {
  int which_set = 0;
  unsigned long long which = env_u("PP_FAKE_CL_ARG", &which_set);
  if (i == (which_set ? which : 2) && size == 4 && v) last_arg2 = *(const int32_t*)v;
  return REAL(cl_int(*)(H, cl_uint, size_t, const void*), clSetKernelArg)(k, i, size, v);
}
cl_int clGetKernelWorkGroupInfo(H k, H d, cl_uint param, size_t size, void* v, size_t* ret) {
  return REAL(cl_int(*)(H, H, cl_uint, size_t, void*, size_t*), clGetKernelWorkGroupInfo)(k, d, param, size, v, ret);
}
cl_int clEnqueueNDRangeKernel(H q, H k, cl_uint dim, const size_t* off, const size_t* g, const size_t* l, cl_uint n,
                              const H* wait, H* ev) {
  cl_int code;
  if (refuse("clEnqueueNDRangeKernel", &code)) return code;
  return REAL(cl_int(*)(H, H, cl_uint, const size_t*, const size_t*, const size_t*, cl_uint, const H*, H*),
              clEnqueueNDRangeKernel)(q, k, dim, off, g, l, n, wait, ev);
}
cl_int clFinish(H q);
cl_int clEnqueueReadBuffer(H q, H m, cl_uint blocking, size_t off, size_t size, void* p, cl_uint n, const H* w, H* ev) {
  cl_int st = REAL(cl_int(*)(H, H, cl_uint, size_t, size_t, void*, cl_uint, const H*, H*), clEnqueueReadBuffer)(
      q, m, blocking, off, size, p, n, w, ev);
  const char* corrupt = getenv("PP_FAKE_CL_CORRUPT");
  if (st || size == 0 || !corrupt) return st;
  if (!blocking) {
    if (strcmp(corrupt, "all") != 0) return st;
    if ((st = clFinish(q)) != 0) return st;
  }
  ((unsigned char*)p)[0] ^= 1;
  return st;
}
cl_int clEnqueueWriteBuffer(H q, H m, cl_uint blocking, size_t off, size_t size, const void* p, cl_uint n, const H* w,
                            H* ev) {
  return REAL(cl_int(*)(H, H, cl_uint, size_t, size_t, const void*, cl_uint, const H*, H*), clEnqueueWriteBuffer)(
      q, m, blocking, off, size, p, n, w, ev);
}
void* clEnqueueMapBuffer(H q, H m, cl_uint blocking, cl_ulong flags, size_t off, size_t size, cl_uint n, const H* w,
                         H* ev, cl_int* err) {
  cl_int code;
  if (refuse("clEnqueueMapBuffer", &code)) { if (err) *err = code; return NULL; }
  return REAL(void* (*)(H, H, cl_uint, cl_ulong, size_t, size_t, cl_uint, const H*, H*, cl_int*), clEnqueueMapBuffer)(
      q, m, blocking, flags, off, size, n, w, ev, err);
}
cl_int clEnqueueUnmapMemObject(H q, H m, void* p, cl_uint n, const H* w, H* ev) {
  return REAL(cl_int(*)(H, H, void*, cl_uint, const H*, H*), clEnqueueUnmapMemObject)(q, m, p, n, w, ev);
}
cl_int clFinish(H q) { return REAL(cl_int(*)(H), clFinish)(q); }
cl_int clWaitForEvents(cl_uint n, const H* e) { return REAL(cl_int(*)(cl_uint, const H*), clWaitForEvents)(n, e); }
cl_int clReleaseEvent(H e) { return REAL(cl_int(*)(H), clReleaseEvent)(e); }
cl_int clGetEventProfilingInfo(H e, cl_uint param, size_t size, void* v, size_t* ret) {
  static long ends;
  cl_int (*f)(H, cl_uint, size_t, void*, size_t*) = REAL(cl_int(*)(H, cl_uint, size_t, void*, size_t*), clGetEventProfilingInfo);
  cl_int st = f(e, param, size, v, ret);
  int set = 0, per_set = 0, every_set = 0;
  unsigned long long t = env_u("PP_FAKE_CL_NS", &set), per = env_u("PP_FAKE_CL_PER_ARG2", &per_set);
  unsigned long long every = env_u("PP_FAKE_CL_ODD_EVERY", &every_set), odd = env_u("PP_FAKE_CL_ODD_NS", NULL);
  if (st || !set || param != 0x1283 || !v || size < 8) return st; /* CL_PROFILING_COMMAND_END */
  cl_ulong start = 0;
  st = f(e, 0x1282, 8, &start, NULL);
  if (st) return st;
  ++ends;
  if (per_set) t += per * (unsigned long long)last_arg2;
  if (every_set && every && ends % (long)every == 0) t = odd;
  *(cl_ulong*)v = start + t;
  return 0;
}
)C";

// The stand-in loader, built into a scratch folder; `why_not` says why there is none.
struct StandIn {
  peakprobe::test::ScratchDir dir;
  std::string library, why_not;
  StandIn() {
    if (std::system("command -v cc >/dev/null 2>&1") != 0) {
      why_not = "no C compiler (cc) here to build the stand-in OpenCL loader";
      return;
    }
    const std::string src = dir.write("fake_opencl.c", kStandInSource), lib = dir.file("libfake_opencl.so"),
                      log = dir.file("cc.log");
    const int rc = std::system(("cc -shared -fPIC -O1 -o " + peakprobe::test::quoted(lib) + " " +
                                peakprobe::test::quoted(src) + " -ldl 2>" + peakprobe::test::quoted(log))
                                   .c_str());
    INFO(peakprobe::test::slurp(log));
    REQUIRE(rc == 0);
    // A cross build runs this binary under an emulator: the host's compiler builds for the host.
    void* h = ::dlopen(lib.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!h) {
      const char* e = ::dlerror();
      why_not = std::string("the stand-in OpenCL loader cannot be loaded by this binary: ") + (e ? e : "?");
      return;
    }
    ::dlclose(h);
    library = lib;
  }
};

// The devices a worker lists through the loader the environment names now, or nullopt (and a
// failed check) when the listing fails.
std::optional<std::vector<GpuDevice>> listed() {
  auto devices = list_devices_isolated(kListLimit);
  INFO((devices ? std::string() : devices.error()));
  CHECK(devices.ok());
  if (!devices) return std::nullopt;
  return *devices;
}

constexpr const char* kNoDevice = "no OpenCL device here (install pocl-opencl-icd)";

}  // namespace

// ---------------------------------------------------------------------------------------------
// Without a runtime or a device: no device needed.

TEST_CASE("cl_probe: without an OpenCL runtime the list is an error and a measurement is skipped, with the reason",
          "[cl_probe]") {
  const peakprobe::test::ScratchDir dir;
  EnvGuard env;
  std::string file, says;
  SECTION("no loader at the named path") {
    file = dir.file("libOpenCL-missing.so.1");
    says = "no OpenCL runtime: " + file + " could not be opened";
  }
  SECTION("a library that is no OpenCL loader") {
    file = PEAKPROBE_FAKE_BLAS;
    says = file + " has no clGetPlatformIDs: not an OpenCL 1.2 runtime";
  }
  env.set("PEAKPROBE_OPENCL_LIBRARY", file);
  const auto devices = list_devices_isolated(kListLimit);
  REQUIRE_FALSE(devices.ok());
  CHECK(starts_with(devices.error(), says));
  const GpuReport r = measure_device_isolated(0, tiny(), kMeasureLimit);
  CHECK(r.status == Status::skipped);
  CHECK(starts_with(r.reason, says));
  CHECK(r.compute.empty());
  CHECK(r.memory.empty());
  CHECK(r.latency.empty());
}

TEST_CASE("cl_probe: a loader with no driver lists no device and a measurement is skipped, with the reason",
          "[cl_probe]") {
  const peakprobe::test::ScratchDir dir;  // an empty vendors folder: the loader finds no driver
  EnvGuard env;
  env.unset("PEAKPROBE_OPENCL_LIBRARY");
  env.unset("OCL_ICD_FILENAMES");
  env.unset("OPENCL_VENDOR_PATH");
  env.set("OCL_ICD_VENDORS", dir.path.string());
  const auto devices = list_devices_isolated(kListLimit);
  if (!devices && contains(devices.error(), "no OpenCL runtime")) {
    PP_SKIP("no OpenCL loader here: " << devices.error());
  }
  INFO((devices ? std::string() : devices.error()));
  REQUIRE(devices.ok());
  CHECK(devices->empty());
  const GpuReport r = measure_device_isolated(0, tiny(), kMeasureLimit);
  CHECK(r.status == Status::skipped);
  CHECK(contains(r.reason, "found no platform with a device"));
  CHECK(r.compute.empty());
  CHECK(r.memory.empty());
}

TEST_CASE("cl_probe: a runtime that refuses to list its platforms is an error with the OpenCL code", "[cl_probe]") {
  const StandIn fake;
  if (fake.library.empty()) {
    PP_SKIP(fake.why_not);
  }
  EnvGuard env;
  env.set("PEAKPROBE_OPENCL_LIBRARY", fake.library);
  SECTION("a failure: the list and the measurement are errors naming the call and its code") {
    env.set("PP_FAKE_CL_FAIL", "clGetPlatformIDs -6");
    const auto devices = list_devices_isolated(kListLimit);
    REQUIRE_FALSE(devices.ok());
    CHECK(devices.error() == "clGetPlatformIDs failed: CL_OUT_OF_HOST_MEMORY (-6)");
    const GpuReport r = measure_device_isolated(0, tiny(), kMeasureLimit);
    CHECK(r.status == Status::error);
    CHECK(r.reason == "clGetPlatformIDs failed: CL_OUT_OF_HOST_MEMORY (-6)");
  }
  SECTION("no platform (CL_PLATFORM_NOT_FOUND_KHR): an empty list, and the measurement skipped") {
    env.set("PP_FAKE_CL_FAIL", "clGetPlatformIDs -1001");
    const auto devices = list_devices_isolated(kListLimit);
    REQUIRE(devices.ok());
    CHECK(devices->empty());
    const GpuReport r = measure_device_isolated(0, tiny(), kMeasureLimit);
    CHECK(r.status == Status::skipped);
    CHECK(contains(r.reason, "found no platform with a device"));
  }
}

// ---------------------------------------------------------------------------------------------
// On the OpenCL devices of this machine.

TEST_CASE("gpu: cl_probe, the device list describes every device consistently", "[cl_probe][gpu][hw]") {
  const auto devices = listed();
  REQUIRE(devices);
  if (devices->empty()) {
    PP_SKIP(kNoDevice);
  }
  for (size_t i = 0; i < devices->size(); ++i) {
    const GpuDevice& d = (*devices)[i];
    INFO("device " << i << ": " << d.name);
    CHECK(d.index == int(i));
    CHECK_FALSE(d.name.empty());
    CHECK_FALSE(d.platform.empty());
    CHECK((d.type == "gpu" || d.type == "cpu" || d.type == "accelerator" || d.type == "other"));
    // Strings come without the runtime's terminating NUL or trailing blanks.
    for (const std::string* s : {&d.name, &d.vendor, &d.platform, &d.driver_version, &d.device_version,
                                 &d.opencl_c_version}) {
      INFO("'" << *s << "'");
      CHECK((s->empty() || (s->back() != '\0' && s->back() != ' ')));
    }
    CHECK(starts_with(d.device_version, "OpenCL "));
    CHECK(d.compute_units >= 1);
    CHECK(d.max_work_group_size >= 1);
    CHECK(d.global_mem_bytes > 0);
    CHECK(d.max_alloc_bytes > 0);
    CHECK(std::is_sorted(d.extensions.begin(), d.extensions.end()));
    for (const std::string& e : d.extensions) {
      CHECK_FALSE(e.empty());
      CHECK(e.find(' ') == std::string::npos);
    }
    CHECK(d.fp16 == has_extension(d, "cl_khr_fp16"));
    CHECK(d.fp64 == has_extension(d, "cl_khr_fp64"));
  }
}

TEST_CASE("gpu: cl_probe, with nothing asked nothing is measured, and each device is described as listed", "[cl_probe][gpu][hw]") {
  const auto devices = listed();
  REQUIRE(devices);
  if (devices->empty()) {
    PP_SKIP(kNoDevice);
  }
  for (size_t i = 0; i < devices->size(); ++i) {
    const GpuDevice& d = (*devices)[i];
    const GpuReport r = measure_device_isolated(int(i), only(false, false, false, false), kMeasureLimit);
    INFO("device " << i << ": " << r.reason);
    CHECK(r.status == Status::ok);
    CHECK(r.reason.empty());
    CHECK(r.device.index == int(i));
    CHECK(r.device.name == d.name);
    CHECK(r.device.platform == d.platform);
    CHECK(r.device.type == d.type);
    CHECK(r.device.compute_units == d.compute_units);
    CHECK(r.device.extensions == d.extensions);
    CHECK(r.compute.empty());
    CHECK(r.memory.empty());
    CHECK(r.latency.empty());
    CHECK(r.seconds >= 0);
  }
}

TEST_CASE("gpu: cl_probe, a device number outside the list is an error that names the devices there are", "[cl_probe][gpu][hw]") {
  const auto devices = listed();
  REQUIRE(devices);
  if (devices->empty()) {
    PP_SKIP(kNoDevice);
  }
  const std::string range = "`peakprobe gpu list` shows devices 0 to " + std::to_string(devices->size() - 1);
  for (const int index : {-1, int(devices->size())}) {
    const GpuReport r = measure_device_isolated(index, tiny(), kMeasureLimit);
    INFO(index << ": " << r.reason);
    CHECK(r.status == Status::error);
    CHECK(r.reason == "no device " + std::to_string(index) + ": " + range);
    CHECK(r.compute.empty());
    CHECK(r.memory.empty());
  }
}

TEST_CASE("gpu: cl_probe, compute rows for every type and width asked, checked, positive and within the device's bound", "[cl_probe][gpu][hw]") {
  const auto devices = listed();
  REQUIRE(devices);
  if (devices->empty()) {
    PP_SKIP(kNoDevice);
  }
  GpuOptions o = only(true, false, false, false);
  o.dtypes = {"i32", "f32", "i8dot"};
  o.widths = {1, 2};
  const GpuReport r = measure_device_isolated(0, o, kMeasureLimit);
  INFO(r.reason);
  REQUIRE(r.status == Status::ok);
  // Each type asked at each of its widths (a dot product at its one), once.
  std::map<std::pair<std::string, int>, int> seen;
  for (const GpuComputeResult& c : r.compute) ++seen[{c.dtype, c.width}];
  CHECK(seen == std::map<std::pair<std::string, int>, int>{
                    {{"f32", 1}, 1}, {{"f32", 2}, 1}, {{"i32", 1}, 1}, {{"i32", 2}, 1}, {{"i8dot", kDotWidth}, 1}});
  for (const GpuComputeResult& c : r.compute) {
    INFO(c.dtype << " x" << c.width << ": " << c.reason);
    const ClDtype* d = find_dtype(c.dtype);
    REQUIRE(d != nullptr);
    CHECK(c.integer == d->integer);
    const bool offered = std::string(d->extension).empty() || has_extension(r.device, d->extension);
    if (!offered) {
      CHECK(c.status == Status::skipped);
      CHECK(c.reason == std::string("the device does not offer ") + d->extension);
      continue;
    }
    check_trusted_or_documented(c.status, c.reason, c.checked);
    check_figure(c.gops, c.gops_stats, o.max_repetitions);
    CHECK(c.work_items == expected_compute_items(r.device));
    CHECK(c.bound_gops == Approx(expected_bound(r.device, d->is_dot())));
    if (c.status == Status::ok) CHECK(c.gops <= c.bound_gops);
    if (c.gops > c.bound_gops) CHECK(contains(c.reason, "beyond the device's own bound"));
  }
}

TEST_CASE("gpu: cl_probe, memory rows at every width asked and the four transfers, checked, on buffers of the documented size", "[cl_probe][gpu][hw]") {
  const auto devices = listed();
  REQUIRE(devices);
  if (devices->empty()) {
    PP_SKIP(kNoDevice);
  }
  GpuOptions o = only(false, true, false, true);
  o.widths = {1, 2};
  // Large enough that whole vectors of the widest width per work-item round the global-memory
  // buffer down by less than half on any device of fewer than 512 compute units.
  o.buffer_bytes = 16ull << 20;
  const GpuReport r = measure_device_isolated(0, o, kMeasureLimit);
  INFO(r.reason);
  REQUIRE(r.status == Status::ok);
  std::map<std::pair<std::string, int>, int> seen;
  for (const GpuMemoryResult& m : r.memory) ++seen[{m.kernel, m.width}];
  std::map<std::pair<std::string, int>, int> want;
  for (const char* k : {"read", "write", "copy", "local_read"})
    for (int w : o.widths) want[{k, w}] = 1;
  for (const char* k : {"host_to_device", "device_to_host", "host_to_device_pinned", "device_to_host_pinned"})
    want[{k, 0}] = 1;
  CHECK(seen == want);
  const uint64_t buffer = expected_buffer(r.device, o.buffer_bytes);
  const uint64_t transfer_bytes = std::min<uint64_t>(buffer, 256ull << 20);
  const GpuMemoryResult* read1 = find_memory(r, "read", 1);
  REQUIRE(read1 != nullptr);
  for (const GpuMemoryResult& m : r.memory) {
    INFO(m.kernel << " x" << m.width << ": " << m.reason);
    if (m.kernel == "local_read") {
      CHECK(m.bytes == uint64_t(kLocalFloats) * 4);
    } else if (is_transfer(m.kernel)) {
      CHECK(m.bytes == transfer_bytes);
    } else {
      // Every width moves the same buffer of whole vectors of the widest width: the documented size,
      // rounded down to them.
      CHECK(m.bytes == read1->bytes);
      CHECK(m.bytes % (4 * 2) == 0);
      CHECK(m.bytes <= buffer);
      CHECK(m.bytes > buffer / 2);
    }
    if (is_transfer(m.kernel) && !measured_transfer(m)) continue;
    check_trusted_or_documented(m.status, m.reason, m.checked);
    check_figure(m.gbps, m.gbps_stats, o.max_repetitions);
  }
}

TEST_CASE("gpu: cl_probe, both latency chases checked, a trusted latency positive", "[cl_probe][gpu][hw]") {
  const auto devices = listed();
  REQUIRE(devices);
  if (devices->empty()) {
    PP_SKIP(kNoDevice);
  }
  // Five runs of each length: 2N dependent loads take longer than N on any device, so the fastest
  // of each differ by more than zero unless every run of N steps was disturbed.
  GpuOptions o = only(false, false, true, false);
  o.min_repetitions = o.max_repetitions = 5;
  const GpuReport r = measure_device_isolated(0, o, kMeasureLimit);
  INFO(r.reason);
  REQUIRE(r.status == Status::ok);
  CHECK(r.memory.empty());
  REQUIRE(r.latency.size() == 2);
  const GpuLatencyResult* global = find_latency(r, "global");
  const GpuLatencyResult* local = find_latency(r, "local");
  REQUIRE(global != nullptr);
  REQUIRE(local != nullptr);
  CHECK(global->bytes == std::min<uint64_t>(expected_buffer(r.device, o.buffer_bytes), 256ull << 20));
  CHECK(local->bytes == uint64_t(kLocalChaseEntries) * 4);
  for (const GpuLatencyResult& l : r.latency) {
    INFO(l.space << ": " << l.reason);
    check_trusted_or_documented(l.status, l.reason, l.checked);
    CHECK(std::isfinite(l.ns));
    CHECK(l.ns > 0);
    CHECK(l.ns_stats.samples >= 1);
    CHECK(l.ns_stats.samples <= o.max_repetitions);
    CHECK(l.ns_stats.min <= l.ns_stats.median);
    CHECK(l.ns_stats.median <= l.ns_stats.max);
  }
}

TEST_CASE("gpu: cl_probe, a compute program that does not build is an error in its rows, with the runtime's code and "
          "a bounded build log", "[cl_probe][gpu][hw]") {
  const auto devices = listed();
  REQUIRE(devices);
  if (devices->empty()) {
    PP_SKIP(kNoDevice);
  }
  GpuOptions o = only(true, false, false, true);
  o.dtypes = {"f32", "i32"};
  o.widths = {1, 2};
  // A name long enough that any log quoting it is longer than the 2000 characters kept.
  const std::string name = "pp_undeclared_" + std::string(3000, 'q');
  o.extra_compute_source = "__kernel void broken(__global float* p) { p[0] = " + name + "; }\n";
  const GpuReport r = measure_device_isolated(0, o, kMeasureLimit);
  INFO(r.reason);
  // A figure that fails is not the device's failure.
  CHECK(r.status == Status::ok);
  REQUIRE(r.compute.size() == 4);
  for (const GpuComputeResult& c : r.compute) {
    INFO(c.dtype << " x" << c.width << ": " << c.reason.substr(0, 300));
    CHECK(c.status == Status::error);
    CHECK_FALSE(c.checked);
    const std::string prefix = "the " + c.dtype + " kernels did not build (CL_BUILD_PROGRAM_FAILURE (-11)): ";
    REQUIRE(starts_with(c.reason, prefix));
    const std::string log = c.reason.substr(prefix.size());
    CHECK(log.size() <= 2000 + 4);
    // A log that quotes the name is longer than 2000 characters: its first 2000 are kept, and " ...".
    if (contains(log, "pp_undeclared_")) {
      CHECK(log.size() == 2000 + 4);
      CHECK(log.substr(log.size() - 4) == " ...");
    }
  }
  // Transfers build no program: measured.
  CHECK(r.memory.size() == 4);
  for (const GpuMemoryResult& m : r.memory) {
    INFO(m.kernel << ": " << m.reason);
    if (measured_transfer(m)) check_trusted_or_documented(m.status, m.reason, m.checked);
  }
}

// ---------------------------------------------------------------------------------------------
// On this machine's first device, through the stand-in loader.

namespace {

// The stand-in, when there is one and a device behind it; else why the test is skipped.
struct Rig {
  StandIn fake;
  EnvGuard env;
  std::string skip;
  Rig() {
    if (fake.library.empty()) {
      skip = fake.why_not;
      return;
    }
    env.set("PEAKPROBE_OPENCL_LIBRARY", fake.library);
    for (const char* v : {"PP_FAKE_CL_FAIL", "PP_FAKE_CL_NS", "PP_FAKE_CL_PER_ARG2", "PP_FAKE_CL_ARG",
                          "PP_FAKE_CL_ODD_EVERY", "PP_FAKE_CL_ODD_NS", "PP_FAKE_CL_CORRUPT", "PP_FAKE_CL_TYPE",
                          "PP_FAKE_CL_CLOCK", "PP_FAKE_CL_MAX_ALLOC", "PP_FAKE_CL_GLOBAL_MEM", "PP_FAKE_CL_MAX_WG",
                          "PP_FAKE_CL_HIDE"})
      env.unset(v);
    const auto devices = listed();
    REQUIRE(devices);
    if (devices->empty()) skip = kNoDevice;
  }
};

// Every event lasts this long on the stand-in's profiling clock; kernel_seconds below it, so no loop
// length grows past its first.
constexpr uint64_t kEventNs = 2'000'000;
constexpr double kEventSeconds = kEventNs * 1e-9;

// A compute kernel's run lasts this long per iteration of its loop (argument 5 of a compute kernel,
// cl_kernels.hpp, read by the stand-in): its rate is then exact, whatever loop length was chosen.
constexpr uint64_t kIterationNs = 250'000;
void time_compute_by_iterations(EnvGuard& env) {
  env.set("PP_FAKE_CL_NS", "0");
  env.set("PP_FAKE_CL_PER_ARG2", std::to_string(kIterationNs));
  env.set("PP_FAKE_CL_ARG", "5");
}
// Operations per iteration x work-items over kIterationNs.
double rate_by_iterations(const GpuComputeResult& c) {
  return compute_kernel(*find_dtype(c.dtype), c.width).ops_per_iteration() * double(c.work_items) /
         double(kIterationNs);
}

GpuOptions synthetic_clock_options() {
  GpuOptions o = tiny();
  o.kernel_seconds = 0.001;
  o.min_repetitions = 3;
  o.max_repetitions = 20;
  return o;
}

}  // namespace

TEST_CASE("gpu: cl_probe, a context or queue the runtime refuses makes the device's report an error naming the call", "[cl_probe][gpu][hw]") {
  Rig rig;
  if (!rig.skip.empty()) {
    PP_SKIP(rig.skip);
  }
  std::string spec, says;
  SECTION("context") {
    spec = "clCreateContext -2";
    says = "clCreateContext failed: CL_DEVICE_NOT_AVAILABLE (-2)";
  }
  SECTION("command queue") {
    spec = "clCreateCommandQueue -5";
    says = "clCreateCommandQueue failed: CL_OUT_OF_RESOURCES (-5)";
  }
  rig.env.set("PP_FAKE_CL_FAIL", spec);
  const GpuReport r = measure_device_isolated(0, tiny(), kMeasureLimit);
  CHECK(r.status == Status::error);
  CHECK(r.reason == says);
  CHECK_FALSE(r.device.name.empty());  // the device is still described
  CHECK(r.compute.empty());
  CHECK(r.memory.empty());
  CHECK(r.latency.empty());
}

TEST_CASE("gpu: cl_probe, a refused kernel launch fails each kernel's figure with the code, and the rest is measured", "[cl_probe][gpu][hw]") {
  Rig rig;
  if (!rig.skip.empty()) {
    PP_SKIP(rig.skip);
  }
  rig.env.set("PP_FAKE_CL_FAIL", "clEnqueueNDRangeKernel -5");
  GpuOptions o = tiny();
  o.dtypes = {"f32"};
  o.widths = {1};
  const GpuReport r = measure_device_isolated(0, o, kMeasureLimit);
  INFO(r.reason);
  CHECK(r.status == Status::ok);
  const std::string says = "clEnqueueNDRangeKernel failed: CL_OUT_OF_RESOURCES (-5)";
  REQUIRE(r.compute.size() == 1);
  CHECK(r.compute[0].status == Status::error);
  CHECK(r.compute[0].reason == says);
  CHECK_FALSE(r.compute[0].checked);
  int kernels = 0, transfers = 0;
  for (const GpuMemoryResult& m : r.memory) {
    INFO(m.kernel << ": " << m.reason);
    if (is_transfer(m.kernel)) {
      ++transfers;
      if (measured_transfer(m)) check_trusted_or_documented(m.status, m.reason, m.checked);
    } else {
      ++kernels;
      CHECK(m.status == Status::error);
      CHECK(m.reason == says);
      CHECK_FALSE(m.checked);
    }
  }
  CHECK(kernels == 4);
  CHECK(transfers == 4);
  REQUIRE(r.latency.size() == 2);
  for (const GpuLatencyResult& l : r.latency) {
    CHECK(l.status == Status::error);
    CHECK(l.reason == says);
  }
}

TEST_CASE("gpu: cl_probe, a refused buffer fails its figure with its size and code, and refused pinned memory skips "
          "the pinned transfers", "[cl_probe][gpu][hw]") {
  Rig rig;
  if (!rig.skip.empty()) {
    PP_SKIP(rig.skip);
  }
  SECTION("the compute output buffer") {
    rig.env.set("PP_FAKE_CL_FAIL", "clCreateBuffer -4");
    GpuOptions o = only(true, false, false, false);
    o.dtypes = {"f32"};
    o.widths = {1, 2};
    const GpuReport r = measure_device_isolated(0, o, kMeasureLimit);
    INFO(r.reason);
    CHECK(r.status == Status::ok);
    REQUIRE(r.compute.size() == 2);
    for (const GpuComputeResult& c : r.compute) {
      CHECK(c.status == Status::error);
      CHECK(c.reason == "clCreateBuffer of " + std::to_string(c.work_items * 4) +
                            " bytes failed: CL_MEM_OBJECT_ALLOCATION_FAILURE (-4)");
      CHECK_FALSE(c.checked);
    }
  }
  SECTION("the memory and transfer buffers: their rows say why, and the latency is still measured") {
    rig.env.set("PP_FAKE_CL_FAIL", "clCreateBuffer -4");
    GpuOptions o = only(false, true, true, true);
    o.widths = {1, 2};
    const GpuReport r = measure_device_isolated(0, o, kMeasureLimit);
    INFO(r.reason);
    CHECK(r.status == Status::ok);
    // read, write, copy and local_read at each width, then the four transfers.
    REQUIRE(r.memory.size() == 4 * o.widths.size() + 4);
    int transfers = 0;
    for (const GpuMemoryResult& m : r.memory) {
      INFO(m.kernel << ": " << m.reason);
      CHECK(m.status == Status::error);
      CHECK_THAT(m.reason, Catch::StartsWith("clCreateBuffer of ") &&
                               Catch::EndsWith(" bytes failed: CL_MEM_OBJECT_ALLOCATION_FAILURE (-4)"));
      CHECK_FALSE(m.checked);
      transfers += contains(m.kernel, "_to_");
    }
    CHECK(transfers == 4);
    // The latency chases ran after the memory section (their own buffers refused too, row by row).
    REQUIRE(r.latency.size() == 2);
    for (const GpuLatencyResult& l : r.latency) {
      INFO(l.space << ": " << l.reason);
      CHECK(l.status == Status::error);
      CHECK_THAT(l.reason, Catch::StartsWith("clCreateBuffer of "));
    }
  }
  SECTION("the pinned host memory") {
    rig.env.set("PP_FAKE_CL_FAIL", "clEnqueueMapBuffer -5");
    const GpuReport r = measure_device_isolated(0, only(false, false, false, true), kMeasureLimit);
    INFO(r.reason);
    CHECK(r.status == Status::ok);
    REQUIRE(r.memory.size() == 4);
    for (const GpuMemoryResult& m : r.memory) {
      INFO(m.kernel << ": " << m.reason);
      if (contains(m.kernel, "_pinned")) {
        CHECK(m.status == Status::skipped);
        CHECK(m.reason ==
              "no pinned host memory from this driver: clEnqueueMapBuffer of pinned host memory failed: "
              "CL_OUT_OF_RESOURCES (-5)");
      } else {
        check_trusted_or_documented(m.status, m.reason, m.checked);
      }
    }
  }
}

TEST_CASE("gpu: cl_probe, the memory kernels not building is the device's error, the compute rows measured before stay", "[cl_probe][gpu][hw]") {
  Rig rig;
  if (!rig.skip.empty()) {
    PP_SKIP(rig.skip);
  }
  rig.env.set("PP_FAKE_CL_FAIL", "clBuildProgram -11 1");  // the compute program builds, the memory one not
  GpuOptions o = only(true, true, false, false);
  o.dtypes = {"f32"};
  o.widths = {1};
  const GpuReport r = measure_device_isolated(0, o, kMeasureLimit);
  CHECK(r.status == Status::error);
  CHECK(starts_with(r.reason, "the memory kernels did not build (CL_BUILD_PROGRAM_FAILURE (-11)): "));
  REQUIRE(r.compute.size() == 1);
  INFO(r.compute[0].reason);
  check_trusted_or_documented(r.compute[0].status, r.compute[0].reason, r.compute[0].checked);
}

TEST_CASE("gpu: cl_probe, a result that differs from the host's is an error, for compute, memory and latency alike", "[cl_probe][gpu][hw]") {
  Rig rig;
  if (!rig.skip.empty()) {
    PP_SKIP(rig.skip);
  }
  rig.env.set("PP_FAKE_CL_CORRUPT", "1");
  GpuOptions o = tiny();
  o.dtypes = {"f32", "i8"};
  o.widths = {1};
  const GpuReport r = measure_device_isolated(0, o, kMeasureLimit);
  INFO(r.reason);
  CHECK(r.status == Status::ok);
  REQUIRE(r.compute.size() == 2);
  for (const GpuComputeResult& c : r.compute) {
    INFO(c.dtype << ": " << c.reason);
    CHECK(c.status == Status::error);
    CHECK(starts_with(c.reason, "wrong result: work-item 0 wrote "));
    CHECK_FALSE(c.checked);
  }
  int kernels = 0;
  for (const GpuMemoryResult& m : r.memory) {
    INFO(m.kernel << ": " << m.reason);
    if (is_transfer(m.kernel)) {
      // The writes are checked by a blocking read of the device's buffer, which the stand-in
      // corrupts; the timed reads are not blocking, so it leaves them alone.
      if (!measured_transfer(m)) continue;
      if (m.kernel.rfind("host_to_device", 0) == 0) {
        CHECK(m.status == Status::error);
        CHECK(starts_with(m.reason, "wrong result: byte 0 of the buffer holds "));
      } else {
        check_trusted_or_documented(m.status, m.reason, m.checked);
      }
      continue;
    }
    ++kernels;
    CHECK(m.status == Status::error);
    CHECK(starts_with(m.reason, "wrong result: "));
    CHECK_FALSE(m.checked);
  }
  CHECK(kernels == 4);
  REQUIRE(r.latency.size() == 2);
  for (const GpuLatencyResult& l : r.latency) {
    INFO(l.space << ": " << l.reason);
    CHECK(l.status == Status::error);
    CHECK(starts_with(l.reason, "wrong result: the chase ended at "));
    CHECK_FALSE(l.checked);
  }
  // Every read corrupted, the timed ones too: what the reads brought back is checked as well.
  rig.env.set("PP_FAKE_CL_CORRUPT", "all");
  const GpuReport t = measure_device_isolated(0, only(false, false, false, true), kMeasureLimit);
  INFO(t.reason);
  CHECK(t.status == Status::ok);
  REQUIRE(t.memory.size() == 4);
  for (const GpuMemoryResult& m : t.memory) {
    INFO(m.kernel << ": " << m.reason);
    if (!measured_transfer(m)) continue;
    CHECK(m.status == Status::error);
    CHECK(starts_with(m.reason, starts_with(m.kernel, "host_to_device") ? "wrong result: byte 0 of the buffer holds "
                                                                        : "wrong result: byte 0 read back holds "));
    CHECK_FALSE(m.checked);
  }
}

TEST_CASE("gpu: cl_probe, rates are the work done over the median time on the device's profiling clock", "[cl_probe][gpu][hw]") {
  Rig rig;
  if (!rig.skip.empty()) {
    PP_SKIP(rig.skip);
  }
  rig.env.set("PP_FAKE_CL_NS", std::to_string(kEventNs));
  GpuOptions o = synthetic_clock_options();
  o.dtypes = {"f32", "i32"};
  o.widths = {1, 2};
  const GpuReport r = measure_device_isolated(0, o, kMeasureLimit);
  INFO(r.reason);
  REQUIRE(r.status == Status::ok);
  // Every repetition took the same time: one sample per repetition, no spread, trusted.
  auto same_runs = [&](const Stats& s) {
    CHECK(s.samples == o.min_repetitions);
    CHECK(s.min == s.median);
    CHECK(s.max == s.median);
    CHECK(s.spread == 0);
  };
  // Compute: operations per iteration x iterations x work-items over the time, so the iteration
  // count it implies is the same whole number for every type and width.
  REQUIRE(r.compute.size() == 4);
  std::vector<double> iterations;
  for (const GpuComputeResult& c : r.compute) {
    INFO(c.dtype << " x" << c.width << ": " << c.reason);
    CHECK(c.status == Status::ok);
    same_runs(c.gops_stats);
    const ComputeKernel k = compute_kernel(*find_dtype(c.dtype), c.width);
    iterations.push_back(c.gops * 1e9 * kEventSeconds / (k.ops_per_iteration() * double(c.work_items)));
  }
  for (double it : iterations) {
    INFO("iterations implied: " << it);
    CHECK(it >= 1);
    CHECK(it == Approx(std::round(it)).epsilon(1e-9));
    CHECK(it == Approx(iterations[0]).epsilon(1e-9));
  }
  // Global memory: the buffer's bytes over the time; a copy counts them read and written.
  for (int w : o.widths) {
    INFO("width " << w);
    for (const char* kind : {"read", "write", "copy"}) {
      const GpuMemoryResult* m = find_memory(r, kind, w);
      REQUIRE(m != nullptr);
      INFO(kind << ": " << m->reason);
      CHECK(m->status == Status::ok);
      same_runs(m->gbps_stats);
      const double moved = (std::string(kind) == "copy" ? 2.0 : 1.0) * double(m->bytes);
      CHECK(m->gbps == Approx(moved * 1e-9 / kEventSeconds).epsilon(1e-9));
    }
    const GpuMemoryResult* local = find_memory(r, "local_read", w);
    REQUIRE(local != nullptr);
    CHECK(local->status == Status::ok);
    same_runs(local->gbps_stats);
  }
  // Transfers: the bytes copied over the time, pageable and pinned alike.
  for (const char* kind : {"host_to_device", "device_to_host", "host_to_device_pinned", "device_to_host_pinned"}) {
    const GpuMemoryResult* m = find_memory(r, kind, 0);
    REQUIRE(m != nullptr);
    INFO(kind << ": " << m->reason);
    if (!measured_transfer(*m)) continue;
    CHECK(m->status == Status::ok);
    same_runs(m->gbps_stats);
    CHECK(m->gbps == Approx(double(m->bytes) * 1e-9 / kEventSeconds).epsilon(1e-9));
  }
  // Latency: N and 2N steps took the same time, so there is no time per load to report.
  REQUIRE(r.latency.size() == 2);
  for (const GpuLatencyResult& l : r.latency) {
    INFO(l.space << ": " << l.reason);
    CHECK(l.checked);
    CHECK(l.ns == 0);
    CHECK(l.status == Status::mistrusted);
    CHECK(l.reason == "N and 2N steps did not differ in time");
  }
  // Compute, exactly: every run lasts kIterationNs per iteration of its loop, so whatever loop length
  // was chosen, the rate is the operations per iteration x work-items over kIterationNs.
  time_compute_by_iterations(rig.env);
  GpuOptions oc = o;
  oc.memory = oc.latency = oc.transfer = false;
  const GpuReport rc = measure_device_isolated(0, oc, kMeasureLimit);
  INFO(rc.reason);
  REQUIRE(rc.compute.size() == 4);
  for (const GpuComputeResult& c : rc.compute) {
    INFO(c.dtype << " x" << c.width << " per iteration: " << c.reason);
    CHECK(c.status == Status::ok);
    same_runs(c.gops_stats);
    CHECK(c.gops == Approx(rate_by_iterations(c)).epsilon(1e-9));
  }
}

TEST_CASE("gpu: cl_probe, a latency is the time of 2N steps less that of N, per step", "[cl_probe][gpu][hw]") {
  Rig rig;
  if (!rig.skip.empty()) {
    PP_SKIP(rig.skip);
  }
  // A fixed 1 ms launch plus 50 ns per step: the launch cancels and 50 ns per load remains.
  rig.env.set("PP_FAKE_CL_NS", "1000000");
  rig.env.set("PP_FAKE_CL_PER_ARG2", "50");
  GpuOptions o = synthetic_clock_options();
  o.compute = o.memory = o.transfer = false;
  const GpuReport r = measure_device_isolated(0, o, kMeasureLimit);
  INFO(r.reason);
  REQUIRE(r.status == Status::ok);
  REQUIRE(r.latency.size() == 2);
  for (const GpuLatencyResult& l : r.latency) {
    INFO(l.space << ": " << l.reason);
    CHECK(l.status == Status::ok);
    CHECK(l.checked);
    CHECK(l.ns == Approx(50).epsilon(1e-6));
    CHECK(l.ns_stats.samples == o.min_repetitions);
    CHECK(l.ns_stats.min == Approx(50).epsilon(1e-6));
    CHECK(l.ns_stats.max == Approx(50).epsilon(1e-6));
  }
}

TEST_CASE("gpu: cl_probe, a latency's slow repetitions are disturbances: the figure stays exact and ok", "[cl_probe][gpu][hw]") {
  Rig rig;
  if (!rig.skip.empty()) {
    PP_SKIP(rig.skip);
  }
  // 1 ms launch plus 50 ns per step, and every third event 3 ms: slower than any run of either
  // length, so some of the N and 2N repetitions are slow and the fastest of each are not.
  rig.env.set("PP_FAKE_CL_NS", "1000000");
  rig.env.set("PP_FAKE_CL_PER_ARG2", "50");
  rig.env.set("PP_FAKE_CL_ODD_EVERY", "3");
  rig.env.set("PP_FAKE_CL_ODD_NS", "3000000");
  GpuOptions o = synthetic_clock_options();
  o.compute = o.memory = o.transfer = false;
  o.min_repetitions = o.max_repetitions = 5;
  const GpuReport r = measure_device_isolated(0, o, kMeasureLimit);
  INFO(r.reason);
  REQUIRE(r.status == Status::ok);
  REQUIRE(r.latency.size() == 2);
  for (const GpuLatencyResult& l : r.latency) {
    INFO(l.space << ": " << l.reason);
    CHECK(l.status == Status::ok);
    CHECK(l.reason.empty());
    CHECK(l.checked);
    CHECK(l.ns == Approx(50).epsilon(1e-6));
  }
}

TEST_CASE("gpu: cl_probe, repetitions go on until the time asked for was timed, within the counts asked for", "[cl_probe][gpu][hw]") {
  Rig rig;
  if (!rig.skip.empty()) {
    PP_SKIP(rig.skip);
  }
  rig.env.set("PP_FAKE_CL_NS", std::to_string(kEventNs));
  GpuOptions o = synthetic_clock_options();
  o.compute = o.memory = o.latency = false;
  o.min_repetitions = 2;
  o.max_repetitions = 12;
  // Minimum total time asked for, and the repetitions of kEventSeconds each that it takes.
  for (const auto& [total, want] : std::vector<std::pair<double, int>>{{0.0, 2}, {0.009, 5}, {1.0, 12}}) {
    o.min_total_seconds = total;
    const GpuReport r = measure_device_isolated(0, o, kMeasureLimit);
    INFO("min_total_seconds " << total << ": " << r.reason);
    REQUIRE(r.memory.size() == 4);
    for (const GpuMemoryResult& m : r.memory) {
      INFO(m.kernel << ": " << m.reason);
      if (!measured_transfer(m)) continue;
      CHECK(m.gbps_stats.samples == want);
    }
  }
}

TEST_CASE("gpu: cl_probe, a best repetition far faster than the median makes a rate mistrusted, a slow one does not", "[cl_probe][gpu][hw]") {
  Rig rig;
  if (!rig.skip.empty()) {
    PP_SKIP(rig.skip);
  }
  // Transfers only: one untimed run and five timed ones per row, six events: every third event odd
  // puts two odd runs among each row's five.
  rig.env.set("PP_FAKE_CL_NS", std::to_string(kEventNs));
  rig.env.set("PP_FAKE_CL_ODD_EVERY", "3");
  GpuOptions o = synthetic_clock_options();
  o.compute = o.memory = o.latency = false;
  o.min_repetitions = o.max_repetitions = 5;
  SECTION("two runs twice as fast: mistrusted, the best 100% faster than the median") {
    rig.env.set("PP_FAKE_CL_ODD_NS", std::to_string(kEventNs / 2));
    const GpuReport r = measure_device_isolated(0, o, kMeasureLimit);
    INFO(r.reason);
    REQUIRE(r.memory.size() == 4);
    for (const GpuMemoryResult& m : r.memory) {
      INFO(m.kernel << ": " << m.reason);
      if (!measured_transfer(m)) continue;
      CHECK(m.status == Status::mistrusted);
      CHECK(m.reason == "repetitions disagree: the best ran 100.0% faster than the median");
      CHECK(m.gbps == Approx(double(m.bytes) * 1e-9 / kEventSeconds));  // the median, not the best
      CHECK(m.gbps_stats.max == Approx(2 * m.gbps));
    }
  }
  SECTION("two runs twice as slow: the median and the best agree, ok") {
    rig.env.set("PP_FAKE_CL_ODD_NS", std::to_string(kEventNs * 2));
    const GpuReport r = measure_device_isolated(0, o, kMeasureLimit);
    INFO(r.reason);
    REQUIRE(r.memory.size() == 4);
    for (const GpuMemoryResult& m : r.memory) {
      INFO(m.kernel << ": " << m.reason);
      if (!measured_transfer(m)) continue;
      CHECK(m.status == Status::ok);
      CHECK(m.reason.empty());
      CHECK(m.gbps == Approx(double(m.bytes) * 1e-9 / kEventSeconds));
      CHECK(m.gbps_stats.min == Approx(m.gbps / 2));
    }
  }
}

TEST_CASE("gpu: cl_probe, a profiling clock that reports no time leaves no rate and makes the row mistrusted", "[cl_probe][gpu][hw]") {
  Rig rig;
  if (!rig.skip.empty()) {
    PP_SKIP(rig.skip);
  }
  rig.env.set("PP_FAKE_CL_NS", "0");
  GpuOptions o = synthetic_clock_options();
  o.compute = o.memory = o.latency = false;
  const GpuReport r = measure_device_isolated(0, o, kMeasureLimit);
  INFO(r.reason);
  CHECK(r.status == Status::ok);
  REQUIRE(r.memory.size() == 4);
  for (const GpuMemoryResult& m : r.memory) {
    INFO(m.kernel << ": " << m.reason);
    if (!measured_transfer(m)) continue;
    CHECK(m.status == Status::mistrusted);
    CHECK(m.reason == "the device's profiling clock reported no time");
    CHECK(m.gbps_stats.samples == 0);
    CHECK(m.gbps == 0);
  }
}

TEST_CASE("gpu: cl_probe, a compute rate beyond the device's own bound is mistrusted", "[cl_probe][gpu][hw]") {
  Rig rig;
  if (!rig.skip.empty()) {
    PP_SKIP(rig.skip);
  }
  GpuOptions o = only(true, false, false, false);
  o.dtypes = {"f32"};
  o.widths = {1};
  SECTION("a driver that reports no clock: a bound of 0") {
    rig.env.set("PP_FAKE_CL_CLOCK", "0");
    const GpuReport r = measure_device_isolated(0, o, kMeasureLimit);
    INFO(r.reason);
    CHECK(r.device.clock_mhz == 0);
    REQUIRE(r.compute.size() == 1);
    const GpuComputeResult& c = r.compute[0];
    INFO(c.reason);
    CHECK(c.checked);
    CHECK(c.gops > 0);
    CHECK(c.bound_gops == 0);
    CHECK(c.status == Status::mistrusted);
    CHECK(contains(c.reason, "is beyond the device's own bound"));
  }
  SECTION("a rate twice its bound is mistrusted, half of it is not") {
    // An exact rate, and a work-group size of 1: the bound, 2 x clock x compute units, can be put
    // below the rate or above it by the clock the device reports.
    time_compute_by_iterations(rig.env);
    rig.env.set("PP_FAKE_CL_MAX_WG", "1");
    o = synthetic_clock_options();
    o.compute = true;
    o.memory = o.latency = o.transfer = false;
    o.dtypes = {"f32"};
    o.widths = {1};
    const auto devices = listed();
    REQUIRE(devices);
    REQUIRE_FALSE(devices->empty());
    const GpuDevice& d = devices->front();
    REQUIRE(d.max_work_group_size == 1);
    GpuComputeResult row;
    row.dtype = "f32";
    row.width = 1;
    row.work_items = expected_compute_items(d);
    const double rate = rate_by_iterations(row), per_mhz = 2e-3 * std::max(1, d.compute_units);
    for (const bool beyond : {true, false}) {
      const double mhz = beyond ? std::floor(rate / per_mhz / 2) : std::ceil(rate / per_mhz * 2);
      REQUIRE(mhz >= 1);
      rig.env.set("PP_FAKE_CL_CLOCK", std::to_string(uint64_t(mhz)));
      const GpuReport r = measure_device_isolated(0, o, kMeasureLimit);
      INFO("clock " << mhz << " MHz: " << r.reason);
      REQUIRE(r.compute.size() == 1);
      const GpuComputeResult& c = r.compute[0];
      INFO(c.reason);
      CHECK(c.checked);
      CHECK(c.work_items == row.work_items);
      CHECK(c.gops == Approx(rate).epsilon(1e-9));
      CHECK(c.bound_gops == Approx(expected_bound(r.device, false)));
      if (beyond) {
        CHECK(c.bound_gops <= rate / 2);
        CHECK(c.status == Status::mistrusted);
        CHECK(contains(c.reason, "is beyond the device's own bound"));
      } else {
        CHECK(c.bound_gops >= rate * 2);
        CHECK(c.status == Status::ok);
        CHECK(c.reason.empty());
      }
    }
  }
}

TEST_CASE("gpu: cl_probe, a type whose extension the device does not offer is skipped, naming it", "[cl_probe][gpu][hw]") {
  Rig rig;
  if (!rig.skip.empty()) {
    PP_SKIP(rig.skip);
  }
  rig.env.set("PP_FAKE_CL_HIDE", "cl_khr_fp64 cl_khr_fp16 cl_khr_integer_dot_product");
  GpuOptions o = only(true, false, false, false);
  o.dtypes = {"f64", "f16", "u8i8dot"};
  o.widths = {1, 2};
  const GpuReport r = measure_device_isolated(0, o, kMeasureLimit);
  INFO(r.reason);
  CHECK(r.status == Status::ok);
  CHECK_FALSE(r.device.fp64);
  CHECK_FALSE(r.device.fp16);
  CHECK_FALSE(has_extension(r.device, "cl_khr_fp64"));
  REQUIRE(r.compute.size() == 5);
  for (const GpuComputeResult& c : r.compute) {
    INFO(c.dtype << " x" << c.width);
    CHECK(c.status == Status::skipped);
    CHECK(c.reason == std::string("the device does not offer ") + find_dtype(c.dtype)->extension);
    CHECK_FALSE(c.checked);
    if (c.dtype == "u8i8dot") CHECK(c.width == kDotWidth);
  }
}

TEST_CASE("gpu: cl_probe, on a GPU, GPU global sizes, and the coalesced memory kernels check out", "[cl_probe][gpu][hw]") {
  Rig rig;
  if (!rig.skip.empty()) {
    PP_SKIP(rig.skip);
  }
  rig.env.set("PP_FAKE_CL_TYPE", "gpu");
  GpuOptions o = only(true, true, false, false);
  o.dtypes = {"f32"};
  o.widths = {1, 4};
  const GpuReport r = measure_device_isolated(0, o, kMeasureLimit);
  INFO(r.reason);
  REQUIRE(r.status == Status::ok);
  CHECK(r.device.type == "gpu");
  REQUIRE(r.compute.size() == 2);
  for (const GpuComputeResult& c : r.compute) {
    INFO("x" << c.width << ": " << c.reason);
    check_trusted_or_documented(c.status, c.reason, c.checked);
    CHECK(c.work_items == expected_compute_items(r.device));
  }
  REQUIRE(r.memory.size() == 8);
  for (const GpuMemoryResult& m : r.memory) {
    INFO(m.kernel << " x" << m.width << ": " << m.reason);
    check_trusted_or_documented(m.status, m.reason, m.checked);
  }
}

TEST_CASE("gpu: cl_probe, buffers are no larger than half the largest allocation or an eighth of global memory, "
          "and at least 1 MiB", "[cl_probe][gpu][hw]") {
  Rig rig;
  if (!rig.skip.empty()) {
    PP_SKIP(rig.skip);
  }
  GpuOptions o = only(false, false, true, true);
  o.buffer_bytes = 16ull << 20;
  uint64_t want = 0;
  SECTION("half the largest allocation") {
    rig.env.set("PP_FAKE_CL_MAX_ALLOC", std::to_string(6ull << 20));
    rig.env.set("PP_FAKE_CL_GLOBAL_MEM", std::to_string(1ull << 30));
    want = 3ull << 20;
  }
  SECTION("an eighth of global memory") {
    rig.env.set("PP_FAKE_CL_MAX_ALLOC", std::to_string(1ull << 30));
    rig.env.set("PP_FAKE_CL_GLOBAL_MEM", std::to_string(16ull << 20));
    want = 2ull << 20;
  }
  SECTION("never below 1 MiB") {
    rig.env.set("PP_FAKE_CL_MAX_ALLOC", std::to_string(1ull << 20));
    rig.env.set("PP_FAKE_CL_GLOBAL_MEM", std::to_string(4ull << 20));
    want = 1ull << 20;
  }
  const GpuReport r = measure_device_isolated(0, o, kMeasureLimit);
  INFO(r.reason);
  REQUIRE(r.status == Status::ok);
  REQUIRE(r.memory.size() == 4);
  for (const GpuMemoryResult& m : r.memory) {
    INFO(m.kernel);
    CHECK(m.bytes == want);
  }
  const GpuLatencyResult* global = find_latency(r, "global");
  REQUIRE(global != nullptr);
  CHECK(global->bytes == want);
  CHECK(global->checked);
}
