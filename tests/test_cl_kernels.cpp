#include <catch2/catch.hpp>

#include <cstring>
#include <cmath>

#include "cli_run.hpp"
#include "gpu/cl_kernels.hpp"
#include "scratch_dir.hpp"
#include "skip.hpp"

using namespace peakprobe::gpu;

namespace {

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t p = 0; (p = text.find(what, p)) != std::string::npos; p += what.size()) ++n;
  return n;
}

// binary16 bits of a small non-negative integer (exact below 2048), written independently of the
// library's rounding code.
std::string fmt_chain_fma(int c) { return "x" + std::to_string(c) + " = fma(x" + std::to_string(c) + ", A, B);"; }
std::string fmt_chain_int(int c) { return "x" + std::to_string(c) + " = x" + std::to_string(c) + " * A + B;"; }

uint32_t half_of_int(uint32_t n) {
  if (n == 0) return 0;
  int e = 0;
  while ((n >> (e + 1)) != 0) ++e;
  return uint32_t((e + 15) << 10) | ((n << (10 - e)) & 0x3ffu);
}

}  // namespace

TEST_CASE("compute kernels: independent chains of the type and width asked for", "[cl_kernels]") {
  for (const ClDtype& d : compute_dtypes())
    for (int w : vector_widths()) {
      if (d.is_dot()) continue;  // its own test below
      const ComputeKernel k = compute_kernel(d, w);
      const std::string src = compute_source(k);
      INFO(d.name << " x" << w << "\n" << src);
      CHECK(count(src, "__kernel void peak(") == 1);
      CHECK(k.chains * w >= 16);  // enough independent lanes for two 4-cycle pipes of 8 lanes
      // Each chain updated `unroll` times per iteration, only from itself.
      for (int c = 0; c < k.chains; ++c) {
        const std::string self = d.integer ? fmt_chain_int(c) : fmt_chain_fma(c);
        CHECK(count(src, self) == size_t(k.unroll));
      }
      // Every lane of every chain reaches the checksum.
      CHECK(count(src, "h ^= fold(") == size_t(k.chains * w));
      if (std::strlen(d.extension)) CHECK(count(src, std::string("#pragma OPENCL EXTENSION ") + d.extension) == 1);
      const std::string vt = w == 1 ? std::string(d.cl_type) : std::string(d.cl_type) + std::to_string(w);
      CHECK(count(src, vt + " x0 =") == 1);
      // Constants are arguments: nothing a compiler could fold.
      CHECK(src.find("0.999") == std::string::npos);
      CHECK(k.ops_per_iteration() == Approx(2.0 * w * k.chains * k.unroll));
    }
}

TEST_CASE("compute reference: the seeds, then each chain's own recurrence", "[cl_kernels]") {
  const ClDtype& f32 = *find_dtype("f32");
  const ComputeKernel k = compute_kernel(f32, 1);
  // No iteration: the XOR of the seeds (gid & 63) + 16 c.
  uint32_t want = 0;
  for (int c = 0; c < k.chains; ++c) {
    const float x = float(5 + 16 * c);
    uint32_t b;
    std::memcpy(&b, &x, 4);
    want ^= b;
  }
  CHECK(compute_reference(k, 5, kComputeA, kComputeB, kComputeIntA, kComputeIntB, 0) == want);
  CHECK(compute_reference(k, 5 + 64, kComputeA, kComputeB, kComputeIntA, kComputeIntB, 0) == want);
  // One iteration: `unroll` fused steps per chain.
  want = 0;
  for (int c = 0; c < k.chains; ++c) {
    float x = float(16 * c);
    for (int u = 0; u < k.unroll; ++u) x = std::fma(x, kComputeA, kComputeB);
    uint32_t b;
    std::memcpy(&b, &x, 4);
    want ^= b;
  }
  CHECK(compute_reference(k, 0, kComputeA, kComputeB, kComputeIntA, kComputeIntB, 1) == want);

  // 8-bit integers wrap as the device's uchar does.
  const ComputeKernel k8 = compute_kernel(*find_dtype("i8"), 4);
  uint32_t w8 = 0;
  for (int c = 0; c < k8.chains; ++c)
    for (int j = 0; j < 4; ++j) {
      uint8_t x = uint8_t(1 + 16 * c + j);
      for (int u = 0; u < k8.unroll * 3; ++u) x = uint8_t(x * 3 + 7);
      w8 ^= x;
    }
  CHECK(compute_reference(k8, 1, kComputeA, kComputeB, 3, 7, 3) == w8);

  // Half seeds are exact small integers.
  const ComputeKernel k16 = compute_kernel(*find_dtype("f16"), 2);
  uint32_t wh = 0;
  for (int c = 0; c < k16.chains; ++c)
    for (int j = 0; j < 2; ++j) wh ^= half_of_int(uint32_t(9 + 16 * c + j));
  CHECK(compute_reference(k16, 9, kComputeA, kComputeB, kComputeIntA, kComputeIntB, 0) == wh);
}

TEST_CASE("memory kernels: every kind at every width, and both chases", "[cl_kernels]") {
  const std::string src = memory_source();
  for (int w : vector_widths())
    for (const char* kind : {"read_", "write_", "copy_", "local_"})
      CHECK(count(src, std::string("__kernel void ") + kind + std::to_string(w) + "(") == 1);
  CHECK(count(src, "__kernel void chase(") == 1);
  CHECK(count(src, "__kernel void chase_local(") == 1);
  CHECK(count(src, "barrier(CLK_LOCAL_MEM_FENCE)") == vector_widths().size() + 1);
  CHECK(read_value(0) == 0.0f);
  CHECK(read_value(13 + 4) == 4.0f);
}

TEST_CASE("dot-product kernels: chains through the device's 4x8-bit dot product, width 4 only", "[cl_kernels]") {
  for (const char* name : {"i8dot", "u8i8dot"}) {
    const ClDtype* d = find_dtype(name);
    REQUIRE(d != nullptr);
    CHECK(d->is_dot());
    CHECK(std::string(d->extension) == "cl_khr_integer_dot_product");
    // Whatever widths were asked for: a dot product has one.
    CHECK(widths_for(*d, {}) == std::vector<int>{kDotWidth});
    CHECK(widths_for(*d, {1, 16}) == std::vector<int>{kDotWidth});
    const ComputeKernel k = compute_kernel(*d, 16);
    CHECK(k.width == kDotWidth);
    const std::string src = compute_source(k);
    INFO(name << "\n" << src);
    CHECK(count(src, "__kernel void peak(") == 1);
    CHECK(k.chains >= 8);
    for (int c = 0; c < k.chains; ++c) {
      const std::string x = "x" + std::to_string(c);
      CHECK(count(src, x + " = (uint)PP_DOT(" + x + ", A) + " + x + ";") == size_t(k.unroll));
    }
    CHECK(count(src, "h ^= fold(") == size_t(k.chains));
    // The packed built-in first, the vector one next, the emulation for tests only, else an error.
    const std::string kind = std::string(d->dot);
    const size_t packed = src.find("dot_4x8packed_" + kind + "_int("), vector = src.find("#define PP_DOT(a, b) dot(");
    CHECK(packed != std::string::npos);
    CHECK(vector != std::string::npos);
    CHECK(packed < vector);
    CHECK(count(src, std::string("#if defined(") + kEmulateDotDefine + ")") == 1);
    CHECK(count(src, "#error") == 1);
    CHECK(src.find(kind == "us" ? "as_uchar4(a)" : "as_char4(a)") != std::string::npos);
    if (kind == "us") CHECK(src.find("as_char4(a)") == std::string::npos);  // the first operand is unsigned
    // The host's choice of input form wins over the feature macros.
    CHECK(src.find("defined(PP_DOT_PACKED)") < packed);
    CHECK(src.find("defined(PP_DOT_VECTOR)") < vector);
    // Four multiplies and four adds per dot product.
    CHECK(k.ops_per_iteration() == Approx(8.0 * k.chains * k.unroll));
  }
  const std::vector<int> all = widths_for(*find_dtype("f32"), {});
  CHECK(all == vector_widths());
  CHECK(widths_for(*find_dtype("f32"), {8}) == std::vector<int>{8});
}

TEST_CASE("dot-product reference: bytes least significant first, signed or unsigned as the type says",
          "[cl_kernels]") {
  ComputeKernel k = compute_kernel(*find_dtype("i8dot"), kDotWidth);
  k.chains = 1;
  k.unroll = 1;
  // Work-item 0's chain starts at 1: 1 + (1,0,0,0).(3,3,3,3) = 4, then 16, 64, 256.
  CHECK(compute_reference(k, 0, 0, 0, 3, 0, 0) == 1u);
  CHECK(compute_reference(k, 0, 0, 0, 3, 0, 1) == 4u);
  CHECK(compute_reference(k, 0, 0, 0, 3, 0, 4) == 256u);
  // Only the low byte of the constant counts: 0x103 is 3 again.
  CHECK(compute_reference(k, 0, 0, 0, 0x103, 0, 4) == 256u);
  // Chain 8 starts at 129 = 0x81: signed, -127 x 3 x 1 byte; unsigned, 129 x 3.
  k.chains = 9;
  ComputeKernel u = k;
  u.dtype = find_dtype("u8i8dot");
  const uint32_t ss = compute_reference(k, 0, 0, 0, 3, 0, 1), us = compute_reference(u, 0, 0, 0, 3, 0, 1);
  CHECK((ss ^ us) == (uint32_t(129 - 381) ^ uint32_t(129 + 387)));
  // A negative constant byte: 0xfd is -3 in both kinds (the second operand is always signed).
  k.chains = 1;
  CHECK(compute_reference(k, 0, 0, 0, 0xfd, 0, 1) == uint32_t(1 - 3));
  u.chains = 1;
  CHECK(compute_reference(u, 0, 0, 0, 0xfd, 0, 1) == uint32_t(1 - 3));
}

TEST_CASE("dot-product build options: the OpenCL C version and the input form the device reports", "[cl_kernels]") {
  CHECK(dot_build_options(kDotInputPacked | kDotInputVector, "OpenCL 3.0 CUDA", "OpenCL C 1.2 ") ==
        "-cl-std=CL3.0 -D PP_DOT_PACKED=1");
  CHECK(dot_build_options(kDotInputVector, "OpenCL 2.1 ", "OpenCL C 2.0 ") == "-cl-std=CL2.0 -D PP_DOT_VECTOR=1");
  // An OpenCL 1.2 device and no capabilities reported: the feature macros decide.
  CHECK(dot_build_options(0, "OpenCL 1.2 ", "OpenCL C 1.2 ") == "");
  CHECK(dot_build_options(kDotInputPacked, "", "") == "-D PP_DOT_PACKED=1");
}

// No device here offers cl_khr_integer_dot_product, but clang's OpenCL C headers declare its
// built-ins: the generated source, in each input form the host may choose, must compile against them
// (an unknown built-in or a wrong signature is an error in OpenCL C). CI installs clang for the
// fuzzers; without it the test says so.
TEST_CASE("dot-product kernels compile against the extension's declarations, in each input form", "[cl_kernels]") {
  using peakprobe::test::quoted;
  if (std::system("command -v clang >/dev/null 2>&1") != 0) {
    PP_SKIP("no clang here to compile OpenCL C");
    return;
  }
  const peakprobe::test::ScratchDir dir;
  const std::string clang = "clang -x cl -cl-std=CL3.0 -Xclang -finclude-default-header -fsyntax-only ";
  // A SPIR target, as the drivers that offer the extension compile for, with its feature macros.
  const std::string spir = clang + "-target spir64 ";
  const std::string with_extension =
      "-Xclang -cl-ext=+cl_khr_integer_dot_product,+__opencl_c_integer_dot_product_input_4x8bit_packed,"
      "+__opencl_c_integer_dot_product_input_4x8bit ";
  for (const char* name : {"i8dot", "u8i8dot"}) {
    const std::string src = dir.write(std::string(name) + ".cl", compute_source(compute_kernel(*find_dtype(name), 4)));
    const std::string log = dir.file("log.txt");
    for (const char* form : {"-D PP_DOT_PACKED=1 ", "-D PP_DOT_VECTOR=1 ", ""}) {
      const int rc = std::system((spir + with_extension + form + quoted(src) + " 2>" + quoted(log)).c_str());
      INFO(name << " " << form << "\n" << peakprobe::test::slurp(log));
      CHECK(rc == 0);
    }
    // For a target without the extension (the host's: no feature macros), and without emulation, the
    // source refuses to build, and says why.
    const int rc = std::system((clang + quoted(src) + " 2>" + quoted(log)).c_str());
    CHECK(rc != 0);
    CHECK_THAT(peakprobe::test::slurp(log), Catch::Contains("cl_khr_integer_dot_product without 4x8-bit inputs"));
  }
}

TEST_CASE("data types: names, OpenCL types and what they need", "[cl_kernels]") {
  REQUIRE(find_dtype("f64") != nullptr);
  CHECK(std::string(find_dtype("f64")->extension) == "cl_khr_fp64");
  CHECK(std::string(find_dtype("f16")->extension) == "cl_khr_fp16");
  CHECK(find_dtype("i8")->integer);
  CHECK_FALSE(find_dtype("f32")->integer);
  CHECK(find_dtype("bf16") == nullptr);
}
