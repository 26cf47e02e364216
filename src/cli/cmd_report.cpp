// The main job: `peakprobe` with no subcommand, or `peakprobe report`. Everything a performance
// engineer wants from a new machine, into one folder: the instruction table, the ceiling table,
// memory bandwidth and latency curves, the FP pair matrix, plots and one HTML page.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <optional>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "asm/target.hpp"
#include "catalog/sets.hpp"
#include "cli/catalog_loading.hpp"
#include "cli/commands.hpp"
#include "cli/measure.hpp"
#include "cli/report_kernels.hpp"
#include "cpu/cpu_info.hpp"
#include "gpu/gpu_worker.hpp"
#include "harness/core_availability.hpp"
#include "harness/probe_runner.hpp"
#include "memory/level_detect.hpp"
#include "memory/mem_runner.hpp"
#include "memory/sizes.hpp"
#include "pairs/pair_runner.hpp"
#include "report/ceiling_report.hpp"
#include "report/csv_report.hpp"
#include "report/html_report.hpp"
#include "report/json_report.hpp"
#include "report/markdown_report.hpp"
#include "report/matmul_report.hpp"
#include "report/mem_report.hpp"
#include "report/output_file.hpp"
#include "report/pair_report.hpp"
#include "report/svg_heatmap.hpp"
#include "report/svg_plots.hpp"
#include "report/table_html.hpp"
#include "roofline/gpu_ceilings.hpp"

namespace peakprobe::cli {
namespace {

// The report scans at most this many cores for the wall time they give a thread, this long each:
// some 25 periods of the 1 ms stops a KVM host made, 0.1 s in all at most.
constexpr size_t kReportScannedCores = 4;
constexpr double kReportScanMs = 25;

std::string default_out_dir() {
  char host[128] = "host";
  gethostname(host, sizeof(host) - 1);
  std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  char stamp[32];
  std::strftime(stamp, sizeof(stamp), "%Y%m%d-%H%M%S", std::localtime(&now));
  return fmt::format("peakprobe-{}-{}", host, stamp);
}

// The FP pair set of the widest vector width this CPU runs.
std::string pair_set_for(const CpuInfo& cpu) { return isa::host_target().report_pair_set(cpu); }

// `last_level_end`: where the ceilings' plateau search saw one core's last level end, when sooner
// than reported (0: as reported); the curves go 4 x past it (dram_working_set), dense to 2 x.
void measure_memory_curves(GlobalOptions& g, const CpuInfo& cpu, RunDocument& doc, bool quick,
                           uint64_t last_level_end) {
  auto mem = MemRunner::create(cpu, g.cpu);
  if (!mem) {
    spdlog::warn("memory curves skipped: {}", mem.error());
    return;
  }
  (*mem)->set_last_level_end(last_level_end);
  const uint64_t top = last_level_end > 0 ? dram_working_set(cpu.caches, 1, last_level_end) : default_sweep_top(cpu);
  // Dense up to twice the last-level cache (where the last level ends), one point an octave beyond:
  // DRAM's plateau needs few points, and its points cost the most (each sweeps hundreds of MiB). Past
  // 64 MiB half as dense: a last level of hundreds of MiB cost 25 s of a 68 s report at four points an
  // octave (480 MiB L3, Sapphire Rapids-class VM).
  const uint64_t fine_to = 64ull << 20;
  const uint64_t last_level = last_level_end > 0 ? last_level_end : last_level_cache_bytes(cpu);
  const uint64_t dense_to = std::max<uint64_t>(2 * last_level, fine_to);
  PartTimer laps("report");
  const auto bw_sizes = tapered_sweep_sizes(4096, fine_to, dense_to, top, quick ? 2 : 4);
  std::vector<BandwidthResult> sweep;
  size_t i = 0;
  for (uint64_t s : bw_sizes) {
    progress(g.out, ++i, bw_sizes.size(), "bandwidth sweep " + format_bytes(s));
    sweep.push_back((*mem)->bandwidth({"load", 0, s, 1}));
  }
  std::vector<CurvePoint> curve;
  for (const auto& b : sweep)
    // Not a row another program's share of the CPU set (bounds_memory); an emulator's rows stay, their
    // curve drawn and its levels named as `mem --sweep` does there, every row mistrusted.
    if (b.gbps && !b.waited_every_repetition) curve.push_back({b.size_bytes, *b.gbps});
  doc.levels = match_levels(detect_levels(curve), cpu.caches, 1);
  doc.bandwidth.insert(doc.bandwidth.begin(), sweep.begin(), sweep.end());
  laps.lap(fmt::format("bandwidth curve of {} points", bw_sizes.size()));
  // Latency: 2 points per octave are enough to see every level's step (1 past 64 MiB, as above).
  const auto lat_sizes =
      tapered_sweep_sizes(4096, fine_to, dense_to, std::min<uint64_t>(top, 512ull << 20), quick ? 1 : 2);
  if (!lat_sizes.empty()) (*mem)->set_latency_top(lat_sizes.back());
  i = 0;
  for (uint64_t s : lat_sizes) {
    progress(g.out, ++i, lat_sizes.size(), "latency " + format_bytes(s));
    doc.latency.push_back((*mem)->latency({s, "random", "4k", 1}));
  }
  laps.lap(fmt::format("latency curve of {} points", lat_sizes.size()));
}

// Every OpenCL GPU, measured as `gpu --quick` does, each in its worker process. CPU devices (PoCL)
// are left out: they measure the CPU this report already covers, and would double its time.
void measure_gpus(GlobalOptions& g, RunDocument& doc) {
  constexpr double kListSeconds = 30, kDeviceSeconds = 120;
  auto devices = gpu::list_devices_isolated(kListSeconds);
  if (!devices) {
    spdlog::info("no GPU section: {}", devices.error());
    return;
  }
  std::vector<GpuDevice> gpus;
  for (const GpuDevice& d : *devices)
    if (d.type == "gpu") gpus.push_back(d);
  if (gpus.empty()) {
    spdlog::info("no GPU section: none of the {} OpenCL device{} is a GPU (`peakprobe gpu --device all` measures "
                 "them)", devices->size(), devices->size() == 1 ? "" : "s");
    return;
  }
  gpu::GpuOptions o;
  o.kernel_seconds = 0.01;
  o.min_repetitions = 3;
  o.min_total_seconds = 0.03;
  o.latency = false;  // the pointer chase is the slowest part and no roof uses it
  size_t i = 0;
  for (const GpuDevice& d : gpus) {
    progress(g.out, ++i, gpus.size(), "OpenCL " + d.name);
    spdlog::info("measuring OpenCL GPU {}: {}", d.index, d.name);
    doc.gpus.push_back(gpu::measure_device_isolated(d.index, o, kDeviceSeconds));
    if (doc.gpus.back().device.name.empty()) doc.gpus.back().device = d;
  }
}

int write_folder(const std::string& dir, const RunDocument& doc, const RunDocument* table) {
  std::vector<std::pair<std::string, std::string>> svgs;
  const int all = int(doc.host.core_order.size());
  if (doc.ceilings) {
    svgs.emplace_back("Roofline, one core", roofline_svg(*doc.ceilings, doc.scores, 1, "Roofline, one core: " + doc.host.brand));
    if (all > 1)
      svgs.emplace_back(fmt::format("Roofline, {} cores", all),
                        roofline_svg(*doc.ceilings, doc.scores, all, fmt::format("Roofline, {} cores: {}", all, doc.host.brand)));
  }
  std::vector<BandwidthResult> curve;
  for (const auto& b : doc.bandwidth)
    if (b.kernel == "load" && b.threads == 1) curve.push_back(b);
  if (!curve.empty())
    svgs.emplace_back("Bandwidth vs working set", bandwidth_svg(curve, doc.levels, doc.host.caches, "Load bandwidth, one core"));
  if (!doc.latency.empty())
    svgs.emplace_back("Latency vs working set", latency_svg(doc.latency, doc.host.caches, "Load-to-use latency, one core"));
  if (doc.matrix) svgs.emplace_back("Pair matrix", pair_heatmap_svg(*doc.matrix, "FP pair matrix: " + doc.host.brand));
  // One roofline per GPU, in gpu-N-roofline.svg (N its `gpu list` index).
  std::vector<std::pair<std::string, std::string>> gpu_files;  // title, file
  for (const GpuReport& r : doc.gpus) {
    const CeilingTable t = gpu_ceiling_table(r);
    if (t.compute.empty() && t.memory.empty()) continue;
    const std::string title = fmt::format("GPU {} roofline", r.device.index);
    svgs.emplace_back(title, roofline_svg(t, {}, 1, fmt::format("Roofline, OpenCL GPU {}: {}", r.device.index,
                                                                r.device.name)));
    gpu_files.emplace_back(title, fmt::format("gpu-{}-roofline.svg", r.device.index));
  }
  const char* names[] = {"roofline-1core.svg", "roofline-allcores.svg", "bandwidth.svg", "latency.svg", "pairs.svg"};
  std::vector<OutputJob> jobs = {
      {dir + "/report.json", [&](std::ostream& o) { o << json_text(to_json(doc)) << "\n"; }},
      {dir + "/instructions.csv", [&](std::ostream& o) { write_csv(o, doc.results); }},
      {dir + "/ceilings.csv", [&](std::ostream& o) { write_ceilings_csv(o, doc); }},
      {dir + "/memory.csv", [&](std::ostream& o) { write_memory_csv(o, doc); }},
      {dir + "/summary.md", [&](std::ostream& o) {
         write_ceilings_markdown(o, doc);
         o << "\n";
         if (!doc.matmuls.empty()) {
           write_matmul_markdown(o, doc.matmuls);
           o << "\n";
         }
         write_memory_markdown(o, doc);
         o << "\n";
         write_markdown(o, doc);
       }}};
  for (const auto& [title, svg] : svgs) {
    std::string file;
    for (const auto& [t, f] : gpu_files)
      if (t == title) file = f;
    if (file.empty())
      file = title.rfind("Roofline, one", 0) == 0 ? names[0]
                       : title.rfind("Roofline", 0) == 0    ? names[1]
                       : title.rfind("Bandwidth", 0) == 0   ? names[2]
                       : title.rfind("Latency", 0) == 0     ? names[3]
                                                            : names[4];
    jobs.push_back({dir + "/" + file, [&svg = svg](std::ostream& o) { o << svg; }});
  }
  if (table) {  // the whole table: its own page, linked from report.html, and its data files
    jobs.push_back({dir + "/table.html", [table](std::ostream& o) { o << table_html(*table); }});
    jobs.push_back({dir + "/table.json", [table](std::ostream& o) { o << json_text(to_json(*table)) << "\n"; }});
    jobs.push_back({dir + "/table.csv", [table](std::ostream& o) { write_csv(o, table->results); }});
  }
  const TablePage page{table, "table.html"};
  jobs.push_back({dir + "/report.html", [&](std::ostream& o) {
                    o << html_report(doc, doc.ceilings.value_or(CeilingTable{}), svgs, table ? &page : nullptr);
                  }});
  if (int rc = write_jobs(jobs)) return rc;  // all of the folder's files, or none of them
  return kExitOk;
}

// Every file the folder will get, for checking before anything is measured.
std::vector<OutputTarget> folder_targets(const std::string& dir, bool with_table) {
  std::vector<OutputTarget> out;
  for (const char* f : {"report.json", "instructions.csv", "ceilings.csv", "memory.csv", "summary.md",
                        "roofline-1core.svg", "roofline-allcores.svg", "bandwidth.svg", "latency.svg", "pairs.svg",
                        "report.html"})
    out.push_back({"--out", dir + "/" + f});
  if (with_table)
    for (const char* f : {"table.html", "table.json", "table.csv"}) out.push_back({"--out", dir + "/" + f});
  return out;
}

}  // namespace

int run_report(GlobalOptions& g, ReportOptions o) {
  if (o.out_dir.empty()) o.out_dir = default_out_dir();
  const std::string& out_dir = o.out_dir;
  const bool quick = o.quick;
  // Checked, with the folder's own files, before a minute of measuring; made now and removed again
  // if the run ends (an error, SIGINT) before anything was written into it.
  std::vector<OutputTarget> targets = output_targets(g.out);
  std::optional<OutputFolder> folder;
  try {
    folder.emplace(out_dir);
  } catch (const OutputError& e) {
    spdlog::error("{}", e.what());
    return kExitOutput;
  }
  for (auto& t : folder_targets(out_dir, o.with_table)) targets.push_back(std::move(t));
  if (int rc = check_outputs(targets)) return rc;
  CpuInfo cpu;
  if (int rc = prepare_measuring(g, cpu)) return rc;
  const auto t0 = std::chrono::steady_clock::now();
  RunDocument doc = new_document(cpu, g.argc, g.argv);
  spdlog::info("full report on {} -> {}/ (about 30 s{}{})", cpu.brand, out_dir, quick ? "; --quick" : "",
               !o.with_table ? "" : o.pipes ? "; the whole table with pipe groups: 10 minutes more"
                                            : "; the whole table: 2 minutes more");
  PartTimer laps("report");  // for -v: where the report's time goes
  uint64_t last_level_end = 0;
  if (int rc = measure_roofline(g, cpu, doc, quick, true, &last_level_end)) return rc;
  laps.lap("instructions, FLOP mixes and ceilings");
  // The bundled matmul on the roofline just measured, before the long sweeps move the clock and caches.
  measure_report_kernels(g, cpu, quick, doc);
  laps.lap("the bundled matmul");
  // The cores probes run on (the first few of the core order, or --cpu), each scanned for the share
  // of wall time it gives a thread: what a timing of milliseconds loses there (docs/method.md).
  if (cpu.emulator.empty() && cpu.tsc_hz > 0) {
    const size_t first = std::min(cpu.core_order.size(), kReportScannedCores);
    const std::vector<int> cores = g.cpu >= 0 ? std::vector<int>{g.cpu}
                                              : std::vector<int>(cpu.core_order.begin(), cpu.core_order.begin() + long(first));
    doc.availability = scan_cores(cores, kReportScanMs, cpu.tsc_hz);
  }
  measure_memory_curves(g, cpu, doc, quick, last_level_end);
  laps.lap("memory curves");
  if (o.with_gpu) measure_gpus(g, doc);
  laps.lap("OpenCL GPUs");
  if (auto sets = default_sets(); sets) {
    const std::string want = pair_set_for(cpu);
    auto catalog = load_catalogs(g);
    for (const auto& s : sets.value())
      if (s.name == want && catalog) {
        auto specs = specs_for_texts(s.instructions, catalog.value());
        ProbeOptions one;
        one.cpu = g.cpu;
        auto runner = ProbeRunner::create(cpu, one);
        if (specs && runner)
          doc.matrix = measure_pair_matrix(**runner, specs.value(), [&](size_t d, size_t t, const std::string& w) {
            progress(g.out, d, t, "pairs " + w);
          });
      }
  }
  laps.lap("pair matrix");
  progress_done(g.out);
  // The table last: Ctrl-C during it ends the table early and the report keeps everything measured.
  std::optional<RunDocument> table;
  int table_rc = kExitOk;
  bool interrupted = false;
  if (o.with_table) {
    table.emplace();
    if ((table_rc = measure_whole_table(g, cpu, o.pipes, *table, interrupted)) != kExitOk) {
      spdlog::error("the whole table was not measured; the rest of the report is written");
      table.reset();
    }
  }
  int rc = write_folder(out_dir, doc, table ? &*table : nullptr);
  if (rc) return rc;
  rc = interrupted ? int(kExitInterrupted) : table_rc;
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  rc = std::max(rc, emit_report_outputs(doc, g.out));
  spdlog::info("report written to {}/ in {:.0f} s (open report.html)", out_dir, secs);
  for (const RunDocument* d : {&doc, table ? &*table : nullptr})
    if (d)
      for (const auto& r : d->results)
        if (r.status == Status::error) return std::max(rc, int(kExitResultErrors));
  return rc;
}

int emit_report_outputs(const RunDocument& doc, const OutputOptions& out) {
  OutputOptions files = out;
  files.svg.clear();  // the plots are in the folder
  // --json/--csv/--markdown: emit_outputs writes them and prints the console table itself (unless one
  // of them goes to stdout), so it is printed here only when there is nothing else to write. The
  // exit code is the document's either way (a row in error: kExitResultErrors).
  if (!files.json.empty() || !files.csv.empty() || !files.markdown.empty()) return emit_outputs(doc, files);
  write_ceilings_console(std::cout, doc);
  return document_exit_code(doc);
}

void add_report_command(CLI::App& app, GlobalOptions& g) {
  auto* cmd = app.add_subcommand("report", "The full report (also what a bare 'peakprobe' runs)");
  auto o = std::make_shared<ReportOptions>();
  auto no_gpu = std::make_shared<bool>(false);
  cmd->add_option("--out", o->out_dir, "Folder for the results (default: peakprobe-HOST-DATE)")
      ->type_name("DIR")
      ->check(not_empty());
  cmd->add_flag("--quick", o->quick, "A shorter pass: fewer sweep points, load kernel only for memory ceilings");
  cmd->add_flag("--no-gpu", *no_gpu, "Leave out the OpenCL GPU section even when a GPU is there");
  auto* table = cmd->add_flag("--table", o->with_table,
                              "Also measure this CPU's whole instruction table (as 'peakprobe table', about 2 "
                              "minutes more): table.html, a page of the report, with table.json and table.csv");
  cmd->add_flag("--pipes", o->pipes,
                "With --table: pipe groups too (as 'peakprobe table --pipes', about 10 minutes in all), as "
                "columns of table.html")
      ->needs(table);
  cmd->footer(
      "Runs: CPU description and clock, every catalog instruction, the best FMA:add mix of each\n"
      "floating-point type and width, the ceiling table at one and all cores, the bundled f32 matmul\n"
      "(1024^3, 512^3 with --quick) on one and all cores scored on the roofline, the bandwidth and latency\n"
      "sweeps with cache levels, the FP pair matrix, and for\n"
      "every OpenCL GPU its compute and memory roofs (as `gpu --quick`; CPU devices such as PoCL are left\n"
      "out). Writes report.json, instructions.csv, ceilings.csv, memory.csv, summary.md, SVG plots\n"
      "(gpu-N-roofline.svg per GPU) and report.html. With --table, also table.html (filter, sort, pipe\n"
      "groups as columns with --pipes), table.json and table.csv, linked from report.html.\n"
      "Example: peakprobe report --out zen4 --table --pipes\n");
  cmd->callback([&g, o, no_gpu] {
    g.action = [&g, o, no_gpu] {
      ReportOptions r = *o;
      r.with_gpu = !*no_gpu;
      g.exit_code = run_report(g, r);
    };
  });
}

}  // namespace peakprobe::cli
