// Tests for src/memory/sizes.cpp: size parsing, the sweep of working-set sizes, the default sweep
// top, the free-memory check and byte formatting.
#include <catch2/catch.hpp>

#include <algorithm>

#include <cstdint>
#include <string>
#include <vector>

#include "memory/sizes.hpp"

using namespace peakprobe;

namespace {

constexpr uint64_t KiB = 1024;
constexpr uint64_t MiB = 1024 * KiB;
constexpr uint64_t GiB = 1024 * MiB;

uint64_t size_of(const std::string& text) {
  const Expected<uint64_t> r = parse_size(text);
  INFO(text << ": " << (r ? std::string("ok") : r.error()));
  REQUIRE(r.ok());
  return *r;
}

std::string error_of(const std::string& text) {
  const Expected<uint64_t> r = parse_size(text);
  INFO(text);
  REQUIRE_FALSE(r.ok());
  return r.error();
}

}  // namespace

TEST_CASE("parse_size: binary and decimal units, any case", "[memory]") {
  CHECK(size_of("16KiB") == 16 * KiB);
  CHECK(size_of("4MiB") == 4 * MiB);
  CHECK(size_of("1GiB") == GiB);
  CHECK(size_of("512") == 512);
  CHECK(size_of("512B") == 512);
  CHECK(size_of("64K") == 64 * KiB);
  CHECK(size_of("2M") == 2 * MiB);
  CHECK(size_of("1G") == GiB);
  CHECK(size_of("1.5MiB") == 3 * MiB / 2);
  CHECK(size_of("0.5k") == 512);
  CHECK(size_of("16kib") == 16 * KiB);
  CHECK(size_of("4mIb") == 4 * MiB);
  CHECK(size_of(" 16 KiB ") == 16 * KiB);
  CHECK(size_of("1KB") == 1000);
  CHECK(size_of("2mb") == 2000000);
  CHECK(size_of("3GB") == 3000000000ULL);
  CHECK(size_of("1TiB") == 1024 * GiB);
  CHECK(size_of("1024TiB") == uint64_t{1} << 50);  // the largest accepted size
}

TEST_CASE("parse_size: errors name the text", "[memory]") {
  CHECK_THAT(error_of(""), Catch::Contains("empty"));
  CHECK_THAT(error_of("   "), Catch::Contains("empty"));
  CHECK_THAT(error_of("0"), Catch::Contains("'0'") && Catch::Contains("zero"));
  CHECK_THAT(error_of("0KiB"), Catch::Contains("zero"));
  CHECK_THAT(error_of("-4K"), Catch::Contains("'-4K'") && Catch::Contains("negative"));
  CHECK_THAT(error_of("16QiB"), Catch::Contains("'16QiB'") && Catch::Contains("unknown unit 'QiB'"));
  CHECK_THAT(error_of("KiB"), Catch::Contains("'KiB'") && Catch::Contains("number"));
  CHECK_THAT(error_of("abc"), Catch::Contains("number"));
  CHECK_THAT(error_of("16 K iB"), Catch::Contains("unknown unit"));
  CHECK_THAT(error_of("1.5"), Catch::Contains("fraction of a byte"));
  CHECK_THAT(error_of("1025TiB"), Catch::Contains("'1025TiB'") && Catch::Contains("2^50"));
  CHECK_THAT(error_of("2000000G"), Catch::Contains("2^50"));
  CHECK_THAT(error_of("99999999999999999999999999"), Catch::Contains("2^50"));
  CHECK_THAT(error_of("1125899906842625"), Catch::Contains("2^50"));  // 2^50 + 1
}

TEST_CASE("parse_size_list: each item checked", "[memory]") {
  const auto ok = parse_size_list("32K, 1MiB,64M");
  REQUIRE(ok.ok());
  CHECK(*ok == std::vector<uint64_t>{32 * KiB, MiB, 64 * MiB});
  const auto one = parse_size_list("4096");
  REQUIRE(one.ok());
  CHECK(*one == std::vector<uint64_t>{4096});

  const auto bad = parse_size_list("32K,16QiB,1M");
  REQUIRE_FALSE(bad.ok());
  CHECK_THAT(bad.error(), Catch::Contains("16QiB"));
  const auto hole = parse_size_list("32K,,1M");
  REQUIRE_FALSE(hole.ok());
  CHECK_THAT(hole.error(), Catch::Contains("empty item"));
  CHECK_FALSE(parse_size_list("").ok());
  CHECK_FALSE(parse_size_list("32K,").ok());
}

TEST_CASE("sweep_sizes: geometric, page multiples, both ends, strictly increasing", "[memory]") {
  const auto s = sweep_sizes(16 * KiB, 1 * GiB, 4);
  REQUIRE(!s.empty());
  CHECK(s.front() == 16 * KiB);
  CHECK(s.back() == GiB);
  // 16 octaves at 4 per octave: 64 steps, 65 points (none collapse at these sizes).
  CHECK(s.size() == 65);
  for (std::size_t i = 0; i < s.size(); ++i) {
    CHECK(s[i] % 4096 == 0);
    if (i > 0) CHECK(s[i] > s[i - 1]);
    // Away from the smallest sizes, where whole pages are coarse steps, each is 2^(1/4) above the last.
    if (i > 0 && s[i] >= 256 * KiB) {
      const double ratio = static_cast<double>(s[i]) / static_cast<double>(s[i - 1]);
      CHECK(ratio == Approx(1.1892).epsilon(0.01));
    }
  }
}

TEST_CASE("sweep_sizes: small sizes collapse onto whole pages without duplicates", "[memory]") {
  const auto s = sweep_sizes(1000, 64 * KiB, 8);
  REQUIRE(!s.empty());
  CHECK(s.front() == 4096);
  CHECK(s.back() == 64 * KiB);
  for (std::size_t i = 1; i < s.size(); ++i) CHECK(s[i] > s[i - 1]);
  for (uint64_t v : s) CHECK(v % 4096 == 0);

  CHECK(sweep_sizes(MiB, MiB, 4) == std::vector<uint64_t>{MiB});
  CHECK(sweep_sizes(1, 1, 4) == std::vector<uint64_t>{4096});
  CHECK(sweep_sizes(2 * MiB, MiB, 4).empty());
  // An end that is no multiple of a page is rounded to the nearest one.
  CHECK(sweep_sizes(4096, 10000, 1).back() == 8192);
  // points_per_octave below 1 counts as 1.
  CHECK(sweep_sizes(4096, 16384, 0) == std::vector<uint64_t>{4096, 8192, 16384});
}

TEST_CASE("default_sweep_top: 4 x the whole last-level cache, at least 512 MiB", "[memory]") {
  CpuInfo none;
  CHECK(default_sweep_top(none) == 512 * MiB);

  CpuInfo big;
  big.caches = {{1, "data", 48 * KiB, 64, 12, 2, 64},
                {1, "instruction", 32 * KiB, 64, 8, 2, 64},
                {2, "unified", 2 * MiB, 64, 16, 2, 64},
                {3, "unified", 96 * MiB, 64, 16, 64, 2}};
  CHECK(default_sweep_top(big) == 4 * 192 * MiB);

  CpuInfo small;
  small.caches = {{1, "data", 32 * KiB, 64, 8, 1, 4}, {2, "unified", 256 * KiB, 64, 4, 1, 4},
                  {3, "unified", 8 * MiB, 64, 16, 4, 1}};
  CHECK(default_sweep_top(small) == 512 * MiB);
  CHECK(last_level_cache_bytes(small) == 8 * MiB);
  CHECK(last_level_cache_bytes(big) == 192 * MiB);
  CHECK(last_level_cache_bytes(none) == 0);
}

TEST_CASE("tapered_sweep_sizes: dense up to a size, then one point an octave to the end", "[memory]") {
  const auto s = tapered_sweep_sizes(4 * KiB, 64 * MiB, 512 * MiB, 4);
  const auto dense = sweep_sizes(4 * KiB, 64 * MiB, 4);
  REQUIRE(s.size() == dense.size() + 3);
  CHECK(std::equal(dense.begin(), dense.end(), s.begin()));
  CHECK(s[dense.size()] == 128 * MiB);
  CHECK(s[dense.size() + 1] == 256 * MiB);
  CHECK(s.back() == 512 * MiB);
  for (std::size_t i = 1; i < s.size(); ++i) CHECK(s[i] > s[i - 1]);
  // A dense end beyond the top is the plain sweep; an end that is no whole octave away is still kept.
  CHECK(tapered_sweep_sizes(4 * KiB, GiB, 512 * MiB, 2) == sweep_sizes(4 * KiB, 512 * MiB, 2));
  CHECK(tapered_sweep_sizes(4 * KiB, 64 * MiB, 96 * MiB, 4).back() == 96 * MiB);
  CHECK(tapered_sweep_sizes(8 * KiB, 4 * KiB, 16 * KiB, 4).front() == 8 * KiB);
}

TEST_CASE("parse_mem_available reads the kB line of /proc/meminfo", "[memory]") {
  const std::string meminfo =
      "MemTotal:       32768000 kB\n"
      "MemFree:         1000000 kB\n"
      "MemAvailable:   19083674 kB\n"
      "Buffers:          123456 kB\n";
  CHECK(parse_mem_available(meminfo) == 19083674ULL * 1024);
  CHECK(parse_mem_available("MemTotal: 100 kB\n") == 0);
  CHECK(parse_mem_available("MemAvailable: lots\n") == 0);
  CHECK(parse_mem_available("") == 0);
  // This machine has a /proc/meminfo: some memory is available.
  CHECK(available_memory_bytes() > 0);
}

TEST_CASE("check_fits: message above 80% of the available memory", "[memory]") {
  const uint64_t available = 19083674ULL * 1024;  // 18.2 GiB
  const auto msg = check_fits(32 * GiB, available);
  REQUIRE(msg.has_value());
  CHECK(*msg == "working set 32 GiB exceeds 80% of the 18.2 GiB available");
  CHECK_FALSE(check_fits(14 * GiB, available).has_value());
  CHECK(check_fits(15 * GiB, available).has_value());
  CHECK_FALSE(check_fits(64 * GiB, 0).has_value());  // unknown: cannot tell
  CHECK_FALSE(check_fits(4096).has_value());
}

TEST_CASE("format_bytes: exact units or one decimal", "[memory]") {
  CHECK(format_bytes(0) == "0 B");
  CHECK(format_bytes(512) == "512 B");
  CHECK(format_bytes(1023) == "1023 B");
  CHECK(format_bytes(16 * KiB) == "16 KiB");
  CHECK(format_bytes(3 * MiB / 2) == "1.5 MiB");
  CHECK(format_bytes(512 * MiB) == "512 MiB");
  CHECK(format_bytes(2 * GiB) == "2 GiB");
  CHECK(format_bytes(1536) == "1.5 KiB");
  CHECK(format_bytes(MiB - 1) == "1.0 MiB");
  CHECK(format_bytes(1024 * GiB) == "1 TiB");
}

TEST_CASE("tapered_sweep_sizes: fine, then half as dense, then one point an octave", "[memory]") {
  const auto s = tapered_sweep_sizes(4 * KiB, 64 * MiB, 512 * MiB, 2 * GiB, 4);
  const auto fine = sweep_sizes(4 * KiB, 64 * MiB, 4);
  REQUIRE(s.size() == fine.size() + 6 + 2);  // 2 an octave over 3 octaves, then 1 GiB and 2 GiB
  CHECK(std::equal(fine.begin(), fine.end(), s.begin()));
  CHECK(s[fine.size()] == 94904320);  // 64 MiB x sqrt(2) = 90.5 MiB, rounded to 4 KiB
  CHECK(s[fine.size() + 1] == 128 * MiB);
  CHECK(s[fine.size() + 5] == 512 * MiB);
  CHECK(s[fine.size() + 6] == GiB);
  CHECK(s.back() == 2 * GiB);
  for (std::size_t i = 1; i < s.size(); ++i) CHECK(s[i] > s[i - 1]);
  // A last level small enough that dense_to is fine_to: the plain tapered sweep.
  CHECK(tapered_sweep_sizes(4 * KiB, 64 * MiB, 64 * MiB, 512 * MiB, 4) == tapered_sweep_sizes(4 * KiB, 64 * MiB, 512 * MiB, 4));
  // One point an octave stays one.
  CHECK(tapered_sweep_sizes(4 * KiB, 64 * MiB, 256 * MiB, 512 * MiB, 1) == sweep_sizes(4 * KiB, 512 * MiB, 1));
}
