// What the matmul commands parse and score: --config lists, dtypes, shapes, the roof that binds.
#include <catch2/catch.hpp>

#include "cli/matmul_common.hpp"

using namespace peakprobe;
using namespace peakprobe::cli;

TEST_CASE("matmul options: --config keeps what is not given and follows a new block", "[matmul_common]") {
  MatmulConfig base;
  base.mr = 6, base.nv = 4, base.nr = 64, base.mc = 252, base.kc = 512, base.nc = 1024;
  auto c = parse_config("mr=8,nv=3,kc=256,grid=2x1", base, 512);
  REQUIRE(c.ok());
  CHECK(c->mr == 8);
  CHECK(c->nr == 48);
  CHECK(c->kc == 256);
  CHECK(c->mc % 8 == 0);   // 252 rounded up to whole micro-panels of 8 rows
  CHECK(c->nc % 48 == 0);
  CHECK(c->threads == 2);
  CHECK(c->thread_rows == 2);
  CHECK(c->pack_a);
  auto nr = parse_config("nr=32,pack_a=0", base, 512);
  REQUIRE(nr.ok());
  CHECK(nr->nv == 2);
  CHECK_FALSE(nr->pack_a);
  CHECK(config_text(*nr) == "mr=6,nv=2,mc=252,kc=512,nc=1024,grid=1x1,pack_a=0");
  for (const char* bad : {"kc", "kc=0", "kc=-4", "kc=12x", "grid=2", "grid=0x1", "nr=20", "pack_a=2", "speed=11"}) {
    INFO(bad);
    CHECK_FALSE(parse_config(bad, base, 512).ok());
  }
}

TEST_CASE("matmul options: dtypes and shapes", "[matmul_common]") {
  CHECK(*parse_dtype("f32") == MatmulDtype::f32);
  CHECK(*parse_dtype("bf16") == MatmulDtype::bf16);
  CHECK(*parse_dtype("int8") == MatmulDtype::i8);
  CHECK_FALSE(parse_dtype("fp8").ok());
  int64_t m = 0, n = 0, k = 0;
  CHECK(parse_shape("3,5,7", m, n, k));
  CHECK((m == 3 && n == 5 && k == 7));
  for (const char* bad : {"3,5", "3,5,7,9", "0,1,1", "1,1,65537", "a,b,c", "3;5;7"}) CHECK_FALSE(parse_shape(bad, m, n, k));
}

TEST_CASE("matmul score: compute roof for reuse-rich shapes, memory roof for thin ones", "[matmul_common]") {
  MachineModel machine;
  machine.cores = 2, machine.l2_bytes = 1 << 20, machine.l3_bytes = 32 << 20;
  machine.dram_gbps = 20, machine.dram_total_gbps = 40;
  MatmulRoof roof;
  roof.gflops = 100;
  roof.source = "vfmadd231ps zmm, zmm, zmm";
  MatmulResult square;
  square.m = square.n = square.k = 1024, square.gflops = 90, square.arithmetic_intensity = 170;
  score_matmul(square, roof, machine);
  CHECK(square.bound_by == "compute f32 512");
  CHECK(*square.efficiency == Approx(0.9));
  // 65536 x 4 x 4096: 1 GB of A, AI about 2: 20 GB/s x 2 = 40 GFLOP/s is the roof.
  MatmulResult thin;
  thin.m = 65536, thin.n = 4, thin.k = 4096, thin.gflops = 30, thin.arithmetic_intensity = 2;
  score_matmul(thin, roof, machine);
  CHECK(thin.bound_by == "memory DRAM");
  CHECK(*thin.ceiling_gflops == Approx(40));
  CHECK(*thin.efficiency == Approx(0.75));
}
