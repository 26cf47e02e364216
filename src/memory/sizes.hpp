// Working-set sizes for the memory probes: parsing what people type ("16KiB", "2M"), the geometric
// sweep of sizes, the default top of a sweep, and a check that a working set fits in free memory.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "peakprobe/cpu_info.hpp"
#include "peakprobe/expected.hpp"

namespace peakprobe {

// A number (a fraction allowed: "1.5MiB") and an optional unit, case-insensitive, spaces allowed
// between them. K, M, G, T and KiB, MiB, GiB, TiB are binary (as likwid-bench reads them); KB, MB,
// GB, TB are decimal; B or no unit is bytes. The result is rounded to a whole byte; a fraction of a
// byte without a unit is an error. Errors: empty, zero, negative, unknown unit, above 2^50 bytes.
Expected<uint64_t> parse_size(const std::string& text);

// Comma-separated sizes ("32K,1M,64M"), each checked by parse_size; an empty item is an error.
Expected<std::vector<uint64_t>> parse_size_list(const std::string& text);

// Geometric sizes from `from` to `to` (both included), points_per_octave per doubling (at least 1),
// each rounded to the nearest multiple of 4 KiB (at least 4 KiB) so that every thread's share starts
// on its own page; duplicates left by the rounding are dropped, so the result strictly increases.
// Empty when from > to.
std::vector<uint64_t> sweep_sizes(uint64_t from, uint64_t to, int points_per_octave);

// points_per_octave sizes from `from` to `dense_to`, then one per octave on to `to` (both ends kept):
// dense where the cache levels change, sparse where the curve is DRAM's plateau.
std::vector<uint64_t> tapered_sweep_sizes(uint64_t from, uint64_t dense_to, uint64_t to, int points_per_octave);

// The same with a middle stretch: points_per_octave up to fine_to, half as many (at least one) from
// there to dense_to, then one per octave to `to`. Where the last-level cache is hundreds of MiB (a
// server's, as a VM reports it), every point past 64 MiB streams hundreds of MiB, and four such points
// an octave cost more than the rest of the report.
std::vector<uint64_t> tapered_sweep_sizes(uint64_t from, uint64_t fine_to, uint64_t dense_to, uint64_t to,
                                          int points_per_octave);

// The whole last-level data cache: one instance's size x instances (0 when no cache is known).
uint64_t last_level_cache_bytes(const CpuInfo& cpu);

// The default top of a sweep: 4 x the whole last-level cache, and never below 512 MiB, so the
// curve ends well inside DRAM.
uint64_t default_sweep_top(const CpuInfo& cpu);

// MemAvailable from /proc/meminfo in bytes; 0 when it cannot be read.
uint64_t available_memory_bytes();
// MemAvailable in bytes from the text of /proc/meminfo; 0 when the line is missing or malformed.
uint64_t parse_mem_available(const std::string& meminfo_text);

// A message when bytes_needed exceeds 80% of the available memory (the system needs the rest; a
// sweep that pushes the machine into swap measures the disk); nullopt when it fits or when the
// available memory is unknown (available_bytes == 0).
std::optional<std::string> check_fits(uint64_t bytes_needed, uint64_t available_bytes);
std::optional<std::string> check_fits(uint64_t bytes_needed);

// "512 B", "16 KiB", "1.5 MiB", "2 GiB": the largest binary unit not above the value, a whole number
// when the value is an exact multiple of it, one decimal otherwise.
std::string format_bytes(uint64_t bytes);

}  // namespace peakprobe
