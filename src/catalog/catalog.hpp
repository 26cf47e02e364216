// Probe catalogs: one row per instruction form, pipe-separated:
//   instruction text | ops per instruction | dtype | required features | group
// '#' starts a comment line. Every error names the file and line.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "peakprobe/expected.hpp"
#include "peakprobe/probe_spec.hpp"

namespace peakprobe {

inline constexpr const char* kDtypes[] = {"f64", "f32", "f16", "bf16", "i64", "i32", "i16", "i8", "u8", "-"};

Expected<std::vector<ProbeSpec>> parse_catalog(const std::string& text, const std::string& file);
// A catalog of this size holds some 300 000 rows; anything bigger is not a catalog.
inline constexpr uint64_t kMaxCatalogBytes = uint64_t{16} << 20;
// Reads a regular file (a directory, FIFO or device is refused, as is a file over kMaxCatalogBytes).
Expected<std::vector<ProbeSpec>> load_catalog_file(const std::string& path);
// The catalog shipped in the binary.
Expected<std::vector<ProbeSpec>> default_catalog();
// Case-insensitive substring match on instruction text, group or dtype; "a,b" matches either.
bool matches_filter(const ProbeSpec& spec, const std::string& filter);

}  // namespace peakprobe
