// Reporters for matmul results (`peakprobe matmul`, `peakprobe bench matmul`): a JSON row, console
// lines, a GitHub table and CSV. int8 rates are GOP/s and intensities OP/byte; the JSON and CSV keep
// the one key "gflops" for every dtype, which is what `compare` reads.
#pragma once
#include <ostream>
#include <vector>

#include <nlohmann/json.hpp>

#include "peakprobe/matmul_result.hpp"

namespace peakprobe {

// One flat row of the document's top-level "matmul" array. Its keys are stable (docs/output.md):
//   name, shape {m, n, k}, batch, dtype, threads, cold_cache, kernel,
//   config {mr, nv, nr, mc, kc, nc, threads, thread_rows, thread_cols}, config_source,
//   max_rel_error, rows_checked, mean_ms, min_ms, max_ms, std_ms, repetitions, warmup,
//   gflops, arithmetic_intensity, ceiling_gflops, ceiling_source, ceiling_missing, bound_by, efficiency,
//   clock {source, ghz, ghz_before, ghz_after, drift},
//   baselines [{library, path, mean_ms, min_ms, max_ms, std_ms, repetitions, gflops, max_rel_error, speedup,
//               status, reason}],
//   status, and reason (present only when not empty).
// `compare` identifies the row by "name" and judges "mean_ms" (lower is better) and "gflops"
// (higher is better). Missing ceilings and efficiencies, and any non-finite number, are null.
nlohmann::json to_json(const MatmulResult& r);

// The inverse of to_json, for round trips and `peakprobe report`. It never throws: a key that is
// missing or of another type keeps the field's default, a null plain number reads as NaN (to_json
// writes null only for non-finite values), a null ceiling or efficiency as absent, an unknown dtype
// as f32 and an unknown status as error (with the status named in the reason).
MatmulResult matmul_from_json(const nlohmann::json& j);

// A few lines for people: the problem and tiling, the check, the timing, the rate against the
// ceiling, one line per baseline, and the status with its reason when it is not ok.
void write_matmul_console(std::ostream& out, const MatmulResult& r);

// A heading, a legend, and a GitHub table with one row per result and one column per baseline
// library found in any row ("-" where a row lacks it); then the reasons of rows that are not ok.
void write_matmul_markdown(std::ostream& out, const std::vector<MatmulResult>& results);

// A header line and one line per result (RFC 4180 quoting through csv_field). Each baseline library
// found in any row adds the columns <library>_mean_ms, <library>_min_ms, <library>_gflops and
// <library>_speedup, empty where a row lacks it.
void write_matmul_csv(std::ostream& out, const std::vector<MatmulResult>& results);

}  // namespace peakprobe
