#include <catch2/catch.hpp>

#include "gpu/opencl_api.hpp"

using namespace peakprobe::gpu;

TEST_CASE("OpenCL status codes are named", "[opencl_api]") {
  CHECK(cl_status_name(CL_OUT_OF_RESOURCES) == "CL_OUT_OF_RESOURCES (-5)");
  CHECK(cl_status_name(CL_BUILD_PROGRAM_FAILURE) == "CL_BUILD_PROGRAM_FAILURE (-11)");
  CHECK(cl_status_name(-1001) == "CL_PLATFORM_NOT_FOUND_KHR (-1001)");
  CHECK(cl_status_name(-9999) == "OpenCL status -9999");
  CHECK(cl_status_name(-12) == "CL_MAP_FAILURE (-12)");
  CHECK(cl_status_name(-35) == "CL_INVALID_QUEUE_PROPERTIES (-35)");
  // Every status of the core specification (-1 to -19, -30 to -72) has its name.
  for (cl_int code = -72; code <= -1; ++code) {
    if (code < -19 && code > -30) continue;  // not assigned
    INFO(code);
    CHECK_THAT(cl_status_name(code), Catch::StartsWith("CL_"));
  }
}
