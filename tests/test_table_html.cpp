#include <catch2/catch.hpp>

#include "report/table_html.hpp"

using namespace peakprobe;

namespace {
RunDocument doc() {
  RunDocument d;
  d.host.brand = "Test CPU <1>";
  d.command = "peakprobe table";
  d.clock.ghz = 3.5;
  d.clock.source = "tsc";
  ProbeResult a;
  a.instruction = "op <a>, b & c";
  a.group = "table.alpha";
  a.latency_cycles = 3.004;
  a.latencies = {{1, "a", 3.0, "chain", false}, {2, "b", 4.5, "bridge", true}};
  a.recip_throughput_cycles = 0.3333;
  a.throughput_ipc = 3.0;
  a.accumulators = 12;
  ProbeResult b;
  b.instruction = "stop";
  b.group = "fp.fma";
  b.status = Status::skipped;
  b.reason = "needs \"feature\"";
  d.results = {a, b};
  return d;
}
size_t count(const std::string& hay, const std::string& needle) {
  size_t n = 0;
  for (size_t p = hay.find(needle); p != std::string::npos; p = hay.find(needle, p + 1)) ++n;
  return n;
}
}  // namespace

TEST_CASE("table page: one row per result, every text escaped, figures as printed", "[table_html]") {
  const std::string h = table_html(doc());
  CHECK(count(h, "<tr class=") == 2);
  CHECK_THAT(h, Catch::Contains("op &lt;a&gt;, b &amp; c"));
  CHECK_THAT(h, !Catch::Contains("op <a>"));
  CHECK_THAT(h, Catch::Contains("Test CPU &lt;1&gt;"));
  CHECK_THAT(h, Catch::Contains(">3.00<") && Catch::Contains(">0.333<") && Catch::Contains(">12<"));
  CHECK_THAT(h, Catch::Contains("1:3.00 2:&le;4.50"));  // per-operand latencies, upper bounds marked
  CHECK_THAT(h, Catch::Contains("data-family=\"alpha\"") && Catch::Contains("data-family=\"fp\""));
  CHECK_THAT(h, Catch::Contains("<tr class=\"skipped\""));
  CHECK_THAT(h, Catch::Contains("2 rows: 1 ok, 0 mistrusted, 0 error, 1 skipped"));
}

TEST_CASE("table page: self-contained, with the filter and sort controls", "[table_html]") {
  const std::string h = table_html(doc());
  CHECK_THAT(h, Catch::StartsWith("<!DOCTYPE html>"));
  CHECK_THAT(h, Catch::Contains("id=\"q\"") && Catch::Contains("id=\"status\"") && Catch::Contains("id=\"family\""));
  CHECK(count(h, "<script>") == 1);
  CHECK_THAT(h, !Catch::Contains("http://") && !Catch::Contains("https://") && !Catch::Contains("src="));
  CHECK(table_html(doc()) == h);  // depends only on the document
}

TEST_CASE("table page: with pipe groups, the basis and one column per member", "[table_html]") {
  RunDocument d = doc();
  PipeGroups g;
  g.basis = {{"add <r>", {"add <r>", "popcnt"}, 0.25}, {"mul", {"mul"}, 0.5}};
  g.issue_width = 6.0;
  d.pipe_groups = g;
  PipeVerdict shared, width, paid;
  shared.basis = "add <r>";
  shared.contention = Contention::shared;
  shared.same_port = 0.974;
  width.basis = "mul";
  width.contention = Contention::issue_width;
  width.reason = "at the issue width";
  paid.basis = "ld";
  paid.contention = Contention::penalty;
  paid.reason = "340.0 cycles per group";
  g.basis.push_back({"ld", {"ld"}, 0.5});
  d.pipe_groups = g;
  d.results[0].pipes = {shared, width, paid};
  const std::string h = table_html(d);
  CHECK_THAT(h, Catch::Contains("<h2>Pipe groups</h2>") && Catch::Contains("Issue width seen: 6.00"));
  CHECK_THAT(h, Catch::Contains("<code>add &lt;r&gt;</code>") && Catch::Contains("add &lt;r&gt;; popcnt"));
  CHECK(count(h, "<th data-numeric=\"1\" title=") == 3);
  CHECK_THAT(h, Catch::Contains("class=\"n p-penalty\" title=\"penalty: 340.0 cycles per group\">pen<"));
  CHECK_THAT(h, Catch::Contains("class=\"n p-shared\" title=\"shared\">0.97<"));
  CHECK_THAT(h, Catch::Contains("class=\"n p-issue-width\" title=\"issue-width: at the issue width\">iw<"));
  // The row without verdicts keeps its cells, empty: columns never shift.
  CHECK(count(h, "<td class=\"n\"></td>") >= 2);
  // Without pipe groups the page has no such section or column.
  CHECK_THAT(table_html(doc()), !Catch::Contains("Pipe groups") && !Catch::Contains("class=\"n p-"));
}
