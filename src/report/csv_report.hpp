// CSV form of finished records: one header line, one line per result, RFC 4180 quoting.
// Fixed decimals keep files diffable between runs: cycles and IPC 3, GFLOP/s and GOP/s 2, GHz 3,
// spreads (fractions) 4. A missing value is an empty field.
#pragma once
#include <array>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "peakprobe/result.hpp"

namespace peakprobe {

// The column set and order, declared once: the header line is written from it, and the cell
// formatters in csv_report.cpp are checked against it name by name at compile time.
inline constexpr std::array<std::string_view, 25> kCsvColumns = {
    "instruction", "group", "dtype", "status",
    "latency_cycles", "recip_throughput_cycles", "throughput_ipc", "ops_per_instruction",
    "gflops", "gops", "accumulators", "threads", "total_gflops", "total_gops",
    "threads_status", "threads_reason", "clock_ghz",
    "tput_min", "tput_median", "tput_spread", "lat_min", "lat_median", "lat_spread",
    "reason", "repro"};

// RFC 4180: a field holding a comma, quote, CR or LF is wrapped in quotes, inner quotes doubled.
std::string csv_field(std::string_view text);

void write_csv(std::ostream& out, const std::vector<ProbeResult>& results);

}  // namespace peakprobe
