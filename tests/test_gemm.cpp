// The generated GEMM against the plain reference: every dtype the CPU has, over many odd shapes,
// register blocks and thread grids, with blocks small enough to force every loop and edge path.
#include <catch2/catch.hpp>

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <tuple>
#include <vector>

#include "asm/target.hpp"
#include "cpu/cpu_info.hpp"
#include "matmul/gemm.hpp"
#include "matmul/reference.hpp"
#include "skip.hpp"
#include "gemm_fixture.hpp"
#include "target_fixture.hpp"

using namespace peakprobe;
using test::gemm_error;
using test::limit;

namespace {

const CpuInfo& cpu() {
  static CpuInfo c = detect_cpu_info();
  return c;
}

std::vector<MatmulDtype> supported_dtypes() {
  std::vector<MatmulDtype> out;
  for (MatmulDtype d : {MatmulDtype::f32, MatmulDtype::bf16, MatmulDtype::i8})
    if (gemm_unsupported(cpu(), d).empty()) out.push_back(d);
  return out;
}


MatmulConfig small_blocks(MatmulDtype dt, int mr, int nv, int rows, int cols, const CpuInfo& on = cpu()) {
  MatmulConfig g;
  const int lanes = gemm_vector_bits(on) / 32;
  // Where the dtype runs on the matrix unit, its smallest tile block stands in for a register block.
  if (isa::host_target().gemm_tiles(on, dt)) mr = isa::MicroKernelShape::kTileRows, nv = 1;
  g.mr = mr, g.nv = nv, g.nr = nv * lanes;
  g.mc = mr * 2, g.nc = g.nr * 2, g.kc = 4 * (4 / element_bytes(dt));
  g.thread_rows = rows, g.thread_cols = cols, g.threads = rows * cols;
  return g;
}

}  // namespace

TEST_CASE("gemm: every dtype and edge path matches the reference, sizes 1..70", "[gemm]") {
  for (MatmulDtype dt : supported_dtypes()) {
    Gemm gemm(cpu(), dt);
    std::mt19937 rng(7);
    std::uniform_int_distribution<int> dim(1, 70);
    for (int trial = 0; trial < (dt == MatmulDtype::f32 ? 60 : 25); ++trial) {
      const int m = dim(rng), n = dim(rng), k = dim(rng);
      INFO(to_string(dt) << " " << m << "x" << n << "x" << k);
      MatmulConfig g = default_config(cpu(), dt, m, n, k, 1 + trial % 2);
      CHECK(gemm_error(gemm, m, n, k, g) <= limit(dt));
    }
  }
}

TEST_CASE("gemm: primes, tall and skinny shapes, small blocks, register blocks and thread grids", "[gemm]") {
  struct Shape { int m, n, k; };
  const int regs = gemm_vector_registers(gemm_vector_bits(cpu()));
  for (MatmulDtype dt : supported_dtypes()) {
    Gemm gemm(cpu(), dt);
    for (Shape s : {Shape{127, 131, 137}, Shape{1, 513, 3}, Shape{513, 1, 7}, Shape{7, 5, 1000}, Shape{200, 3, 1},
                    Shape{97, 200, 61}}) {
      // Register blocks of every width; a smaller register file holds fewer.
      // (Tile blocks too, where the dtype runs on the matrix unit; each kind skips the other's.)
      for (auto [mr, nv] : {std::pair{6, regs == 32 ? 4 : 2}, std::pair{8, 3}, std::pair{1, 1}, std::pair{4, 2},
                            std::pair{32, 2}, std::pair{16, 3}}) {
        if (!isa::host_target().check_kernel_shape(gemm.micro_kernel_shape(mr, nv, false), regs).empty()) continue;
        for (auto [rows, cols] : {std::pair{1, 1}, std::pair{2, 1}, std::pair{1, 2}}) {
          INFO(to_string(dt) << " " << s.m << "x" << s.n << "x" << s.k << " block " << mr << "x" << nv
                             << " grid " << rows << "x" << cols);
          CHECK(gemm_error(gemm, s.m, s.n, s.k, small_blocks(dt, mr, nv, rows, cols)) <= limit(dt));
        }
      }
      CHECK(gemm_error(gemm, s.m, s.n, s.k, default_config(cpu(), dt, s.m, s.n, s.k, 1)) <= limit(dt));
    }
  }
}

TEST_CASE("gemm: f32 read in place (A, B or both) matches the reference at every edge and thread split", "[gemm]") {
  if (!gemm_unsupported(cpu(), MatmulDtype::f32).empty()) PP_SKIP("this CPU runs no f32 kernels");
  const int regs = gemm_vector_registers(gemm_vector_bits(cpu()));
  Gemm gemm(cpu(), MatmulDtype::f32);
  struct Shape { int m, n, k; };
  // Odd sizes (an edge panel of B beside whole ones), powers of two (rows of B a
  // power of two apart), one row, one column, deep K over several k blocks.
  for (Shape s : {Shape{127, 131, 137}, Shape{128, 128, 128}, Shape{1, 513, 3}, Shape{200, 3, 1}, Shape{7, 5, 1000},
                  Shape{97, 200, 61}}) {
    for (auto [pack_a, pack_b] : {std::pair{false, true}, std::pair{true, false}, std::pair{false, false}}) {
      // Blocks small enough that every B panel is met by several row blocks and k blocks, on one
      // thread (the in-place first call packs for the others), on a grid over N (each thread its own
      // panels), over M (B packed ahead shared by the threads of a column, or read in place by each
      // into panels of its own), and with K split.
      // (A grid over N with K split too: a K part's buffer holds its thread's columns, split in vectors.)
      for (auto [rows, cols, k_parts] : {std::tuple{1, 1, 1}, std::tuple{1, 2, 1}, std::tuple{2, 1, 1}, std::tuple{1, 1, 2},
                                         std::tuple{1, 2, 2}}) {
        MatmulConfig g = small_blocks(MatmulDtype::f32, 6, regs == 32 ? 4 : 2, rows, cols);
        g.kc = 24;
        g.k_threads = k_parts;
        g.threads = rows * cols * k_parts;
        g.pack_a = pack_a, g.pack_b = pack_b;
        INFO(s.m << "x" << s.n << "x" << s.k << " pack_a " << pack_a << " pack_b " << pack_b << " grid " << rows << "x"
                 << cols << " k parts " << k_parts);
        CHECK(gemm_error(gemm, s.m, s.n, s.k, g) <= limit(MatmulDtype::f32));
      }
      MatmulConfig whole = default_config(cpu(), MatmulDtype::f32, s.m, s.n, s.k, 1);
      whole.pack_a = pack_a, whole.pack_b = pack_b;
      CHECK(gemm_error(gemm, s.m, s.n, s.k, whole) <= limit(MatmulDtype::f32));
    }
  }
  // Leading dimensions wider than the matrices (rows of A, B and C with gaps between them).
  {
    const int64_t m = 37, n = 131, k = 53, lda = k + 3, ldb = n + 7, ldc = n + 5;
    std::mt19937 rng(11);
    std::uniform_real_distribution<float> real(-1, 1);
    std::vector<float> a(size_t(m * lda)), b(size_t(k * ldb)), c(size_t(m * ldc), 7.0f);
    for (float& v : a) v = real(rng);
    for (float& v : b) v = real(rng);
    MatmulConfig g = small_blocks(MatmulDtype::f32, 6, regs == 32 ? 4 : 2, 1, 1);
    g.kc = 24;
    g.pack_a = g.pack_b = false;
    REQUIRE(gemm.run(GemmArgs{m, n, k, a.data(), lda, b.data(), ldb, c.data(), ldc}, g).ok());
    std::vector<double> ref(static_cast<size_t>(n));
    double worst = 0, scale = 1e-30;
    for (int64_t i = 0; i < m; ++i) {
      reference_row(MatmulDtype::f32, i, n, k, a.data(), lda, b.data(), ldb, ref.data());
      for (int64_t j = 0; j < n; ++j) {
        worst = std::max(worst, std::fabs(double(c[size_t(i * ldc + j)]) - ref[size_t(j)]));
        scale = std::max(scale, std::fabs(ref[size_t(j)]));
      }
      for (int64_t j = n; j < ldc; ++j) CHECK(c[size_t(i * ldc + j)] == 7.0f);  // the gaps stay untouched
    }
    CHECK(worst / scale <= limit(MatmulDtype::f32));
  }
  // Only f32 reads B in place (on any grid: several rows of threads each into panels of their own).
  MatmulConfig rows = small_blocks(MatmulDtype::f32, 6, regs == 32 ? 4 : 2, 2, 1);
  rows.pack_b = false;
  CHECK(check_config(cpu(), MatmulDtype::f32, rows).empty());
  for (MatmulDtype dt : supported_dtypes())
    if (dt != MatmulDtype::f32) {
      MatmulConfig g = default_config(cpu(), dt, 64, 64, 64, 1);
      g.pack_b = false;
      CHECK_FALSE(check_config(cpu(), dt, g).empty());
    }
}

// A read in place where K ends inside a k group (bf16 K odd, int8 K not a multiple of 4): the last
// k step reads only the values the rows hold. Each row is followed by a gap value (lda = K + 1), a
// NaN for bf16, which a whole-group read would multiply by the packed B's zero (NaN); the last row
// ends where the mapping ends, so a read past it faults.
TEST_CASE("gemm: A read in place whose K ends inside a k group reads nothing past its rows", "[gemm]") {
  const isa::Target& t = isa::host_target();
  if (!t.a_in_place_partial_groups()) PP_SKIP("this target's kernels read A in place in whole k groups only");
  const size_t page = size_t(sysconf(_SC_PAGESIZE));
  int checked = 0;
  // Every vector ISA level this CPU runs (the narrower kernels too), every dtype with k groups, the
  // tallest block (every row pointer) and a short one.
  for (const std::string& level : t.isa_levels())
  for (MatmulDtype dt : {MatmulDtype::bf16, MatmulDtype::i8}) {
    const auto on_level = t.limit_isa(cpu(), level);
    if (!on_level) continue;
    const CpuInfo& on = *on_level;
    if (!gemm_unsupported(on, dt).empty() || a_in_place_rows(on, dt) == 0) continue;
    const int regs = gemm_vector_registers(gemm_vector_bits(on));
    Gemm gemm(on, dt);
    const int kg = gemm.micro_kernel_shape(1, 1, true).k_group(), es = element_bytes(dt);
    for (const int mr : {a_in_place_rows(on, dt), 2}) {
    int nv = 4;
    while (nv > 1 && !t.check_kernel_shape(gemm.micro_kernel_shape(mr, nv, true), regs).empty()) --nv;
    for (int tail = 1; tail < kg; ++tail)
      for (const int64_t k : {int64_t(tail), int64_t(5 * kg + tail), int64_t(37 * kg + tail)}) {
        const int64_t m = 13, n = 70, lda = k + 1;
        const size_t a_bytes = size_t(m * lda) * size_t(es), pages = (a_bytes + page - 1) / page;
        void* map = mmap(nullptr, (pages + 1) * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        REQUIRE(map != MAP_FAILED);
        auto* base = static_cast<uint8_t*>(map);
        REQUIRE(mprotect(base + pages * page, page, PROT_NONE) == 0);
        // The last row's gap value lies past the mapping: its last element touches the guard page.
        uint8_t* a = base + pages * page - a_bytes + size_t(es);
        std::mt19937 rng{uint32_t(k)};
        for (int64_t i = 0; i < m; ++i)
          for (int64_t j = 0; j <= k && (i + 1 < m || j < k); ++j) {
            uint8_t* e = a + size_t(i * lda + j) * size_t(es);
            if (dt == MatmulDtype::i8) *e = uint8_t(j == k ? 0xff : rng() & 0x3f);
            else {
              const uint16_t bits = j == k ? uint16_t(0x7fc0) : uint16_t(0x3f80 + (rng() & 0x3f));  // NaN, or 1.x
              std::memcpy(e, &bits, 2);
            }
          }
        std::vector<uint8_t> b(size_t(k * n) * size_t(es)), c(size_t(m * n) * 4);
        for (auto& x : b) x = uint8_t(rng() & 0x3f);
        for (auto [rows, cols, k_parts, kc] : {std::tuple{1, 1, 1, 0}, std::tuple{1, 1, 1, 4}, std::tuple{2, 1, 1, 4},
                                               std::tuple{1, 2, 1, 0}, std::tuple{1, 1, 2, 0}, std::tuple{1, 1, 2, 4}}) {
          MatmulConfig g = small_blocks(dt, mr, nv, rows, cols, on);
          // One k block (the unrolled loop, then the last group), or blocks of 4 k groups: only
          // the last reads the partial group.
          g.kc = int(kc > 0 ? kc * kg : (k + kg - 1) / kg * kg);
          g.k_threads = k_parts;
          g.threads = rows * cols * k_parts;
          g.pack_a = false;
          INFO(level << " " << to_string(dt) << " K " << k << " (a last group of " << tail << ") block " << mr
                     << "x" << nv << " kc " << g.kc << " grid " << rows << "x" << cols << " K parts " << k_parts);
          REQUIRE(check_config(on, dt, g).empty());
          REQUIRE(a_in_place_depth_refusal(on, dt, g, k).empty());
          REQUIRE(gemm.run(GemmArgs{m, n, k, a, lda, b.data(), n, c.data(), n}, g).ok());
          CHECK(test::relative_error(dt, m, n, k, a, lda, b.data(), n, c.data(), n) <= limit(dt));
          ++checked;
        }
        munmap(map, (pages + 1) * page);
      }
    }
  }
  if (checked == 0) PP_SKIP("no dtype with k groups reads A in place on this CPU");
}

// B read in place up to its very last element: an edge panel's kernels (Target::b_in_place_edges)
// must not read past a row, or the last row of a B that ends where the mapping ends would fault.
TEST_CASE("gemm: B read in place ends at an unreadable page and its edge panel reads nothing past it", "[gemm]") {
  if (!gemm_unsupported(cpu(), MatmulDtype::f32).empty()) PP_SKIP("this CPU runs no f32 kernels");
  const int regs = gemm_vector_registers(gemm_vector_bits(cpu()));
  Gemm gemm(cpu(), MatmulDtype::f32);
  const size_t page = size_t(sysconf(_SC_PAGESIZE));
  // n columns: whole panels and an edge of a few columns, whatever the panel's width.
  for (const int n : {67, 131, 3}) {
    const int64_t m = 29, k = 41;
    const size_t b_bytes = size_t(k * n) * 4, pages = (b_bytes + page - 1) / page;
    void* map = mmap(nullptr, (pages + 1) * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    REQUIRE(map != MAP_FAILED);
    auto* base = static_cast<uint8_t*>(map);
    REQUIRE(mprotect(base + pages * page, page, PROT_NONE) == 0);
    auto* b = reinterpret_cast<float*>(base + pages * page - b_bytes);  // its last element touches the guard
    std::mt19937 rng{uint32_t(n)};
    std::uniform_real_distribution<float> real(-1, 1);
    std::vector<float> a(size_t(m * k)), c(size_t(m * n));
    for (float& v : a) v = real(rng);
    for (int64_t i = 0; i < k * n; ++i) b[i] = real(rng);
    // One thread, a grid over N, one over M (each row of threads reads B on its own), K split.
    for (auto [rows, cols, k_parts] :
         {std::tuple{1, 1, 1}, std::tuple{1, 2, 1}, std::tuple{2, 1, 1}, std::tuple{1, 1, 2}}) {
      MatmulConfig g = small_blocks(MatmulDtype::f32, 6, regs == 32 ? 4 : 2, rows, cols);
      g.kc = 24;
      g.k_threads = k_parts;
      g.threads = rows * cols * k_parts;
      g.pack_b = false;
      INFO("n " << n << " grid " << rows << "x" << cols << " K parts " << k_parts << ", edge panel "
                << (isa::host_target().b_in_place_edges(gemm.micro_kernel_shape(g.mr, g.nv, false, true))
                        ? "read in place"
                        : "packed ahead"));
      REQUIRE(gemm.run(GemmArgs{m, n, k, a.data(), k, b, n, c.data(), n}, g).ok());
      std::vector<double> ref(static_cast<size_t>(n));
      double worst = 0, scale = 1e-30;
      for (int64_t i = 0; i < m; ++i) {
        reference_row(MatmulDtype::f32, i, n, k, a.data(), k, b, n, ref.data());
        for (int64_t j = 0; j < n; ++j) {
          worst = std::max(worst, std::fabs(double(c[size_t(i * n + j)]) - ref[size_t(j)]));
          scale = std::max(scale, std::fabs(ref[size_t(j)]));
        }
      }
      CHECK(worst / scale <= limit(MatmulDtype::f32));
    }
    munmap(map, (pages + 1) * page);
  }
}

TEST_CASE("gemm: A read in place matches the reference for every dtype packed as it is, up to the tallest block",
          "[gemm]") {
  // A packed word of A is one row's k group (an f32, a bf16 pair, an int8 quad): where the packing
  // leaves it as it is, the kernels can read A's own rows instead, in blocks up to the tallest the
  // target keeps row pointers for; K must then be whole k groups. At every ISA level the CPU reaches.
  const isa::Target& t = isa::host_target();
  std::vector<std::pair<std::string, CpuInfo>> cpus{{"widest", cpu()}};
  for (const std::string& level : t.isa_levels())
    if (auto limited = t.limit_isa(cpu(), level)) cpus.emplace_back(level, *limited);
  int checked = 0;
  for (const auto& entry : cpus) {
    const std::string& level = entry.first;
    const CpuInfo& on = entry.second;
    const int regs = gemm_vector_registers(gemm_vector_bits(on));
    for (MatmulDtype dt : {MatmulDtype::f32, MatmulDtype::bf16, MatmulDtype::i8}) {
      if (!gemm_unsupported(on, dt).empty()) continue;
      const int limit_rows = a_in_place_rows(on, dt);
      MatmulConfig model = default_config(on, dt, 64, 64, 64, 1);
      model.pack_a = false;
      if (limit_rows == 0) {  // the packing changes A's words here: no kernel reads it in place
        CHECK_FALSE(check_config(on, dt, model).empty());
        continue;
      }
      Gemm gemm(on, dt);
      // The tallest block the kernels read in place that the register file also holds (one vector).
      int tallest = limit_rows;
      while (tallest > 1 && !t.check_kernel_shape(gemm.micro_kernel_shape(tallest, 1, true), regs).empty()) --tallest;
      for (int mr : {tallest, std::min(tallest, 7), 3, 1}) {
        int nv = 4;
        while (nv > 1 && !t.check_kernel_shape(gemm.micro_kernel_shape(mr, nv, true), regs).empty()) --nv;
        REQUIRE(t.check_kernel_shape(gemm.micro_kernel_shape(mr, nv, true), regs).empty());
        for (auto [m, n, k] : {std::tuple{127, 131, 136}, std::tuple{1, 513, 4}, std::tuple{200, 3, 8},
                               std::tuple{7, 5, 1000}, std::tuple{97, 200, 60}})
          for (auto [rows, cols, k_parts] :
               {std::tuple{1, 1, 1}, std::tuple{2, 1, 1}, std::tuple{1, 2, 1}, std::tuple{1, 1, 2}}) {
            MatmulConfig g = small_blocks(dt, mr, nv, rows, cols, on);
            g.k_threads = k_parts;
            g.threads = rows * cols * k_parts;
            g.pack_a = false;
            INFO(level << " " << to_string(dt) << " " << m << "x" << n << "x" << k << " block " << mr << "x" << nv
                       << " grid " << rows << "x" << cols << " k parts " << k_parts);
            REQUIRE(check_config(on, dt, g).empty());
            CHECK(gemm_error(gemm, m, n, k, g) <= limit(dt));
            ++checked;
          }
      }
      // The tallest block with B read in place too, where the dtype can (both pointers then saved).
      if (b_in_place_possible(dt) && !t.gemm_widened(on, dt)) {
        int nv = 4;
        while (nv > 1 && !t.check_kernel_shape(gemm.micro_kernel_shape(tallest, nv, true, true), regs).empty()) --nv;
        REQUIRE(t.check_kernel_shape(gemm.micro_kernel_shape(tallest, nv, true, true), regs).empty());
        for (auto [m, n, k] : {std::tuple{127, 131, 136}, std::tuple{97, 200, 60}}) {
          MatmulConfig g = small_blocks(dt, tallest, nv, 1, 1, on);
          g.pack_a = g.pack_b = false;
          INFO(level << " " << to_string(dt) << " A and B in place, block " << tallest << "x" << nv);
          CHECK(gemm_error(gemm, m, n, k, g) <= limit(dt));
        }
      }
      // Rows of A with gaps between them (lda > k; for bf16 an odd lda, so that the words of a row
      // fall on 2-byte boundaries): the kernels step lda, not k.
      {
        const int es = element_bytes(dt);
        const int64_t m = 37, n = 53, k = 12 * 4, lda = k + 3;
        std::mt19937 rng(5);
        std::vector<uint8_t> a(size_t(m * lda * es)), b(size_t(k * n * es)), c(size_t(m * n * 4));
        for (auto& x : a) x = uint8_t(rng() & 0x3f);  // small values of every dtype (bf16/f32 bytes too)
        for (auto& x : b) x = uint8_t(rng() & 0x3f);
        MatmulConfig g = small_blocks(dt, std::min(tallest, 7), 1, 1, 1, on);
        g.pack_a = false;
        REQUIRE(gemm.run(GemmArgs{m, n, k, a.data(), lda, b.data(), n, c.data(), n}, g).ok());
        INFO(level << " " << to_string(dt) << " lda " << lda);
        CHECK(test::relative_error(dt, m, n, k, a.data(), lda, b.data(), n, c.data(), n) <= limit(dt));
      }
      // A block taller than the kernels keep row pointers for is refused, not run.
      MatmulConfig taller = small_blocks(dt, limit_rows + 1, 1, 1, 1, on);
      taller.pack_a = false;
      CHECK_FALSE(check_config(on, dt, taller).empty());
      // K that is not whole k groups, where the kernels read whole groups only: refused with the
      // reason before anything runs (the last group of a row would read past it). Where they read
      // a partial last group, the test below runs such K.
      const int kg = gemm.micro_kernel_shape(1, 1, true).k_group();
      if (kg > 1 && !t.a_in_place_partial_groups()) {
        const int64_t k = 4 * kg + 1;
        CHECK_THAT(a_in_place_depth_refusal(on, dt, model, k), Catch::Contains("multiple of " + std::to_string(kg)));
        std::vector<uint8_t> a(size_t(8 * k * 4)), b(size_t(k * 64 * 4)), c(size_t(8 * 64 * 4));
        auto run = gemm.run(GemmArgs{8, 64, k, a.data(), k, b.data(), 64, c.data(), 64}, model);
        REQUIRE_FALSE(run.ok());
        CHECK_THAT(run.error(), Catch::Contains("pack_a=0"));
        CHECK(a_in_place_depth_refusal(on, dt, model, k + kg - 1).empty());
      }
    }
  }
  if (checked == 0) PP_SKIP("this CPU runs no matmul kernels");
}

TEST_CASE("gemm: at every ISA level the CPU reaches, every dtype the level keeps matches the reference", "[gemm]") {
  // A level takes features away, and the kernels may change method with them (int8 may move to a
  // signed-by-signed dot product on A shifted by 128): each must still give the exact product.
  const auto& t = isa::host_target();
  int checked = 0;
  for (const std::string& level : t.isa_levels()) {
    auto limited = t.limit_isa(cpu(), level);
    if (!limited) continue;  // this CPU does not reach the level
    for (MatmulDtype dt : {MatmulDtype::f32, MatmulDtype::bf16, MatmulDtype::i8}) {
      if (!gemm_unsupported(*limited, dt).empty()) continue;
      Gemm gemm(*limited, dt);
      for (auto [m, n, k] : {std::tuple{37, 29, 67}, std::tuple{6, 16, 4}, std::tuple{1, 3, 130}}) {
        INFO("--isa " << level << " " << to_string(dt) << " " << m << "x" << n << "x" << k
                      << (t.gemm_signed_a(*limited, dt) ? " signed A" : ""));
        CHECK(gemm_error(gemm, m, n, k, small_blocks(dt, 4, 2, 1 + k % 2, 1, *limited)) <= limit(dt));
        CHECK(gemm_error(gemm, m, n, k, default_config(*limited, dt, m, n, k, 2)) <= limit(dt));
        ++checked;
      }
    }
  }
  if (checked == 0) PP_SKIP("this CPU reaches none of the ISA levels the matmul can be held to");
}

TEST_CASE("gemm: k = 0 gives zeros, buffers are reused across shapes", "[gemm]") {
  if (const std::string why = gemm_unsupported(cpu(), MatmulDtype::f32); !why.empty()) PP_SKIP(why);
  Gemm gemm(cpu(), MatmulDtype::f32);
  std::vector<float> c(12, 3.0f);
  float dummy = 0;
  REQUIRE(gemm.run(GemmArgs{3, 4, 0, &dummy, 0, &dummy, 4, c.data(), 4},
                   default_config(cpu(), MatmulDtype::f32, 3, 4, 1, 1))
              .ok());
  for (float x : c) CHECK(x == 0.0f);
  // A large shape grows the buffers, then a small one must not read stale panels.
  CHECK(gemm_error(gemm, 300, 300, 700, default_config(cpu(), MatmulDtype::f32, 300, 300, 700, 1)) < 1e-5);
  CHECK(gemm_error(gemm, 5, 9, 3, default_config(cpu(), MatmulDtype::f32, 5, 9, 3, 1)) < 1e-5);
}

TEST_CASE("gemm: configurations are checked before anything runs", "[gemm]") {
  const isa::Target& t = test::target();
  // The widest kernels the target has, whatever this machine runs.
  const CpuInfo c = test::cpu_with_every_feature();
  MatmulConfig good = default_config(c, MatmulDtype::f32, 100, 100, 100, 1);
  CHECK(check_config(c, MatmulDtype::f32, good).empty());
  MatmulConfig bad = good;
  bad.mc = good.mr * 2 + 1;
  CHECK_THAT(check_config(c, MatmulDtype::f32, bad), Catch::Contains("multiple of mr"));
  // A block taller than the register file holds is refused, for the reason the target gives.
  const int bits = t.gemm_vector_bits(c), regs = t.vector_registers(bits);
  bad = good;
  while (t.registers_needed({bad.mr, bad.nv, bits, MatmulDtype::f32}) <= regs) ++bad.mr;
  const std::string too_tall = t.check_kernel_shape({bad.mr, bad.nv, bits, MatmulDtype::f32, !bad.pack_a}, regs);
  INFO("block " << bad.mr << "x" << bad.nv << " on " << regs << " registers");
  CHECK_FALSE(too_tall.empty());
  CHECK(check_config(c, MatmulDtype::f32, bad) == too_tall);
  bad = good;
  bad.threads = 3;
  CHECK_THAT(check_config(c, MatmulDtype::f32, bad), Catch::Contains("thread grid"));
  MatmulConfig bf = default_config(c, MatmulDtype::bf16, 100, 100, 100, 1);
  bf.kc = 63;
  CHECK_THAT(check_config(c, MatmulDtype::bf16, bf), Catch::Contains("multiple of 2"));
  // A CPU the kernels cannot run on is refused when the GEMM runs, with what it lacks.
  if (const std::string missing = gemm_unsupported(CpuInfo{}, MatmulDtype::f32); !missing.empty()) {
    Gemm gemm(CpuInfo{}, MatmulDtype::f32);
    float x = 0;
    auto refused = gemm.run(GemmArgs{1, 1, 1, &x, 1, &x, 1, &x, 1}, good);
    REQUIRE_FALSE(refused.ok());
    CHECK_THAT(refused.error(), Catch::Contains(missing));
  }
}

TEST_CASE("gemm: a call checks its configuration even after another one passed", "[gemm]") {
  if (const std::string why = gemm_unsupported(cpu(), MatmulDtype::f32); !why.empty()) PP_SKIP(why);
  // The GEMM remembers the last configuration it passed, so that a small product does not ask the
  // CPU's features on every call: a different one must still be checked.
  Gemm gemm(cpu(), MatmulDtype::f32);
  const MatmulConfig good = default_config(cpu(), MatmulDtype::f32, 7, 9, 5, 1);
  MatmulConfig bad = good;
  bad.mc = good.mr * 2 + 1;
  CHECK(gemm_error(gemm, 7, 9, 5, good) < 1e-5);
  float x = 0;
  for (int again = 0; again < 2; ++again) {
    auto refused = gemm.run(GemmArgs{1, 1, 1, &x, 1, &x, 1, &x, 1}, bad);
    REQUIRE_FALSE(refused.ok());
    CHECK_THAT(refused.error(), Catch::Contains("multiple of mr"));
  }
  CHECK(gemm_error(gemm, 7, 9, 5, good) < 1e-5);
}

TEST_CASE("gemm: a batch runs item by item on one grid, or spread over thread groups, every item right", "[gemm]") {
  const int64_t m = 13, n = 37;
  for (MatmulDtype dt : supported_dtypes())
  for (int64_t k : {29, 3}) {  // 3: fewer k values than some splits ask for K parts
    const int es = element_bytes(dt);
    Gemm gemm(cpu(), dt);
    for (int64_t batch : {1, 2, 5}) {
      std::mt19937 rng(unsigned(batch * 7 + int(dt)));
      std::vector<uint8_t> a(size_t(batch * m * k * es)), b(size_t(batch * k * n * es));
      std::uniform_real_distribution<float> real(-1, 1);
      for (auto* v : {&a, &b})
        for (size_t i = 0; i < v->size() / size_t(es); ++i) {
          if (dt == MatmulDtype::f32) reinterpret_cast<float*>(v->data())[i] = real(rng);
          if (dt == MatmulDtype::bf16) reinterpret_cast<uint16_t*>(v->data())[i] = float_to_bf16(real(rng));
          if (dt == MatmulDtype::i8) (*v)[i] = uint8_t(rng() & 255);
        }
      // (groups, K parts, rows, cols): items one after another on a 2x1 grid; one item per thread;
      // uneven groups; K shared by 2 and 3 threads, alone, on a grid and in batch groups.
      for (auto [groups, parts, rows, cols] :
           {std::tuple{1, 1, 2, 1}, std::tuple{2, 1, 1, 1}, std::tuple{3, 1, 1, 1}, std::tuple{2, 1, 2, 1},
            std::tuple{1, 2, 1, 1}, std::tuple{1, 3, 1, 1}, std::tuple{1, 2, 2, 1}, std::tuple{2, 2, 1, 2}})
      for (bool pack_b : {true, false}) {  // f32 B also packed on the way, by each thread for itself
        if (!pack_b && dt != MatmulDtype::f32) continue;
        INFO(to_string(dt) << " k " << k << " batch " << batch << " groups " << groups << " K parts " << parts
                           << " grid " << rows << "x" << cols << (pack_b ? "" : " B on the way"));
        MatmulConfig g = small_blocks(dt, 4, 1, rows, cols);
        g.pack_b = pack_b;
        g.batch_threads = groups;
        g.k_threads = parts;
        g.threads = groups * parts * rows * cols;
        std::vector<uint8_t> c(size_t(batch * m * n * 4), 0x5a);
        auto ok = gemm.run_batch(GemmArgs{m, n, k, a.data(), k, b.data(), n, c.data(), n}, batch,
                                 BatchStrides{m * k, k * n, m * n}, g);
        REQUIRE(ok.ok());
        std::vector<double> ref(static_cast<size_t>(n));
        double worst = 0, scale = 1e-30;
        for (int64_t item = 0; item < batch; ++item)
          for (int64_t i = 0; i < m; ++i) {
            reference_row(dt, i, n, k, a.data() + item * m * k * es, k, b.data() + item * k * n * es, n, ref.data());
            for (int64_t j = 0; j < n; ++j) {
              worst = std::max(worst, std::fabs(c_value(dt, c.data() + item * m * n * 4, i * n + j) - ref[size_t(j)]));
              scale = std::max(scale, std::fabs(ref[size_t(j)]));
            }
          }
        CHECK(worst / scale <= limit(dt));
      }
    }
  }
}

TEST_CASE("gemm: the default tiling follows the caches and the problem", "[gemm]") {
  CpuInfo c = test::cpu_with_every_feature();
  c.smt_per_core = 1;
  c.caches = {{1, "data", 32 << 10, 64, 8, 1, 2}, {2, "unified", 1 << 20, 64, 8, 1, 2},
              {3, "unified", 32 << 20, 64, 16, 2, 1}};
  MatmulConfig g = default_config(c, MatmulDtype::f32, 4096, 4096, 4096, 2);
  REQUIRE(g.nr == g.nv * gemm_vector_bits(c) / 32);
  // Half of a 1 MiB L2 over one B micro-panel row of nr floats, in 64..512 k steps.
  const int steps = int(std::clamp<uint64_t>((1u << 20) / 2 / (uint64_t(g.nr) * 4), 64, 512));
  CHECK(g.kc == steps);
  CHECK(g.mc % g.mr == 0);
  CHECK(g.nc % g.nr == 0);
  CHECK(uint64_t(g.mc) * uint64_t(g.kc) * 4 <= (1u << 20) / 2);
  CHECK(g.thread_rows * g.thread_cols == 2);
  MatmulConfig b16 = default_config(c, MatmulDtype::bf16, 4096, 4096, 4096, 1);
  const isa::MicroKernelShape b16_shape = Gemm(c, MatmulDtype::bf16).micro_kernel_shape(b16.mr, b16.nv, false);
  if (!b16_shape.tiles)
    CHECK(b16.kc == 2 * steps);  // the same k steps hold two bf16 values each
  else
    CHECK(b16.kc % (2 * b16_shape.step_block()) == 0);  // whole tile depths of bf16 pairs
  MatmulConfig tiny = default_config(c, MatmulDtype::f32, 5, 7, 3, 1);
  CHECK(tiny.kc == 3);
  CHECK(tiny.mc == (5 + tiny.mr - 1) / tiny.mr * tiny.mr);  // m rounded up to whole blocks
  CHECK(tiny.nc == (7 + tiny.nr - 1) / tiny.nr * tiny.nr);
  CHECK(default_config(c, MatmulDtype::i8, 5, 7, 3, 1).kc == 4);  // k rounded up to whole quads
}
