// The AArch64 part of describing the host (asm/host_cpu.hpp). Features come from the kernel's HWCAP
// words (what user space may run: the kernel hides what it does not support), the identity from
// MIDR_EL1 as Linux shows it (sysfs, else the register itself, which the kernel emulates when
// HWCAP_CPUID says so). Feature names are Linux's /proc/cpuinfo names, the ones Arm board users see.
//
// Emulation: qemu-user reports MIDR implementer 0 (reserved for software) and passes the build
// machine's /proc/cpuinfo through, which then describes no Arm CPU. Either marks the CPU emulated.
#include "asm/host_cpu.hpp"

#include <sys/auxv.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>

#include <fmt/format.h>

namespace peakprobe::isa {
namespace {

// HWCAP bit -> name, then HWCAP2 bit -> name (arch/arm64/include/uapi/asm/hwcap.h).
constexpr std::array<const char*, 32> kHwcap = {
    "fp",    "asimd", "evtstrm", "aes",   "pmull",   "sha1",  "sha2",  "crc32", "atomics", "fphp",    "asimdhp",
    "cpuid", "asimdrdm", "jscvt", "fcma", "lrcpc",  "dcpop", "sha3",  "sm3",   "sm4",     "asimddp", "sha512",
    "sve",   "asimdfhm", "dit",   "uscat", "ilrcpc", "flagm", "ssbs",  "sb",    "paca",    "pacg"};
constexpr std::array<const char*, 37> kHwcap2 = {
    "dcpodp",     "sve2",       "sveaes",     "svepmull",   "svebitperm", "svesha3",   "svesm4",   "flagm2",
    "frint",      "svei8mm",    "svef32mm",   "svef64mm",   "svebf16",    "i8mm",      "bf16",     "dgh",
    "rng",        "bti",        "mte",        "ecv",        "afp",        "rpres",     "mte3",     "sme",
    "smei16i64",  "smef64f64",  "smei8i32",   "smef16f32",  "smeb16f32",  "smef32f32", "smefa64",  "wfxt",
    "ebf16",      "sveebf16",   "cssc",       "rprfm",      "sve2p1"};

std::string lower(std::string s) {
  for (char& c : s) c = char(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string read_file(const char* path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// MIDR_EL1 of CPU 0: sysfs, else /proc/cpuinfo's fields, else the register (emulated by the kernel
// under HWCAP_CPUID). 0 when none of them answers.
uint64_t read_midr(bool& from_cpuinfo_ok) {
  from_cpuinfo_ok = false;
  const std::string sys = read_file("/sys/devices/system/cpu/cpu0/regs/identification/midr_el1");
  if (!sys.empty()) {
    char* end = nullptr;
    const unsigned long long v = std::strtoull(sys.c_str(), &end, 16);
    if (end != sys.c_str()) return v;
  }
  const std::string info = read_file("/proc/cpuinfo");
  auto field = [&](const char* name) -> long {
    const auto at = info.find(name);
    if (at == std::string::npos) return -1;
    const auto colon = info.find(':', at);
    return colon == std::string::npos ? -1 : std::strtol(info.c_str() + colon + 1, nullptr, 0);
  };
  const long impl = field("CPU implementer"), part = field("CPU part"), var = field("CPU variant"),
             rev = field("CPU revision");
  if (impl >= 0 && part >= 0) {
    from_cpuinfo_ok = true;
    return (uint64_t(impl) << 24) | (uint64_t(std::max(var, 0L)) << 20) | (0xFull << 16) | (uint64_t(part) << 4) |
           uint64_t(std::max(rev, 0L));
  }
#if defined(__aarch64__)
  if (getauxval(AT_HWCAP) & (1ul << 11)) {  // HWCAP_CPUID: the kernel emulates the read
    uint64_t midr = 0;
    asm volatile("mrs %0, midr_el1" : "=r"(midr));
    return midr;
  }
#endif
  return 0;
}

const char* implementer_name(unsigned impl) {
  switch (impl) {
    case 0x41: return "Arm";
    case 0x42: return "Broadcom";
    case 0x43: return "Cavium";
    case 0x46: return "Fujitsu";
    case 0x48: return "HiSilicon";
    case 0x4e: return "NVIDIA";
    case 0x50: return "Applied Micro";
    case 0x51: return "Qualcomm";
    case 0x61: return "Apple";
    case 0x6d: return "Microsoft";
    case 0xc0: return "Ampere";
    default: return "";
  }
}

// Core names of the parts most often met (Arm's own numbers); others are named by number.
const char* arm_part_name(unsigned part) {
  switch (part) {
    case 0xd03: return "Cortex-A53";
    case 0xd04: return "Cortex-A35";
    case 0xd05: return "Cortex-A55";
    case 0xd07: return "Cortex-A57";
    case 0xd08: return "Cortex-A72";
    case 0xd09: return "Cortex-A73";
    case 0xd0a: return "Cortex-A75";
    case 0xd0b: return "Cortex-A76";
    case 0xd0c: return "Neoverse N1";
    case 0xd0d: return "Cortex-A77";
    case 0xd40: return "Neoverse V1";
    case 0xd41: return "Cortex-A78";
    case 0xd44: return "Cortex-X1";
    case 0xd46: return "Cortex-A510";
    case 0xd47: return "Cortex-A710";
    case 0xd48: return "Cortex-X2";
    case 0xd49: return "Neoverse N2";
    case 0xd4d: return "Cortex-A715";
    case 0xd4e: return "Cortex-X3";
    case 0xd4f: return "Neoverse V2";
    case 0xd80: return "Cortex-A520";
    case 0xd81: return "Cortex-A720";
    case 0xd82: return "Cortex-X4";
    case 0xd84: return "Neoverse V3";
    case 0xd8e: return "Neoverse N3";
    default: return nullptr;
  }
}

}  // namespace

void detect_identity(CpuInfo& info) {
  bool from_cpuinfo = false;
  const uint64_t midr = read_midr(from_cpuinfo);
  const unsigned impl = unsigned(midr >> 24) & 0xff, variant = unsigned(midr >> 20) & 0xf,
                 part = unsigned(midr >> 4) & 0xfff, rev = unsigned(midr) & 0xf;
  const char* vendor = implementer_name(impl);
  info.vendor = *vendor ? vendor : fmt::format("implementer {:#04x}", impl);
  const char* core = impl == 0x41 ? arm_part_name(part) : nullptr;
  info.brand = core ? fmt::format("{} {}", vendor, core)
               : impl == 0 ? fmt::format("software model (MIDR {:#010x})", midr)
                           : fmt::format("{} part {:#05x}", info.vendor, part);
  // MIDR's fields in CpuInfo's: the implementer as family, the part number as model, variant and
  // revision as stepping (r<variant>p<revision>).
  info.family = impl;
  info.model = part;
  info.stepping = variant * 16 + rev;
  // Linux on Arm has no hypervisor bit for user space; a guest kernel often says so in its
  // device tree or DMI data.
  const std::string dmi = lower(read_file("/sys/class/dmi/id/sys_vendor") + read_file("/sys/class/dmi/id/product_name"));
  info.hypervisor = dmi.find("kvm") != std::string::npos || dmi.find("qemu") != std::string::npos ||
                    dmi.find("amazon ec2") != std::string::npos || dmi.find("virtual") != std::string::npos ||
                    dmi.find("google") != std::string::npos;
  // The generic timer never stops and runs at one rate (the architecture requires it).
  info.tsc_invariant = true;
  const std::string cpuinfo = read_file("/proc/cpuinfo");
  const bool foreign_cpuinfo = !cpuinfo.empty() && cpuinfo.find("CPU implementer") == std::string::npos;
  if (midr != 0 && impl == 0) info.emulator = "MIDR implementer 0 (a software model, such as qemu)";
  else if (foreign_cpuinfo && !from_cpuinfo)
    info.emulator = "/proc/cpuinfo describes another architecture's CPU (user-mode emulation, such as qemu-user)";
}

void detect_features(CpuInfo& info) {
  info.features.clear();
  info.os_disabled.clear();
  const unsigned long hw = getauxval(AT_HWCAP), hw2 = getauxval(AT_HWCAP2);
  for (size_t b = 0; b < kHwcap.size(); ++b)
    if (hw & (1ul << b)) info.features.push_back(kHwcap[b]);
  for (size_t b = 0; b < kHwcap2.size(); ++b)
    if (hw2 & (1ul << b)) info.features.push_back(kHwcap2[b]);
  std::sort(info.features.begin(), info.features.end());
  info.isa_state_label = "HWCAP";
  info.isa_state_text = fmt::format("{:#x}, HWCAP2 {:#x}", hw, hw2);
  info.isa_state = {{"hwcap", uint64_t(hw), false}, {"hwcap2", uint64_t(hw2), false}};
}

std::string normalize_feature_name(const std::string& name) {
  std::string n = lower(name);
  // Compiler and Arm-manual spellings of the same features.
  static const std::pair<const char*, const char*> kAliases[] = {
      {"neon", "asimd"},       {"simd", "asimd"},      {"dotprod", "asimddp"}, {"fp16", "asimdhp"},
      {"crc", "crc32"},        {"lse", "atomics"},     {"rdm", "asimdrdm"},    {"fhm", "asimdfhm"},
      {"feat_dotprod", "asimddp"}, {"feat_i8mm", "i8mm"}, {"feat_bf16", "bf16"}, {"sha256", "sha2"}};
  for (const auto& [alias, canonical] : kAliases)
    if (n == alias) return canonical;
  return n;
}

bool feature_known(const std::string& name) {
  const std::string n = normalize_feature_name(name);
  for (const char* f : kHwcap)
    if (n == f) return true;
  for (const char* f : kHwcap2)
    if (n == f) return true;
  return false;
}

std::vector<std::string> all_feature_names() {
  std::vector<std::string> out(kHwcap.begin(), kHwcap.end());
  out.insert(out.end(), kHwcap2.begin(), kHwcap2.end());
  return out;
}

}  // namespace peakprobe::isa
