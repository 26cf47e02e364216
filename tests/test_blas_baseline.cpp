// The BLAS baselines found with dlopen: name and path errors, a strided sgemm against a double
// reference, thread control. Absent libraries skip the test (their error must still name the package).
#include <catch2/catch.hpp>

#include <dlfcn.h>
#include <link.h>
#include <sys/stat.h>

#include <cmath>
#include <cstring>
#include <random>

#include "asm/target.hpp"
#include "matmul/blas_baseline.hpp"
#include "skip.hpp"

using namespace peakprobe;

namespace {

bool is_regular_file(const std::string& p) {
  struct stat st {};
  return ::stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

// Largest |C - reference| relative to the largest |reference|, as in test_gemm.cpp; every element
// of C outside the m x n block (the ldc padding) must keep its sentinel.
double strided_sgemm_error(const BlasLibrary& lib, int64_t m, int64_t n, int64_t k, int64_t lda, int64_t ldb,
                           int64_t ldc, bool& padding_untouched) {
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> d(-1, 1);
  const float sentinel = -12345.0f;
  std::vector<float> a(size_t(m * lda), sentinel), b(size_t(k * ldb), sentinel), c(size_t(m * ldc), sentinel);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t p = 0; p < k; ++p) a[size_t(i * lda + p)] = d(rng);
  for (int64_t p = 0; p < k; ++p)
    for (int64_t j = 0; j < n; ++j) b[size_t(p * ldb + j)] = d(rng);
  lib.sgemm(m, n, k, a.data(), lda, b.data(), ldb, c.data(), ldc);
  double worst = 0, scale = 1e-30;
  padding_untouched = true;
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      double ref = 0;
      for (int64_t p = 0; p < k; ++p) ref += double(a[size_t(i * lda + p)]) * double(b[size_t(p * ldb + j)]);
      worst = std::max(worst, std::fabs(double(c[size_t(i * ldc + j)]) - ref));
      scale = std::max(scale, std::fabs(ref));
    }
    for (int64_t j = n; j < ldc; ++j) padding_untouched = padding_untouched && c[size_t(i * ldc + j)] == sentinel;
  }
  return worst / scale;
}

// The real file of the libm this process already uses, found without guessing the multiarch dir.
std::string libm_path() {
  void* h = dlopen("libm.so.6", RTLD_NOW | RTLD_LOCAL);
  if (!h) return "";
  std::string path;
  struct link_map* lm = nullptr;
  if (dlinfo(h, RTLD_DI_LINKMAP, &lm) == 0 && lm && lm->l_name) path = lm->l_name;
  dlclose(h);
  return path;
}

void check_library(const std::string& name, const std::string& package) {
  auto lib = BlasLibrary::open(name);
  if (!lib) {
    CHECK_THAT(lib.error(), Catch::Contains(package));
    CHECK_THAT(lib.error(), Catch::Contains("tried"));
    PP_SKIP(name << " is not installed here: " << lib.error());
  }
  BlasLibrary& l = **lib;
  INFO(name << " loaded from " << l.path() << ", version \"" << l.version() << "\"");
  CHECK(l.name() == name);
  CHECK(is_regular_file(l.path()));
  CHECK(l.path().front() == '/');
  CHECK_FALSE(l.version().empty());
  CHECK(l.set_threads(1));
  CHECK_FALSE(l.set_threads(0));

  bool padding_untouched = false;
  CHECK(strided_sgemm_error(l, 37, 29, 41, 41 + 7, 29 + 5, 29 + 11, padding_untouched) < 1e-5);
  CHECK(padding_untouched);

  // Two threads, and back to one: the pthread builds keep a pool and must follow both ways.
  CHECK(l.set_threads(2));
  CHECK(strided_sgemm_error(l, 37, 29, 41, 50, 40, 33, padding_untouched) < 1e-5);
  CHECK(strided_sgemm_error(l, 300, 257, 129, 131, 260, 257, padding_untouched) < 1e-5);
  CHECK(l.set_threads(1));
  CHECK(strided_sgemm_error(l, 1, 1, 1, 1, 1, 1, padding_untouched) < 1e-5);
}

}  // namespace

TEST_CASE("blas: an unknown library name is an error listing the known names", "[blas]") {
  auto lib = BlasLibrary::open("mkl");
  REQUIRE_FALSE(lib);
  CHECK_THAT(lib.error(), Catch::Contains("\"mkl\""));
  CHECK_THAT(lib.error(), Catch::Contains("openblas"));
  CHECK_THAT(lib.error(), Catch::Contains("blis"));
  auto empty = BlasLibrary::open("");
  REQUIRE_FALSE(empty);
  CHECK_THAT(empty.error(), Catch::Contains("openblas"));
  CHECK(default_blas_names() == std::vector<std::string>{"onednn", "openblas", "blis"});
}

TEST_CASE("blas: a path that does not exist is an error naming it", "[blas]") {
  const std::string path = "/nonexistent/peakprobe-test/libnosuchblas.so.1";
  auto lib = BlasLibrary::open(path);
  REQUIRE_FALSE(lib);
  CHECK_THAT(lib.error(), Catch::Contains(path));
  CHECK_THAT(lib.error(), Catch::Contains("does not exist"));
  auto soname = BlasLibrary::open("libnosuchblas.so.1");
  REQUIRE_FALSE(soname);
  CHECK_THAT(soname.error(), Catch::Contains("libnosuchblas.so.1"));
}

TEST_CASE("blas: a shared library without cblas_sgemm is rejected", "[blas]") {
  const std::string path = libm_path();
  REQUIRE_FALSE(path.empty());
  INFO("libm at " << path);
  auto lib = BlasLibrary::open(path);
  REQUIRE_FALSE(lib);
  CHECK_THAT(lib.error(), Catch::Contains(path));
  CHECK_THAT(lib.error(), Catch::Contains("cblas_sgemm"));
}

TEST_CASE("blas: OpenBLAS sgemm matches a double reference with padded leading dimensions", "[blas]") {
  check_library("openblas", "libopenblas0-pthread");
}

TEST_CASE("blas: BLIS sgemm matches a double reference with padded leading dimensions", "[blas]") {
  check_library("blis", "libblis4-pthread");
}

TEST_CASE("blas: oneDNN sgemm matches a double reference with padded leading dimensions", "[blas]") {
  check_library("onednn", "libdnnl2");
}

// --isa: each library is held to the narrowest level of the target, or says why it cannot be. Held,
// it must still compute right and say so in its version (oneDNN), or run the kernels asked for
// (OpenBLAS) or picked within the level (BLIS).
TEST_CASE("blas: each library is held to an ISA level or says why it cannot be", "[blas]") {
  const isa::LibraryIsaLimit limit = isa::host_target().library_isa_limit(isa::host_target().isa_levels().front());
  int opened = 0;
  for (const char* name : {"onednn", "openblas", "blis"}) {
    auto lib = BlasLibrary::open(name, limit);
    if (!lib) continue;
    ++opened;
    BlasLibrary& l = **lib;
    const std::string why = l.hold_to(limit);
    INFO(name << " version \"" << l.version() << "\", hold_to: \"" << why << "\"");
    if (!why.empty()) {
      CHECK_THAT(why, Catch::Contains("cannot hold") || Catch::Contains("still runs"));
      CHECK_THAT(why, Catch::Contains(limit.level) || Catch::Contains("ISA"));
      continue;
    }
    bool padding_untouched = false;
    CHECK(strided_sgemm_error(l, 37, 29, 41, 41, 29, 29, padding_untouched) < 1e-5);
    if (l.name() == "onednn") CHECK_THAT(l.version(), Catch::Contains("max ISA " + limit.level));
    if (l.name() == "openblas")
      CHECK_THAT(l.version(), Catch::Contains(limit.openblas_coretype, Catch::CaseSensitive::No));
    if (l.name() == "blis") {
      bool named = false;
      for (const auto& config : limit.blis_configs) named = named || (l.version() + " ").find(" " + config + " ") != std::string::npos;
      CHECK(named);
    }
  }
  if (opened == 0) PP_SKIP("none of oneDNN, OpenBLAS and BLIS is installed here");
  // No limit asked: nothing to hold, nothing refused.
  auto any = BlasLibrary::open("onednn");
  if (any) CHECK((*any)->hold_to({}).empty());
}

TEST_CASE("blas: oneDNN's bf16 and int8 GEMMs give our operand types' exact products", "[blas]") {
  auto lib = BlasLibrary::open("onednn");
  if (!lib) PP_SKIP("oneDNN is not installed here: " << lib.error());
  BlasLibrary& l = **lib;
  REQUIRE(l.set_threads(1));
  REQUIRE(l.supports(MatmulDtype::bf16));
  REQUIRE(l.supports(MatmulDtype::i8));
  const int64_t m = 19, n = 23, k = 37, lda = k + 3, ldb = n + 5, ldc = n + 2;
  std::mt19937 rng(5);
  // bf16 values with few mantissa bits (k/8 in -4..4), so every product and sum is exact in f32.
  std::vector<uint16_t> ab(size_t(m * lda)), bb(size_t(k * ldb));
  std::vector<double> af(ab.size()), bf(bb.size());
  auto bf16_of = [](float x) {
    uint32_t u;
    std::memcpy(&u, &x, 4);
    return uint16_t(u >> 16);
  };
  for (size_t i = 0; i < ab.size(); ++i) af[i] = double(int(rng() % 65) - 32) / 8, ab[i] = bf16_of(float(af[i]));
  for (size_t i = 0; i < bb.size(); ++i) bf[i] = double(int(rng() % 65) - 32) / 8, bb[i] = bf16_of(float(bf[i]));
  // u8 x s8 -> s32 with zero offsets, in the ranges run_matmul fills (A 0..63, B -64..63): without
  // VNNI oneDNN adds pairs of products in 16 bits, which saturate for full-range bytes.
  std::vector<uint8_t> a8(size_t(m * lda));
  std::vector<int8_t> b8(size_t(k * ldb));
  for (auto& x : a8) x = uint8_t(rng() & 63);
  for (auto& x : b8) x = int8_t(int(rng() & 127) - 64);
  std::vector<int32_t> c8(size_t(m * ldc), -7);
  REQUIRE(l.gemm(MatmulDtype::i8, m, n, k, a8.data(), lda, b8.data(), ldb, c8.data(), ldc).ok());
  std::vector<float> cf(size_t(m * ldc), -1.0f);
  auto bf16_run = l.gemm(MatmulDtype::bf16, m, n, k, ab.data(), lda, bb.data(), ldb, cf.data(), ldc);
  INFO((bf16_run.ok() ? std::string("ok") : bf16_run.error()));
  const bool bf16_ran = bf16_run.ok();
  if (!bf16_ran) CHECK_THAT(bf16_run.error(), Catch::Contains("unimplemented"));  // the CPU lacks it, nothing else
  int wrong_bf16 = 0, wrong_i8 = 0, padding_touched = 0;
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      double rf = 0;
      int64_t ref8 = 0;
      for (int64_t p = 0; p < k; ++p) {
        rf += af[size_t(i * lda + p)] * bf[size_t(p * ldb + j)];
        ref8 += int64_t(a8[size_t(i * lda + p)]) * int64_t(b8[size_t(p * ldb + j)]);
      }
      wrong_bf16 += bf16_ran && double(cf[size_t(i * ldc + j)]) != rf;
      wrong_i8 += c8[size_t(i * ldc + j)] != ref8;
    }
    for (int64_t j = n; j < ldc; ++j) padding_touched += cf[size_t(i * ldc + j)] != -1.0f || c8[size_t(i * ldc + j)] != -7;
  }
  CHECK(wrong_bf16 == 0);
  CHECK(wrong_i8 == 0);
  CHECK(padding_touched == 0);
  if (!bf16_ran) PP_SKIP("int8 checked; oneDNN has no bf16 GEMM kernel for this CPU: " << bf16_run.error());
}

TEST_CASE("blas: OpenBLAS and BLIS offer f32 only, and say so", "[blas]") {
  auto lib = BlasLibrary::open("openblas");
  if (!lib) PP_SKIP("OpenBLAS is not installed here: " << lib.error());
  CHECK((*lib)->supports(MatmulDtype::f32));
  CHECK_FALSE((*lib)->supports(MatmulDtype::bf16));
  CHECK_FALSE((*lib)->supports(MatmulDtype::i8));
  std::vector<uint8_t> a(16), b(16);
  std::vector<int32_t> c(16);
  auto r = (*lib)->gemm(MatmulDtype::i8, 2, 2, 2, a.data(), 2, b.data(), 2, c.data(), 2);
  REQUIRE_FALSE(r.ok());
  CHECK_THAT(r.error(), Catch::Contains("no int8 GEMM"));
}

TEST_CASE("blas: both libraries at once, by path, and reopened after closing", "[blas]") {
  auto first = BlasLibrary::open("openblas");
  auto second = BlasLibrary::open("blis");
  if (!first || !second) PP_SKIP("needs both OpenBLAS and BLIS: " << (first ? second.error() : first.error()));
  bool padding = false;
  // RTLD_LOCAL keeps their identically named symbols apart: each still computes the right product.
  CHECK(strided_sgemm_error(**first, 37, 29, 41, 48, 34, 40, padding) < 1e-5);
  CHECK(strided_sgemm_error(**second, 37, 29, 41, 48, 34, 40, padding) < 1e-5);

  // The recorded path loads the same library again, recognised by its symbols.
  for (auto* l : {&first, &second}) {
    auto again = BlasLibrary::open((**l)->path());
    REQUIRE(again);
    CHECK((*again)->name() == (**l)->name());
    CHECK((*again)->path() == (**l)->path());
  }

  // Dropping the handle and opening again works (the library itself stays loaded: RTLD_NODELETE).
  const std::string path = (*first)->path();
  CHECK((*first)->set_threads(2));
  CHECK(strided_sgemm_error(**first, 300, 257, 129, 131, 260, 257, padding) < 1e-5);
  first.value().reset();
  auto reopened = BlasLibrary::open("openblas");
  REQUIRE(reopened);
  CHECK((*reopened)->path() == path);
  CHECK(strided_sgemm_error(**reopened, 37, 29, 41, 48, 34, 40, padding) < 1e-5);
}

TEST_CASE("blas: sgemm arguments must fit cblas's 32-bit ints and the row-major strides", "[blas]") {
  CHECK(BlasLibrary::sgemm_args_ok(37, 29, 41, 41, 29, 29));
  CHECK(BlasLibrary::sgemm_args_ok(65536, 65536, 65536, 65536, 65536, 65536));
  CHECK(BlasLibrary::sgemm_args_ok(0, 0, 0, 1, 1, 1));
  CHECK_FALSE(BlasLibrary::sgemm_args_ok(0, 0, 0, 0, 1, 1));
  CHECK_FALSE(BlasLibrary::sgemm_args_ok(37, 29, 41, 40, 29, 29));  // lda < k
  CHECK_FALSE(BlasLibrary::sgemm_args_ok(37, 29, 41, 41, 28, 29));  // ldb < n
  CHECK_FALSE(BlasLibrary::sgemm_args_ok(37, 29, 41, 41, 29, 28));  // ldc < n
  CHECK_FALSE(BlasLibrary::sgemm_args_ok(int64_t(1) << 31, 1, 1, 1, 1, 1));
  CHECK_FALSE(BlasLibrary::sgemm_args_ok(1, 1, 1, int64_t(1) << 31, 1, 1));
  CHECK_FALSE(BlasLibrary::sgemm_args_ok(-1, 1, 1, 1, 1, 1));
}
