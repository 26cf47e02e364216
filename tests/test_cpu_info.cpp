// Tests for src/cpu/cpu_info.cpp. The [hw] ones check physical invariants of whatever Linux machine
// runs them, not particular values. The ISA's feature rules are tested in tests/<isa>/test_host_cpu.cpp.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cctype>
#include <map>
#include <set>
#include <string>

#include "cpu/cpu_info.hpp"
#include "skip.hpp"

namespace {

// Detection takes ~40 ms (TSC measurement); do it once for the whole file.
const peakprobe::CpuInfo& host() {
  static const peakprobe::CpuInfo info = peakprobe::detect_cpu_info();
  return info;
}

bool contains(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

const peakprobe::CacheLevel* find_cache(int level, const std::string& type) {
  for (const auto& c : host().caches)
    if (c.level == level && c.type == type) return &c;
  return nullptr;
}

}  // namespace

TEST_CASE("feature names: canonical names are fixed points, and CpuInfo::has takes any spelling", "[cpu_info]") {
  const auto names = peakprobe::all_feature_names();
  REQUIRE(names.size() > 10);
  CHECK(std::set<std::string>(names.begin(), names.end()).size() == names.size());
  for (const auto& n : names) {
    INFO(n);
    CHECK(n == peakprobe::normalize_feature_name(n));
    CHECK(peakprobe::cpu_feature_known(n));
  }
  CHECK_FALSE(peakprobe::cpu_feature_known(""));
  CHECK_FALSE(peakprobe::cpu_feature_known("no-such-feature"));
  peakprobe::CpuInfo info;
  info.features = {names.front()};
  std::string upper = names.front();
  for (char& c : upper) c = char(std::toupper(static_cast<unsigned char>(c)));
  CHECK(info.has(names.front()));
  CHECK(info.has(upper));
  CHECK_FALSE(info.has(names.back()));
}

TEST_CASE("topology is consistent", "[cpu_info][hw]") {
  const auto& cpu = host();
  CHECK(cpu.logical_cpus >= 1);
  CHECK(cpu.physical_cores >= 1);
  CHECK(cpu.physical_cores <= cpu.logical_cpus);
  CHECK(cpu.packages >= 1);
  CHECK(cpu.smt_per_core >= 1);
  CHECK(cpu.logical_cpus <= cpu.physical_cores * cpu.smt_per_core);
  REQUIRE(static_cast<int>(cpu.core_order.size()) == cpu.logical_cpus);
  CHECK(std::set<int>(cpu.core_order.begin(), cpu.core_order.end()).size() == cpu.core_order.size());
  CHECK(*std::min_element(cpu.core_order.begin(), cpu.core_order.end()) >= 0);
  // Every CPU of the order belongs to a core, the cores number physical_cores, and the first
  // physical_cores entries of the order are one per core.
  std::set<int> cores, first_cores;
  for (size_t i = 0; i < cpu.core_order.size(); ++i) {
    const int c = cpu.core_order[i];
    REQUIRE(size_t(c) < cpu.cpu_core.size());
    CHECK(cpu.cpu_core[size_t(c)] >= 0);
    cores.insert(cpu.cpu_core[size_t(c)]);
    if (int(i) < cpu.physical_cores) first_cores.insert(cpu.cpu_core[size_t(c)]);
  }
  CHECK(int(cores.size()) == cpu.physical_cores);
  CHECK(int(first_cores.size()) == cpu.physical_cores);
}

TEST_CASE("core kinds: none named, or at least two, and the hardware threads of a core are of its kind",
          "[cpu_info][hw]") {
  const auto& cpu = host();
  if (cpu.cpu_kind.empty()) PP_SKIP("every core of one kind here (hwloc names fewer than two kinds)");
  std::set<int> kinds;
  std::map<int, int> kind_of_core;
  for (int c : cpu.core_order) {
    REQUIRE(size_t(c) < cpu.cpu_kind.size());
    const int kind = cpu.cpu_kind[size_t(c)];
    CHECK(kind >= 0);
    kinds.insert(kind);
    const auto [it, fresh] = kind_of_core.emplace(cpu.cpu_core[size_t(c)], kind);
    CHECK((fresh || it->second == kind));
  }
  CHECK(kinds.size() >= 2);
}

TEST_CASE("caches are plausible", "[cpu_info][hw]") {
  const auto& caches = host().caches;
  if (caches.empty()) PP_SKIP("hwloc reports no caches here");
  {
    const auto* l1d = find_cache(1, "data");
    if (l1d == nullptr) l1d = find_cache(1, "unified");
    REQUIRE(l1d != nullptr);
    CHECK(l1d->size_bytes >= 8 * 1024);
    CHECK(l1d->size_bytes <= 1024 * 1024);
    CHECK(l1d->line_bytes >= 32);
    CHECK(l1d->line_bytes <= 256);
  }
  // Data/unified caches only: each level is at least as large as the one below it.
  std::uint64_t previous = 0;
  int previous_level = 0;
  for (const auto& c : caches) {
    if (c.type == "instruction") continue;
    INFO("L" << c.level << " " << c.type << " " << c.size_bytes);
    CHECK(c.level > previous_level);
    CHECK(c.size_bytes >= previous);
    CHECK(c.instances >= 1);
    CHECK(c.shared_by_cpus >= 1);
    previous = c.size_bytes;
    previous_level = c.level;
  }
}

TEST_CASE("timestamp counter rate is plausible", "[cpu_info][hw]") {
  CHECK(host().tsc_hz > 0.5e9);
  CHECK(host().tsc_hz < 10e9);
}

TEST_CASE("detected features are known names, none both usable and disabled", "[cpu_info][hw]") {
  const auto& cpu = host();
  CHECK_FALSE(cpu.features.empty());
  for (const auto& f : cpu.features) {
    INFO(f);
    CHECK(peakprobe::cpu_feature_known(f));
    CHECK_FALSE(contains(cpu.os_disabled, f));
  }
}

TEST_CASE("identity is filled", "[cpu_info][hw]") {
  const auto& cpu = host();
  CHECK_FALSE(cpu.vendor.empty());
  CHECK(cpu.family > 0);
}

TEST_CASE("core kinds: info names each kind with its runs of CPUs, and nothing when the cores are alike", "[cpu_info]") {
  CHECK(peakprobe::core_kinds_text({}).empty());
  CHECK(peakprobe::core_kinds_text({0, 0, 0, 0}).empty());
  CHECK(peakprobe::core_kinds_text({0, 0, -1}).empty());  // one kind named: nothing to tell apart
  CHECK(peakprobe::core_kinds_text({1, 1, 1, 1, 0, 0, 0, 0}) == "2: kind 0 on CPUs 4-7, kind 1 on CPUs 0-3");
  // Hyperthreads of the performance cores numbered apart, a CPU of no named kind, a kind of one CPU.
  CHECK(peakprobe::core_kinds_text({1, 1, 0, 0, 1, 1, -1, 2}) ==
        "3: kind 0 on CPUs 2-3, kind 1 on CPUs 0-1,4-5, kind 2 on CPU 7, no kind named for CPU 6");
}
