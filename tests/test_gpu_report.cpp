#include <catch2/catch.hpp>

#include <sstream>

#include "gpu_fixture.hpp"
#include "report/gpu_report.hpp"

using namespace peakprobe;

TEST_CASE("gpu console: the device, a type-by-width table, every doubt with its reason", "[gpu_report]") {
  std::ostringstream out;
  print_gpu_report(out, test::sample_gpu_report());
  const std::string s = out.str();
  INFO(s);
  CHECK(s.find("OpenCL device 1: Example GPU") != std::string::npos);
  CHECK(s.find("x4") != std::string::npos);
  CHECK(s.find("1234.5") != std::string::npos);
  CHECK(s.find("- f16 x4: the device does not offer cl_khr_fp16") != std::string::npos);
  CHECK(s.find("read float4") != std::string::npos);
  CHECK(s.find("? host_to_device: repetitions disagree") != std::string::npos);
  CHECK(s.find("480.5 ns") != std::string::npos);
}

TEST_CASE("gpu console: a device without figures says why", "[gpu_report]") {
  GpuReport r;
  r.status = Status::skipped;
  r.reason = "no OpenCL runtime: libOpenCL.so.1 could not be opened";
  std::ostringstream out;
  print_gpu_report(out, r);
  CHECK(out.str() == "- skipped: no OpenCL runtime: libOpenCL.so.1 could not be opened\n");
  std::ostringstream list;
  print_gpu_devices(list, {});
  CHECK(list.str() == "no OpenCL device\n");
}

TEST_CASE("gpu csv: one row per figure, names quoted", "[gpu_report]") {
  std::ostringstream out;
  write_gpu_csv(out, {test::sample_gpu_report()});
  const std::string s = out.str();
  INFO(s);
  CHECK(s.rfind("device,name,section,what,width,value,unit,status,reason\n", 0) == 0);
  CHECK(s.find("1,\"Example GPU, rev \"\"2\"\"\",compute,f32,4,1234.5,GFLOP/s,ok,\n") != std::string::npos);
  CHECK(s.find(",compute,f16,4,,GFLOP/s,skipped,the device does not offer cl_khr_fp16\n") != std::string::npos);
  CHECK(s.find(",latency,global,,480.5,ns,ok,\n") != std::string::npos);
  size_t lines = 0;
  for (char c : s) lines += c == '\n';
  CHECK(lines == 1 + 2 + 2 + 1);
}
