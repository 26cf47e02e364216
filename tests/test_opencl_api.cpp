#include <catch2/catch.hpp>

#include "gpu/opencl_api.hpp"

using namespace peakprobe::gpu;

TEST_CASE("OpenCL status codes are named", "[opencl_api]") {
  CHECK(cl_status_name(CL_OUT_OF_RESOURCES) == "CL_OUT_OF_RESOURCES (-5)");
  CHECK(cl_status_name(CL_BUILD_PROGRAM_FAILURE) == "CL_BUILD_PROGRAM_FAILURE (-11)");
  CHECK(cl_status_name(-1001) == "CL_PLATFORM_NOT_FOUND_KHR (-1001)");
  CHECK(cl_status_name(-9999) == "OpenCL status -9999");
}
