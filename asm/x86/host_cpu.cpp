// The x86 part of describing the host (asm/host_cpu.hpp). Identity and the feature list come from
// asmjit, but usability is decided here from CPUID and XCR0 directly: a feature whose register state
// the OS does not save cannot be executed, and a feature that asmjit silently dropped for that reason
// must still be reported as os_disabled.
#include "asm/x86/host_cpu.hpp"

#include <asmjit/x86.h>
#include <cpuid.h>
#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
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
namespace x86 {
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
    if (raw_feature_present(f) && isa::feature_known(f.name)) present.insert(f.name);
  // RTM_ALWAYS_ABORT (CPUID.7.0:EDX[11]): microcode since 2021 keeps reporting RTM on many Intel
  // cores while every transaction aborts at once. A stream of xbegin/xend would then time the abort,
  // not a transaction: the feature is taken as absent and the forms are skipped, naming it.
  if (cpuid(0, 0).eax >= 7 && bit(cpuid(7, 0).edx, 11)) present.erase("rtm");
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
  info.isa_state = {{"xcr0", xcr0, false},
                    {"os_avx", os.avx, true},
                    {"os_avx512", os.avx512, true},
                    {"os_amx", os.amx, true}};
  info.isa_state_label = "XCR0";
  auto on = [](bool b) { return b ? "on" : "off"; };
  info.isa_state_text = fmt::format("{:#x} (AVX state {}, AVX-512 state {}, AMX state {})", xcr0, on(os.avx),
                                    on(os.avx512), on(os.amx));
  info.features.clear();
  info.os_disabled.clear();
  for (const auto& name : reported)
    (usable(state_needed(name), os) ? info.features : info.os_disabled).push_back(name);
}

std::uint64_t read_xcr0() {
  if (!bit(cpuid(1).ecx, 27)) return 0;  // OSXSAVE clear: XGETBV would raise #UD
  std::uint32_t lo = 0, hi = 0;
  // Inline asm instead of _xgetbv() so this file needs no -mxsave.
  asm volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  return (std::uint64_t(hi) << 32) | lo;
}

}  // namespace x86

namespace isa {

void detect_identity(CpuInfo& info) {
  const asmjit::CpuInfo& host = asmjit::CpuInfo::host();
  info.vendor = host.vendor();
  info.brand = x86::trim(host.brand());
  info.family = host.familyId();
  info.model = host.modelId();
  info.stepping = host.stepping();
  info.hypervisor = x86::bit(x86::cpuid(1).ecx, 31);
  info.tsc_invariant = x86::bit(x86::cpuid(0x80000007).edx, 8);
}

void detect_features(CpuInfo& info) { x86::fill_features(info); }

std::string normalize_feature_name(const std::string& name) {
  std::string s = x86::to_lower(x86::trim(name));
  std::replace(s.begin(), s.end(), '.', '_');  // "sse4.1" -> "sse4_1"
  s = x86::insert_family_underscore(s, "avx512");
  s = x86::insert_family_underscore(s, "amx");
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
  names.reserve(x86::feature_table().size());
  for (const auto& entry : x86::feature_table()) names.push_back(entry.second);
  return names;
}

bool feature_known(const std::string& name) {
  const std::string n = normalize_feature_name(name);
  const auto& table = x86::feature_table();
  return std::any_of(table.begin(), table.end(), [&](const auto& e) { return e.second == n; });
}

}  // namespace isa
}  // namespace peakprobe
