// OpenCL C source generated at run time (the GPU counterpart of the CPU JIT), and the host's own
// computation of what each kernel must produce, so that every timed kernel is also checked.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace peakprobe::gpu {

// A data type of the compute peaks: its OpenCL type, how it is named in results, what it needs.
struct ClDtype {
  const char* name;       // f32 f64 f16 i32 i16 i8, and the dot products i8dot u8i8dot
  const char* cl_type;    // float double half uint ushort uchar (a dot product's accumulator: uint)
  const char* extension;  // "" or the extension the device must offer (cl_khr_fp64, cl_khr_fp16,
                          // cl_khr_integer_dot_product)
  bool integer;
  int bytes;              // of one input element
  // An integer dot product of four 8-bit pairs accumulated into 32 bits (cl_khr_integer_dot_product):
  // "ss" signed x signed, "us" unsigned x signed; "" for a multiply-add type.
  const char* dot = "";
  bool is_dot() const { return dot[0] != '\0'; }
};
const std::vector<ClDtype>& compute_dtypes();
const ClDtype* find_dtype(const std::string& name);
inline const std::vector<int>& vector_widths() {
  static const std::vector<int> w = {1, 2, 4, 8, 16};
  return w;
}
// A dot product's one width: its operands are four 8-bit lanes (char4 / uchar4).
inline constexpr int kDotWidth = 4;
// The widths a type is measured at, of those asked for (empty: all): a dot product only at
// kDotWidth, and whatever was asked for, since no other width exists for it.
std::vector<int> widths_for(const ClDtype& dtype, const std::vector<int>& asked);

// The compute-peak kernel `peak`: every work-item runs `chains` independent multiply-add chains
// x = x * a + b (fused multiply-add for float types, wrapping integer multiply-add for the others) of `width`-wide
// vectors, `unroll` rounds per loop iteration, `iters` iterations; then writes the XOR of the bit
// patterns of every lane of every chain (order-free, so the host can recompute it exactly).
// A dot-product type runs chains x = dot(bytes of x, bytes of a) + x on 32-bit x instead: one
// instruction on hardware with a 4x8-bit dot product (NVIDIA dp4a, AMD v_dot4, Intel dp4a), where
// a = ia * 0x01010101 packs four copies of ia's low byte.
// Arguments: (global uint* out, float fa, float fb, uint ia, uint ib, int iters).
struct ComputeKernel {
  const ClDtype* dtype = nullptr;
  int width = 1, chains = 8, unroll = 4;
  // Operations per work-item per loop iteration: 2 per multiply-add and lane; 8 per dot product
  // (four multiplies, four adds).
  double ops_per_iteration() const {
    return (dtype && dtype->is_dot() ? 8.0 : 2.0 * width) * chains * unroll;
  }
};
// Tests only: a build option that makes a dot-product program compute its dot products with
// ordinary integer arithmetic, so the kernels and their checks run on a device without
// cl_khr_integer_dot_product.
inline constexpr const char* kEmulateDotDefine = "PP_EMULATE_DOT";
// CL_DEVICE_INTEGER_DOT_PRODUCT_CAPABILITIES_KHR and its bits (cl_khr_integer_dot_product).
inline constexpr unsigned kDotCapabilitiesQuery = 0x1073;
inline constexpr uint64_t kDotInputPacked = 1u << 0, kDotInputVector = 1u << 1;
// Build options for a dot-product program: the OpenCL C version that defines the extension's
// feature macros (clang defines them from OpenCL C 2.0 on; an OpenCL 3.0 device compiles 3.0), and
// which input form to call, from the capabilities the device reports (PP_DOT_PACKED, PP_DOT_VECTOR;
// none when it reports none: the feature macros decide).
std::string dot_build_options(uint64_t capabilities, const std::string& device_version,
                              const std::string& opencl_c_version);
// Chains that keep a wide core or a GPU lane busy at every width (docs/gpu.md).
ComputeKernel compute_kernel(const ClDtype& dtype, int width);
std::string compute_source(const ComputeKernel& k);
// One program with a kernel `peak_W` per entry (all of one data type), the same code as
// compute_source: one build per type.
std::string compute_program_source(const std::vector<ComputeKernel>& kernels);
// What work-item `gid` writes (exact for every type: float types use the same fused multiply-add;
// half is rounded to the nearest half after each step; dot products take bytes least significant
// first, as a little-endian device's as_char4 does and the packed built-ins define).
uint32_t compute_reference(const ComputeKernel& k, uint64_t gid, float fa, float fb, uint32_t ia, uint32_t ib,
                           int iters);
// The multiply-add constants the runs use (kernel arguments, never literals: nothing folds them).
inline constexpr float kComputeA = 0.999f, kComputeB = 0.001f;
inline constexpr uint32_t kComputeIntA = 3, kComputeIntB = 7;

// Memory kernels over float vectors of each width in vector_widths():
//   read_W(global const floatW* in, global float* out, int per_item, ulong item_stride, ulong step):
//     out[gid] = sum over every lane of in[gid * item_stride + i * step] for i < per_item
//     (item_stride 1 and step = global size: coalesced, neighbouring work-items read neighbouring
//     vectors; item_stride = per_item and step 1: each work-item reads its own block);
//   write_W(global floatW* out, int per_item, ulong item_stride, ulong step): the same elements
//     = (gid + i) & 0xffffff;
//   copy_W(global const floatW* in, global floatW* out, int per_item, ulong item_stride, ulong step);
//   local_W(global float* out, int iters): each work-group fills a local array of
//     kLocalFloats / W vectors and every work-item reads `iters` x 4 of them, out[gid] = their sum;
//   chase(global const uint* next, global uint* out, int steps): one work-item follows next[]
//     `steps` times from 0 and writes where it ended; chase_local does the same in local memory
//     (kLocalChaseEntries entries copied in first).
inline constexpr int kLocalFloats = 4096;        // 16 KiB of local memory per work-group
inline constexpr int kLocalChaseEntries = 2048;  // 8 KiB
std::string memory_source();
// The value every float of a read buffer holds: small integers, so every sum is exact.
inline float read_value(uint64_t element) { return float(element % 13); }

}  // namespace peakprobe::gpu
