#include "gpu/gpu_worker.hpp"

#include <unistd.h>

#include <cstdio>

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "gpu/gpu_json.hpp"
#include "gpu/icd_vendors.hpp"
#include "harness/child_process.hpp"
#include "report/json_report.hpp"

namespace peakprobe::gpu {
namespace {

using nlohmann::json;

// Runs a job in a worker and returns its parsed answer, or why there is none.
Expected<json> run_job(const GpuJob& job, double time_limit_s) {
  const std::string exe = worker_executable();
  if (exe.empty())
    return make_error("not run: this program does not dispatch worker processes, and an OpenCL runtime never "
                      "runs inside peakprobe's own process");
  auto child = run_child(exe, {"peakprobe-worker", kWorkerArg, "gpu", std::to_string(::getpid()), encode_job(job)},
                         time_limit_s);
  if (!child) return make_error(fmt::format("worker process: {}", child.error()));
  if (!child->clean()) return make_error("the OpenCL worker process was " + describe(*child));
  try {
    json answer = json::parse(child->answer);
    if (answer.contains("error")) return make_error(answer.at("error").get<std::string>());
    return answer;
  } catch (const json::exception& e) {
    return make_error(fmt::format("the OpenCL worker's answer is not JSON: {}", e.what()));
  }
}

}  // namespace

std::string encode_job(const GpuJob& job) {
  const GpuOptions& o = job.options;
  return json{{"list", job.list},
              {"device", job.device},
              {"dtypes", o.dtypes},
              {"widths", o.widths},
              {"compute", o.compute},
              {"memory", o.memory},
              {"latency", o.latency},
              {"transfer", o.transfer},
              {"kernel_seconds", o.kernel_seconds},
              {"min_repetitions", o.min_repetitions},
              {"max_repetitions", o.max_repetitions},
              {"min_total_seconds", o.min_total_seconds},
              {"buffer_bytes", o.buffer_bytes},
              {"extra_compute_source", o.extra_compute_source},
              {"emulate_integer_dot", o.emulate_integer_dot}}
      .dump();
}

Expected<GpuJob> decode_job(const std::string& text) {
  try {
    const json j = json::parse(text);
    GpuJob job;
    job.list = j.at("list").get<bool>();
    job.device = j.at("device").get<int>();
    GpuOptions& o = job.options;
    o.dtypes = j.at("dtypes").get<std::vector<std::string>>();
    o.widths = j.at("widths").get<std::vector<int>>();
    o.compute = j.at("compute").get<bool>();
    o.memory = j.at("memory").get<bool>();
    o.latency = j.at("latency").get<bool>();
    o.transfer = j.at("transfer").get<bool>();
    o.kernel_seconds = j.at("kernel_seconds").get<double>();
    o.min_repetitions = j.at("min_repetitions").get<int>();
    o.max_repetitions = j.at("max_repetitions").get<int>();
    o.min_total_seconds = j.at("min_total_seconds").get<double>();
    o.buffer_bytes = j.at("buffer_bytes").get<uint64_t>();
    o.extra_compute_source = j.at("extra_compute_source").get<std::string>();
    o.emulate_integer_dot = j.at("emulate_integer_dot").get<bool>();
    if (o.kernel_seconds <= 0 || o.kernel_seconds > 10 || o.min_repetitions < 1 || o.max_repetitions < o.min_repetitions)
      return make_error("GPU job: timing limits out of range");
    return job;
  } catch (const json::exception& e) {
    return make_error(fmt::format("not a GPU job: {}", e.what()));
  }
}

Expected<std::vector<GpuDevice>> list_devices_isolated(double time_limit_s) {
  if (auto line = offer_unlisted_drivers()) spdlog::info("{}", *line);
  GpuJob job;
  job.list = true;
  auto answer = run_job(job, time_limit_s);
  if (!answer) return make_error(answer.error());
  std::vector<GpuDevice> out;
  try {
    for (const json& d : answer->at("devices")) {
      auto dev = gpu_device_from_json(d);
      if (!dev) return make_error(dev.error());
      out.push_back(*dev);
    }
  } catch (const json::exception& e) {
    return make_error(fmt::format("the OpenCL worker's device list is malformed: {}", e.what()));
  }
  return out;
}

GpuReport measure_device_isolated(int index, const GpuOptions& options, double time_limit_s) {
  if (auto line = offer_unlisted_drivers()) spdlog::info("{}", *line);
  GpuJob job;
  job.device = index;
  job.options = options;
  auto answer = run_job(job, time_limit_s);
  GpuReport rep;
  rep.device.index = index;
  if (!answer) {
    rep.status = Status::error;
    rep.reason = answer.error();
    return rep;
  }
  auto parsed = gpu_report_from_json(*answer);
  if (!parsed) {
    rep.status = Status::error;
    rep.reason = parsed.error();
    return rep;
  }
  return *parsed;
}

int gpu_worker_main(const std::string& job_text, int parent_pid) {
  die_with_parent(parent_pid);
  auto job = decode_job(job_text);
  if (!job) {
    std::fprintf(stderr, "peakprobe: %s gpu: %s\n", kWorkerArg, job.error().c_str());
    write_worker_answer(json_text(json{{"error", job.error()}}));
    ::_exit(2);
  }
  if (job->list) {
    auto devices = list_devices();
    if (!devices) {
      write_worker_answer(json_text(json{{"error", devices.error()}}));
      ::_exit(0);
    }
    json list = json::array();
    for (const GpuDevice& d : *devices) list.push_back(to_json(d));
    write_worker_answer(json_text(json{{"devices", list}}));
    ::_exit(0);
  }
  write_worker_answer(json_text(to_json(measure_device(job->device, job->options))));
  // No exit handlers: drivers have crashed in theirs.
  ::_exit(0);
}

}  // namespace peakprobe::gpu
