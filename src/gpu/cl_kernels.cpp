#include "gpu/cl_kernels.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>

#include <fmt/format.h>

namespace peakprobe::gpu {
namespace {

// Lane selectors of OpenCL vectors: .s0 ... .s9 .sa ... .sf
std::string lane(int j) { return fmt::format(".s{:x}", j); }

std::string vec(const char* type, int width) { return width == 1 ? std::string(type) : fmt::format("{}{}", type, width); }

// The half-precision value nearest to `x` (ties to even), for the host's copy of a half chain:
// products of two halves are exact in double and the sum with a third is exact or rounded once
// far below half precision, so rounding the double result once gives the fused result.
double round_to_half(double x) {
  if (x == 0 || !std::isfinite(x)) return x;
  int e = 0;
  std::frexp(x, &e);                        // |x| in [2^(e-1), 2^e)
  const int exp = std::max(e - 1, -14);     // below 2^-14 halves are subnormal: a fixed step
  const double step = std::ldexp(1.0, exp - 10);
  const double r = std::nearbyint(x / step) * step;
  return std::fabs(r) > 65504.0 ? std::copysign(INFINITY, x) : r;
}

uint16_t half_bits(double h) {
  // h is exactly a half value (from round_to_half): build its IEEE binary16 pattern.
  const uint16_t sign = std::signbit(h) ? 0x8000 : 0;
  h = std::fabs(h);
  if (h == 0) return sign;
  if (std::isinf(h)) return sign | 0x7c00;
  int e = 0;
  const double m = std::frexp(h, &e);  // h = m * 2^e, m in [0.5, 1)
  int exp = e - 1 + 15;
  if (exp <= 0) return uint16_t(sign | uint16_t(std::ldexp(h, 24)));  // subnormal: h / 2^-24
  return uint16_t(sign | (exp << 10) | (uint16_t(std::ldexp(m, 11)) & 0x3ff));
}


}  // namespace

const std::vector<ClDtype>& compute_dtypes() {
  static const std::vector<ClDtype> d = {
      {"f32", "float", "", false, 4},  {"f64", "double", "cl_khr_fp64", false, 8},
      {"f16", "half", "cl_khr_fp16", false, 2}, {"i32", "uint", "", true, 4},
      {"i16", "ushort", "", true, 2},  {"i8", "uchar", "", true, 1},
      {"i8dot", "uint", "cl_khr_integer_dot_product", true, 1, "ss"},
      {"u8i8dot", "uint", "cl_khr_integer_dot_product", true, 1, "us"},
  };
  return d;
}

std::vector<int> widths_for(const ClDtype& dtype, const std::vector<int>& asked) {
  if (dtype.is_dot()) return {kDotWidth};
  return asked.empty() ? vector_widths() : asked;
}

const ClDtype* find_dtype(const std::string& name) {
  for (const ClDtype& d : compute_dtypes())
    if (name == d.name) return &d;
  return nullptr;
}

ComputeKernel compute_kernel(const ClDtype& dtype, int width) {
  ComputeKernel k;
  k.dtype = &dtype;
  k.width = width;
  if (dtype.is_dot()) {
    // One 32-bit accumulator per chain: 16 chains, as the narrow multiply-add widths.
    k.width = kDotWidth;
    k.chains = 16;
    k.unroll = 4;
    return k;
  }
  // 16 chains per work-item up to width 4, 8 of 8 or 16 lanes: at least 8 independent vector
  // operations for a CPU core (2 FMA pipes x 4-cycle latency; narrow widths are vectorised across
  // work-items) and for a GPU lane, without so many live registers that a GPU runs few work-items.
  k.chains = std::clamp(64 / width, 8, 16);
  k.unroll = 4;
  return k;
}

namespace {

// The dot product PP_DOT(uint a, uint b) of a dot type: the packed built-in where the device offers
// it, else the char4 one (the same bytes on a little-endian device), else, for tests only
// (kEmulateDotDefine), ordinary arithmetic.
std::string dot_header(const ClDtype& d) {
  const bool us = std::string(d.dot) == "us";
  const char* first = us ? "as_uchar4" : "as_char4";
  std::string s;
  s += fmt::format("#if defined({})\n", kEmulateDotDefine);
  s += fmt::format(
      "int pp_dot(uint a, uint b) {{\n"
      "  const {0} x = {1}(a);\n"
      "  const char4 y = as_char4(b);\n"
      "  return (int)x.s0 * (int)y.s0 + (int)x.s1 * (int)y.s1 + (int)x.s2 * (int)y.s2 + (int)x.s3 * (int)y.s3;\n"
      "}}\n"
      "#define PP_DOT(a, b) pp_dot((a), (b))\n",
      us ? "uchar4" : "char4", first);
  s += "#elif defined(PP_DOT_PACKED) || (!defined(PP_DOT_VECTOR) && "
       "defined(__opencl_c_integer_dot_product_input_4x8bit_packed))\n";
  s += fmt::format("#define PP_DOT(a, b) dot_4x8packed_{}_int((a), (b))\n", d.dot);
  s += "#elif defined(PP_DOT_VECTOR) || defined(__opencl_c_integer_dot_product_input_4x8bit)\n";
  s += fmt::format("#define PP_DOT(a, b) dot({}(a), as_char4(b))\n", first);
  s += "#else\n#error \"cl_khr_integer_dot_product without 4x8-bit inputs\"\n#endif\n";
  return s;
}

// "OpenCL 3.0 ..." / "OpenCL C 2.0 ...": the major and minor number after the prefix, 0 when absent.
int version_of(const std::string& text, const std::string& prefix) {
  const size_t at = text.find(prefix);
  if (at == std::string::npos) return 0;
  int major = 0, minor = 0;
  if (std::sscanf(text.c_str() + at + prefix.size(), "%d.%d", &major, &minor) != 2) return 0;
  return major * 10 + minor;
}

// Pragmas and the per-type fold, once per program.
std::string compute_header(const ClDtype& d) {
  std::string s;
  if (d.is_dot()) return dot_header(d) + "uint fold(uint v) { return v; }\n";
  if (std::strlen(d.extension)) s += fmt::format("#pragma OPENCL EXTENSION {} : enable\n", d.extension);
  s += "#pragma OPENCL FP_CONTRACT OFF\n";
  // The bits of one lane, folded to 32.
  if (std::string(d.cl_type) == "float") s += "uint fold(float v) { return as_uint(v); }\n";
  else if (std::string(d.cl_type) == "double") s += "uint fold(double v) { ulong b = as_ulong(v); return (uint)(b ^ (b >> 32)); }\n";
  else if (std::string(d.cl_type) == "half") s += "uint fold(half v) { return (uint)as_ushort(v); }\n";
  else s += fmt::format("uint fold({} v) {{ return (uint)v; }}\n", d.cl_type);
  return s;
}

// Chains x = PP_DOT(x, A) + x of 32-bit x (see ComputeKernel).
std::string dot_kernel_source(const ComputeKernel& k, const std::string& name) {
  std::string s;
  s += fmt::format("__kernel void {}(__global uint* out, float fa, float fb, uint ia, uint ib, int iters) {{\n", name);
  s += "  const uint gid = (uint)get_global_id(0);\n";
  s += "  const uint A = (ia & 0xffu) * 0x01010101u;\n";
  for (int c = 0; c < k.chains; ++c) s += fmt::format("  uint x{0} = (gid & 63u) + {1}u;\n", c, 16 * c + 1);
  s += "  for (int i = 0; i < iters; ++i) {\n";
  for (int u = 0; u < k.unroll; ++u)
    for (int c = 0; c < k.chains; ++c) s += fmt::format("    x{0} = (uint)PP_DOT(x{0}, A) + x{0};\n", c);
  s += "  }\n  uint h = 0u;\n";
  for (int c = 0; c < k.chains; ++c) s += fmt::format("  h ^= fold(x{});\n", c);
  s += "  out[gid] = h;\n}\n";
  return s;
}

std::string compute_kernel_source(const ComputeKernel& k, const std::string& name) {
  const ClDtype& d = *k.dtype;
  if (d.is_dot()) return dot_kernel_source(k, name);
  const std::string T = vec(d.cl_type, k.width), U = vec("uint", k.width);
  std::string s;
  s += fmt::format("__kernel void {}(__global uint* out, float fa, float fb, uint ia, uint ib, int iters) {{\n", name);
  s += "  const uint gid = (uint)get_global_id(0);\n";
  if (d.integer) {
    s += fmt::format("  const {0} A = ({0})(({1})ia), B = ({0})(({1})ib);\n", T, d.cl_type);
  } else {
    s += fmt::format("  const {0} A = ({0})(({1})fa), B = ({0})(({1})fb);\n", T, d.cl_type);
  }
  std::string lanes = "0u";
  if (k.width > 1) {
    lanes = "(" + U + ")(";
    for (int j = 0; j < k.width; ++j) lanes += fmt::format("{}{}u", j ? ", " : "", j);
    lanes += ")";
  }
  s += fmt::format("  const {} lane = {};\n", U, lanes);
  for (int c = 0; c < k.chains; ++c)
    s += fmt::format("  {0} x{1} = convert_{0}(({2})((gid & 63u) + {3}u) + lane);\n", T, c, U, 16 * c);
  s += "  for (int i = 0; i < iters; ++i) {\n";
  for (int u = 0; u < k.unroll; ++u)
    for (int c = 0; c < k.chains; ++c)
      s += d.integer ? fmt::format("    x{0} = x{0} * A + B;\n", c) : fmt::format("    x{0} = fma(x{0}, A, B);\n", c);
  s += "  }\n  uint h = 0u;\n";
  for (int c = 0; c < k.chains; ++c) {
    if (k.width == 1) s += fmt::format("  h ^= fold(x{});\n", c);
    else
      for (int j = 0; j < k.width; ++j) s += fmt::format("  h ^= fold(x{}{});\n", c, lane(j));
  }
  s += "  out[gid] = h;\n}\n";
  return s;
}

}  // namespace

std::string dot_build_options(uint64_t capabilities, const std::string& device_version,
                              const std::string& opencl_c_version) {
  std::string o;
  if (version_of(device_version, "OpenCL ") >= 30) o = "-cl-std=CL3.0";
  else if (version_of(opencl_c_version, "OpenCL C ") >= 20) o = "-cl-std=CL2.0";
  if (capabilities & kDotInputPacked) o += " -D PP_DOT_PACKED=1";
  else if (capabilities & kDotInputVector) o += " -D PP_DOT_VECTOR=1";
  return o.size() && o[0] == ' ' ? o.substr(1) : o;
}

std::string compute_source(const ComputeKernel& k) { return compute_header(*k.dtype) + compute_kernel_source(k, "peak"); }

std::string compute_program_source(const std::vector<ComputeKernel>& kernels) {
  if (kernels.empty()) return "";
  std::string s = compute_header(*kernels.front().dtype);
  for (const ComputeKernel& k : kernels) s += compute_kernel_source(k, fmt::format("peak_{}", k.width));
  return s;
}

uint32_t compute_reference(const ComputeKernel& k, uint64_t gid, float fa, float fb, uint32_t ia, uint32_t ib,
                           int iters) {
  const ClDtype& d = *k.dtype;
  const std::string t = d.cl_type;
  const long steps = long(iters) * k.unroll;
  uint32_t h = 0;
  if (d.is_dot()) {
    const bool us = std::string(d.dot) == "us";
    const uint32_t a = (ia & 0xffu) * 0x01010101u;
    for (int c = 0; c < k.chains; ++c) {
      uint32_t x = uint32_t(gid & 63u) + 16u * uint32_t(c) + 1u;  // never 0: a zero chain stays 0
      for (long i = 0; i < steps; ++i) {
        int32_t dot = 0;
        for (int byte = 0; byte < 4; ++byte) {
          const uint8_t xb = uint8_t(x >> (8 * byte)), ab = uint8_t(a >> (8 * byte));
          dot += (us ? int32_t(xb) : int32_t(int8_t(xb))) * int32_t(int8_t(ab));
        }
        x = uint32_t(dot) + x;
      }
      h ^= x;
    }
    return h;
  }
  for (int c = 0; c < k.chains; ++c)
    for (int j = 0; j < k.width; ++j) {
      const uint32_t seed = uint32_t(gid & 63u) + 16u * uint32_t(c) + uint32_t(j);
      if (t == "float") {
        float x = float(seed);
        for (long i = 0; i < steps; ++i) x = std::fma(x, fa, fb);
        uint32_t b;
        std::memcpy(&b, &x, 4);
        h ^= b;
      } else if (t == "double") {
        double x = double(seed), a = double(fa), bb = double(fb);
        for (long i = 0; i < steps; ++i) x = std::fma(x, a, bb);
        uint64_t b;
        std::memcpy(&b, &x, 8);
        h ^= uint32_t(b ^ (b >> 32));
      } else if (t == "half") {
        const double a = round_to_half(fa), bb = round_to_half(fb);
        double x = round_to_half(double(seed));
        for (long i = 0; i < steps; ++i) x = round_to_half(x * a + bb);
        h ^= half_bits(x);
      } else if (t == "uint") {
        uint32_t x = seed;
        for (long i = 0; i < steps; ++i) x = x * ia + ib;
        h ^= x;
      } else if (t == "ushort") {
        uint16_t x = uint16_t(seed);
        for (long i = 0; i < steps; ++i) x = uint16_t(uint32_t(x) * uint16_t(ia) + uint16_t(ib));
        h ^= x;
      } else {
        uint8_t x = uint8_t(seed);
        for (long i = 0; i < steps; ++i) x = uint8_t(uint32_t(x) * uint8_t(ia) + uint8_t(ib));
        h ^= x;
      }
    }
  return h;
}

std::string memory_source() {
  std::string s;
  for (int w : vector_widths()) {
    const std::string F = vec("float", w);
    std::string sum = "s";
    if (w > 1) {
      sum.clear();
      for (int j = 0; j < w; ++j) sum += fmt::format("{}s{}", j ? " + " : "", lane(j));
    }
    s += fmt::format(
        "__kernel void read_{0}(__global const {1}* in, __global float* out, int per_item, ulong item_stride, ulong step) {{\n"
        "  const size_t gid = get_global_id(0), base = gid * item_stride;\n"
        "  {1} s = ({1})(0.0f);\n"
        "  for (int i = 0; i < per_item; ++i) s += in[base + (size_t)i * step];\n"
        "  out[gid] = {2};\n}}\n",
        w, F, sum);
    s += fmt::format(
        "__kernel void write_{0}(__global {1}* out, int per_item, ulong item_stride, ulong step) {{\n"
        "  const size_t gid = get_global_id(0), base = gid * item_stride;\n"
        "  for (int i = 0; i < per_item; ++i) out[base + (size_t)i * step] = ({1})((float)((uint)(gid + i) & 0xffffffu));\n"
        "}}\n",
        w, F);
    s += fmt::format(
        "__kernel void copy_{0}(__global const {1}* in, __global {1}* out, int per_item, ulong item_stride, ulong step) {{\n"
        "  const size_t gid = get_global_id(0), base = gid * item_stride;\n"
        "  for (int i = 0; i < per_item; ++i) out[base + (size_t)i * step] = in[base + (size_t)i * step];\n"
        "}}\n",
        w, F);
    const int count = kLocalFloats / w;
    s += fmt::format(
        "__kernel void local_{0}(__global float* out, int iters) {{\n"
        "  __local {1} buf[{2}];\n"
        "  const int lid = (int)get_local_id(0), lsz = (int)get_local_size(0);\n"
        "  for (int j = lid; j < {2}; j += lsz) buf[j] = ({1})((float)(j % 13));\n"
        "  barrier(CLK_LOCAL_MEM_FENCE);\n"
        "  {1} s0 = ({1})(0.0f), s1 = s0, s2 = s0, s3 = s0;\n"
        "  int j = lid;\n"
        "  for (int i = 0; i < iters; ++i) {{\n"
        "    s0 += buf[j & {3}]; s1 += buf[(j + lsz) & {3}]; s2 += buf[(j + 2 * lsz) & {3}]; s3 += buf[(j + 3 * lsz) & {3}];\n"
        "    j += 4 * lsz;\n"
        "  }}\n"
        "  {1} s = s0 + s1 + s2 + s3;\n"
        "  out[get_global_id(0)] = {4};\n}}\n",
        w, F, count, count - 1, sum);
  }
  s += "__kernel void chase(__global const uint* next, __global uint* out, int steps) {\n"
       "  uint p = 0u;\n"
       "  for (int i = 0; i < steps; ++i) p = next[p];\n"
       "  out[0] = p;\n}\n";
  s += fmt::format(
      "__kernel void chase_local(__global const uint* next, __global uint* out, int steps) {{\n"
      "  __local uint buf[{0}];\n"
      "  for (int j = (int)get_local_id(0); j < {0}; j += (int)get_local_size(0)) buf[j] = next[j];\n"
      "  barrier(CLK_LOCAL_MEM_FENCE);\n"
      "  if (get_local_id(0) == 0) {{\n"
      "    uint p = 0u;\n"
      "    for (int i = 0; i < steps; ++i) p = buf[p];\n"
      "    out[get_group_id(0)] = p;\n"
      "  }}\n}}\n",
      kLocalChaseEntries);
  return s;
}

}  // namespace peakprobe::gpu
