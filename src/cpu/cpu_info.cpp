// Host CPU description. The ISA's part (identity, features and what the OS enables) comes from
// asm/<isa>/host_cpu; topology and caches come from hwloc, restricted to the CPUs this process may
// run on, and the timestamp rate is measured here.
#include "cpu/cpu_info.hpp"

#include <hwloc.h>
#include <sched.h>
#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <exception>
#include <map>
#include <set>
#include <utility>

#include "asm/host_cpu.hpp"
#include "peakprobe_isa/timer.hpp"

namespace peakprobe {
namespace {

// ---- topology -------------------------------------------------------------------------------

// Logical CPUs this thread may run on; the set grows until the kernel's mask fits.
std::set<int> allowed_cpus() {
  std::set<int> cpus;
  for (int n = 1024; n <= (1 << 20); n *= 2) {
    cpu_set_t* set = CPU_ALLOC(n);
    if (set == nullptr) break;
    const std::size_t bytes = CPU_ALLOC_SIZE(n);
    CPU_ZERO_S(bytes, set);
    const int rc = sched_getaffinity(0, bytes, set);
    const int err = errno;
    if (rc == 0)
      for (int cpu = 0; cpu < n; ++cpu)
        if (CPU_ISSET_S(cpu, bytes, set)) cpus.insert(cpu);
    CPU_FREE(set);
    if (rc == 0 || err != EINVAL) break;
  }
  return cpus;
}

struct Topology {
  std::vector<std::vector<int>> cores;  // allowed logical CPU ids per core, SMT rank order
  int packages = 0;
  std::vector<CacheLevel> caches;
  std::vector<int> cpu_kind;  // CpuInfo::cpu_kind
};

// Owns an hwloc topology so every early return releases it.
class HwlocTopology {
 public:
  HwlocTopology() {
    if (hwloc_topology_init(&topo_) != 0) {
      topo_ = nullptr;
      return;
    }
    // hwloc drops instruction caches by default; we report them too.
    hwloc_topology_set_icache_types_filter(topo_, HWLOC_TYPE_FILTER_KEEP_ALL);
    if (hwloc_topology_load(topo_) != 0) {
      hwloc_topology_destroy(topo_);
      topo_ = nullptr;
    }
  }
  ~HwlocTopology() {
    if (topo_ != nullptr) hwloc_topology_destroy(topo_);
  }
  HwlocTopology(const HwlocTopology&) = delete;
  HwlocTopology& operator=(const HwlocTopology&) = delete;
  hwloc_topology_t get() const { return topo_; }

 private:
  hwloc_topology_t topo_ = nullptr;
};

int object_count(hwloc_topology_t topo, hwloc_obj_type_t type) {
  return std::max(0, hwloc_get_nbobjs_by_type(topo, type));
}

std::vector<int> allowed_pus_under(hwloc_topology_t topo, hwloc_const_cpuset_t cpuset,
                                   const std::set<int>& allowed) {
  std::vector<int> pus;
  hwloc_obj_t pu = nullptr;
  while ((pu = hwloc_get_next_obj_inside_cpuset_by_type(topo, cpuset, HWLOC_OBJ_PU, pu)) != nullptr)
    if (allowed.count(static_cast<int>(pu->os_index)) != 0) pus.push_back(static_cast<int>(pu->os_index));
  return pus;
}

// Cores in hwloc logical order; a PU hwloc did not place under a core counts as a core of its own.
std::vector<std::vector<int>> cores_of(hwloc_topology_t topo, const std::set<int>& allowed) {
  std::vector<std::vector<int>> cores;
  std::set<int> covered;
  for (int i = 0; i < object_count(topo, HWLOC_OBJ_CORE); ++i) {
    const hwloc_obj_t core = hwloc_get_obj_by_type(topo, HWLOC_OBJ_CORE, i);
    std::vector<int> pus = allowed_pus_under(topo, core->cpuset, allowed);
    if (pus.empty()) continue;
    covered.insert(pus.begin(), pus.end());
    cores.push_back(std::move(pus));
  }
  for (int i = 0; i < object_count(topo, HWLOC_OBJ_PU); ++i) {
    const int id = static_cast<int>(hwloc_get_obj_by_type(topo, HWLOC_OBJ_PU, i)->os_index);
    if (allowed.count(id) != 0 && covered.count(id) == 0) cores.push_back({id});
  }
  return cores;
}

bool cpuset_has_allowed(hwloc_const_cpuset_t cpuset, const std::set<int>& allowed) {
  return std::any_of(allowed.begin(), allowed.end(),
                     [&](int cpu) { return hwloc_bitmap_isset(cpuset, static_cast<unsigned>(cpu)); });
}

int packages_of(hwloc_topology_t topo, const std::set<int>& allowed) {
  int n = 0;
  for (int i = 0; i < object_count(topo, HWLOC_OBJ_PACKAGE); ++i)
    if (cpuset_has_allowed(hwloc_get_obj_by_type(topo, HWLOC_OBJ_PACKAGE, i)->cpuset, allowed)) ++n;
  return std::max(n, 1);  // some VMs expose no package object; there is always one
}

std::string cache_type_name(hwloc_obj_cache_type_t type) {
  switch (type) {
    case HWLOC_OBJ_CACHE_DATA: return "data";
    case HWLOC_OBJ_CACHE_INSTRUCTION: return "instruction";
    case HWLOC_OBJ_CACHE_UNIFIED: break;
  }
  return "unified";
}

// One entry per cache type, described by the first instance near an allowed CPU (hybrid parts
// have different caches on different core kinds; the one we run on matters).
std::vector<CacheLevel> caches_of(hwloc_topology_t topo, const std::set<int>& allowed) {
  static constexpr hwloc_obj_type_t kTypes[] = {
      HWLOC_OBJ_L1CACHE, HWLOC_OBJ_L1ICACHE, HWLOC_OBJ_L2CACHE, HWLOC_OBJ_L2ICACHE,
      HWLOC_OBJ_L3CACHE, HWLOC_OBJ_L3ICACHE, HWLOC_OBJ_L4CACHE, HWLOC_OBJ_L5CACHE};
  std::vector<CacheLevel> caches;
  for (hwloc_obj_type_t type : kTypes) {
    const int n = object_count(topo, type);
    if (n == 0) continue;
    hwloc_obj_t obj = hwloc_get_obj_by_type(topo, type, 0);
    for (int i = 0; i < n; ++i) {
      const hwloc_obj_t candidate = hwloc_get_obj_by_type(topo, type, i);
      if (cpuset_has_allowed(candidate->cpuset, allowed)) {
        obj = candidate;
        break;
      }
    }
    const auto& a = obj->attr->cache;
    CacheLevel c;
    c.level = static_cast<int>(a.depth);
    c.type = cache_type_name(a.type);
    c.size_bytes = a.size;
    c.line_bytes = static_cast<int>(a.linesize);
    c.associativity = a.associativity;
    c.shared_by_cpus = hwloc_bitmap_weight(obj->cpuset);
    c.instances = n;
    caches.push_back(c);
  }
  return caches;
}

// The kind (hwloc's CPU kinds: performance and efficiency cores of a hybrid CPU) of each logical CPU,
// by CPU id, -1 where none is named; empty when hwloc names fewer than two kinds (every core alike).
std::vector<int> cpu_kinds_of(hwloc_topology_t topo) {
  std::vector<int> kind;
  const int n = hwloc_cpukinds_get_nr(topo, 0);
  if (n < 2) return kind;
  hwloc_bitmap_t set = hwloc_bitmap_alloc();
  if (set == nullptr) return kind;
  for (int k = 0; k < n; ++k) {
    if (hwloc_cpukinds_get_info(topo, unsigned(k), set, nullptr, nullptr, nullptr, 0) != 0) continue;
    for (int cpu = hwloc_bitmap_first(set); cpu >= 0; cpu = hwloc_bitmap_next(set, cpu)) {
      if (kind.size() <= size_t(cpu)) kind.resize(size_t(cpu) + 1, -1);
      kind[size_t(cpu)] = k;
    }
  }
  hwloc_bitmap_free(set);
  return kind;
}

bool hwloc_topology(const std::set<int>& allowed, Topology& out) {
  const HwlocTopology topo;
  if (topo.get() == nullptr) return false;
  out.cores = cores_of(topo.get(), allowed);
  if (out.cores.empty()) return false;
  out.packages = packages_of(topo.get(), allowed);
  out.caches = caches_of(topo.get(), allowed);
  out.cpu_kind = cpu_kinds_of(topo.get());
  return true;
}

// Without hwloc every allowed (or, failing that, online) CPU is taken as its own core.
Topology fallback_topology(const std::set<int>& allowed) {
  Topology t;
  t.packages = 1;
  if (!allowed.empty()) {
    for (int cpu : allowed) t.cores.push_back({cpu});
    return t;
  }
  const long online = std::max(1L, sysconf(_SC_NPROCESSORS_ONLN));
  for (int cpu = 0; cpu < online; ++cpu) t.cores.push_back({cpu});
  return t;
}

// First PU of every core, then every second PU, ...: thread i pinned to core_order[i] gets a core
// of its own as long as i < physical_cores.
std::vector<int> smt_last_order(const std::vector<std::vector<int>>& cores, int smt) {
  std::vector<int> order;
  for (int rank = 0; rank < smt; ++rank)
    for (const auto& pus : cores)
      if (rank < static_cast<int>(pus.size())) order.push_back(pus[static_cast<std::size_t>(rank)]);
  return order;
}

void fill_topology(CpuInfo& info) {
  const std::set<int> allowed = allowed_cpus();
  Topology t;
  if (!hwloc_topology(allowed, t)) {
    spdlog::warn("cpu_info: hwloc topology unavailable; assuming one CPU per core and no cache data");
    t = fallback_topology(allowed);
  }
  int smt = 1;
  for (const auto& pus : t.cores) smt = std::max(smt, static_cast<int>(pus.size()));
  info.core_order = smt_last_order(t.cores, smt);
  for (size_t core = 0; core < t.cores.size(); ++core)
    for (int cpu : t.cores[core]) {
      if (cpu < 0) continue;
      if (info.cpu_core.size() <= size_t(cpu)) info.cpu_core.resize(size_t(cpu) + 1, -1);
      info.cpu_core[size_t(cpu)] = int(core);
    }
  info.logical_cpus = static_cast<int>(info.core_order.size());
  info.physical_cores = static_cast<int>(t.cores.size());
  info.packages = t.packages;
  info.smt_per_core = smt;
  info.caches = std::move(t.caches);
  info.cpu_kind = std::move(t.cpu_kind);
}

// ---- timestamp counter ------------------------------------------------------------------------------------

std::int64_t monotonic_raw_ns() {
  timespec ts{};
  if (clock_gettime(CLOCK_MONOTONIC_RAW, &ts) != 0) return -1;
  return std::int64_t(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

struct ClockPair {
  std::uint64_t tsc = 0;
  std::int64_t ns = -1;
};

// A clock read bracketed by two TSC reads; the tightest of a few brackets is kept so an interrupt
// between the reads does not skew the pairing.
ClockPair paired_reading() {
  ClockPair best;
  std::uint64_t best_span = ~std::uint64_t(0);
  for (int i = 0; i < 5; ++i) {
    const std::uint64_t t0 = isa::timestamp();
    const std::int64_t ns = monotonic_raw_ns();
    const std::uint64_t t1 = isa::timestamp();
    if (ns < 0) return {};
    if (t1 - t0 < best_span) {
      best_span = t1 - t0;
      best = {t0 + (t1 - t0) / 2, ns};
    }
  }
  return best;
}

double tsc_window_hz(std::int64_t window_ns) {
  const ClockPair a = paired_reading();
  if (a.ns < 0) return 0.0;
  const timespec nap{0, static_cast<long>(window_ns)};
  nanosleep(&nap, nullptr);
  const ClockPair b = paired_reading();
  if (b.ns <= a.ns) return 0.0;
  return double(b.tsc - a.tsc) * 1e9 / double(b.ns - a.ns);
}

}  // namespace

// ---- public ---------------------------------------------------------------------------------

double measure_tsc_hz() {
  constexpr int kWindows = 5;
  constexpr std::int64_t kWindowNs = 8'000'000;
  std::vector<double> hz;
  for (int i = 0; i < kWindows; ++i) {
    const double h = tsc_window_hz(kWindowNs);
    if (h > 0.0) hz.push_back(h);
  }
  if (hz.empty()) return 0.0;
  std::sort(hz.begin(), hz.end());
  return hz[hz.size() / 2];
}

std::string normalize_feature_name(const std::string& name) { return isa::normalize_feature_name(name); }

std::vector<std::string> all_feature_names() { return isa::all_feature_names(); }

std::string core_kinds_text(const std::vector<int>& cpu_kind) {
  std::map<int, std::vector<int>> cpus;  // kind (-1: none named) -> its CPU ids, ascending
  for (size_t id = 0; id < cpu_kind.size(); ++id) cpus[cpu_kind[id]].push_back(int(id));
  int named = 0;
  for (const auto& [kind, ids] : cpus) named += kind >= 0;
  if (named < 2) return "";
  auto ranges = [](const std::vector<int>& ids) {
    std::vector<std::string> parts;
    for (size_t i = 0; i < ids.size();) {
      size_t j = i;
      while (j + 1 < ids.size() && ids[j + 1] == ids[j] + 1) ++j;
      parts.push_back(j == i ? std::to_string(ids[i]) : fmt::format("{}-{}", ids[i], ids[j]));
      i = j + 1;
    }
    return fmt::format("{} {}", ids.size() == 1 ? "CPU" : "CPUs", fmt::join(parts, ","));
  };
  std::vector<std::string> kinds;
  for (const auto& [kind, ids] : cpus)
    if (kind >= 0) kinds.push_back(fmt::format("kind {} on {}", kind, ranges(ids)));
  if (auto none = cpus.find(-1); none != cpus.end()) kinds.push_back("no kind named for " + ranges(none->second));
  return fmt::format("{}: {}", named, fmt::join(kinds, ", "));
}

bool cpu_feature_known(const std::string& name) { return isa::feature_known(name); }

bool CpuInfo::has(const std::string& feature) const {
  // The list holds canonical names, which the code asks by: found as given, it needs no normalising
  // (which costs far more than the search, and some callers ask on every call).
  if (std::find(features.begin(), features.end(), feature) != features.end()) return true;
  const std::string canonical = normalize_feature_name(feature);
  return canonical != feature && std::find(features.begin(), features.end(), canonical) != features.end();
}

std::uint64_t CpuInfo::isa_state_value(const std::string& key) const {
  for (const auto& item : isa_state)
    if (item.key == key) return item.value;
  return 0;
}

CpuInfo detect_cpu_info() {
  CpuInfo info;
  // Each part is independent: a failure in one leaves its fields at the defaults.
  const std::pair<const char*, void (*)(CpuInfo&)> parts[] = {
      {"identity", isa::detect_identity},
      {"features", isa::detect_features},
      {"topology", fill_topology},
      {"tsc", [](CpuInfo& i) { i.tsc_hz = measure_tsc_hz(); }},
  };
  for (const auto& [what, fill] : parts) {
    try {
      fill(info);
    } catch (const std::exception& e) {
      spdlog::warn("cpu_info: {} detection failed: {}", what, e.what());
    } catch (...) {
      spdlog::warn("cpu_info: {} detection failed", what);
    }
  }
  if (info.logical_cpus < 1) {  // topology threw: keep the invariants callers rely on
    info.core_order = {std::max(0, sched_getcpu())};  // the CPU we run on is certainly allowed
    info.cpu_core.assign(size_t(info.core_order.front()) + 1, -1);
    info.cpu_core.back() = 0;
    info.logical_cpus = info.physical_cores = info.packages = info.smt_per_core = 1;
  }
  return info;
}

}  // namespace peakprobe
