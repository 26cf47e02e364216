// Memory subcommands: `mem` (bandwidth kernels by working set, with level detection on a sweep) and
// `latency` (pointer chase by working set).
#include <algorithm>
#include <sstream>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "asm/target.hpp"
#include "cli/commands.hpp"
#include "cli/measure.hpp"
#include "cpu/cpu_info.hpp"
#include "memory/level_detect.hpp"
#include "memory/mem_runner.hpp"
#include "memory/sizes.hpp"

namespace peakprobe::cli {
namespace {

// The target's vector widths by the names results carry ("scalar" ... the widest), narrowest first.
std::vector<std::pair<std::string, int>> named_widths() {
  std::vector<std::pair<std::string, int>> out;
  for (int bits : isa::host_target().vector_widths()) out.emplace_back(isa::host_target().width_name(bits), bits);
  return out;
}

std::string width_names() {
  std::string out;
  for (const auto& [name, bits] : named_widths()) out += (out.empty() ? "" : ", ") + name;
  return out;
}

std::vector<std::string> split_list(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream in(s);
  std::string item;
  while (std::getline(in, item, ','))
    if (!item.empty()) out.push_back(item);
  return out;
}

// One size inside each level the OS reports (half of it, per the threads' share) and one far past
// the last level: the points users compare with STREAM and likwid-bench.
std::vector<uint64_t> default_sizes(const CpuInfo& cpu, int threads) {
  std::vector<uint64_t> sizes;
  for (const auto& c : cpu.caches) {
    if (c.type == "instruction") continue;
    const uint64_t share = c.shared_by_cpus > 1 ? uint64_t(c.instances) : uint64_t(std::min(threads, std::max(1, c.instances)));
    sizes.push_back(std::max<uint64_t>(16384, c.size_bytes * share / 2 / 4096 * 4096));
  }
  if (sizes.empty()) sizes = {16 << 10, 256 << 10, 4 << 20};
  sizes.push_back(std::max<uint64_t>(1ull << 30, default_sweep_top(cpu)));
  std::sort(sizes.begin(), sizes.end());
  sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
  return sizes;
}

// --sizes or --sweep or the defaults; every size checked against free memory, and against the
// smallest working set the kernel can use (`min_bytes`, what: who needs it), before anything runs.
Expected<std::vector<uint64_t>> choose_sizes(const std::string& list, bool sweep, const CpuInfo& cpu, int threads,
                                             int arrays_factor, uint64_t min_bytes, const char* what) {
  std::vector<uint64_t> sizes;
  if (!list.empty() && sweep) return make_error("give --sizes or --sweep, not both");
  if (!list.empty()) {
    auto parsed = parse_size_list(list);
    if (!parsed) return make_error(parsed.error());
    sizes = parsed.value();
  } else if (sweep) {
    sizes = sweep_sizes(4096, default_sweep_top(cpu), 4);
  } else {
    sizes = default_sizes(cpu, threads);
  }
  for (uint64_t s : sizes) {
    if (s < min_bytes)
      return make_error(fmt::format("--sizes: {} B is below the smallest working set {} ({} B)", s, what, min_bytes));
    if (auto err = check_fits(s * uint64_t(arrays_factor) / 1)) return make_error(*err);
  }
  return sizes;
}

// What both memory commands need before measuring: writable outputs, a runner, the document.
// The quiet core is chosen last: a usage error or an unwritable output costs no measuring.
int start_memory(GlobalOptions& g, CpuInfo& cpu, std::unique_ptr<MemRunner>& runner, RunDocument& doc) {
  if (int rc = check_outputs(g.out)) return rc;
  prefer_quiet_core(g, cpu);
  auto made = MemRunner::create(cpu, g.cpu);
  if (!made) {
    spdlog::error("{}", made.error());
    return kExitMeasure;
  }
  runner = std::move(made.value());
  doc = new_document(cpu, g.argc, g.argv);
  doc.clock = runner->start_clock();
  return kExitOk;
}

}  // namespace

void add_mem_command(CLI::App& app, GlobalOptions& g) {
  auto* cmd = app.add_subcommand("mem", "Memory bandwidth of every cache level and DRAM (generated kernels)");
  auto kernels = std::make_shared<std::string>("load");
  auto isa = std::make_shared<std::string>();
  auto sizes = std::make_shared<std::string>();
  auto sweep = std::make_shared<bool>(false);
  cmd->add_option("-k,--kernel", *kernels,
                  "Kernels, comma-separated: load, store, copy, triad, update, store_nt, copy_nt, triad_nt, or all");
  cmd->add_option("--isa", *isa, "Vector width: " + width_names() + " or all (default: the widest this CPU runs)");
  cmd->add_option("--sizes", *sizes, "Total working sets, e.g. 16KiB,256KiB,4MiB,1GiB (K/M/G = KiB/MiB/GiB)");
  cmd->add_flag("--sweep", *sweep,
                "From 4 KiB to max(4 x last-level cache, 512 MiB), 4 points per octave; finds the cache levels");
  cmd->footer(
      "Bytes are instruction bytes (each load and store counts its width); write-allocate traffic of\n"
      "ordinary stores is not counted. GB/s = 10^9 bytes/s over all --threads (one pinned per core,\n"
      "each on buffers it touched first, all started at a barrier). Examples:\n"
      "  peakprobe mem --sweep                       # curve, level edges, matched to the OS's caches\n"
      "  peakprobe mem -k copy,triad_nt --sizes 1GiB --threads 2\n");
  cmd->callback([&g, kernels, isa, sizes, sweep] {
    g.action = [&g, kernels, isa, sizes, sweep] {
      CpuInfo cpu = detect_cpu_info();
      if (int rc = check_placement(g, cpu)) return void(g.exit_code = rc);
      std::vector<std::string> names = *kernels == "all" ? std::vector<std::string>{} : split_list(*kernels);
      if (*kernels == "all")
        for (const auto& k : isa::mem_kernels()) names.push_back(k.name);
      if (names.empty()) {
        spdlog::error("--kernel '{}': no kernel named (load, store, copy, triad, update, store_nt, copy_nt, triad_nt "
                      "or all)", *kernels);
        return void(g.exit_code = kExitUsage);
      }
      for (const auto& n : names)
        if (auto k = isa::find_mem_kernel(n); !k) {
          spdlog::error("{}", k.error());
          return void(g.exit_code = kExitUsage);
        }
      std::vector<int> widths;
      const auto isas = named_widths();
      for (const auto& want : isa->empty() ? std::vector<std::string>{""} : split_list(*isa)) {
        if (want.empty()) widths.push_back(0);
        for (const auto& [name, w] : isas)
          if (want == name || want == "all") widths.push_back(w);
        if (!want.empty() && want != "all" &&
            std::none_of(isas.begin(), isas.end(), [&](const auto& p) { return p.first == want; })) {
          spdlog::error("--isa '{}': one of {}, all", want, width_names());
          return void(g.exit_code = kExitUsage);
        }
      }
      if (widths.empty()) {
        spdlog::error("--isa '{}': no width named ({} or all)", *isa, width_names());
        return void(g.exit_code = kExitUsage);
      }
      // The widest kernel's step per array, up to 3 arrays, per thread.
      const uint64_t smallest = isa::host_target().mem_max_step_bytes() * 3 * uint64_t(g.threads);
      auto chosen = choose_sizes(*sizes, *sweep, cpu, g.threads, 1, smallest,
                                 "every bandwidth kernel can stream on these threads");
      if (!chosen) {
        spdlog::error("{}", chosen.error());
        return void(g.exit_code = kExitUsage);
      }
      std::unique_ptr<MemRunner> runner;
      RunDocument doc;
      if (int rc = start_memory(g, cpu, runner, doc)) return void(g.exit_code = rc);
      const size_t total = names.size() * widths.size() * chosen->size();
      size_t done = 0;
      for (const auto& k : names)
        for (int w : widths)
          for (uint64_t s : chosen.value()) {
            progress(g.out, ++done, total, fmt::format("{} {} {}", k, w ? isa::host_target().width_name(w) : "", format_bytes(s)));
            doc.bandwidth.push_back(runner->bandwidth({k, w, s, g.threads}));
          }
      // Rows spoiled by a burst of noise are measured again after the others (the burst has
      // likely passed); the better of the two stands.
      for (auto& b : doc.bandwidth) {
        if (b.status != Status::mistrusted) continue;
        int w = 0;
        for (const auto& [name, bits] : named_widths())
          if (name == b.isa) w = bits;
        BandwidthResult again = runner->bandwidth({b.kernel, w, b.size_bytes, b.threads});
        if (again.status == Status::ok || (again.gbps && b.gbps && *again.gbps > *b.gbps)) b = std::move(again);
      }
      progress_done(g.out);
      if (*sweep) {
        std::vector<CurvePoint> curve;
        for (const auto& b : doc.bandwidth)
          if (b.kernel == names.front() && b.isa == doc.bandwidth.front().isa && b.gbps && !b.waited_every_repetition)
            curve.push_back({b.size_bytes, *b.gbps});
        doc.levels = match_levels(detect_levels(curve), cpu.caches, g.threads);
      }
      g.exit_code = emit_outputs(doc, g.out);
    };
  });
}

void add_latency_command(CLI::App& app, GlobalOptions& g) {
  auto* cmd = app.add_subcommand("latency", "Load-to-use latency of every cache level and DRAM (pointer chase)");
  auto sizes = std::make_shared<std::string>();
  auto sweep = std::make_shared<bool>(false);
  auto mode = std::make_shared<std::string>("random");
  auto pages = std::make_shared<std::string>("4k");
  auto chains = std::make_shared<int>(1);
  cmd->add_option("--sizes", *sizes, "Working sets, e.g. 16KiB,1MiB,16MiB,1GiB");
  cmd->add_flag("--sweep", *sweep, "From 4 KiB to max(4 x last-level cache, 512 MiB), 4 points per octave");
  cmd->add_option("--mode", *mode, "random (one random cycle through all lines) or page-local (lines random within "
                                   "each 4 KiB page, pages in order: separates TLB cost)")
      ->check(CLI::IsMember({"random", "page-local"}));
  cmd->add_option("--pages", *pages, "4k or 2m (transparent huge pages via madvise; the granted size is reported)")
      ->check(CLI::IsMember({"4k", "2m"}));
  cmd->add_option("--chains", *chains, fmt::format("Independent chases in flight (memory-level parallelism), 1..{}", isa::host_target().max_chase_chains()))
      ->check(CLI::Range(1, isa::host_target().max_chase_chains()));
  cmd->footer(
      "A random cyclic permutation (Sattolo) at cache-line granularity: each load's address is the\n"
      "previous load's value. Reported per load of one chain, in ns and in core cycles.\n");
  cmd->callback([&g, sizes, sweep, mode, pages, chains] {
    g.action = [&g, sizes, sweep, mode, pages, chains] {
      CpuInfo cpu = detect_cpu_info();
      if (int rc = check_placement(g, cpu)) return void(g.exit_code = rc);
      auto chosen = choose_sizes(*sizes, *sweep, cpu, 1, 1, uint64_t(128) * uint64_t(*chains),
                                 "a pointer chase can use (two 64-byte lines per chain)");
      if (!chosen) {
        spdlog::error("{}", chosen.error());
        return void(g.exit_code = kExitUsage);
      }
      std::unique_ptr<MemRunner> runner;
      RunDocument doc;
      if (int rc = start_memory(g, cpu, runner, doc)) return void(g.exit_code = rc);
      size_t done = 0;
      if (!chosen->empty()) runner->set_latency_top(*std::max_element(chosen->begin(), chosen->end()));
      for (uint64_t s : chosen.value()) {
        progress(g.out, ++done, chosen->size(), format_bytes(s));
        doc.latency.push_back(runner->latency({s, *mode, *pages, *chains}));
      }
      progress_done(g.out);
      g.exit_code = emit_outputs(doc, g.out);
    };
  });
}

}  // namespace peakprobe::cli
