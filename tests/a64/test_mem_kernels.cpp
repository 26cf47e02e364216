// The AArch64 memory kernels compute what their names say (copy copies, triad is b + 1.0 x c, update
// scales by 1.0, store writes 1.0), at every width (64, 128, and 512: four q registers per ld1/st1),
// and the pointer chase follows its chains.
#include <catch2/catch.hpp>

#include <regex>
#include <string>
#include <vector>

#include "asm/a64/mem_kernels.hpp"

using namespace peakprobe;

TEST_CASE("a64 mem kernels: every kernel computes its result at every width", "[a64][mem_kernels]") {
  for (int w : {64, 128, a64::kWidthX4})
    for (const auto& k : isa::mem_kernels()) {
      INFO(k.name << " at " << w);
      std::string listing;
      auto code = a64::compile_mem_kernel(k.kernel, w, &listing);
      REQUIRE(code.ok());
      if (w == a64::kWidthX4) {
        CHECK(code->array_step == uint64_t(64 * a64::kMemUnrollX4));
        // Four registers per access (ld1/st1 of four, post-indexed by their 64 bytes), or two stnp
        // pairs for non-temporal stores; no register pairs.
        if (k.loads > 0) CHECK(listing.find(".16b, [x") != std::string::npos);
        if (k.loads > 0) CHECK(listing.find("ld1 v") != std::string::npos);
        if (k.stores > 0) CHECK(listing.find(k.nontemporal ? "stnp q" : "st1 v") != std::string::npos);
        if (!k.nontemporal || k.loads > 0) CHECK(listing.find("], 64") != std::string::npos);
        CHECK(listing.find("ldp q") == std::string::npos);
        CHECK(listing.find("stp q") == std::string::npos);
      } else {
        CHECK(code->array_step == uint64_t(w / 8 * a64::kMemUnroll));
      }
      const size_t n = 4 * code->array_step / 8;  // doubles in 4 iterations
      std::vector<double> a(n, 3.0), b(n), c(n);
      for (size_t i = 0; i < n; ++i) {
        b[i] = double(i);
        c[i] = 2.0 * double(i);
      }
      code->fn.as<isa::MemFn>()(2, 4, a.data(), b.data(), c.data());
      for (size_t i = 0; i < n; ++i) {
        double want = 3.0;
        switch (k.kernel) {
          case isa::MemKernel::load: want = 3.0; break;
          case isa::MemKernel::store:
          case isa::MemKernel::store_nt: want = 1.0; break;
          case isa::MemKernel::copy:
          case isa::MemKernel::copy_nt: want = b[i]; break;
          case isa::MemKernel::triad:
          case isa::MemKernel::triad_nt: want = b[i] + c[i]; break;
          case isa::MemKernel::update: want = 3.0; break;
        }
        CHECK(a[i] == want);
      }
    }
  CHECK_FALSE(a64::compile_mem_kernel(isa::MemKernel::load, 256).ok());
}

TEST_CASE("a64 mem kernels: the load kernel only loads, no vector arithmetic per load", "[a64][mem_kernels]") {
  // An add per load takes a vector pipe a load: on a core with as many vector pipes as load pipes
  // the adds, not the loads, would bound the figure.
  for (int w : {64, 128, a64::kWidthX4}) {
    INFO(w);
    std::string listing;
    auto code = a64::compile_mem_kernel(isa::MemKernel::load, w, &listing);
    REQUIRE(code.ok());
    CHECK(listing.find(w == a64::kWidthX4 ? "ld1 v" : "ldp ") != std::string::npos);
    // No vector or scalar-FP add of any width (the reduction was `add v24.2d, ...` at 128 bits and
    // `add d24, d24, d16` at 64), nor any other arithmetic on the loaded registers.
    CHECK_FALSE(std::regex_search(listing, std::regex(R"((^|\n)\s*f?add [vd][0-9])")));
    CHECK(listing.find("fmla") == std::string::npos);
    CHECK(listing.find("fmul") == std::string::npos);
  }
}

TEST_CASE("a64 mem kernels: the pointer chase follows every chain", "[a64][mem_kernels]") {
  // Chain c: a ring of 3 slots; after 16 links per iteration x 3 iterations it is back at its start.
  std::vector<void*> ring(3 * 4);
  for (int c = 0; c < 4; ++c)
    for (int s = 0; s < 3; ++s) ring[size_t(c * 3 + s)] = &ring[size_t(c * 3 + (s + 1) % 3)];
  std::vector<void*> starts(4);
  for (int c = 0; c < 4; ++c) starts[size_t(c)] = &ring[size_t(c * 3)];
  auto fn = a64::compile_chase(4);
  REQUIRE(fn.ok());
  fn->as<isa::ChaseFn>()(3, starts.data());  // 48 links: a multiple of 3
  for (int c = 0; c < 4; ++c) CHECK(starts[size_t(c)] == &ring[size_t(c * 3)]);
  CHECK_FALSE(a64::compile_chase(a64::kMaxChaseChains + 1).ok());
}
