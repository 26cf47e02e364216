// Tests for src/report/mem_report.cpp: the memory rows (bandwidth by working set, latency by working
// set, cache levels) in each format, against golden files (PEAKPROBE_UPDATE_GOLDEN=1 rewrites them).
#include <catch2/catch.hpp>

#include <sstream>

#include "report/mem_report.hpp"
#include "report_fixture.hpp"

using namespace peakprobe;

namespace {

ClockReading clock_at(double ghz) {
  ClockReading c;
  c.source = "tsc + add-chain calibration";
  c.ghz = c.ghz_before = c.ghz_after = ghz;
  return c;
}

RunDocument memory_document() {
  RunDocument d = peakprobe::test::report_fixture();  // its host, clock and version for the headers
  d.results.clear();
  BandwidthResult l1;
  l1.kernel = "load";
  l1.isa = "w512";  // a width name (Target::width_name) of no ISA in particular
  l1.size_bytes = 16 << 10;
  l1.bytes_per_iteration = 512;
  l1.gbps = 221.7;
  l1.bytes_per_cycle = 60.03;
  l1.gbps_stats = {210.5, 219.0, 221.7, 0.012, 25};
  l1.clock = clock_at(3.693);
  l1.repro = "peakprobe mem -k load --isa w512 --sizes 16KiB --cpu 0";
  d.bandwidth.push_back(l1);
  BandwidthResult dram = l1;
  dram.kernel = "triad";
  dram.size_bytes = 512ull << 20;
  dram.threads = 2;
  dram.bytes_per_iteration = 192;
  dram.gbps = 30.5;
  dram.bytes_per_cycle = 4.15;
  dram.gbps_stats = {27.1, 29.9, 30.5, 0.02, 6};
  dram.per_thread_gbps = {15.4, 15.1};
  dram.per_thread_ghz = {3.69, 3.66};
  dram.imbalance = 0.019;
  dram.status = Status::mistrusted;
  dram.reason = "a thread waited for its CPU in every repetition";
  dram.waited_every_repetition = true;
  dram.repro = "peakprobe mem -k triad --isa w512 --sizes 512MiB --threads 2 --cpu 0";
  d.bandwidth.push_back(dram);
  LatencyResult near;
  near.mode = "random";
  near.pages = near.pages_granted = "4k";
  near.size_bytes = 16 << 10;
  near.latency_ns = 1.09;
  near.latency_cycles = 4.02;
  near.ns_stats = {1.08, 1.09, 1.2, 0.1, 9};
  near.clock = clock_at(3.69);
  near.repro = "peakprobe latency --sizes 16KiB --cpu 0";
  d.latency.push_back(near);
  LatencyResult far = near;
  far.pages = "2m";
  far.pages_granted = "mixed";
  far.size_bytes = 1ull << 30;
  far.chains = 4;
  far.latency_ns = 98.4;
  far.latency_cycles = 363.1;
  far.ns_stats = {97.0, 98.4, 104.2, 0.06, 5};
  far.repro = "peakprobe latency --sizes 1GiB --pages 2m --chains 4 --cpu 0";
  d.latency.push_back(far);
  d.levels.push_back({"L1", uint64_t(32) << 10, 236.4, uint64_t(32) << 10, ""});
  d.levels.push_back({"L3", uint64_t(4) << 20, 96.5, uint64_t(32) << 20,
                      "the level ends sooner than the OS reports (a VM may hold a fraction of a shared cache)"});
  d.levels.push_back({"DRAM", std::nullopt, 24.9, std::nullopt, ""});
  return d;
}

template <typename Write>
std::string written(Write write) {
  std::ostringstream out;
  write(out, memory_document());
  return out.str();
}

}  // namespace

TEST_CASE("memory rows as JSON: every field, null where a figure is missing", "[mem_report]") {
  nlohmann::json doc = nlohmann::json::object();
  add_memory(doc, memory_document());
  peakprobe::test::check_golden("mem_report.json", doc.dump(2) + "\n");
  // A document without memory rows gets no memory keys.
  nlohmann::json none = nlohmann::json::object();
  add_memory(none, RunDocument{});
  CHECK(none.empty());
}

TEST_CASE("memory rows as CSV, Markdown and console text", "[mem_report]") {
  peakprobe::test::check_golden("mem_report.csv", written(write_memory_csv));
  peakprobe::test::check_golden("mem_report.md", written(write_memory_markdown));
  peakprobe::test::check_golden("mem_console.txt", written(write_memory_console));
}
