#include "gpu/cl_probe.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <memory>
#include <sstream>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "gpu/cl_kernels.hpp"
#include "gpu/opencl_api.hpp"
#include "harness/stats.hpp"
#include "memory/permutation.hpp"

namespace peakprobe::gpu {
namespace {

// A runtime failure with the call that failed; caught per figure (or per device when set-up fails).
struct ClError {
  std::string message;
};

void check(cl_int status, const char* what) {
  if (status != CL_SUCCESS) throw ClError{fmt::format("{} failed: {}", what, cl_status_name(status))};
}

std::string device_string(const ClApi& api, cl_device_id d, cl_device_info param) {
  size_t size = 0;
  if (api.GetDeviceInfo(d, param, 0, nullptr, &size) != CL_SUCCESS || size == 0) return "";
  std::string s(size, '\0');
  if (api.GetDeviceInfo(d, param, size, s.data(), nullptr) != CL_SUCCESS) return "";
  while (!s.empty() && (s.back() == '\0' || s.back() == ' ')) s.pop_back();
  return s;
}

template <typename T>
T device_value(const ClApi& api, cl_device_id d, cl_device_info param) {
  T v{};
  if (api.GetDeviceInfo(d, param, sizeof(T), &v, nullptr) != CL_SUCCESS) return T{};
  return v;
}

std::string platform_string(const ClApi& api, cl_platform_id p, cl_platform_info param) {
  size_t size = 0;
  if (api.GetPlatformInfo(p, param, 0, nullptr, &size) != CL_SUCCESS || size == 0) return "";
  std::string s(size, '\0');
  if (api.GetPlatformInfo(p, param, size, s.data(), nullptr) != CL_SUCCESS) return "";
  while (!s.empty() && (s.back() == '\0' || s.back() == ' ')) s.pop_back();
  return s;
}

struct Found {
  GpuDevice info;
  cl_device_id id = nullptr;
};

Expected<std::vector<Found>> enumerate(const ClApi& api) {
  cl_uint np = 0;
  cl_int st = api.GetPlatformIDs(0, nullptr, &np);
  std::vector<Found> out;
  if (st == -1001 /* CL_PLATFORM_NOT_FOUND_KHR: a loader without drivers */ || (st == CL_SUCCESS && np == 0))
    return out;
  if (st != CL_SUCCESS) return make_error("clGetPlatformIDs failed: " + cl_status_name(st));
  std::vector<cl_platform_id> platforms(np);
  api.GetPlatformIDs(np, platforms.data(), nullptr);
  for (cl_platform_id p : platforms) {
    cl_uint nd = 0;
    if (api.GetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 0, nullptr, &nd) != CL_SUCCESS || nd == 0) continue;
    std::vector<cl_device_id> devices(nd);
    api.GetDeviceIDs(p, CL_DEVICE_TYPE_ALL, nd, devices.data(), nullptr);
    for (cl_device_id d : devices) {
      Found f;
      f.id = d;
      GpuDevice& g = f.info;
      g.index = int(out.size());
      g.platform = platform_string(api, p, CL_PLATFORM_NAME);
      g.name = device_string(api, d, CL_DEVICE_NAME);
      g.vendor = device_string(api, d, CL_DEVICE_VENDOR);
      g.driver_version = device_string(api, d, CL_DRIVER_VERSION);
      g.device_version = device_string(api, d, CL_DEVICE_VERSION);
      g.opencl_c_version = device_string(api, d, CL_DEVICE_OPENCL_C_VERSION);
      const auto type = device_value<cl_device_type>(api, d, CL_DEVICE_TYPE);
      g.type = type & CL_DEVICE_TYPE_GPU ? "gpu" : type & CL_DEVICE_TYPE_CPU ? "cpu"
             : type & CL_DEVICE_TYPE_ACCELERATOR ? "accelerator" : "other";
      g.compute_units = int(device_value<cl_uint>(api, d, CL_DEVICE_MAX_COMPUTE_UNITS));
      g.clock_mhz = int(device_value<cl_uint>(api, d, CL_DEVICE_MAX_CLOCK_FREQUENCY));
      g.global_mem_bytes = device_value<cl_ulong>(api, d, CL_DEVICE_GLOBAL_MEM_SIZE);
      g.local_mem_bytes = device_value<cl_ulong>(api, d, CL_DEVICE_LOCAL_MEM_SIZE);
      g.max_alloc_bytes = device_value<cl_ulong>(api, d, CL_DEVICE_MAX_MEM_ALLOC_SIZE);
      g.max_work_group_size = device_value<size_t>(api, d, CL_DEVICE_MAX_WORK_GROUP_SIZE);
      std::istringstream ext(device_string(api, d, CL_DEVICE_EXTENSIONS));
      for (std::string e; ext >> e;) g.extensions.push_back(e);
      std::sort(g.extensions.begin(), g.extensions.end());
      auto has = [&](const char* e) { return std::binary_search(g.extensions.begin(), g.extensions.end(), std::string(e)); };
      g.fp16 = has("cl_khr_fp16");
      g.fp64 = has("cl_khr_fp64");
      out.push_back(std::move(f));
    }
  }
  return out;
}


struct Session {
  const ClApi& api;
  GpuDevice dev;
  cl_device_id id;
  cl_context ctx = nullptr;
  cl_command_queue queue = nullptr;
  std::vector<cl_program> programs;
  std::vector<cl_mem> buffers;
  std::vector<cl_kernel> kernels;

  Session(const ClApi& a, const Found& f) : api(a), dev(f.info), id(f.id) {
    cl_int st = CL_SUCCESS;
    ctx = api.CreateContext(nullptr, 1, &id, nullptr, nullptr, &st);
    check(st, "clCreateContext");
    queue = api.CreateCommandQueue(ctx, id, CL_QUEUE_PROFILING_ENABLE, &st);
    check(st, "clCreateCommandQueue");
  }
  ~Session() {
    for (cl_kernel k : kernels) api.ReleaseKernel(k);
    for (cl_program p : programs) api.ReleaseProgram(p);
    for (cl_mem m : buffers) api.ReleaseMemObject(m);
    if (queue) api.ReleaseCommandQueue(queue);
    if (ctx) api.ReleaseContext(ctx);
  }
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  bool is_gpu() const { return dev.type == "gpu"; }

  cl_program build(const std::string& source, const std::string& what, const std::string& options = "") {
    cl_int st = CL_SUCCESS;
    const char* text = source.c_str();
    const size_t len = source.size();
    cl_program p = api.CreateProgramWithSource(ctx, 1, &text, &len, &st);
    check(st, "clCreateProgramWithSource");
    programs.push_back(p);
    // -w: the runtime's compiler prints its warnings to the terminal; a failed build still returns its log.
    const std::string flags = options.empty() ? "-w" : "-w " + options;
    st = api.BuildProgram(p, 1, &id, flags.c_str(), nullptr, nullptr);
    if (st != CL_SUCCESS) {
      size_t size = 0;
      api.GetProgramBuildInfo(p, id, CL_PROGRAM_BUILD_LOG, 0, nullptr, &size);
      std::string log(size, '\0');
      if (size) api.GetProgramBuildInfo(p, id, CL_PROGRAM_BUILD_LOG, size, log.data(), nullptr);
      while (!log.empty() && (log.back() == '\0' || log.back() == '\n')) log.pop_back();
      if (log.size() > 2000) log = log.substr(0, 2000) + " ...";
      throw ClError{fmt::format("the {} kernels did not build ({}): {}", what, cl_status_name(st),
                                log.empty() ? "no build log" : log)};
    }
    return p;
  }
  cl_kernel kernel(cl_program p, const std::string& name) {
    cl_int st = CL_SUCCESS;
    cl_kernel k = api.CreateKernel(p, name.c_str(), &st);
    check(st, ("clCreateKernel " + name).c_str());
    kernels.push_back(k);
    return k;
  }
  cl_mem buffer(uint64_t bytes, cl_mem_flags flags = CL_MEM_READ_WRITE) {
    cl_int st = CL_SUCCESS;
    cl_mem m = api.CreateBuffer(ctx, flags, bytes, nullptr, &st);
    check(st, fmt::format("clCreateBuffer of {} bytes", bytes).c_str());
    buffers.push_back(m);
    return m;
  }
  void release(cl_mem m) {
    api.ReleaseMemObject(m);
    std::erase(buffers, m);
  }
  template <typename T>
  void arg(cl_kernel k, cl_uint i, const T& v) {
    check(api.SetKernelArg(k, i, sizeof(T), &v), "clSetKernelArg");
  }
  void write(cl_mem m, uint64_t offset, uint64_t bytes, const void* src) {
    check(api.EnqueueWriteBuffer(queue, m, CL_TRUE, offset, bytes, src, 0, nullptr, nullptr), "clEnqueueWriteBuffer");
  }
  void read(cl_mem m, uint64_t offset, uint64_t bytes, void* dst) {
    check(api.EnqueueReadBuffer(queue, m, CL_TRUE, offset, bytes, dst, 0, nullptr, nullptr), "clEnqueueReadBuffer");
  }
  // Seconds between the event's start and end on the device's own clock.
  double event_seconds(cl_event e) {
    check(api.WaitForEvents(1, &e), "clWaitForEvents");
    cl_ulong t0 = 0, t1 = 0;
    cl_int st = api.GetEventProfilingInfo(e, CL_PROFILING_COMMAND_START, sizeof(t0), &t0, nullptr);
    if (st == CL_SUCCESS) st = api.GetEventProfilingInfo(e, CL_PROFILING_COMMAND_END, sizeof(t1), &t1, nullptr);
    api.ReleaseEvent(e);
    check(st, "clGetEventProfilingInfo");
    return t1 > t0 ? double(t1 - t0) * 1e-9 : 0.0;
  }
  double run(cl_kernel k, size_t global, size_t local) {
    cl_event e = nullptr;
    check(api.EnqueueNDRangeKernel(queue, k, 1, nullptr, &global, local ? &local : nullptr, 0, nullptr, &e),
          "clEnqueueNDRangeKernel");
    return event_seconds(e);
  }
  // The work-group size for a kernel: 256 on a GPU, 64 elsewhere (within what the kernel allows).
  size_t local_size(cl_kernel k) {
    size_t max = 0;
    api.GetKernelWorkGroupInfo(k, id, CL_KERNEL_WORK_GROUP_SIZE, sizeof(max), &max, nullptr);
    // A CPU runtime runs a work-group on one thread: several groups per compute unit keep every
    // core busy (left to itself, PoCL made one group of the whole range and used one core).
    size_t l = is_gpu() ? 256 : 64;
    while (max && l > max) l /= 2;
    return std::max<size_t>(1, l);
  }
};

// Repetitions of one timed operation: at least min_repetitions and min_total_seconds, at most
// max_repetitions; the first, untimed run already happened.
template <typename F>
std::vector<double> repeat(const GpuOptions& o, F&& once) {
  std::vector<double> t;
  double total = 0;
  while (int(t.size()) < o.max_repetitions && (int(t.size()) < o.min_repetitions || total < o.min_total_seconds)) {
    t.push_back(once());
    total += t.back();
  }
  return t;
}

// Rate statistics (per second) from durations: the median duration gives the figure.
Stats rate_stats(const std::vector<double>& seconds, double amount) {
  std::vector<double> r;
  for (double s : seconds)
    if (s > 0) r.push_back(amount / s);
  return summarize(r);
}

// A figure whose kernel gave the wrong result (any result row: compute, memory, latency).
template <typename Row>
void wrong_result(Row& r, std::string why) {
  r.checked = false;
  r.status = Status::error;
  r.reason = "wrong result: " + std::move(why);
}

// ok, or mistrusted when the repetitions disagree. `s` holds rates: the largest is the best run.
void judge_spread(const Stats& s, Status& status, std::string& reason) {
  if (status != Status::ok) return;
  if (s.samples == 0 || s.min <= 0) {
    status = Status::mistrusted;
    reason = "the device's profiling clock reported no time";
  } else if (s.max / s.median - 1 > kGpuRepeatLimit) {
    status = Status::mistrusted;
    reason = fmt::format("repetitions disagree: the best ran {:.1f}% faster than the median", 100 * (s.max / s.median - 1));
  }
}

// The loop length (kernel argument `arg`) that makes one run last about kernel_seconds, grown from
// `first` up to `most`; the first runs also warm the device.
cl_int grow_iterations(Session& s, const GpuOptions& o, cl_kernel k, cl_uint arg, size_t global, size_t local,
                       cl_int first, cl_int most) {
  cl_int iters = first;
  for (int round = 0; round < 12; ++round) {
    s.arg(k, arg, iters);
    const double t = s.run(k, global, local);
    if (t >= o.kernel_seconds * 0.7 || iters >= most) break;
    const double scale = t > 0 ? std::clamp(o.kernel_seconds / t, 1.5, 16.0) : 16.0;
    iters = cl_int(std::min<double>(double(iters) * scale, double(most)));
  }
  s.arg(k, arg, iters);
  return iters;
}

size_t compute_global_size(const Session& s) {
  const size_t cu = size_t(std::max(1, s.dev.compute_units));
  if (s.is_gpu()) return cu * std::clamp<size_t>(s.dev.max_work_group_size, 256, 1024) * 2;
  return cu * 1024;
}

void measure_compute(Session& s, const GpuOptions& o, GpuReport& rep) {
  for (const ClDtype& d : compute_dtypes()) {
    if (!o.dtypes.empty() && std::find(o.dtypes.begin(), o.dtypes.end(), d.name) == o.dtypes.end()) continue;
    const std::vector<int> widths = widths_for(d, o.widths);
    auto row = [&](int w) {
      GpuComputeResult r;
      r.dtype = d.name;
      r.width = w;
      r.integer = d.integer;
      return r;
    };
    const bool offered = !std::strlen(d.extension) ||
                         std::binary_search(s.dev.extensions.begin(), s.dev.extensions.end(), std::string(d.extension));
    const bool emulated = !offered && d.is_dot() && o.emulate_integer_dot;
    if (!offered && !emulated) {
      for (int w : widths) {
        GpuComputeResult r = row(w);
        r.status = Status::skipped;
        r.reason = fmt::format("the device does not offer {}", d.extension);
        rep.compute.push_back(r);
      }
      continue;
    }
    // One program per type, a kernel per width: one build each.
    std::vector<ComputeKernel> ks;
    for (int w : widths) ks.push_back(compute_kernel(d, w));
    std::string source = compute_program_source(ks);
    if (emulated) source = fmt::format("#define {} 1\n", kEmulateDotDefine) + source;
    source += o.extra_compute_source;
    // A dot product: the OpenCL C version and input form the device reports (dot_build_options).
    const std::string options =
        d.is_dot() && !emulated
            ? dot_build_options(device_value<cl_bitfield>(s.api, s.id, kDotCapabilitiesQuery), s.dev.device_version,
                                s.dev.opencl_c_version)
            : std::string();
    cl_program prog = nullptr;
    try {
      prog = s.build(source, d.name, options);
    } catch (const ClError& e) {
      for (int w : widths) {
        GpuComputeResult r = row(w);
        r.status = Status::error;
        r.reason = e.message;
        rep.compute.push_back(r);
      }
      continue;
    }
    for (size_t i = 0; i < widths.size(); ++i) {
      const int w = widths[i];
      const ComputeKernel& k = ks[i];
      GpuComputeResult r = row(w);
      try {
        cl_kernel kern = s.kernel(prog, fmt::format("peak_{}", w));
        const size_t local = s.local_size(kern);
        size_t global = compute_global_size(s);
        if (local) global = (global + local - 1) / local * local;
        r.work_items = global;
        cl_mem out = s.buffer(global * 4, CL_MEM_WRITE_ONLY);
        s.arg(kern, 0, out);
        s.arg(kern, 1, kComputeA);
        s.arg(kern, 2, kComputeB);
        s.arg(kern, 3, kComputeIntA);
        s.arg(kern, 4, kComputeIntB);
        const cl_int iters = grow_iterations(s, o, kern, 5, global, local, 8, 1 << 22);
        const double ops = k.ops_per_iteration() * double(iters) * double(global);
        const std::vector<double> times = repeat(o, [&] { return s.run(kern, global, local); });
        r.gops_stats = rate_stats(times, ops * 1e-9);
        r.gops = r.gops_stats.median;
        // Every work-item's checksum depends on gid & 63: check those, and the last work-item.
        std::vector<uint32_t> got(global);
        s.read(out, 0, global * 4, got.data());
        r.checked = true;
        for (uint64_t gid : {uint64_t(0), uint64_t(1), uint64_t(37), uint64_t(63), uint64_t(global - 1)}) {
          const uint32_t want = compute_reference(k, gid, kComputeA, kComputeB, kComputeIntA, kComputeIntB, iters);
          if (gid < global && got[gid] != want) {
            wrong_result(r, fmt::format("work-item {} wrote {:#010x}, the host computes {:#010x}", gid,
                                   got[gid], want));
            break;
          }
        }
        s.release(out);
        // One multiply-add (2 operations), or one dot product (8), per lane and cycle.
        r.bound_gops = (d.is_dot() ? 8.0 : 2.0) * s.dev.clock_mhz * 1e-3 * std::max(1, s.dev.compute_units) *
                       double(std::max<uint64_t>(1, s.dev.max_work_group_size));
        if (r.status == Status::ok && r.gops > r.bound_gops) {
          r.status = Status::mistrusted;
          r.reason = fmt::format("{:.0f} G/s is beyond the device's own bound ({:.0f}: clock x compute units x work-group size x {})",
                                 r.gops, r.bound_gops, d.is_dot() ? 8 : 2);
        }
        judge_spread(r.gops_stats, r.status, r.reason);
        if (emulated && r.status != Status::error)
          r.reason = (r.reason.empty() ? "" : r.reason + "; ") +
                     fmt::format("emulated with integer arithmetic (tests only): the device does not offer {}", d.extension);
      } catch (const ClError& e) {
        r.status = Status::error;
        r.reason = e.message;
      }
      rep.compute.push_back(r);
    }
  }
}

uint64_t buffer_bytes(const Session& s, const GpuOptions& o) {
  uint64_t b = o.buffer_bytes ? o.buffer_bytes : (s.is_gpu() ? (1ull << 30) : (256ull << 20));
  if (s.dev.max_alloc_bytes) b = std::min(b, s.dev.max_alloc_bytes / 2);
  if (s.dev.global_mem_bytes) b = std::min(b, s.dev.global_mem_bytes / 8);
  return std::max<uint64_t>(b, 1 << 20);
}

void measure_memory(Session& s, const GpuOptions& o, GpuReport& rep, cl_program prog) {
  const size_t cu = size_t(std::max(1, s.dev.compute_units));
  const size_t global = s.is_gpu() ? cu * 2048 : cu * 256;
  const uint64_t want = buffer_bytes(s, o);
  const std::vector<int> widths = o.widths.empty() ? vector_widths() : o.widths;
  const int widest = *std::max_element(widths.begin(), widths.end());
  // Every width moves the same buffer: whole vectors of the widest width for every work-item.
  const uint64_t per_item = std::max<uint64_t>(1, want / (uint64_t(global) * 4 * widest));
  const uint64_t bytes = per_item * global * 4 * uint64_t(widest);
  cl_mem in = nullptr, out = nullptr, sums = nullptr;
  try {
    in = s.buffer(bytes, CL_MEM_READ_WRITE);
    out = s.buffer(bytes, CL_MEM_READ_WRITE);
    sums = s.buffer(global * 4, CL_MEM_WRITE_ONLY);
    std::vector<float> fill(bytes / 4);
    for (size_t i = 0; i < fill.size(); ++i) fill[i] = read_value(i);
    s.write(in, 0, bytes, fill.data());
  } catch (const ClError& e) {
    // Without its buffers no memory kernel runs: each row says why, and the latency and transfer
    // sections after this one are still measured (the Session releases what was made).
    for (const char* kind : {"read", "write", "copy", "local_read"})
      for (int w : widths) {
        GpuMemoryResult r;
        r.kernel = kind;
        r.width = w;
        r.bytes = std::string(kind) == "local_read" ? uint64_t(kLocalFloats) * 4 : bytes;
        r.status = Status::error;
        r.reason = e.message;
        rep.memory.push_back(r);
      }
    return;
  }
  for (const char* kind : {"read", "write", "copy"}) {
    for (int w : widths) {
      GpuMemoryResult r;
      r.kernel = kind;
      r.width = w;
      r.bytes = bytes;
      try {
        cl_kernel k = s.kernel(prog, fmt::format("{}_{}", kind, w));
        const cl_int items = cl_int(per_item * uint64_t(widest / w));
        // Coalesced on a GPU (neighbouring work-items, neighbouring vectors: item_stride 1, step the
        // global size); blocked on a CPU, where one thread runs a work-item's whole loop and a
        // stride of the global size would touch a new page at every load.
        const cl_ulong item_stride = s.is_gpu() ? 1 : cl_ulong(items), step = s.is_gpu() ? cl_ulong(global) : 1;
        cl_uint a = 0;
        if (std::string(kind) != "write") s.arg(k, a++, in);
        s.arg(k, a++, std::string(kind) == "read" ? sums : out);
        s.arg(k, a++, items);
        s.arg(k, a++, item_stride);
        s.arg(k, a++, step);
        const size_t local = s.local_size(k);
        s.run(k, global, local);
        const std::vector<double> times = repeat(o, [&] { return s.run(k, global, local); });
        const double moved = std::string(kind) == "copy" ? 2.0 * double(bytes) : double(bytes);
        r.gbps_stats = rate_stats(times, moved * 1e-9);
        r.gbps = r.gbps_stats.median;
        // Check: sums of a few work-items, or the first and last vectors written.
        r.checked = true;
        if (std::string(kind) == "read") {
          std::vector<float> got(global);
          s.read(sums, 0, global * 4, got.data());
          for (uint64_t gid : {uint64_t(0), uint64_t(global / 2), uint64_t(global - 1)}) {
            double want_sum = 0;
            for (int64_t i = 0; i < items; ++i)
              for (int j = 0; j < w; ++j)
                want_sum += read_value((gid * item_stride + uint64_t(i) * step) * uint64_t(w) + uint64_t(j));
            if (double(got[gid]) != want_sum) {
              wrong_result(r, fmt::format("work-item {} summed {}, the host {}", gid, got[gid], want_sum));
              break;
            }
          }
        } else {
          const size_t n = std::min<size_t>(bytes / 4, 4096);
          std::vector<float> head(n);
          s.read(out, 0, n * 4, head.data());
          for (size_t e = 0; e < n && r.checked; ++e) {
            const uint64_t vecn = e / uint64_t(w);
            const uint64_t gid = s.is_gpu() ? vecn % global : vecn / uint64_t(items);
            const uint64_t i = s.is_gpu() ? vecn / global : vecn % uint64_t(items);
            const float want_v = std::string(kind) == "copy" ? read_value(e) : float(uint32_t(gid + i) & 0xffffffu);
            if (head[e] != want_v) {
              wrong_result(r, fmt::format("float {} of the output holds {}, expected {}", e, head[e], want_v));
            }
          }
        }
        judge_spread(r.gbps_stats, r.status, r.reason);
      } catch (const ClError& e) {
        r.status = Status::error;
        r.reason = e.message;
      }
      rep.memory.push_back(r);
    }
  }
  // Local memory: enough work-groups to fill the device, each reading its own local array.
  for (int w : widths) {
    GpuMemoryResult r;
    r.kernel = "local_read";
    r.width = w;
    r.bytes = uint64_t(kLocalFloats) * 4;
    try {
      cl_kernel k = s.kernel(prog, fmt::format("local_{}", w));
      size_t local = s.local_size(k);
      if (!local) local = 64;
      const size_t lglobal = cu * local * (s.is_gpu() ? 16 : 4);
      // Every work-item writes its sum: where there are more of them than the global passes'
      // work-items (a GPU's work-groups of 256: cu x 4096 against cu x 2048), the pass gets a
      // buffer of its own; the shared one would be written past its end.
      cl_mem lsums = lglobal > global ? s.buffer(uint64_t(lglobal) * 4, CL_MEM_WRITE_ONLY) : sums;
      s.arg(k, 0, lsums);
      // At most 2^20 iterations: every lane's sum of values up to 12 stays an exact float.
      const cl_int iters = grow_iterations(s, o, k, 1, lglobal, local, 16, 1 << 20);
      const std::vector<double> times = repeat(o, [&] { return s.run(k, lglobal, local); });
      const double moved = double(lglobal) * double(iters) * 4.0 * w * 4.0;
      r.gbps_stats = rate_stats(times, moved * 1e-9);
      r.gbps = r.gbps_stats.median;
      std::vector<float> got(lglobal);
      s.read(lsums, 0, got.size() * 4, got.data());
      if (lsums != sums) s.release(lsums);
      r.checked = true;
      const int count = kLocalFloats / w;
      for (uint64_t gid : {uint64_t(0), uint64_t(local - 1), uint64_t(got.size() - 1)}) {
        const uint64_t lid = gid % local;
        double want_sum = 0;
        for (int64_t i = 0; i < iters; ++i)
          for (int u = 0; u < 4; ++u) {
            const uint64_t idx = (lid + uint64_t(u) * local + uint64_t(i) * 4 * local) & uint64_t(count - 1);
            want_sum += double(w) * double(idx % 13);
          }
        if (double(got[gid]) != want_sum) {
          wrong_result(r, fmt::format("work-item {} summed {}, the host {}", gid, got[gid], want_sum));
          break;
        }
      }
      judge_spread(r.gbps_stats, r.status, r.reason);
    } catch (const ClError& e) {
      r.status = Status::error;
      r.reason = e.message;
    }
    rep.memory.push_back(r);
  }
  s.release(in);
  s.release(out);
  s.release(sums);
}

// Host <-> device copies of one buffer, from ordinary (pageable) host memory and from pinned host
// memory: a buffer the driver allocates in host memory (CL_MEM_ALLOC_HOST_PTR) and maps, the
// portable OpenCL way to page-locked memory. A driver copies pageable memory through a staging buffer
// of its own; pinned memory it can hand to the DMA engine directly, which is what a kernel writer's
// own transfers reach when they pin. Pinned rows a driver cannot give are skipped, with its reason.
void measure_transfer(Session& s, const GpuOptions& o, GpuReport& rep) {
  const uint64_t bytes = std::min<uint64_t>(buffer_bytes(s, o), 256ull << 20);
  // A pattern no page or line repeats in step with: what comes back from the device is checked
  // against it, so a transfer that moved nothing (or the wrong bytes) is an error, not a rate.
  auto pattern = [](uint64_t i) { return char(uint8_t((i % 251) ^ (i >> 12))); };
  auto fill = [&](char* p) {
    for (uint64_t i = 0; i < bytes; ++i) p[i] = pattern(i);
  };
  // The first byte that differs from the pattern, or `bytes` when none does.
  auto first_wrong = [&](const char* p) {
    for (uint64_t i = 0; i < bytes; ++i)
      if (p[i] != pattern(i)) return i;
    return bytes;
  };
  cl_mem m = nullptr;
  try {
    m = s.buffer(bytes);
  } catch (const ClError& e) {
    // No device buffer, no transfer: the four rows say why, and the report goes on.
    for (const char* name : {"host_to_device", "device_to_host", "host_to_device_pinned", "device_to_host_pinned"}) {
      GpuMemoryResult r;
      r.kernel = name;
      r.bytes = bytes;
      r.status = Status::error;
      r.reason = e.message;
      rep.memory.push_back(r);
    }
    return;
  }
  std::vector<char> pageable(bytes);
  fill(pageable.data());
  for (const bool pinned : {false, true}) {
    char* host = pageable.data();
    cl_mem staging = nullptr;
    std::string pin_error;
    if (pinned) {
      try {
        staging = s.buffer(bytes, CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR);
        cl_int st = CL_SUCCESS;
        void* p = s.api.EnqueueMapBuffer(s.queue, staging, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0, bytes, 0, nullptr,
                                         nullptr, &st);
        check(st, "clEnqueueMapBuffer of pinned host memory");
        host = static_cast<char*>(p);
        fill(host);
      } catch (const ClError& e) {
        pin_error = e.message;
      }
    }
    for (const char* dir : {"host_to_device", "device_to_host"}) {
      GpuMemoryResult r;
      r.kernel = std::string(dir) + (pinned ? "_pinned" : "");
      r.bytes = bytes;
      if (!pin_error.empty()) {
        r.status = Status::skipped;
        r.reason = "no pinned host memory from this driver: " + pin_error;
        rep.memory.push_back(r);
        continue;
      }
      try {
        const bool to_device = std::string(dir) == "host_to_device";
        auto once = [&] {
          cl_event e = nullptr;
          const cl_int st = to_device
                                ? s.api.EnqueueWriteBuffer(s.queue, m, CL_FALSE, 0, bytes, host, 0, nullptr, &e)
                                : s.api.EnqueueReadBuffer(s.queue, m, CL_FALSE, 0, bytes, host, 0, nullptr, &e);
          check(st, to_device ? "clEnqueueWriteBuffer" : "clEnqueueReadBuffer");
          return s.event_seconds(e);
        };
        // Reads back into a host buffer cleared first: the bytes there afterwards came from the
        // device, which holds what the writes before sent (the pattern).
        if (!to_device) std::memset(host, 0, bytes);
        once();
        const std::vector<double> times = repeat(o, once);
        r.gbps_stats = rate_stats(times, double(bytes) * 1e-9);
        r.gbps = r.gbps_stats.median;
        r.checked = true;
        if (to_device) {
          // The device's copy, read back apart from the timed host buffer.
          std::vector<char> back(bytes);
          s.read(m, 0, bytes, back.data());
          if (const uint64_t at = first_wrong(back.data()); at < bytes)
            wrong_result(r, fmt::format("byte {} of the buffer holds {}, the host wrote {}", at, int(back[at]),
                                        int(pattern(at))));
        } else if (const uint64_t at = first_wrong(host); at < bytes) {
          wrong_result(r, fmt::format("byte {} read back holds {}, the device was sent {}", at, int(host[at]),
                                      int(pattern(at))));
        }
        judge_spread(r.gbps_stats, r.status, r.reason);
      } catch (const ClError& e) {
        r.status = Status::error;
        r.reason = e.message;
      }
      rep.memory.push_back(r);
    }
    if (staging) {
      if (host != pageable.data()) {
        cl_event e = nullptr;
        if (s.api.EnqueueUnmapMemObject(s.queue, staging, host, 0, nullptr, &e) == CL_SUCCESS && e) {
          s.api.WaitForEvents(1, &e);
          s.api.ReleaseEvent(e);
        }
      }
      s.release(staging);
    }
  }
  s.release(m);
}

void measure_latency(Session& s, const GpuOptions& o, GpuReport& rep, cl_program prog) {
  for (const char* space : {"global", "local"}) {
    GpuLatencyResult r;
    r.space = space;
    const bool global = std::string(space) == "global";
    // Global: one node per 64-byte line over a buffer larger than any GPU's last-level cache;
    // local: one node per word of a local array.
    const uint64_t bytes = global ? std::min<uint64_t>(buffer_bytes(s, o), 256ull << 20) : uint64_t(kLocalChaseEntries) * 4;
    const uint32_t stride = global ? 16 : 1;
    r.bytes = bytes;
    try {
      const uint32_t nodes = uint32_t(bytes / 4 / stride);
      const std::vector<uint32_t> cycle = sattolo_cycle(nodes, 0x9e3779b97f4a7c15ull);
      std::vector<uint32_t> next(bytes / 4, 0);
      for (uint32_t i = 0; i < nodes; ++i) next[size_t(i) * stride] = cycle[i] * stride;
      cl_mem buf = s.buffer(bytes, CL_MEM_READ_ONLY);
      cl_mem out = s.buffer(64, CL_MEM_WRITE_ONLY);
      s.write(buf, 0, bytes, next.data());
      cl_kernel k = s.kernel(prog, global ? "chase" : "chase_local");
      s.arg(k, 0, buf);
      s.arg(k, 1, out);
      // Two lengths, N and 2N steps: their difference cancels the launch and (local) the fill.
      cl_int steps = 1024;
      auto run_steps = [&](cl_int n) {
        s.arg(k, 2, n);
        return s.run(k, 1, 1);
      };
      for (int round = 0; round < 12; ++round) {
        const double t = run_steps(steps);
        if (t >= o.kernel_seconds * 0.3 || steps >= (1 << 24)) break;
        steps = cl_int(std::min<double>(steps * std::clamp(o.kernel_seconds * 0.3 / std::max(t, 1e-7), 1.5, 16.0), 1 << 24));
      }
      std::vector<double> per_load;
      GpuOptions few = o;
      few.min_total_seconds = 0;
      run_steps(2 * steps);
      std::vector<double> t1s = repeat(few, [&] { return run_steps(steps); });
      std::vector<double> t2s = repeat(few, [&] { return run_steps(2 * steps); });
      for (size_t i = 0; i < std::min(t1s.size(), t2s.size()); ++i) per_load.push_back((t2s[i] - t1s[i]) / steps * 1e9);
      r.ns_stats = summarize(per_load);
      // The fastest run of each length: a disturbance only adds time, and the difference of two
      // single runs carries the noise of both.
      r.ns = (*std::min_element(t2s.begin(), t2s.end()) - *std::min_element(t1s.begin(), t1s.end())) / steps * 1e9;
      uint32_t end = 0;
      s.read(out, 0, 4, &end);
      uint32_t want = 0;
      for (int64_t i = 0; i < 2 * int64_t(steps); ++i) want = next[want];
      r.checked = end == want;
      if (!r.checked) {
        wrong_result(r, fmt::format("the chase ended at {}, the host's at {}", end, want));
      } else if (r.ns <= 0) {
        r.status = Status::mistrusted;
        r.reason = "N and 2N steps did not differ in time";
      } else {
        // judge_spread reads rates, where the best run is the largest: a run's rate is its inverse
        // time (a slow run is a disturbance; only a fast one the rest do not bear out is doubted).
        judge_spread(rate_stats(t2s, 1.0), r.status, r.reason);
      }
      s.release(buf);
      s.release(out);
    } catch (const ClError& e) {
      r.status = Status::error;
      r.reason = e.message;
    }
    rep.latency.push_back(r);
  }
}

}  // namespace

Expected<std::vector<GpuDevice>> list_devices() {
  auto api = opencl_api();
  if (!api) return make_error(api.error());
  auto found = enumerate(**api);
  if (!found) return make_error(found.error());
  std::vector<GpuDevice> out;
  for (const Found& f : *found) out.push_back(f.info);
  return out;
}

GpuReport measure_device(int index, const GpuOptions& o) {
  const auto start = std::chrono::steady_clock::now();
  GpuReport rep;
  auto api = opencl_api();
  if (!api) {
    rep.status = Status::skipped;
    rep.reason = api.error();
    return rep;
  }
  auto found = enumerate(**api);
  if (!found) {
    rep.status = Status::error;
    rep.reason = found.error();
    return rep;
  }
  if (found->empty()) {
    rep.status = Status::skipped;
    rep.reason = "the OpenCL loader found no platform with a device (no driver installed, or OCL_ICD_VENDORS names none)";
    return rep;
  }
  if (index < 0 || index >= int(found->size())) {
    rep.status = Status::error;
    rep.reason = fmt::format("no device {}: `peakprobe gpu list` shows devices 0 to {}", index, found->size() - 1);
    return rep;
  }
  rep.device = (*found)[size_t(index)].info;
  try {
    Session s(**api, (*found)[size_t(index)]);
    if (o.compute) measure_compute(s, o, rep);
    if (o.memory || o.latency) {
      cl_program prog = s.build(memory_source(), "memory");
      if (o.memory) measure_memory(s, o, rep, prog);
      if (o.latency) measure_latency(s, o, rep, prog);
    }
    if (o.transfer) measure_transfer(s, o, rep);
  } catch (const ClError& e) {
    rep.status = Status::error;
    rep.reason = e.message;
  }
  rep.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return rep;
}

}  // namespace peakprobe::gpu
