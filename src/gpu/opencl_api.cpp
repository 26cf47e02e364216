#include "gpu/opencl_api.hpp"

#include <dlfcn.h>

#include <cstdlib>
#include <mutex>

#include <fmt/format.h>

namespace peakprobe::gpu {
namespace {

struct Loaded {
  ClApi api;
  std::string error;
};

Loaded load() {
  Loaded l;
  const char* env = std::getenv("PEAKPROBE_OPENCL_LIBRARY");
  const std::string file = env && *env ? env : "libOpenCL.so.1";
  // RTLD_LOCAL: the runtime's symbols must not satisfy anything of ours or of another library.
  void* h = ::dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    const char* why = ::dlerror();
    l.error = fmt::format("no OpenCL runtime: {} could not be opened ({}); on Debian install ocl-icd-libopencl1 and a "
                          "driver (pocl-opencl-icd for the CPU, or the GPU vendor's)",
                          file, why ? why : "unknown error");
    return l;
  }
  l.api.library = file;
  bool missing = false;
  auto get = [&](auto& fn, const char* name) {
    fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(::dlsym(h, name));
    if (!fn && !missing) {
      missing = true;
      l.error = fmt::format("{} has no {}: not an OpenCL 1.2 runtime", file, name);
    }
  };
  ClApi& a = l.api;
  get(a.GetPlatformIDs, "clGetPlatformIDs");
  get(a.GetPlatformInfo, "clGetPlatformInfo");
  get(a.GetDeviceIDs, "clGetDeviceIDs");
  get(a.GetDeviceInfo, "clGetDeviceInfo");
  get(a.CreateContext, "clCreateContext");
  get(a.ReleaseContext, "clReleaseContext");
  get(a.CreateCommandQueue, "clCreateCommandQueue");
  get(a.ReleaseCommandQueue, "clReleaseCommandQueue");
  get(a.CreateBuffer, "clCreateBuffer");
  get(a.ReleaseMemObject, "clReleaseMemObject");
  get(a.CreateProgramWithSource, "clCreateProgramWithSource");
  get(a.BuildProgram, "clBuildProgram");
  get(a.GetProgramBuildInfo, "clGetProgramBuildInfo");
  get(a.ReleaseProgram, "clReleaseProgram");
  get(a.CreateKernel, "clCreateKernel");
  get(a.ReleaseKernel, "clReleaseKernel");
  get(a.SetKernelArg, "clSetKernelArg");
  get(a.GetKernelWorkGroupInfo, "clGetKernelWorkGroupInfo");
  get(a.EnqueueNDRangeKernel, "clEnqueueNDRangeKernel");
  get(a.EnqueueReadBuffer, "clEnqueueReadBuffer");
  get(a.EnqueueWriteBuffer, "clEnqueueWriteBuffer");
  get(a.EnqueueMapBuffer, "clEnqueueMapBuffer");
  get(a.EnqueueUnmapMemObject, "clEnqueueUnmapMemObject");
  get(a.Finish, "clFinish");
  get(a.WaitForEvents, "clWaitForEvents");
  get(a.GetEventProfilingInfo, "clGetEventProfilingInfo");
  get(a.ReleaseEvent, "clReleaseEvent");
  // The handle stays open for the life of the process: drivers keep threads and exit handlers.
  return l;
}

}  // namespace

Expected<const ClApi*> opencl_api() {
  static std::once_flag once;
  static Loaded loaded;
  std::call_once(once, [] { loaded = load(); });
  if (!loaded.error.empty()) return make_error(loaded.error);
  return &loaded.api;
}

std::string cl_status_name(cl_int s) {
  const char* name = nullptr;
  switch (s) {
    case CL_SUCCESS: name = "CL_SUCCESS"; break;
    case CL_DEVICE_NOT_FOUND: name = "CL_DEVICE_NOT_FOUND"; break;
    case CL_DEVICE_NOT_AVAILABLE: name = "CL_DEVICE_NOT_AVAILABLE"; break;
    case CL_COMPILER_NOT_AVAILABLE: name = "CL_COMPILER_NOT_AVAILABLE"; break;
    case CL_MEM_OBJECT_ALLOCATION_FAILURE: name = "CL_MEM_OBJECT_ALLOCATION_FAILURE"; break;
    case CL_OUT_OF_RESOURCES: name = "CL_OUT_OF_RESOURCES"; break;
    case CL_OUT_OF_HOST_MEMORY: name = "CL_OUT_OF_HOST_MEMORY"; break;
    case CL_PROFILING_INFO_NOT_AVAILABLE: name = "CL_PROFILING_INFO_NOT_AVAILABLE"; break;
    case CL_BUILD_PROGRAM_FAILURE: name = "CL_BUILD_PROGRAM_FAILURE"; break;
    case CL_INVALID_VALUE: name = "CL_INVALID_VALUE"; break;
    case CL_INVALID_PLATFORM: name = "CL_INVALID_PLATFORM"; break;
    case CL_INVALID_DEVICE: name = "CL_INVALID_DEVICE"; break;
    case CL_INVALID_CONTEXT: name = "CL_INVALID_CONTEXT"; break;
    case CL_INVALID_COMMAND_QUEUE: name = "CL_INVALID_COMMAND_QUEUE"; break;
    case CL_INVALID_MEM_OBJECT: name = "CL_INVALID_MEM_OBJECT"; break;
    case CL_INVALID_BUFFER_SIZE: name = "CL_INVALID_BUFFER_SIZE"; break;
    case CL_INVALID_PROGRAM: name = "CL_INVALID_PROGRAM"; break;
    case CL_INVALID_PROGRAM_EXECUTABLE: name = "CL_INVALID_PROGRAM_EXECUTABLE"; break;
    case CL_INVALID_KERNEL_NAME: name = "CL_INVALID_KERNEL_NAME"; break;
    case CL_INVALID_KERNEL: name = "CL_INVALID_KERNEL"; break;
    case CL_INVALID_ARG_INDEX: name = "CL_INVALID_ARG_INDEX"; break;
    case CL_INVALID_ARG_VALUE: name = "CL_INVALID_ARG_VALUE"; break;
    case CL_INVALID_ARG_SIZE: name = "CL_INVALID_ARG_SIZE"; break;
    case CL_INVALID_KERNEL_ARGS: name = "CL_INVALID_KERNEL_ARGS"; break;
    case CL_INVALID_WORK_DIMENSION: name = "CL_INVALID_WORK_DIMENSION"; break;
    case CL_INVALID_WORK_GROUP_SIZE: name = "CL_INVALID_WORK_GROUP_SIZE"; break;
    case CL_INVALID_WORK_ITEM_SIZE: name = "CL_INVALID_WORK_ITEM_SIZE"; break;
    case CL_INVALID_GLOBAL_WORK_SIZE: name = "CL_INVALID_GLOBAL_WORK_SIZE"; break;
    case CL_INVALID_EVENT: name = "CL_INVALID_EVENT"; break;
    case CL_INVALID_OPERATION: name = "CL_INVALID_OPERATION"; break;
    case CL_INVALID_BUILD_OPTIONS: name = "CL_INVALID_BUILD_OPTIONS"; break;
    // The rest by number: the headers define some only for a newer CL_TARGET_OPENCL_VERSION.
    case -8: name = "CL_MEM_COPY_OVERLAP"; break;
    case -9: name = "CL_IMAGE_FORMAT_MISMATCH"; break;
    case -10: name = "CL_IMAGE_FORMAT_NOT_SUPPORTED"; break;
    case -12: name = "CL_MAP_FAILURE"; break;
    case -13: name = "CL_MISALIGNED_SUB_BUFFER_OFFSET"; break;
    case -14: name = "CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST"; break;
    case -15: name = "CL_COMPILE_PROGRAM_FAILURE"; break;
    case -16: name = "CL_LINKER_NOT_AVAILABLE"; break;
    case -17: name = "CL_LINK_PROGRAM_FAILURE"; break;
    case -18: name = "CL_DEVICE_PARTITION_FAILED"; break;
    case -19: name = "CL_KERNEL_ARG_INFO_NOT_AVAILABLE"; break;
    case -31: name = "CL_INVALID_DEVICE_TYPE"; break;
    case -35: name = "CL_INVALID_QUEUE_PROPERTIES"; break;
    case -37: name = "CL_INVALID_HOST_PTR"; break;
    case -39: name = "CL_INVALID_IMAGE_FORMAT_DESCRIPTOR"; break;
    case -40: name = "CL_INVALID_IMAGE_SIZE"; break;
    case -41: name = "CL_INVALID_SAMPLER"; break;
    case -42: name = "CL_INVALID_BINARY"; break;
    case -47: name = "CL_INVALID_KERNEL_DEFINITION"; break;
    case -56: name = "CL_INVALID_GLOBAL_OFFSET"; break;
    case -57: name = "CL_INVALID_EVENT_WAIT_LIST"; break;
    case -60: name = "CL_INVALID_GL_OBJECT"; break;
    case -62: name = "CL_INVALID_MIP_LEVEL"; break;
    case -64: name = "CL_INVALID_PROPERTY"; break;
    case -65: name = "CL_INVALID_IMAGE_DESCRIPTOR"; break;
    case -66: name = "CL_INVALID_COMPILER_OPTIONS"; break;
    case -67: name = "CL_INVALID_LINKER_OPTIONS"; break;
    case -68: name = "CL_INVALID_DEVICE_PARTITION_COUNT"; break;
    case -69: name = "CL_INVALID_PIPE_SIZE"; break;
    case -70: name = "CL_INVALID_DEVICE_QUEUE"; break;
    case -71: name = "CL_INVALID_SPEC_ID"; break;
    case -72: name = "CL_MAX_SIZE_RESTRICTION_EXCEEDED"; break;
    case -1001: name = "CL_PLATFORM_NOT_FOUND_KHR"; break;
    default: break;
  }
  return name ? fmt::format("{} ({})", name, s) : fmt::format("OpenCL status {}", s);
}

}  // namespace peakprobe::gpu
