// The OpenCL runtime, found at run time: the ICD loader (libOpenCL.so.1) is opened with dlopen, so
// peakprobe builds, starts and measures the CPU on a machine without any OpenCL installed; `gpu`
// then reports why it has no device instead of failing to start. Only the entry points peakprobe
// calls are looked up (OpenCL 1.2, which every runtime offers).
#pragma once
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>

#include <string>

#include "peakprobe/expected.hpp"

namespace peakprobe::gpu {

struct ClApi {
  decltype(&::clGetPlatformIDs) GetPlatformIDs = nullptr;
  decltype(&::clGetPlatformInfo) GetPlatformInfo = nullptr;
  decltype(&::clGetDeviceIDs) GetDeviceIDs = nullptr;
  decltype(&::clGetDeviceInfo) GetDeviceInfo = nullptr;
  decltype(&::clCreateContext) CreateContext = nullptr;
  decltype(&::clReleaseContext) ReleaseContext = nullptr;
  decltype(&::clCreateCommandQueue) CreateCommandQueue = nullptr;
  decltype(&::clReleaseCommandQueue) ReleaseCommandQueue = nullptr;
  decltype(&::clCreateBuffer) CreateBuffer = nullptr;
  decltype(&::clReleaseMemObject) ReleaseMemObject = nullptr;
  decltype(&::clCreateProgramWithSource) CreateProgramWithSource = nullptr;
  decltype(&::clBuildProgram) BuildProgram = nullptr;
  decltype(&::clGetProgramBuildInfo) GetProgramBuildInfo = nullptr;
  decltype(&::clReleaseProgram) ReleaseProgram = nullptr;
  decltype(&::clCreateKernel) CreateKernel = nullptr;
  decltype(&::clReleaseKernel) ReleaseKernel = nullptr;
  decltype(&::clSetKernelArg) SetKernelArg = nullptr;
  decltype(&::clGetKernelWorkGroupInfo) GetKernelWorkGroupInfo = nullptr;
  decltype(&::clEnqueueNDRangeKernel) EnqueueNDRangeKernel = nullptr;
  decltype(&::clEnqueueReadBuffer) EnqueueReadBuffer = nullptr;
  decltype(&::clEnqueueWriteBuffer) EnqueueWriteBuffer = nullptr;
  decltype(&::clEnqueueMapBuffer) EnqueueMapBuffer = nullptr;
  decltype(&::clEnqueueUnmapMemObject) EnqueueUnmapMemObject = nullptr;
  decltype(&::clFinish) Finish = nullptr;
  decltype(&::clWaitForEvents) WaitForEvents = nullptr;
  decltype(&::clGetEventProfilingInfo) GetEventProfilingInfo = nullptr;
  decltype(&::clReleaseEvent) ReleaseEvent = nullptr;
  std::string library;  // the file that was opened
};

// Opens the OpenCL loader once per process (PEAKPROBE_OPENCL_LIBRARY names another file) and looks
// up every entry point. The error says what is missing and which package provides it.
Expected<const ClApi*> opencl_api();

// "CL_OUT_OF_RESOURCES (-5)" for a status code.
std::string cl_status_name(cl_int status);

}  // namespace peakprobe::gpu
