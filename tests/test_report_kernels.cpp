// The full report's matmul on the roofline: how a finished matmul row becomes a score request.
#include <catch2/catch.hpp>

#include <algorithm>

#include "cli/report_kernels.hpp"
#include "cpu/cpu_info.hpp"
#include "matmul/gemm.hpp"
#include "matmul/matmul_run.hpp"
#include "skip.hpp"

using namespace peakprobe;

namespace {
MatmulResult row(MatmulDtype dtype, int threads) {
  MatmulResult r;
  r.m = 1024, r.n = 512, r.k = 256, r.batch = 1, r.dtype = dtype, r.threads = threads;
  r.timing.min_ms = 2.0;
  r.gflops = 2.0 * 1024 * 512 * 256 / 2e-3 / 1e9;
  r.ceiling_gflops = 150;
  r.ceiling_measured_gflops = 148;
  r.ceiling_source = "the multiply-add";
  r.bound_by = "compute f32 512";
  return r;
}
}  // namespace

TEST_CASE("report kernels: a matmul row's score request counts its FLOPs, compulsory bytes and fastest call", "[report]") {
  const MatmulResult r = row(MatmulDtype::f32, 1);
  const ScoreRequest q = cli::matmul_score_request(r);
  CHECK(q.name == "matmul f32 1024x512x256, 1 thread");
  CHECK(q.dtype == "f32");
  CHECK(q.flops == Approx(2.0 * 1024 * 512 * 256));
  CHECK(q.bytes == Approx(matmul_bytes(1024, 512, 256, 1, MatmulDtype::f32)));
  CHECK(q.bytes == Approx(4.0 * (1024 * 256 + 256 * 512 + 1024 * 512)));
  CHECK(q.seconds == Approx(2e-3));
  CHECK(q.threads == 1);
  CHECK(q.level.empty());  // against DRAM
  // Its own roof: the row's compute ceiling at the product's clock, named by width and instruction.
  CHECK(q.roof_gflops == Approx(150));
  CHECK(q.roof_name == "f32 512 the multiply-add");
  CHECK(score_request_problem(q).empty());
  // A row with its own name: the score carries it, to match the row in report.json.
  MatmulResult named = r;
  named.name = matmul_name(1024, 512, 256, 1, MatmulDtype::f32, 1, ColdCacheMode::none);
  CHECK(cli::matmul_score_request(named).name == named.name);
}

TEST_CASE("report kernels: int8 is the table's i8, several threads and a batch are named, a memory roof is not the kernel's own", "[report]") {
  MatmulResult r = row(MatmulDtype::i8, 2);
  r.batch = 3;
  ScoreRequest q = cli::matmul_score_request(r);
  CHECK(q.dtype == "i8");
  CHECK(q.name == "matmul int8 1024x512x256 batch 3, 2 threads");
  CHECK(q.flops == Approx(3 * 2.0 * 1024 * 512 * 256));
  CHECK(q.threads == 2);
  r = row(MatmulDtype::f32, 1);
  r.bound_by = "memory DRAM";
  r.ceiling_source = "DRAM 20 GB/s (model estimate) x AI 3";
  q = cli::matmul_score_request(r);
  CHECK(q.roof_gflops == 0);  // the table's own roofs judge it
  CHECK(q.roof_name.empty());
  r = row(MatmulDtype::f32, 1);
  r.ceiling_gflops.reset();  // the roof was not measured
  CHECK(cli::matmul_score_request(r).roof_gflops == 0);
}

TEST_CASE("hw: the report's matmul runs on one core and on all, each row scored against its own roof", "[hw][report]") {
  const CpuInfo cpu = detect_cpu_info();
  if (!cpu.emulator.empty()) PP_SKIP("under an emulator the report runs no matmul (its timings mean nothing)");
  if (std::string why = gemm_unsupported(cpu, MatmulDtype::f32); !why.empty()) PP_SKIP("no bundled matmul here: " << why);
  const int all = int(cpu.core_order.size());
  RunDocument doc;
  // A table with DRAM roofs only: the compute roof that binds is the rows' own (the multiply-add on
  // the same cores), and there is no f32 peak to take a share of.
  CeilingTable table;
  for (int threads : {1, all}) table.memory.push_back({"DRAM", "load", threads, 10.0 * threads, 3, 1ull << 30});
  doc.ceilings = table;
  cli::GlobalOptions g;
  cli::measure_report_kernels(g, cpu, true, doc);
  const size_t expected = all > 1 ? 2 : 1;
  REQUIRE(doc.matmuls.size() <= expected);
  int scored = 0;
  for (const MatmulResult& r : doc.matmuls) {
    INFO(r.name << ": " << to_string(r.status) << " " << r.reason);
    CHECK(r.m == cli::kReportMatmulQuickSize);
    CHECK(r.status != Status::error);
    CHECK(r.max_rel_error < 1e-4);
    if (r.status != Status::ok) continue;  // a mistrusted row (a busy host) is left off the roofline
    ++scored;
    auto score = std::find_if(doc.scores.begin(), doc.scores.end(), [&](const KernelScore& s) { return s.name == r.name; });
    REQUIRE(score != doc.scores.end());
    CHECK(score->threads == r.threads);
    CHECK(score->bound_by.rfind("compute f32", 0) == 0);
    CHECK(score->peak_gflops == 0);
    // Against the roof of its own instruction on the same cores at the same clock: a share, at most
    // a little above one where the clock moved between the roof's probe and the product.
    CHECK(score->efficiency > 0.05);
    CHECK(score->efficiency < 1.05);
    CHECK(score->attainable_gflops == Approx(*r.ceiling_gflops));
  }
  // The rows come one thread count after the other; one is missing only when its roof stayed
  // mistrusted (logged): a busy host, where nothing else here can be checked.
  if (!doc.matmuls.empty()) CHECK(doc.matmuls.front().threads == 1);
  if (doc.matmuls.size() == 2) CHECK(doc.matmuls.back().threads == all);
  if (scored == 0) PP_SKIP("every matmul row stayed mistrusted (a busy host): no score could be checked");
  if (doc.matmuls.size() < expected)
    PP_SKIP("the roof of a thread count stayed mistrusted (a busy host): " << doc.matmuls.size() << " of " << expected
                                                                          << " matmul rows");
}
