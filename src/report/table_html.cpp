#include "report/table_html.hpp"

#include <cmath>
#include <map>

#include <fmt/format.h>

#include "report/svg_heatmap.hpp"

namespace peakprobe {
namespace {

constexpr const char* kStyle = R"css(
body { font-family: system-ui, sans-serif; margin: 1.5em; color: #222; }
table { border-collapse: collapse; font-size: 13px; }
th, td { border-bottom: 1px solid #ddd; padding: 2px 8px; text-align: left; white-space: nowrap; }
th { cursor: pointer; background: #f4f4f4; position: sticky; top: 0; }
td.n { text-align: right; font-variant-numeric: tabular-nums; }
td.reason { white-space: normal; max-width: 40em; color: #555; }
tr.ok td.s { color: #1a7f37; } tr.mistrusted td.s { color: #9a6700; }
tr.error td.s { color: #cf222e; } tr.skipped td.s { color: #777; }
.controls { margin: 1em 0; } .controls input { width: 24em; }
td.p-shared { background: #f6c8c8; } td.p-partial { background: #fbe5b6; } td.p-none { color: #999; }
td.p-issue-width { background: #dde6f6; } td.p-penalty { background: #e3d3f2; }
)css";

// Filter by text, status and family; sort by a column (numbers as numbers, missing last).
constexpr const char* kScript = R"js(
(function () {
  var table = document.getElementById('forms'), body = table.tBodies[0];
  var text = document.getElementById('q'), status = document.getElementById('status'), family = document.getElementById('family');
  var count = document.getElementById('count');
  function apply() {
    var q = text.value.toLowerCase(), s = status.value, f = family.value, shown = 0;
    for (var i = 0; i < body.rows.length; ++i) {
      var r = body.rows[i];
      var ok = (!q || r.cells[0].textContent.toLowerCase().indexOf(q) >= 0) &&
               (!s || r.className === s) && (!f || r.dataset.family === f);
      r.style.display = ok ? '' : 'none';
      if (ok) ++shown;
    }
    count.textContent = shown + ' of ' + body.rows.length + ' rows';
  }
  [text, status, family].forEach(function (e) { e.addEventListener('input', apply); });
  var order = {};
  Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th, col) {
    th.addEventListener('click', function () {
      var dir = order[col] = -(order[col] || -1), numeric = th.dataset.numeric === '1';
      var rows = Array.prototype.slice.call(body.rows);
      rows.sort(function (a, b) {
        var x = a.cells[col].textContent, y = b.cells[col].textContent;
        if (numeric) {
          var u = parseFloat(x), v = parseFloat(y);
          if (isNaN(u)) return isNaN(v) ? 0 : 1;
          if (isNaN(v)) return -1;
          return dir * (u - v);
        }
        return dir * x.localeCompare(y);
      });
      rows.forEach(function (r) { body.appendChild(r); });
    });
  });
  apply();
})();
)js";

std::string esc(const std::string& s) { return xml_escape(s); }

std::string num(const std::optional<double>& v, int decimals) {
  return v && std::isfinite(*v) ? fmt::format("{:.{}f}", *v, decimals) : "";
}

std::string family_of(const ProbeResult& r) {
  // table rows: "table.<family>"; catalog rows keep their catalog group, whose first part is shown.
  const std::string& g = r.group;
  if (g.rfind("table.", 0) == 0) return g.substr(6);
  return g.substr(0, g.find('.'));
}

std::string operand_latencies(const ProbeResult& r) {
  std::string out;
  for (const auto& l : r.latencies)
    out += fmt::format("{}{}:{}{:.2f}", out.empty() ? "" : " ", l.operand, l.upper_bound ? "&le;" : "", l.cycles);
  return out;
}

// The basis of `table --pipes` and how to read its columns.
std::string pipe_basis_section(const PipeGroups& g) {
  std::string h = "<h2>Pipe groups</h2>\n<p>Each column is one member of the basis: a seed instruction standing for "
                  "one cluster of the seed matrix (the seeds that contend with each other on this CPU). A cell is the "
                  "same-port measure of the row's form interleaved with that member: 0 = they issue together, 1 = "
                  "as slow as both in sequence (one shared pipe); red shared, yellow partial, blue: the pair ran at "
                  "the core's issue width and cannot tell; purple <em>pen</em>: far slower than both in sequence, a "
                  "cost paid only together (a penalty at every switch), not a pipe. ";
  h += fmt::format("Issue width seen: {:.2f} instructions/cycle. Basis found in {:.1f} s.</p>\n<ol>\n", g.issue_width,
                   g.seconds);
  for (const auto& b : g.basis) {
    std::string members;
    for (const auto& m : b.members) members += (members.empty() ? "" : "; ") + esc(m);
    h += fmt::format("<li><code>{}</code> ({:.3f} cycles alone): {}</li>\n", esc(b.instruction), b.recip_throughput,
                     members);
  }
  h += "</ol>\n";
  if (!g.skipped_seeds.empty()) {
    h += "<p>Seeds not measured: ";
    for (size_t i = 0; i < g.skipped_seeds.size(); ++i) h += (i ? "; " : "") + esc(g.skipped_seeds[i]);
    h += "</p>\n";
  }
  return h;
}

std::string pipe_cells(const ProbeResult& r, const std::vector<PipeBasisMember>& basis) {
  std::string h;
  for (size_t k = 0; k < basis.size(); ++k) {
    if (k >= r.pipes.size() || r.pipes[k].basis != basis[k].instruction) {
      h += "<td class=\"n\"></td>";
      continue;
    }
    const PipeVerdict& v = r.pipes[k];
    const std::string title = std::string(to_string(v.contention)) + (v.reason.empty() ? "" : ": " + v.reason);
    h += fmt::format("<td class=\"n p-{}\" title=\"{}\">{}</td>", to_string(v.contention), esc(title),
                     v.contention == Contention::issue_width ? "iw"
                     : v.contention == Contention::penalty   ? "pen"
                                                             : num(v.same_port, 2));
  }
  return h;
}

}  // namespace

std::string table_html(const RunDocument& doc) {
  std::map<std::string, int> families;
  std::map<Status, int> statuses;
  for (const auto& r : doc.results) {
    ++families[family_of(r)];
    ++statuses[r.status];
  }
  std::string h;
  h += "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n";
  h += "<title>peakprobe table: " + esc(doc.host.brand) + "</title>\n<style>" + std::string(kStyle) + "</style></head><body>\n";
  h += "<h1>Instruction table: " + esc(doc.host.brand) + "</h1>\n";
  h += fmt::format("<p>{} rows: {} ok, {} mistrusted, {} error, {} skipped. Core clock {:.3f} GHz at the start ({}). "
                   "Cycles are core cycles at the measured clock. Command: <code>{}</code>; started {}.</p>\n",
                   doc.results.size(), statuses[Status::ok], statuses[Status::mistrusted], statuses[Status::error],
                   statuses[Status::skipped], doc.clock.ghz, esc(doc.clock.source), esc(doc.command),
                   esc(doc.started_utc));
  const size_t basis_size = doc.pipe_groups ? doc.pipe_groups->basis.size() : 0;
  if (doc.pipe_groups) h += pipe_basis_section(*doc.pipe_groups);
  h += "<div class=\"controls\"><input id=\"q\" type=\"search\" placeholder=\"filter by instruction text\"> ";
  h += "<select id=\"status\"><option value=\"\">every status</option>";
  for (Status s : {Status::ok, Status::mistrusted, Status::error, Status::skipped})
    h += fmt::format("<option value=\"{0}\">{0}</option>", to_string(s));
  h += "</select> <select id=\"family\"><option value=\"\">every family</option>";
  for (const auto& [f, n] : families) h += fmt::format("<option value=\"{0}\">{0} ({1})</option>", esc(f), n);
  h += "</select> <span id=\"count\"></span></div>\n";
  h += "<table id=\"forms\"><thead><tr><th>instruction</th><th>family</th><th>status</th>"
       "<th data-numeric=\"1\">latency</th><th>per operand</th><th data-numeric=\"1\">rtput</th>"
       "<th data-numeric=\"1\">IPC</th><th data-numeric=\"1\">GFLOP/s|GOP/s</th><th data-numeric=\"1\">K</th>"
       "<th>reason</th>";
  for (size_t k = 0; k < basis_size; ++k)
    h += fmt::format("<th data-numeric=\"1\" title=\"{}\">{}</th>", esc(doc.pipe_groups->basis[k].instruction),
                     esc(doc.pipe_groups->basis[k].instruction));
  h += "</tr></thead>\n<tbody>\n";
  for (const auto& r : doc.results) {
    const std::string rate = r.gflops ? num(r.gflops, 2) : num(r.gops, 2);
    h += fmt::format(
        "<tr class=\"{}\" data-family=\"{}\"><td>{}</td><td>{}</td><td class=\"s\">{}</td><td class=\"n\">{}</td>"
        "<td>{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td>"
        "<td class=\"reason\">{}</td>{}</tr>\n",
        to_string(r.status), esc(family_of(r)), esc(r.instruction), esc(family_of(r)), to_string(r.status),
        num(r.latency_cycles, 2), operand_latencies(r), num(r.recip_throughput_cycles, 3), num(r.throughput_ipc, 2),
        rate, r.accumulators > 0 ? std::to_string(r.accumulators) : "", esc(r.reason), pipe_cells(r, doc.pipe_groups ? doc.pipe_groups->basis : std::vector<PipeBasisMember>{}));
  }
  h += "</tbody></table>\n<script>" + std::string(kScript) + "</script>\n</body></html>\n";
  return h;
}

}  // namespace peakprobe
