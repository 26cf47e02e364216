// Tests for src/compare/compare.cpp and src/cli/cmd_compare.cpp: thresholds, matching rows by what
// they measure, rows that cannot be compared, the outputs, and the command's exit codes.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include "cli/commands.hpp"
#include "compare/compare.hpp"
#include "report/ceiling_report.hpp"

// Declared here as well so the tests do not depend on commands.hpp listing it.
namespace peakprobe::cli {
void add_compare_command(CLI::App& app, GlobalOptions& g);
}

namespace fs = std::filesystem;
using nlohmann::json;
using namespace peakprobe;

namespace {

json host(const std::string& brand = "Test CPU", int family = 25, int model = 17) {
  return {{"brand", brand}, {"family", family}, {"model", model}, {"vendor", "AMD"}};
}

json document(json extra = json::object()) {
  json d = {{"schema", "peakprobe/1"}, {"host", host()}, {"results", json::array()}};
  for (auto& [k, v] : extra.items()) d[k] = v;
  return d;
}

json inst(const std::string& text, double recip, const std::string& status = "ok", int threads = 1) {
  return {{"instruction", text}, {"status", status}, {"threads", threads}, {"recip_throughput_cycles", recip},
          {"latency_cycles", nullptr}};
}

json bandwidth(const std::string& kernel, long long size, double gbps, int threads = 1) {
  return {{"kernel", kernel}, {"isa", "avx2"}, {"size_bytes", size}, {"threads", threads}, {"gbps", gbps},
          {"status", "ok"}};
}

json benchmark(const std::string& name, double mean_ms) { return {{"name", name}, {"mean_ms", mean_ms}}; }

CompareReport compare(const json& old_doc, const json& new_doc, const CompareOptions& o = {}) {
  auto r = compare_documents(old_doc, new_doc, o);
  INFO((r ? std::string() : r.error()));
  REQUIRE(r.ok());
  return r.value();
}

const MetricDelta& find(const CompareReport& r, const std::string& item, const std::string& metric) {
  for (const auto& d : r.deltas)
    if (d.item == item && d.metric == metric) return d;
  FAIL("no delta for " << item << " / " << metric);
  throw std::logic_error("unreachable");
}

Verdict time_verdict(double old_ms, double new_ms, const CompareOptions& o = {}) {
  auto r = compare(document({{"benchmarks", {benchmark("matmul 512", old_ms)}}}),
                   document({{"benchmarks", {benchmark("matmul 512", new_ms)}}}), o);
  return find(r, "matmul 512", "mean_ms").verdict;
}

Verdict rate_verdict(double old_gbps, double new_gbps, const CompareOptions& o = {}) {
  auto r = compare(document({{"bandwidth", {bandwidth("load", 32768, old_gbps)}}}),
                   document({{"bandwidth", {bandwidth("load", 32768, new_gbps)}}}), o);
  return find(r, "load avx2 32 KiB, 1 thread", "gbps").verdict;
}

}  // namespace

TEST_CASE("compare: a time more than 5% slower is a regression", "[compare]") {
  CHECK(time_verdict(100, 104) == Verdict::same);
  CHECK(time_verdict(100, 106) == Verdict::regression);
  CHECK(time_verdict(100, 94) == Verdict::improvement);
  CHECK(time_verdict(100, 96) == Verdict::same);

  auto r = compare(document({{"results", {inst("imul r64, r64", 1.0)}}}),
                   document({{"results", {inst("imul r64, r64", 1.06)}}}));
  const auto& d = find(r, "imul r64, r64", "recip_throughput_cycles");
  CHECK(d.verdict == Verdict::regression);
  CHECK(d.direction == Direction::lower_is_better);
  CHECK(d.ratio.value() == Approx(1.06));
  CHECK(r.regressions == 1);
  CHECK(r.improvements == 0);
}

TEST_CASE("compare: a rate below 95% of the baseline is a regression", "[compare]") {
  CHECK(rate_verdict(100, 96) == Verdict::same);
  CHECK(rate_verdict(100, 94) == Verdict::regression);
  CHECK(rate_verdict(100, 106) == Verdict::improvement);
  CHECK(rate_verdict(100, 104) == Verdict::same);
}

TEST_CASE("compare: a change within both rows' own spread is the same, beyond it a regression", "[compare]") {
  auto row = [](double recip, double spread) {
    json r = inst("vmaxsd xmm, xmm, m64", recip);
    r["throughput"] = {{"min", recip / (1 + spread)}, {"median", recip}, {"max", recip}, {"spread", spread},
                       {"samples", 15}};
    r["throughput_ipc"] = 1 / recip;
    return r;
  };
  // +8% against 5% + 2% + 2%: the runs' own scatter covers it; +10% is beyond it.
  auto within = compare(document({{"results", {row(0.50, 0.02)}}}), document({{"results", {row(0.54, 0.02)}}}));
  const auto& d = find(within, "vmaxsd xmm, xmm, m64", "recip_throughput_cycles");
  CHECK(d.verdict == Verdict::same);
  CHECK(d.spread_allowance == Approx(0.04));
  CHECK_THAT(d.note, Catch::Contains("spread"));
  CHECK(find(within, "vmaxsd xmm, xmm, m64", "throughput_ipc").verdict == Verdict::same);  // shares the spread
  CHECK(within.regressions == 0);
  auto beyond = compare(document({{"results", {row(0.50, 0.02)}}}), document({{"results", {row(0.55, 0.02)}}}));
  CHECK(find(beyond, "vmaxsd xmm, xmm, m64", "recip_throughput_cycles").verdict == Verdict::regression);
  // The plain thresholds on request; rows without spreads are judged by them anyway.
  CompareOptions fixed;
  fixed.widen_by_spread = false;
  auto plain = compare(document({{"results", {row(0.50, 0.02)}}}), document({{"results", {row(0.54, 0.02)}}}), fixed);
  CHECK(find(plain, "vmaxsd xmm, xmm, m64", "recip_throughput_cycles").verdict == Verdict::regression);
  CHECK(find(plain, "vmaxsd xmm, xmm, m64", "recip_throughput_cycles").spread_allowance == 0);
  // A spread that is not a number widens nothing.
  json odd = row(0.54, 0.02);
  odd["throughput"]["spread"] = "wide";
  auto garbled = compare(document({{"results", {row(0.50, 0.0)}}}), document({{"results", {odd}}}));
  CHECK(find(garbled, "vmaxsd xmm, xmm, m64", "recip_throughput_cycles").verdict == Verdict::regression);
}

TEST_CASE("compare: a latency under one cycle is judged as a share of one cycle", "[compare]") {
  auto row = [](double latency) {
    json r = inst("vmovaps xmm, xmm", 0.17);
    r["latency_cycles"] = latency;
    return r;
  };
  auto verdict = [&](double was, double now) {
    auto r = compare(document({{"results", {row(was)}}}), document({{"results", {row(now)}}}));
    return find(r, "vmovaps xmm, xmm", "latency_cycles");
  };
  // An eliminated move's chain: +6% of its own figure, +0.01 of a cycle.
  const auto small = verdict(0.168, 0.178);
  CHECK(small.verdict == Verdict::same);
  CHECK_THAT(small.note, Catch::Contains("one cycle"));
  CHECK(small.ratio.value() == Approx(0.178 / 0.168));
  CHECK(verdict(0.178, 0.164).verdict == Verdict::same);
  // Losing the elimination is a regression, gaining it an improvement.
  CHECK(verdict(0.17, 1.0).verdict == Verdict::regression);
  CHECK(verdict(1.0, 0.17).verdict == Verdict::improvement);
  // A sub-cycle chain that slowed by more than the threshold of a cycle.
  CHECK(verdict(0.17, 0.25).verdict == Verdict::regression);
  // At one cycle and above, the threshold is a share of the figure itself.
  CHECK(verdict(1.0, 1.06).verdict == Verdict::regression);
  CHECK(verdict(4.0, 4.15).verdict == Verdict::same);
  CHECK(verdict(4.0, 4.25).verdict == Verdict::regression);
  // Throughputs keep their own base: 0.25 to 0.265 cycles is 4 to 3.8 a cycle.
  auto tput = compare(document({{"results", {inst("add r64, r64", 0.25)}}}),
                      document({{"results", {inst("add r64, r64", 0.265)}}}));
  CHECK(find(tput, "add r64, r64", "recip_throughput_cycles").verdict == Verdict::regression);
}

TEST_CASE("compare: on one machine a rate that moved only with the clock is the same", "[compare]") {
  // A row measured at `ghz` with `recip` cycles per instruction and 32 operations each.
  auto row = [](double recip, double ghz) {
    json r = inst("form under test", recip);
    r["clock"] = {{"ghz", ghz}, {"ghz_before", ghz}, {"ghz_after", ghz}, {"drift", 0.0}};
    r["gflops"] = 32 / recip * ghz;
    return r;
  };
  const std::string item = "form under test";
  // Cycles the same, the clock 14% higher: GFLOP/s 14% higher is the clock's.
  auto clock_only = compare(document({{"results", {row(1.000, 3.56)}}}), document({{"results", {row(1.002, 4.06)}}}));
  const auto& rate = find(clock_only, item, "gflops");
  CHECK(rate.verdict == Verdict::same);
  CHECK_THAT(rate.note, Catch::Contains("clock moved") && Catch::Contains("3.56 -> 4.06 GHz"));
  CHECK(find(clock_only, item, "recip_throughput_cycles").verdict == Verdict::same);
  CHECK(clock_only.improvements == 0);
  CHECK(clock_only.regressions == 0);
  // The cycles moved too: the rate's change is the code's (or the core's) and stands.
  auto slower = compare(document({{"results", {row(1.00, 4.0)}}}), document({{"results", {row(1.10, 4.0)}}}));
  CHECK(find(slower, item, "recip_throughput_cycles").verdict == Verdict::regression);
  CHECK(find(slower, item, "gflops").verdict == Verdict::regression);
  // Two kinds of CPU: their clocks are part of what is compared.
  json other = document({{"results", {row(1.002, 4.06)}}});
  other["host"] = host("Other CPU");
  CHECK(find(compare(document({{"results", {row(1.000, 3.56)}}}), other), item, "gflops").verdict ==
        Verdict::improvement);
  // And not with the rule switched off (--fixed-thresholds).
  CompareOptions plain;
  plain.widen_by_spread = false;
  plain.clock_moves_absorbed = false;
  auto fixed = compare(document({{"results", {row(1.000, 3.56)}}}), document({{"results", {row(1.002, 4.06)}}}), plain);
  CHECK(find(fixed, item, "gflops").verdict == Verdict::improvement);
  CHECK(to_json(fixed)["thresholds"]["clock_moves_absorbed"] == false);
  // The clock did not move, or a row has none: a rate change is not the clock's.
  json steady_old = row(1.00, 4.0), steady_new = row(1.04, 4.0);
  steady_new["gflops"] = 32 / 1.04 * 4.0 * 0.97;  // 7% lower at one clock: cycles 4% (same), rate not
  CHECK(find(compare(document({{"results", {steady_old}}}), document({{"results", {steady_new}}})), item, "gflops")
            .verdict == Verdict::regression);
  json no_clock = row(1.002, 4.06);
  no_clock.erase("clock");
  CHECK(find(compare(document({{"results", {row(1.000, 3.56)}}}), document({{"results", {no_clock}}})), item,
             "gflops")
            .verdict == Verdict::improvement);
  // Cycles 8% slower judged same by a 10% time threshold are still 8% fewer per cycle: a rate
  // threshold of 5% does not let the clock rule absorb that.
  CompareOptions uneven;
  uneven.time_threshold = 0.10;
  auto per_cycle_lost = compare(document({{"results", {row(1.00, 4.0)}}}), document({{"results", {row(1.08, 4.2)}}}), uneven);
  CHECK(find(per_cycle_lost, item, "recip_throughput_cycles").verdict == Verdict::same);
  CHECK(find(per_cycle_lost, item, "gflops").verdict == Verdict::same);  // -8% and +5%: within 5% as measured
  auto more_lost = compare(document({{"results", {row(1.00, 4.0)}}}), document({{"results", {row(1.09, 3.8)}}}), uneven);
  CHECK(find(more_lost, item, "gflops").verdict == Verdict::regression);
  // Hosts that name no CPU are not known to be one machine.
  json anon_old = document({{"results", {row(1.000, 3.56)}}}), anon_new = document({{"results", {row(1.002, 4.06)}}});
  anon_old["host"] = anon_new["host"] = json::object();
  CHECK(find(compare(anon_old, anon_new), item, "gflops").verdict == Verdict::improvement);
  CHECK(to_json(clock_only)["thresholds"]["clock_moves_absorbed"] == true);
}

TEST_CASE("compare: custom thresholds", "[compare]") {
  CompareOptions loose{0.10, 0.10};
  CHECK(time_verdict(100, 106, loose) == Verdict::same);
  CHECK(time_verdict(100, 111, loose) == Verdict::regression);
  CHECK(rate_verdict(100, 94, loose) == Verdict::same);
  CHECK(rate_verdict(100, 89, loose) == Verdict::regression);

  CompareOptions strict{0.01, 0.02};
  CHECK(time_verdict(100, 102, strict) == Verdict::regression);
  CHECK(rate_verdict(100, 97, strict) == Verdict::regression);
  CHECK(rate_verdict(100, 99, strict) == Verdict::same);

  auto bad = compare_documents(document(), document(), CompareOptions{-0.1, 0.05});
  CHECK_FALSE(bad.ok());
}

TEST_CASE("compare: rows are matched by identity, not position", "[compare]") {
  json old_doc = document({{"results", {inst("add r64, r64", 0.25), inst("imul r64, r64", 1.0),
                                        inst("imul r64, r64", 1.0, "ok", 2)}},
                           {"bandwidth", {bandwidth("load", 32768, 200), bandwidth("load", 1 << 20, 100)}}});
  json new_doc = document({{"results", {inst("imul r64, r64", 2.0, "ok", 2), inst("imul r64, r64", 1.0),
                                        inst("add r64, r64", 0.25)}},
                           {"bandwidth", {bandwidth("load", 1 << 20, 100), bandwidth("load", 32768, 200)}}});
  auto r = compare(old_doc, new_doc);
  CHECK(find(r, "add r64, r64", "recip_throughput_cycles").verdict == Verdict::same);
  CHECK(find(r, "imul r64, r64", "recip_throughput_cycles").verdict == Verdict::same);
  CHECK(find(r, "imul r64, r64 [2 threads]", "recip_throughput_cycles").verdict == Verdict::regression);
  CHECK(find(r, "load avx2 32 KiB, 1 thread", "gbps").verdict == Verdict::same);
  CHECK(find(r, "load avx2 1 MiB, 1 thread", "gbps").verdict == Verdict::same);
  CHECK(r.regressions == 1);
  CHECK(r.warnings.empty());
}

TEST_CASE("compare: mixes, pairs, latency rows, ceilings and benchmarks", "[compare]") {
  auto pair = [](double cycles) {
    return json{{"parts", {{{"instruction", "add r64, r64"}, {"weight", 1}}, {{"instruction", "imul r64, r64"}, {"weight", 1}}}},
                {"cycles_per_group", cycles}, {"gops", 7.4 / cycles}, {"gflops", nullptr}, {"status", "ok"}};
  };
  auto latency = [](double ns) {
    return json{{"mode", "random"}, {"pages", "4k"}, {"size_bytes", 32768}, {"chains", 1},
                {"latency_cycles", ns * 4}, {"latency_ns", ns}, {"status", "ok"}};
  };
  auto ceilings = [](double gops, double gbps) {
    return json{{"compute", {{{"dtype", "f32"}, {"isa", "256"}, {"threads", 1}, {"gflops", gops}}}},
                {"memory", {{{"level", "L1"}, {"kernel", "load"}, {"threads", 1}, {"gbps", gbps}}}}};
  };
  json old_doc = document({{"pairs", {pair(1.0)}}, {"latency", {latency(1.0)}}, {"ceilings", ceilings(100, 200)},
                           {"matmul", {{{"name", "tiled"}, {"mean_ms", 10.0}, {"gflops", 50.0}}}}});
  json new_doc = document({{"pairs", {pair(1.2)}}, {"latency", {latency(0.9)}}, {"ceilings", ceilings(100, 150)},
                           {"matmul", {{{"name", "tiled"}, {"mean_ms", 10.2}, {"gflops", 49.0}}}}});
  auto r = compare(old_doc, new_doc);
  const std::string parts = "add r64, r64:1 + imul r64, r64:1";
  CHECK(find(r, parts, "cycles_per_group").verdict == Verdict::regression);
  CHECK(find(r, parts, "gops").verdict == Verdict::regression);
  CHECK(find(r, "random 4k pages 32 KiB, 1 chain", "latency_ns").verdict == Verdict::improvement);
  CHECK(find(r, "f32 256, 1 thread", "gflops").verdict == Verdict::same);
  CHECK(find(r, "L1 load, 1 thread", "gbps").verdict == Verdict::regression);
  CHECK(find(r, "tiled", "mean_ms").verdict == Verdict::same);
  CHECK(find(r, "tiled", "gflops").direction == Direction::higher_is_better);
  CHECK(r.regressions == 3);
}

TEST_CASE("compare: compute ceilings as the ceiling table writes them, floating-point and integer", "[compare]") {
  // Floating-point ceilings carry `gflops`, integer ones `gops` (report/ceiling_report.cpp): both
  // are compared. (Until 2026-12-03 only `gops` was, and no f32 or f64 ceiling was ever judged.)
  auto table = [](double f64_gflops, double i8_gops) {
    CeilingTable t;
    t.compute = {{"f64", "512", 1, f64_gflops, false, 32, 3.6, "madd.double"},
                 {"i8", "512", 1, i8_gops, true, 256, 3.6, "dot.byte"}};
    return to_json(t);
  };
  auto r = compare(document({{"ceilings", table(170, 900)}}), document({{"ceilings", table(115, 905)}}));
  CHECK(find(r, "f64 512, 1 thread", "gflops").verdict == Verdict::regression);
  CHECK(find(r, "i8 512, 1 thread", "gops").verdict == Verdict::same);
  CHECK(r.regressions == 1);
  for (const auto& d : r.deltas) CHECK_FALSE((d.item == "f64 512, 1 thread" && d.metric == "gops"));
}

TEST_CASE("compare: rows and metrics on one side only are added or removed", "[compare]") {
  json gone = inst("vaddps ymm, ymm, ymm", 0.5);
  json old_doc = document({{"results", {inst("add r64, r64", 0.25), gone}}});
  json kept = inst("add r64, r64", 0.25);
  kept["latency_cycles"] = 1.0;
  json new_doc = document({{"results", {kept, inst("vmulps ymm, ymm, ymm", 0.5)}}});
  auto r = compare(old_doc, new_doc);
  CHECK(find(r, "vaddps ymm, ymm, ymm", "").verdict == Verdict::removed);
  CHECK(find(r, "vaddps ymm, ymm, ymm", "").old_status == "ok");
  CHECK(find(r, "vmulps ymm, ymm, ymm", "").verdict == Verdict::added);
  CHECK(find(r, "add r64, r64", "latency_cycles").verdict == Verdict::added);
  CHECK(r.regressions == 0);
  CHECK(r.deltas.back().item == "vmulps ymm, ymm, ymm");  // added rows come last
}

TEST_CASE("compare: rows not ok on either side are not comparable", "[compare]") {
  json old_doc = document({{"results", {inst("imul r64, r64", 1.0, "mistrusted"), inst("add r64, r64", 0.25)}}});
  json new_doc = document({{"results", {inst("imul r64, r64", 3.0), inst("add r64, r64", 0.9, "skipped")}}});
  auto r = compare(old_doc, new_doc);
  const auto& a = find(r, "imul r64, r64", "");
  CHECK(a.verdict == Verdict::not_comparable);
  CHECK(a.old_status == "mistrusted");
  CHECK(a.new_status == "ok");
  const auto& b = find(r, "add r64, r64", "");
  CHECK(b.verdict == Verdict::not_comparable);
  CHECK(b.new_status == "skipped");
  CHECK(r.regressions == 0);
  CHECK(r.deltas.size() == 2);
}

TEST_CASE("compare: a doubted multi-core run makes only the row's totals not comparable", "[compare]") {
  json old_row = inst("vfmadd231ps ymm, ymm, ymm", 0.5, "ok", 2);
  old_row["total_gflops"] = 200.0;
  old_row["threads_status"] = "ok";
  json new_row = inst("vfmadd231ps ymm, ymm, ymm", 0.5, "ok", 2);
  new_row["total_gflops"] = nullptr;  // left out: its multi-core run was doubted
  new_row["threads_status"] = "mistrusted";
  auto r = compare(document({{"results", {old_row}}}), document({{"results", {new_row}}}));
  const auto& total = find(r, "vfmadd231ps ymm, ymm, ymm [2 threads]", "total_gflops");
  CHECK(total.verdict == Verdict::not_comparable);
  CHECK(total.note.find("new run's threads_status is mistrusted") != std::string::npos);
  CHECK(find(r, "vfmadd231ps ymm, ymm, ymm [2 threads]", "recip_throughput_cycles").verdict == Verdict::same);
  CHECK(r.regressions == 0);
  // Documents from before the key: a missing total is still a removed metric.
  new_row.erase("threads_status");
  auto older = compare(document({{"results", {old_row}}}), document({{"results", {new_row}}}));
  CHECK(find(older, "vfmadd231ps ymm, ymm, ymm [2 threads]", "total_gflops").verdict == Verdict::removed);
}

TEST_CASE("compare: a different host gives a warning", "[compare]") {
  json old_doc = document({{"results", {inst("add r64, r64", 0.25)}}});
  json new_doc = old_doc;
  CHECK(compare(old_doc, new_doc).warnings.empty());
  new_doc["host"] = host("Other CPU");
  auto r = compare(old_doc, new_doc);
  REQUIRE(r.warnings.size() == 1);
  CHECK(r.warnings[0].find("different hosts") != std::string::npos);
  CHECK(r.warnings[0].find("Other CPU") != std::string::npos);
  new_doc["host"] = host("Test CPU", 25, 33);
  CHECK(compare(old_doc, new_doc).warnings.size() == 1);
}

TEST_CASE("compare: matmul rows timed in a different number of rounds give a warning", "[compare]") {
  json one = benchmark("matmul f32 128x128x128 batch 1, 1 thread", 0.05);
  json two = one;
  two["rounds"] = 2;
  // Documents from before the rounds ran one round.
  CHECK(compare(document({{"benchmarks", {one}}}), document({{"benchmarks", {one}}})).warnings.empty());
  json also_one = one;
  also_one["rounds"] = 1;
  CHECK(compare(document({{"benchmarks", {one}}}), document({{"benchmarks", {also_one}}})).warnings.empty());
  auto r = compare(document({{"benchmarks", {one}}}), document({{"benchmarks", {two}}}));
  REQUIRE(r.warnings.size() == 1);
  CHECK(r.warnings[0].find("1 matmul row ran a different number of rounds") != std::string::npos);
  CHECK(r.warnings[0].find("1 against 2") != std::string::npos);
  // The same under `matmul`, as that command writes its row.
  CHECK(compare(document({{"matmul", {two}}}), document({{"matmul", {one}}})).warnings.size() == 1);
  // A row not timed on one side (skipped, error) ran no rounds to compare.
  json skipped = one;
  skipped["status"] = "skipped";
  CHECK(compare(document({{"benchmarks", {skipped}}}), document({{"benchmarks", {two}}})).warnings.empty());
}

TEST_CASE("compare: documents sharing no row give a warning", "[compare]") {
  auto r = compare(document({{"results", {inst("add r64, r64", 0.25)}}}),
                   document({{"bandwidth", {bandwidth("load", 32768, 200)}}}));
  REQUIRE(r.warnings.size() == 1);
  CHECK(r.warnings[0].find("nothing was compared") != std::string::npos);
}

TEST_CASE("compare: a document of another schema is an error", "[compare]") {
  json other = document();
  other["schema"] = "peakprobe/2";
  auto a = compare_documents(other, document(), {});
  REQUIRE_FALSE(a.ok());
  CHECK(a.error().find("old document") != std::string::npos);
  CHECK(a.error().find("peakprobe/2") != std::string::npos);
  json none = document();
  none.erase("schema");
  auto b = compare_documents(document(), none, {});
  REQUIRE_FALSE(b.ok());
  CHECK(b.error().find("new document") != std::string::npos);
  CHECK_FALSE(compare_documents(json::array(), document(), {}).ok());
  CHECK(schema_problem(document()).empty());
}

// Found by fuzzing: a count written as a huge double (1e300 threads, sizes) reached json's cast to
// long long, undefined outside its range. Such a value now counts as absent (the key's default).
TEST_CASE("compare: counts far outside the integer range do not break row identities", "[compare]") {
  json huge = inst("add r64, r64", 0.25);
  huge["threads"] = 1e300;
  json row = bandwidth("load", 32768, 200);
  row["size_bytes"] = -1e300;
  row["threads"] = 2.0;
  auto r = compare(document({{"results", {huge}}, {"bandwidth", {row}}}), document({{"results", {huge}}, {"bandwidth", {row}}}));
  CHECK(r.regressions == 0);
  CHECK(find(r, "add r64, r64", "recip_throughput_cycles").verdict == Verdict::same);
  CHECK(find(r, "load avx2 0 B, 2 threads", "gbps").verdict == Verdict::same);
}

TEST_CASE("compare: Markdown has one row per delta, regressions first", "[compare]") {
  json old_doc = document({{"results", {inst("add r64, r64", 0.25), inst("imul r64, r64", 1.0),
                                        inst("lea r64, m", 0.5, "skipped"), inst("a|b", 1.0)}}});
  json new_doc = document({{"results", {inst("add r64, r64", 0.2), inst("imul r64, r64", 1.2),
                                        inst("lea r64, m", 0.5), inst("a|b", 1.0)}}});
  auto r = compare(old_doc, new_doc);
  std::ostringstream out;
  write_compare_markdown(out, r);
  std::istringstream lines(out.str());
  std::vector<std::string> rows;
  for (std::string line; std::getline(lines, line);)
    if (line.rfind("| ", 0) == 0) rows.push_back(line);
  // The header row, then one per delta.
  REQUIRE(rows.size() == r.deltas.size() + 1);
  CHECK(rows[0] == "| metric | old | new | change | verdict |");
  CHECK(rows[1].find("imul r64, r64") != std::string::npos);
  CHECK(rows[1].find("**regression**") != std::string::npos);
  CHECK(rows[1].find("+20.0%") != std::string::npos);
  CHECK(rows[2].find("not comparable") != std::string::npos);
  CHECK(rows[2].find("skipped") != std::string::npos);
  CHECK(out.str().find("`a\\|b`") != std::string::npos);
  CHECK(out.str().find("1 regression, 1 improvement") != std::string::npos);
}

TEST_CASE("compare: rows not ok alike on both sides are counted, not listed, unless asked", "[compare]") {
  // Two skipped in both, one mistrusted in both, one in error in both (always listed), one that
  // changed status, one regression.
  json old_doc = document({{"results", {inst("s1", 1.0, "skipped"), inst("s2", 1.0, "skipped"),
                                        inst("m1", 1.0, "mistrusted"), inst("e1", 1.0, "error"),
                                        inst("c1", 1.0, "mistrusted"), inst("r1", 1.0)}}});
  json new_doc = document({{"results", {inst("s1", 1.0, "skipped"), inst("s2", 1.0, "skipped"),
                                        inst("m1", 1.0, "mistrusted"), inst("e1", 1.0, "error"),
                                        inst("c1", 1.0), inst("r1", 1.5)}}});
  auto r = compare(old_doc, new_doc);
  int unchanged = 0;
  for (const auto& d : r.deltas) unchanged += unchanged_status(d);
  CHECK(unchanged == 3);
  // The JSON keeps every row.
  CHECK(to_json(r)["deltas"].size() == r.deltas.size());

  auto lines_naming = [](const std::string& text, const std::string& item) {
    int n = 0;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);)
      n += (line + "  ").find("  " + item + "  ") != std::string::npos || line.find("`" + item + "`") != std::string::npos;
    return n;
  };
  std::ostringstream console, md;
  write_compare_console(console, r, false);
  write_compare_markdown(md, r);
  for (const std::string& text : {console.str(), md.str()}) {
    CHECK(lines_naming(text, "s1") == 0);
    CHECK(lines_naming(text, "m1") == 0);
    CHECK(lines_naming(text, "c1") == 1);  // its status changed: listed
    CHECK(lines_naming(text, "e1") == 1);  // an error in both: listed
    CHECK(lines_naming(text, "r1") == 1);
    CHECK(text.find("2 skipped on both sides, 1 mistrusted on both sides") != std::string::npos);
    CHECK(text.find("--all") != std::string::npos);
  }

  std::ostringstream console_all, md_all;
  write_compare_console(console_all, r, false, true);
  write_compare_markdown(md_all, r, true);
  for (const std::string& text : {console_all.str(), md_all.str()}) {
    CHECK(lines_naming(text, "s1") == 1);
    CHECK(lines_naming(text, "m1") == 1);
    CHECK(text.find("on both sides") == std::string::npos);
  }
}

TEST_CASE("compare: Markdown with every row counted has no empty table", "[compare]") {
  auto r = compare(document({{"results", {inst("s1", 1.0, "skipped")}}}),
                   document({{"results", {inst("s1", 1.0, "skipped")}}}));
  std::ostringstream md;
  write_compare_markdown(md, r);
  CHECK(md.str().find("| metric |") == std::string::npos);
  CHECK(md.str().find("1 skipped on both sides") != std::string::npos);
}

TEST_CASE("compare: the largest change first within regressions and within improvements", "[compare]") {
  json old_doc = document({{"results", {inst("one", 1.0), inst("two", 1.0), inst("three", 1.0), inst("four", 1.0),
                                        inst("five", 1.0)}}});
  // one 10% slower, two 50% slower, three 2x faster, four 1.25x faster, five the same.
  json new_doc = document({{"results", {inst("one", 1.1), inst("two", 1.5), inst("three", 0.5), inst("four", 0.8),
                                        inst("five", 1.0)}}});
  auto r = compare(old_doc, new_doc);
  std::vector<std::string> order;
  for (const auto& d : deltas_by_severity(r))
    if (d.metric == "recip_throughput_cycles") order.push_back(d.item);
  CHECK(order == std::vector<std::string>{"two", "one", "three", "four", "five"});
}

TEST_CASE("compare: JSON and console forms", "[compare]") {
  auto r = compare(document({{"results", {inst("imul r64, r64", 1.0)}}}),
                   document({{"results", {inst("imul r64, r64", 1.1), inst("add r64, r64", 0.25)}}}));
  json j = to_json(r);
  CHECK(j["schema"] == "peakprobe-compare/1");
  CHECK(j["regressions"] == 1);
  CHECK(j["thresholds"]["time"] == Approx(0.05));
  REQUIRE(j["deltas"].size() == 2);
  CHECK(j["deltas"][0]["verdict"] == "regression");
  CHECK(j["deltas"][0]["ratio"].get<double>() == Approx(1.1));
  CHECK(j["deltas"][1]["verdict"] == "added");
  CHECK(j["deltas"][1]["ratio"].is_null());

  std::ostringstream out;
  write_compare_console(out, r, false);
  CHECK(out.str().find("regression") != std::string::npos);
  CHECK(out.str().find("1 regression, 0 improvements") != std::string::npos);
  CHECK(out.str().find('\033') == std::string::npos);
}

namespace {

struct ScratchDir {
  fs::path path;
  ScratchDir() {
    std::string name = (fs::temp_directory_path() / "peakprobe-compare-XXXXXX").string();
    REQUIRE(::mkdtemp(name.data()) != nullptr);
    path = name;
  }
  ~ScratchDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
  std::string write(const std::string& name, const std::string& text) const {
    std::ofstream(path / name) << text;
    return (path / name).string();
  }
};

// Runs the compare subcommand in-process, with stdout and the log lines captured.
struct CliRun {
  int rc = -1;
  std::string out, log;
};

CliRun run_cli(std::vector<std::string> args, peakprobe::cli::OutputOptions out = {}) {
  CLI::App app;
  peakprobe::cli::GlobalOptions g;
  g.out = out;
  peakprobe::cli::add_compare_command(app, g);
  args.insert(args.begin(), {"peakprobe", "compare"});
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  app.parse(static_cast<int>(argv.size()), argv.data());
  REQUIRE(g.action);
  std::ostringstream captured, log;
  auto* saved = std::cout.rdbuf(captured.rdbuf());
  auto previous = spdlog::default_logger();
  spdlog::set_default_logger(
      std::make_shared<spdlog::logger>("compare-test", std::make_shared<spdlog::sinks::ostream_sink_mt>(log)));
  g.action();
  spdlog::set_default_logger(previous);
  std::cout.rdbuf(saved);
  return {g.exit_code, captured.str(), log.str()};
}

}  // namespace

TEST_CASE("compare command: exit codes and outputs", "[compare]") {
  ScratchDir dir;
  json base = document({{"results", {inst("imul r64, r64", 1.0)}}});
  json slower = document({{"results", {inst("imul r64, r64", 1.07)}}});
  std::string a = dir.write("a.json", base.dump());
  std::string b = dir.write("b.json", slower.dump());

  CHECK(run_cli({a, a}).rc == 0);
  auto regressed = run_cli({a, b});
  CHECK(regressed.rc == 5);
  CHECK(regressed.out.find("regression") != std::string::npos);
  CHECK(run_cli({a, b, "--time-threshold", "10"}).rc == 0);
  // Rows whose spreads cover the change pass, unless the thresholds are fixed.
  json noisy_base = base, noisy_slower = slower;
  noisy_base["results"][0]["throughput"] = {{"spread", 0.02}};
  noisy_slower["results"][0]["throughput"] = {{"spread", 0.02}};
  std::string na = dir.write("na.json", noisy_base.dump());
  std::string nb = dir.write("nb.json", noisy_slower.dump());
  CHECK(run_cli({na, nb}).rc == 0);
  CHECK(run_cli({na, nb, "--fixed-thresholds"}).rc == 5);

  peakprobe::cli::OutputOptions files;
  files.json = (dir.path / "report.json").string();
  files.markdown = (dir.path / "report.md").string();
  CHECK(run_cli({a, b}, files).rc == 5);
  json report = json::parse(std::ifstream(files.json));
  CHECK(report["regressions"] == 1);
  CHECK(report["old_file"] == a);
  CHECK(fs::file_size(files.markdown) > 0);

  peakprobe::cli::OutputOptions to_stdout;
  to_stdout.json = "-";
  auto piped = run_cli({a, b}, to_stdout);
  CHECK(json::parse(piped.out)["regressions"] == 1);
}

TEST_CASE("compare command: unreadable or invalid input exits 2", "[compare]") {
  ScratchDir dir;
  std::string good = dir.write("good.json", document().dump());
  json other = document();
  other["schema"] = "peakprobe/9";
  // Each message names the file at fault, so a CI log says which input is broken.
  std::string missing = (dir.path / "missing.json").string();
  auto r = run_cli({missing, good});
  CHECK(r.rc == 2);
  CHECK(r.log.find("cannot read document '" + missing + "'") != std::string::npos);
  std::string text = dir.write("text.json", "not json");
  r = run_cli({good, text});
  CHECK(r.rc == 2);
  CHECK(r.log.find(text + ": not valid JSON") != std::string::npos);
  std::string wrong = dir.write("other.json", other.dump());
  r = run_cli({good, wrong});
  CHECK(r.rc == 2);
  CHECK(r.log.find(wrong + ": schema is \"peakprobe/9\"") != std::string::npos);
  CHECK(run_cli({"-", "-"}).rc == 2);
}

TEST_CASE("compare: a form that gained or lost a pipe (table --pipes) is a pipe change, never a regression",
          "[compare]") {
  auto row = [](const std::string& text, std::vector<std::pair<std::string, double>> pipes) {
    json r = inst(text, 0.5);
    json a = json::array();
    for (const auto& [basis, sp] : pipes) {
      const char* c = sp < 0.25 ? "none" : sp > 0.75 ? "shared" : "partial";
      a.push_back({{"basis", basis}, {"contention", c}, {"same_port", sp}});
    }
    r["pipes"] = a;
    return r;
  };
  const json old_doc = document({{"results", {row("vpermd ymm, ymm, ymm", {{"vaddps", 0.02}, {"vmulps", 0.95},
                                                                            {"vpermps", 0.74}, {"only-old", 1.0}})}}});
  const json new_doc = document({{"results", {row("vpermd ymm, ymm, ymm", {{"vaddps", 0.97}, {"vmulps", 0.93},
                                                                            {"vpermps", 0.78}, {"only-new", 0.0}})}}});
  const CompareReport r = compare(old_doc, new_doc);
  const MetricDelta& gained = find(r, "vpermd ymm, ymm, ymm", "pipe vaddps");
  CHECK(gained.verdict == Verdict::pipe_changed);
  CHECK(gained.note == "none -> shared");
  CHECK(*gained.old_value == 0.02);
  CHECK(*gained.new_value == 0.97);
  // Unchanged, or across a threshold by less than a quarter of the scale (run-to-run spread), or a
  // member one side lacks: no delta.
  size_t pipe_deltas = 0;
  for (const auto& d : r.deltas) pipe_deltas += d.verdict == Verdict::pipe_changed;
  CHECK(pipe_deltas == 1);
  CHECK(r.regressions == 0);
  CHECK(r.improvements == 0);
  std::ostringstream md, console;
  write_compare_markdown(md, r);
  write_compare_console(console, r, false);
  CHECK_THAT(md.str(), Catch::Contains("1 pipe change") && Catch::Contains("pipe changed (none -> shared)"));
  CHECK_THAT(console.str(), Catch::Contains("pipe changed"));
  CHECK(to_json(r)["deltas"].size() == r.deltas.size());
}

TEST_CASE("compare: a penalty gained or lost (table --pipes) is a pipe change, whatever the measure", "[compare]") {
  auto row = [](std::vector<std::pair<std::string, std::string>> pipes) {
    json r = inst("pmul.legacy", 0.5);
    json a = json::array();
    for (const auto& [basis, c] : pipes) {
      json v = {{"basis", basis}, {"contention", c}, {"same_port", nullptr}};
      if (c == "none") v["same_port"] = 0.0;
      if (c == "shared") v["same_port"] = 0.76;
      a.push_back(v);
    }
    r["pipes"] = a;
    return r;
  };
  // A penalty carries no same-port measure: the change counts on the words alone. Penalty on both
  // sides, or beside an unmeasured pair, is no change.
  // Against `shared`, a pipe served a little worse may cross the 1.5 line: no change either.
  const json old_doc = document({{"results", {row({{"fadd.wide", "penalty"}, {"fmul.wide", "none"},
                                                   {"ld", "penalty"}, {"st", "penalty"}, {"mul.narrow", "shared"}})}}});
  const json new_doc = document({{"results", {row({{"fadd.wide", "none"}, {"fmul.wide", "penalty"},
                                                   {"ld", "penalty"}, {"st", "unmeasured"}, {"mul.narrow", "penalty"}})}}});
  const CompareReport r = compare(old_doc, new_doc);
  const MetricDelta& lost = find(r, "pmul.legacy", "pipe fadd.wide");
  CHECK(lost.verdict == Verdict::pipe_changed);
  CHECK(lost.note == "penalty -> none");
  CHECK_FALSE(lost.old_value);
  CHECK(*lost.new_value == 0.0);
  const MetricDelta& gained = find(r, "pmul.legacy", "pipe fmul.wide");
  CHECK(gained.verdict == Verdict::pipe_changed);
  CHECK(gained.note == "none -> penalty");
  size_t pipe_deltas = 0;
  for (const auto& d : r.deltas) pipe_deltas += d.verdict == Verdict::pipe_changed;
  CHECK(pipe_deltas == 2);
  CHECK(r.regressions == 0);
  // Every writer copes with the side that has no measure.
  std::ostringstream md, console;
  write_compare_markdown(md, r);
  write_compare_console(console, r, false);
  CHECK_THAT(md.str(), Catch::Contains("pipe changed (penalty -> none)"));
  CHECK_THAT(console.str(), Catch::Contains("pipe changed"));
  CHECK(to_json(r)["deltas"].size() == r.deltas.size());
}
