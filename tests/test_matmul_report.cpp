// Tests for src/report/matmul_report.cpp: golden console, Markdown, CSV and JSON output for three
// hand-made results (f32 with two baselines, int8 without a ceiling, a mistrusted f32 run), the JSON
// round trip, and the keys `compare` reads.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "compare/compare.hpp"
#include "harness/core_availability.hpp"
#include "report/matmul_report.hpp"
#include "report_fixture.hpp"

using namespace peakprobe;
using nlohmann::json;

namespace {

double gflops_of(int64_t m, int64_t n, int64_t k, int64_t batch, double ms) {
  return 2.0 * double(m) * double(n) * double(k) * double(batch) / (ms * 1e-3) / 1e9;
}

MatmulResult f32_with_baselines() {
  MatmulResult r;
  r.name = "matmul f32 1024x1024x1024 batch 1, 1 thread";
  r.m = r.n = r.k = 1024;
  r.kernel = "avx512 f32 6x64";
  r.config = {6, 4, 64, 96, 384, 1024, 1, 1, 1};
  r.config_source = "cost model";
  r.max_rel_error = 7.8e-7;
  r.rows_checked = 1024;
  r.timing = {20.312, 20.150, 20.900, 0.210, 25, 2};
  r.rounds = 2;  // in turns with its baselines
  r.gflops = gflops_of(1024, 1024, 1024, 1, 20.150);
  r.arithmetic_intensity = 2.0 * 1024 * 1024 * 1024 / (4.0 * 3 * 1024 * 1024);
  // The roof probe read 118.7 at 3.659 GHz; the product ran at 3.65 (fixture_clock): 118.4 there,
  // and the roof instruction kept 0.97 of its rate when run without pause: 114.8.
  r.ceiling_measured_gflops = 118.7;
  r.ceiling_clock_ghz = 3.659;
  r.ceiling_sustained_share = 0.97;
  r.ceiling_gflops = 118.4 * 0.97;
  r.ceiling_source = "vfmadd231ps zmm, zmm, zmm";
  r.bound_by = "compute f32 512";
  r.efficiency = r.gflops / *r.ceiling_gflops;
  r.clock = test::fixture_clock();
  // Its core ran it 95.1% of the time scanned around the timed calls.
  r.availability = {1, 0.951, 20.4, 24, 41.3, 77.9, 0.2};
  r.efficiency_while_running =
      *r.efficiency * 20.150 / (20.150 - unavoidable_interruptions(r.availability, 20.150).ms);
  BaselineResult openblas;
  openblas.library = "openblas";
  openblas.path = "/usr/lib/x86_64-linux-gnu/openblas-pthread/libopenblas.so.0";
  openblas.timing = {21.402, 20.990, 22.130, 0.301, 25, 2};
  openblas.gflops = gflops_of(1024, 1024, 1024, 1, 20.990);
  openblas.max_rel_error = 1.1e-6;
  openblas.speedup = 20.990 / 20.150;
  openblas.version = "OpenBLAS 0.3.21 DYNAMIC_ARCH NO_AFFINITY Zen MAX_THREADS=64";
  BaselineResult blis;
  blis.library = "blis";
  blis.path = "/usr/lib/x86_64-linux-gnu/blis-openmp/libblis.so.4";
  blis.timing = {23.910, 23.500, 25.020, 0.402, 25, 2};
  blis.gflops = gflops_of(1024, 1024, 1024, 1, 23.500);
  blis.max_rel_error = 9.5e-7;
  blis.speedup = 23.500 / 20.150;
  r.baselines = {openblas, blis};
  r.model_gap = 0.042;  // --autotune found a tiling 4.2% faster than the model's first choice
  r.kernel_l1_gflops = 112.6;  // the 6x64 kernel's k loop alone, in L1, at the product's clock
  r.kernel_l1_ghz = 3.412;     // the clock it was timed at
  // Its k step as a stream of its own instructions: 98.5% of the roof instruction's rate.
  r.kernel_mix_share = 0.985;
  r.kernel_mix_gflops = *r.ceiling_gflops * r.kernel_mix_share;
  r.kernel_mix_step = {{"vmovups zmm, m512", 4}, {"vpbroadcastd zmm, m32", 6}, {"vfmadd231ps zmm, zmm, zmm", 24}};
  return r;
}

// No ceiling was measured, and the one library that runs int8 got it wrong: the optional fields stay
// empty.
MatmulResult int8_without_ceiling() {
  MatmulResult r;
  r.name = "matmul int8 512x512x2048 batch 4, 2 threads";
  r.m = 512;
  r.n = 512;
  r.k = 2048;
  r.batch = 4;
  r.dtype = MatmulDtype::i8;
  r.threads = 2;
  r.cold_cache = "flush";
  r.kernel = "avx512 vnni int8 6x64";
  r.config = {6, 4, 64, 120, 1024, 512, 2, 2, 1};
  r.config_source = "autotune";
  r.max_rel_error = 0;
  r.rows_checked = 512;
  r.timing = {3.104, 3.020, 3.410, 0.092, 40, 2};
  r.gflops = gflops_of(512, 512, 2048, 4, 3.020);
  r.arithmetic_intensity = 2.0 * 512 * 512 * 2048 / (512.0 * 2048 + 2048.0 * 512 + 4.0 * 512 * 512);
  r.clock = {"perf_event cycles", 3.7, 3.69, 3.71, 0.0054};
  // Its roof probe stayed mistrusted: the row says why it has no ceiling.
  r.ceiling_missing = "the dot-product roof mistrusted: the core ran slowed in 9 of 15 samples";
  // A library timed but wrong (int8 byte products summed in 16 bits saturate): its time is kept for
  // the record, its status says why it is not a figure to compare with.
  BaselineResult onednn;
  onednn.library = "onednn";
  onednn.version = "oneDNN 2.6.3 OpenMP, max ISA avx2";
  onednn.timing = {2.512, 2.480, 2.790, 0.061, 40, 2};
  onednn.gflops = gflops_of(512, 512, 2048, 4, 2.480);
  onednn.speedup = 2.480 / 3.020;
  onednn.max_rel_error = 9.86e-2;
  onednn.status = Status::mistrusted;
  onednn.reason = "its result differs from the reference: max_rel_error 9.86e-02 (limit 0e+00)";
  r.baselines = {onednn};
  return r;
}

// Its reason holds a comma, a quote and a pipe; its std is NaN and its clock drift infinite, to
// prove that no output prints "nan" or "inf".
MatmulResult mistrusted_f32() {
  MatmulResult r;
  r.name = "matmul f32 256x256x256 batch 1, 8 threads, isa avx2";
  r.m = r.n = r.k = 256;
  r.threads = 8;  // the plan runs on 4 of them (its grid): said in the console's blocking
  r.kernel = "avx2 f32 6x16";
  r.isa_level = "avx2";  // held with --isa on a wider CPU
  r.config = {6, 2, 16, 48, 256, 128, 4, 2, 2};
  r.config.pack_a = false;  // A read in place: said in the JSON config and the console's blocking
  r.config_source = "--config";
  r.max_rel_error = 2.4e-7;
  r.rows_checked = 256;
  r.timing = {0.420, 0.310, 0.970, std::numeric_limits<double>::quiet_NaN(), 200, 2};
  r.gflops = gflops_of(256, 256, 256, 1, 0.310);
  r.arithmetic_intensity = 2.0 * 256 * 256 * 256 / (4.0 * 3 * 256 * 256);
  r.ceiling_gflops = 236.4;
  // Several threads: the roof is not scaled to the product's clock, and the console says nothing of it.
  r.ceiling_measured_gflops = 236.4;
  r.ceiling_clock_ghz = 3.59;
  r.ceiling_source = "vfmadd231ps ymm, ymm, ymm";
  r.bound_by = "compute f32 256";
  r.efficiency = r.gflops / 236.4;
  // Its 6x16 block's k loop alone on one core, times the 4 threads the plan started: not set against
  // the roof of all 8.
  r.kernel_l1_gflops = 4 * 57.9;
  r.clock = {"tsc + add-chain calibration", 3.65, 3.65, 0, std::numeric_limits<double>::infinity()};
  // Several threads: the team's cores were scanned, CPU 1 the least available; the fastest call is
  // shorter than one period of its stops, so nothing is left out of its time.
  r.availability = {1, 0.94, 20.0, 25, 45.0, 90.0, 0.2};
  BaselineResult openblas;
  openblas.library = "openblas";
  openblas.path = "/usr/lib/x86_64-linux-gnu/libopenblas.so.0";
  openblas.timing = {0.380, 0.290, 0.610, 0.071, 200, 2};
  openblas.gflops = gflops_of(256, 256, 256, 1, 0.290);
  openblas.max_rel_error = 3.0e-7;
  openblas.speedup = 0.290 / 0.310;
  // A library that crashed in its worker process: a row with the signal, no figures.
  BaselineResult blis;
  blis.library = "blis";
  blis.status = Status::error;
  blis.reason = "the library's worker process was killed by SIGSEGV (Segmentation fault)";
  r.baselines = {openblas, blis};
  r.status = Status::mistrusted;
  r.reason = "spread 213% over 200 runs, \"min\" far below mean | limit 5%";
  return r;
}

// bf16 whose kernels widened to the f32 FMA, the dot product's roof measured beside and not taken.
MatmulResult bf16_widened() {
  MatmulResult r = f32_with_baselines();
  r.name = "matmul bf16 1024x1024x1024 batch 1, 1 thread";
  r.dtype = MatmulDtype::bf16;
  r.kernel = "avx512 bf16 as f32 6x64";
  r.ceiling_alternative_source = "vdpbf16ps zmm, zmm, zmm";
  r.ceiling_alternative_gflops = 61.3;
  r.baselines.clear();  // oneDNN only, for bf16: left out here
  r.rounds = 1;
  return r;
}

std::vector<MatmulResult> fixtures() {
  return {f32_with_baselines(), int8_without_ceiling(), mistrusted_f32(), bf16_widened()};
}

// A failure before planning: nothing was configured, checked or timed.
MatmulResult error_before_timing() {
  MatmulResult r;
  r.name = "matmul bf16 64x64x64 batch 1, 1 thread";
  r.m = r.n = r.k = 64;
  r.dtype = MatmulDtype::bf16;
  r.status = Status::error;
  r.reason = "needs avx512_bf16";
  return r;
}

json rows(const std::vector<MatmulResult>& results) {
  json a = json::array();
  for (const auto& r : results) a.push_back(to_json(r));
  return a;
}

std::string console(const MatmulResult& r) {
  std::ostringstream out;
  write_matmul_console(out, r);
  return out.str();
}

bool mentions_non_finite(const std::string& text) {
  return text.find("nan") != std::string::npos || text.find("inf") != std::string::npos;
}

}  // namespace

TEST_CASE("matmul console: a team's scan is named as its least available core, a lone thread's as the caller's",
          "[matmul_report]") {
  // --threads 2 with a plan of one thread: the caller's core was scanned.
  MatmulResult lone = f32_with_baselines();
  lone.threads = 2;
  const std::string one = console(lone);
  CHECK(one.find("interruptions of its core a call") != std::string::npos);
  CHECK(one.find("  the caller's core: 24 interruptions") != std::string::npos);
  CHECK(one.find("least available") == std::string::npos);
  // A plan of two threads: the team's cores were scanned, CPU 1 kept.
  MatmulResult team = lone;
  team.config.threads = 2, team.config.thread_rows = 2;
  const std::string two = console(team);
  CHECK(two.find("interruptions of its least available core a call") != std::string::npos);
  CHECK(two.find("  the team's least available core (CPU 1): 24 interruptions") != std::string::npos);
  CHECK(two.find("caller's core") == std::string::npos);
  // A scan whose CPU is not known names none.
  team.availability.cpu = -1;
  const std::string unknown = console(team);
  CHECK(unknown.find("  the team's least available core: 24 interruptions") != std::string::npos);
  CHECK(unknown.find("CPU -1") == std::string::npos);
}

TEST_CASE("matmul console: the k loop alone is at the product's clock, or as it ran where the ceiling carries a sustained share",
          "[matmul_report]") {
  // The fixture: share 0.970 lowers the roof, the loop timed at 3.41 GHz against the product's 3.65.
  MatmulResult shared = f32_with_baselines();
  REQUIRE(shared.ceiling_sustained_share == Approx(0.97));
  const std::string as_ran = console(shared);
  CHECK(as_ran.find("112.6 GFLOP/s as it ran at 3.41 GHz") != std::string::npos);
  CHECK(as_ran.find("timed at") == std::string::npos);
  // No share (or one within the noise of 1): the loop is scaled to the product's clock.
  for (double share : {0.0, 0.99}) {
    MatmulResult scaled = shared;
    scaled.ceiling_sustained_share = share;
    const std::string text = console(scaled);
    CHECK(text.find("112.6 GFLOP/s at the product's 3.65 GHz (timed at 3.41 GHz)") != std::string::npos);
    CHECK(text.find("as it ran") == std::string::npos);
  }
  // The loop's clock the faster one: scaled down to the product's, whatever the share.
  MatmulResult faster = shared;
  faster.kernel_l1_ghz = 3.80;
  CHECK(console(faster).find("at the product's 3.65 GHz (timed at 3.80 GHz)") != std::string::npos);
}

TEST_CASE("matmul console: the roof not taken is named where the kernels had a choice", "[matmul_report]") {
  const MatmulResult widened = bf16_widened();
  CHECK(console(widened).find("  the roof not taken (bf16's dot product; --widen chooses): vdpbf16ps zmm, zmm, "
                              "zmm, 61.3 GFLOP/s as measured\n") != std::string::npos);
  // The dot product kept: the widened multiply-add is the one not taken.
  MatmulResult dot = widened;
  dot.kernel = "avx512 bf16 6x64";
  dot.ceiling_source = "vdpbf16ps zmm, zmm, zmm";
  dot.ceiling_alternative_source = "vfmadd231ps zmm, zmm, zmm";
  dot.ceiling_alternative_gflops.reset();
  CHECK(console(dot).find("  the roof not taken (bf16 widened to the multiply-add; --widen chooses): vfmadd231ps zmm, zmm, "
                          "zmm, not measured\n") != std::string::npos);
  // No choice on this CPU: no such line.
  CHECK(console(f32_with_baselines()).find("not taken") == std::string::npos);
}

TEST_CASE("matmul console lines match the golden file", "[matmul_report]") {
  std::ostringstream out;
  bool first = true;
  for (const auto& r : fixtures()) {
    if (!first) out << '\n';
    write_matmul_console(out, r);
    first = false;
  }
  CHECK_FALSE(mentions_non_finite(out.str()));
  test::check_golden("matmul_console.txt", out.str());
}

TEST_CASE("matmul Markdown table matches the golden file", "[matmul_report]") {
  std::ostringstream out;
  write_matmul_markdown(out, fixtures());
  CHECK_FALSE(mentions_non_finite(out.str()));
  test::check_golden("matmul.md", out.str());
}

TEST_CASE("matmul CSV matches the golden file", "[matmul_report]") {
  std::ostringstream out;
  write_matmul_csv(out, fixtures());
  CHECK_FALSE(mentions_non_finite(out.str()));
  test::check_golden("matmul.csv", out.str());
}

TEST_CASE("matmul JSON rows match the golden file", "[matmul_report]") {
  const json a = rows(fixtures());
  test::check_golden("matmul.json", a.dump(2) + "\n");
  // Absent ceilings and non-finite numbers are null, never left out; an empty reason is left out.
  CHECK(a[1]["ceiling_gflops"].is_null());
  CHECK(a[1]["efficiency"].is_null());
  CHECK(a[1]["ceiling_missing"] == int8_without_ceiling().ceiling_missing);
  CHECK(a[0]["ceiling_missing"].is_null());
  CHECK(a[1]["baselines"][0]["status"] == "mistrusted");
  CHECK(a[0]["baselines"][0]["status"] == "ok");
  CHECK_FALSE(a[0].contains("reason"));
  CHECK(a[2]["std_ms"].is_null());
  CHECK(a[2]["clock"]["drift"].is_null());
  CHECK(a[2]["status"] == "mistrusted");
  CHECK(a[2]["reason"] == mistrusted_f32().reason);
  CHECK(a[0]["shape"] == json{{"m", 1024}, {"n", 1024}, {"k", 1024}});
  CHECK(a[0]["baselines"][1]["library"] == "blis");
  CHECK(a[0]["baselines"][1]["speedup"].get<double>() == Approx(23.5 / 20.15));
  // The scan of the caller's core: an object where it was scanned, null where not.
  CHECK(a[0]["core_availability"]["share"].get<double>() == Approx(0.951));
  CHECK(a[0]["core_availability"]["interruptions"] == 24);
  CHECK(a[0]["efficiency_while_running"].get<double>() == Approx(*f32_with_baselines().efficiency_while_running));
  CHECK(a[1]["core_availability"].is_null());
  CHECK(a[1]["efficiency_while_running"].is_null());
  CHECK(a[0]["kernel_l1_gflops"].get<double>() == Approx(112.6));
  CHECK(a[1]["kernel_l1_gflops"].is_null());
  CHECK(a[0]["kernel_l1_ghz"].get<double>() == Approx(3.412));
  CHECK(a[1]["kernel_l1_ghz"].is_null());
  CHECK(a[0]["kernel_mix_gflops"].get<double>() == Approx(118.4 * 0.97 * 0.985));
  CHECK(a[0]["kernel_mix_share"].get<double>() == Approx(0.985));
  CHECK(a[0]["kernel_mix_step"][2] == json{{"instruction", "vfmadd231ps zmm, zmm, zmm"}, {"per_step", 24}});
  CHECK(a[1]["kernel_mix_gflops"].is_null());
  CHECK(a[1]["kernel_mix_share"].is_null());
  CHECK(a[1]["kernel_mix_step"].is_null());
  // A team's scan is its least available core; a call shorter than one period of its stops gets no
  // second efficiency.
  CHECK(a[2]["core_availability"]["cpu"] == 1);
  CHECK(a[2]["core_availability"]["interruptions"] == 25);
  CHECK(a[2]["efficiency_while_running"].is_null());
}

TEST_CASE("matmul JSON reads back as it was written", "[matmul_report]") {
  for (const auto& r : fixtures()) {
    const json written = to_json(r);
    const MatmulResult back = matmul_from_json(json::parse(written.dump()));
    CHECK(to_json(back) == written);
    CHECK(back.name == r.name);
    CHECK(back.dtype == r.dtype);
    CHECK(back.batch == r.batch);
    CHECK(back.status == r.status);
    CHECK(back.reason == r.reason);
    CHECK(back.ceiling_gflops.has_value() == r.ceiling_gflops.has_value());
    CHECK(back.ceiling_measured_gflops == r.ceiling_measured_gflops);
    CHECK(back.ceiling_clock_ghz == r.ceiling_clock_ghz);
    CHECK(back.ceiling_sustained_share == r.ceiling_sustained_share);
    CHECK(back.clock.ghz == r.clock.ghz);
    CHECK(back.clock.ghz_after == r.clock.ghz_after);
    CHECK(back.efficiency.has_value() == r.efficiency.has_value());
    CHECK(back.efficiency_while_running == r.efficiency_while_running);
    CHECK(back.kernel_l1_gflops == r.kernel_l1_gflops);
    CHECK(back.kernel_l1_ghz == r.kernel_l1_ghz);
    CHECK(back.kernel_mix_gflops == r.kernel_mix_gflops);
    CHECK(back.kernel_mix_share == r.kernel_mix_share);
    CHECK(back.kernel_mix_step == r.kernel_mix_step);
    CHECK(back.availability.share == r.availability.share);
    CHECK(back.availability.interruptions == r.availability.interruptions);
    CHECK(back.availability.longest_interruption_us == r.availability.longest_interruption_us);
    CHECK(back.config.thread_rows == r.config.thread_rows);
    CHECK(back.config.pack_a == r.config.pack_a);
    CHECK(back.config.pack_b == r.config.pack_b);
    CHECK(back.timing.min_ms == r.timing.min_ms);
    CHECK(back.model_gap == r.model_gap);
    CHECK(back.rounds == r.rounds);
    CHECK(back.isa_level == r.isa_level);
    CHECK(back.ceiling_missing == r.ceiling_missing);
    CHECK(back.ceiling_alternative_source == r.ceiling_alternative_source);
    CHECK(back.ceiling_alternative_gflops == r.ceiling_alternative_gflops);
    REQUIRE(back.baselines.size() == r.baselines.size());
    for (size_t i = 0; i < r.baselines.size(); ++i) {
      CHECK(back.baselines[i].path == r.baselines[i].path);
      CHECK(back.baselines[i].speedup == r.baselines[i].speedup);
      CHECK(back.baselines[i].status == r.baselines[i].status);
      CHECK(back.baselines[i].reason == r.baselines[i].reason);
      CHECK(back.baselines[i].version == r.baselines[i].version);
    }
  }
  // A document from before the rounds ran one; a nonsense count reads as one too.
  json older = to_json(f32_with_baselines());
  older.erase("rounds");
  CHECK(matmul_from_json(older).rounds == 1);
  older["rounds"] = -3;
  CHECK(matmul_from_json(older).rounds == 1);
  // The NaN std was written as null and reads back as NaN, not as 0.
  CHECK(std::isnan(matmul_from_json(to_json(mistrusted_f32())).timing.std_ms));
}

TEST_CASE("matmul JSON reading never throws on odd input", "[matmul_report]") {
  const MatmulResult empty = matmul_from_json(json::object());
  CHECK(empty.status == Status::ok);
  CHECK(empty.batch == 1);
  CHECK(empty.cold_cache == "none");
  CHECK_FALSE(empty.ceiling_gflops.has_value());
  CHECK(matmul_from_json(json::array()).name.empty());
  const MatmulResult odd = matmul_from_json(json{{"name", 3}, {"status", "weird"}, {"shape", "1x2x3"},
                                                 {"baselines", {1, json::object()}}, {"threads", "two"}});
  CHECK(odd.name.empty());
  CHECK(odd.threads == 1);
  CHECK(odd.status == Status::error);
  CHECK(odd.reason == "unknown status \"weird\"");
  CHECK(odd.baselines.size() == 1);
}

TEST_CASE("matmul JSON rows carry what compare reads, at the top level", "[matmul_report]") {
  for (const auto& r : fixtures()) {
    const json j = to_json(r);
    REQUIRE(j["name"].is_string());
    CHECK(j["name"] == r.name);
    REQUIRE(j["mean_ms"].is_number());
    CHECK(j["mean_ms"].get<double>() == r.timing.mean_ms);
    REQUIRE(j["gflops"].is_number());
    CHECK(j["gflops"].get<double>() == r.gflops);
    CHECK(j["status"].is_string());
  }
  // And compare does line them up: a 10% slower f32 run regresses on both metrics; the mistrusted
  // row is listed as not comparable instead of being judged.
  auto document = [](const std::vector<MatmulResult>& results) {
    return json{{"schema", kRunSchema}, {"host", json::object()}, {"results", json::array()},
                {"matmul", rows(results)}};
  };
  std::vector<MatmulResult> slower = fixtures();
  slower[0].timing.mean_ms *= 1.1;
  slower[0].gflops /= 1.1;
  auto report = compare_documents(document(fixtures()), document(slower), CompareOptions{});
  REQUIRE(report.ok());
  auto verdict = [&](const std::string& item, const std::string& metric) {
    for (const auto& d : report->deltas)
      if (d.kind == "matmul" && d.item == item && d.metric == metric) return std::optional<Verdict>(d.verdict);
    return std::optional<Verdict>();
  };
  CHECK(verdict(slower[0].name, "mean_ms") == Verdict::regression);
  CHECK(verdict(slower[0].name, "gflops") == Verdict::regression);
  CHECK(verdict(slower[1].name, "mean_ms") == Verdict::same);
  CHECK(verdict(slower[2].name, "") == Verdict::not_comparable);
  CHECK(report->regressions == 2);
}

TEST_CASE("matmul outputs of a run that failed before timing", "[matmul_report]") {
  const MatmulResult r = error_before_timing();
  std::ostringstream console, md, csv;
  write_matmul_console(console, r);
  CHECK(console.str() ==
        "matmul bf16 64x64x64 (batch 1) on 1 thread\n"
        "  error: needs avx512_bf16\n");
  write_matmul_markdown(md, {r});
  CHECK(md.str().find("| 64x64x64 | bf16 | 1 | 1 | - | - | - | - | - | - | error |\n") != std::string::npos);
  CHECK(md.str().find("- 64x64x64 bf16 (error): needs avx512_bf16\n") != std::string::npos);
  write_matmul_csv(csv, {r});
  // Nothing after cold_cache but the status and the reason: 32 empty fields in between.
  const std::string line = "\"matmul bf16 64x64x64 batch 1, 1 thread\",64,64,64,1,bf16,1,none" + std::string(33, ',') +
                           "error,needs avx512_bf16\n";
  CHECK(csv.str().find("\n" + line) != std::string::npos);
  std::ostringstream none;
  write_matmul_markdown(none, {});
  CHECK(none.str() == "## matmul\n\nNo matmul results.\n");
}
