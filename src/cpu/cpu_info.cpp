// Host CPU description. Identity and the feature list come from asmjit, but usability is decided
// here from CPUID and XCR0 directly: a feature whose register state the OS does not save cannot be
// executed, and a feature that asmjit silently dropped for that reason must still be reported as
// os_disabled. Topology and caches come from hwloc, restricted to the CPUs this process may run on.
#include "cpu/cpu_info.hpp"

#include <asmjit/core.h>
#include <cpuid.h>
#include <hwloc.h>
#include <sched.h>
#include <spdlog/spdlog.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <x86intrin.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <exception>
#include <set>
#include <string_view>
#include <utility>

#if __has_include(<asm/prctl.h>)
#include <asm/prctl.h>
#endif
#ifndef ARCH_REQ_XCOMP_PERM
#define ARCH_REQ_XCOMP_PERM 0x1023
#endif

namespace peakprobe {
namespace {

// XCR0 state components (Intel SDM vol. 1, 13.1).
constexpr std::uint64_t kXcr0SseAvx = 0x6;         // XMM + upper YMM
constexpr std::uint64_t kXcr0Avx512 = 0xE0;        // opmask + upper ZMM0-15 + ZMM16-31
constexpr std::uint64_t kXcr0Amx = 0x60000;        // TILECFG + TILEDATA
constexpr unsigned long kXfeatureXtiledata = 18;   // Linux XFEATURE_XTILEDATA

struct CpuidRegs {
  std::uint32_t eax = 0, ebx = 0, ecx = 0, edx = 0;
};

// CPUID with range checks: a leaf above the reported maximum returns garbage on Intel.
CpuidRegs cpuid(std::uint32_t leaf, std::uint32_t subleaf = 0) {
  CpuidRegs r;
  const unsigned max_leaf = __get_cpuid_max(leaf & 0x80000000u, nullptr);
  if (max_leaf == 0 || leaf > max_leaf) return r;
  __cpuid_count(leaf, subleaf, r.eax, r.ebx, r.ecx, r.edx);
  return r;
}

bool bit(std::uint32_t value, int n) { return ((value >> n) & 1u) != 0; }

std::string to_lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string trim(const std::string& s) {
  const auto first = s.find_first_not_of(" \t");
  if (first == std::string::npos) return {};
  return s.substr(first, s.find_last_not_of(" \t") - first + 1);
}

bool starts_with(const std::string& s, std::string_view prefix) {
  return std::string_view(s).substr(0, prefix.size()) == prefix;
}

// ---- feature names ---------------------------------------------------------------------------

using FeatureTable = std::vector<std::pair<std::uint32_t, std::string>>;

// asmjit id -> lower-case name, built once; ids that asmjit cannot format are skipped.
const FeatureTable& feature_table() {
  static const FeatureTable table = [] {
    FeatureTable t;
    for (std::uint32_t id = 1; id <= std::uint32_t(asmjit::CpuFeatures::X86::kMaxValue); ++id) {
      asmjit::String s;
      if (asmjit::Formatter::formatFeature(s, asmjit::Arch::kX64, id) != asmjit::kErrorOk) continue;
      if (s.size() == 0) continue;
      t.emplace_back(id, to_lower(std::string(s.data(), s.size())));
    }
    return t;
  }();
  return table;
}

// Insert the underscore asmjit uses after a family prefix ("avx512f" -> "avx512_f").
std::string insert_family_underscore(const std::string& s, std::string_view family) {
  if (!starts_with(s, family) || s.size() <= family.size() || s[family.size()] == '_') return s;
  return std::string(family) + "_" + s.substr(family.size());
}

// ---- OS state gating ------------------------------------------------------------------------

enum class StateNeed { kNone, kAvx, kAvx512, kAmx };

// Which XSAVE state a feature's registers live in. VEX-only extensions (VAES, VPCLMULQDQ, XOP,
// FMA4) need YMM state just like AVX itself; GFNI also has a legacy SSE encoding, so it is not gated.
StateNeed state_needed(const std::string& name) {
  if (starts_with(name, "amx")) return StateNeed::kAmx;
  if (starts_with(name, "avx512")) return StateNeed::kAvx512;
  for (std::string_view p : {"avx", "fma", "f16c", "xop", "vaes", "vpclmulqdq"})
    if (starts_with(name, p)) return StateNeed::kAvx;
  return StateNeed::kNone;
}

struct OsState {
  bool avx = false, avx512 = false, amx = false;
};

bool usable(StateNeed need, const OsState& os) {
  switch (need) {
    case StateNeed::kAvx: return os.avx;
    case StateNeed::kAvx512: return os.avx512;
    case StateNeed::kAmx: return os.amx;
    case StateNeed::kNone: break;
  }
  return true;
}

// Linux (>= 5.16) hands out the large AMX tile state only on request; without the grant the first
// tile instruction raises SIGILL even though XCR0 has the bits.
bool request_amx_permission() {
  const long rc = syscall(SYS_arch_prctl, ARCH_REQ_XCOMP_PERM, kXfeatureXtiledata);
  if (rc != 0) spdlog::warn("cpu_info: kernel refused AMX tile state (errno {}); AMX disabled", errno);
  return rc == 0;
}

// CPUID bits of the state-gated features. asmjit already drops those the OS does not enable, so
// reading them ourselves is the only way to list them in os_disabled.
struct RawFeature {
  const char* name;
  std::uint32_t leaf, subleaf;
  int reg;  // 0 eax, 1 ebx, 2 ecx, 3 edx
  int bit;
};

constexpr std::array kRawFeatures{
    RawFeature{"fma", 1, 0, 2, 12},           RawFeature{"avx", 1, 0, 2, 28},
    RawFeature{"f16c", 1, 0, 2, 29},          RawFeature{"avx2", 7, 0, 1, 5},
    RawFeature{"avx512_f", 7, 0, 1, 16},      RawFeature{"avx512_dq", 7, 0, 1, 17},
    RawFeature{"avx512_ifma", 7, 0, 1, 21},   RawFeature{"avx512_pfi", 7, 0, 1, 26},
    RawFeature{"avx512_eri", 7, 0, 1, 27},    RawFeature{"avx512_cdi", 7, 0, 1, 28},
    RawFeature{"avx512_bw", 7, 0, 1, 30},     RawFeature{"avx512_vl", 7, 0, 1, 31},
    RawFeature{"avx512_vbmi", 7, 0, 2, 1},    RawFeature{"avx512_vbmi2", 7, 0, 2, 6},
    RawFeature{"vaes", 7, 0, 2, 9},           RawFeature{"vpclmulqdq", 7, 0, 2, 10},
    RawFeature{"avx512_vnni", 7, 0, 2, 11},   RawFeature{"avx512_bitalg", 7, 0, 2, 12},
    RawFeature{"avx512_vpopcntdq", 7, 0, 2, 14}, RawFeature{"avx512_4vnniw", 7, 0, 3, 2},
    RawFeature{"avx512_4fmaps", 7, 0, 3, 3},  RawFeature{"avx512_vp2intersect", 7, 0, 3, 8},
    RawFeature{"amx_bf16", 7, 0, 3, 22},      RawFeature{"avx512_fp16", 7, 0, 3, 23},
    RawFeature{"amx_tile", 7, 0, 3, 24},      RawFeature{"amx_int8", 7, 0, 3, 25},
    RawFeature{"avx_vnni", 7, 1, 0, 4},       RawFeature{"avx512_bf16", 7, 1, 0, 5},
    RawFeature{"xop", 0x80000001, 0, 2, 11},  RawFeature{"fma4", 0x80000001, 0, 2, 16},
};

bool raw_feature_present(const RawFeature& f) {
  // Leaf 7 sub-leaves above EAX of sub-leaf 0 are reserved.
  if (f.leaf == 7 && f.subleaf > 0 && cpuid(7, 0).eax < f.subleaf) return false;
  const CpuidRegs r = cpuid(f.leaf, f.subleaf);
  const std::uint32_t regs[4] = {r.eax, r.ebx, r.ecx, r.edx};
  return bit(regs[f.reg], f.bit);
}

// Everything the CPU reports, whether or not the OS enables it.
std::set<std::string> cpu_reported_features() {
  std::set<std::string> present;
  const auto& x86 = asmjit::CpuInfo::host().features().x86();
  for (const auto& [id, name] : feature_table())
    if (x86.has(id)) present.insert(name);
  for (const RawFeature& f : kRawFeatures)
    if (raw_feature_present(f) && cpu_feature_known(f.name)) present.insert(f.name);
  return present;
}

// Reported features in asmjit id order, so the output lists are stable.
std::vector<std::string> in_table_order(const std::set<std::string>& names) {
  std::vector<std::string> ordered;
  for (const auto& entry : feature_table())
    if (names.count(entry.second) != 0) ordered.push_back(entry.second);
  return ordered;
}

bool any_amx(const std::vector<std::string>& names) {
  return std::any_of(names.begin(), names.end(), [](const auto& n) { return starts_with(n, "amx"); });
}

void fill_features(CpuInfo& info) {
  const std::uint64_t xcr0 = read_xcr0();
  const std::vector<std::string> reported = in_table_order(cpu_reported_features());
  // Ask the kernel only when the request can matter; it is a process-wide, one-way grant.
  const bool amx_granted = (xcr0 & kXcr0Amx) == kXcr0Amx && any_amx(reported) && request_amx_permission();
  apply_os_state(info, reported, xcr0, amx_granted);
}

}  // namespace

void apply_os_state(CpuInfo& info, const std::vector<std::string>& reported, std::uint64_t xcr0,
                    bool amx_granted) {
  OsState os;
  os.avx = (xcr0 & kXcr0SseAvx) == kXcr0SseAvx;
  os.avx512 = os.avx && (xcr0 & kXcr0Avx512) == kXcr0Avx512;
  os.amx = (xcr0 & kXcr0Amx) == kXcr0Amx && amx_granted;
  info.xcr0 = xcr0;
  info.os_avx = os.avx;
  info.os_avx512 = os.avx512;
  info.os_amx = os.amx;
  info.features.clear();
  info.os_disabled.clear();
  for (const auto& name : reported)
    (usable(state_needed(name), os) ? info.features : info.os_disabled).push_back(name);
}

namespace {

void fill_identity(CpuInfo& info) {
  const asmjit::CpuInfo& host = asmjit::CpuInfo::host();
  info.vendor = host.vendor();
  info.brand = trim(host.brand());
  info.family = host.familyId();
  info.model = host.modelId();
  info.stepping = host.stepping();
  info.hypervisor = bit(cpuid(1).ecx, 31);
  info.tsc_invariant = bit(cpuid(0x80000007).edx, 8);
}

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

bool hwloc_topology(const std::set<int>& allowed, Topology& out) {
  const HwlocTopology topo;
  if (topo.get() == nullptr) return false;
  out.cores = cores_of(topo.get(), allowed);
  if (out.cores.empty()) return false;
  out.packages = packages_of(topo.get(), allowed);
  out.caches = caches_of(topo.get(), allowed);
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
  info.logical_cpus = static_cast<int>(info.core_order.size());
  info.physical_cores = static_cast<int>(t.cores.size());
  info.packages = t.packages;
  info.smt_per_core = smt;
  info.caches = std::move(t.caches);
}

// ---- TSC ------------------------------------------------------------------------------------

std::uint64_t rdtsc_fenced() {
  _mm_lfence();  // keep RDTSC from executing ahead of the preceding clock read
  const std::uint64_t t = __rdtsc();
  _mm_lfence();
  return t;
}

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
    const std::uint64_t t0 = rdtsc_fenced();
    const std::int64_t ns = monotonic_raw_ns();
    const std::uint64_t t1 = rdtsc_fenced();
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

std::uint64_t read_xcr0() {
  if (!bit(cpuid(1).ecx, 27)) return 0;  // OSXSAVE clear: XGETBV would raise #UD
  std::uint32_t lo = 0, hi = 0;
  // Inline asm instead of _xgetbv() so this file needs no -mxsave.
  asm volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  return (std::uint64_t(hi) << 32) | lo;
}

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

std::string normalize_feature_name(const std::string& name) {
  std::string s = to_lower(trim(name));
  std::replace(s.begin(), s.end(), '.', '_');  // "sse4.1" -> "sse4_1"
  s = insert_family_underscore(s, "avx512");
  s = insert_family_underscore(s, "amx");
  // Spellings used by Linux /proc/cpuinfo, GCC and Intel docs that asmjit names differently.
  static const std::pair<std::string_view, std::string_view> kAliases[] = {
      {"avx512_cd", "avx512_cdi"}, {"avxvnni", "avx_vnni"},  {"sha_ni", "sha"},
      {"aes", "aesni"},            {"pclmul", "pclmulqdq"},  {"abm", "lzcnt"},
      {"bmi1", "bmi"},             {"pni", "sse3"},          {"lahf_lm", "lahfsahf"},
      {"cx16", "cmpxchg16b"},      {"cx8", "cmpxchg8b"},     {"avx512_vpopcnt", "avx512_vpopcntdq"},
  };
  for (const auto& [alias, canonical] : kAliases)
    if (s == alias) return std::string(canonical);
  return s;
}

std::vector<std::string> all_feature_names() {
  std::vector<std::string> names;
  names.reserve(feature_table().size());
  for (const auto& entry : feature_table()) names.push_back(entry.second);
  return names;
}

bool cpu_feature_known(const std::string& name) {
  const std::string n = normalize_feature_name(name);
  const auto& table = feature_table();
  return std::any_of(table.begin(), table.end(), [&](const auto& e) { return e.second == n; });
}

bool CpuInfo::has(const std::string& feature) const {
  return std::find(features.begin(), features.end(), normalize_feature_name(feature)) != features.end();
}

CpuInfo detect_cpu_info() {
  CpuInfo info;
  // Each part is independent: a failure in one leaves its fields at the defaults.
  const std::pair<const char*, void (*)(CpuInfo&)> parts[] = {
      {"identity", fill_identity},
      {"features", fill_features},
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
    info.logical_cpus = info.physical_cores = info.packages = info.smt_per_core = 1;
  }
  return info;
}

}  // namespace peakprobe
