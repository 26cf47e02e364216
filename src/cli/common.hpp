// Pieces every subcommand shares: exit codes, logging set-up, output routing, the host description.
#pragma once
#include <string>
#include <vector>

#include "peakprobe/cpu_info.hpp"
#include "peakprobe/run_document.hpp"

namespace peakprobe::cli {

// Stable exit codes (docs/cli.md).
enum ExitCode : int {
  kExitOk = 0,           // ran; rows may be ok, skipped or mistrusted
  kExitResultErrors = 1, // ran, but at least one row has status error
  kExitUsage = 2,        // bad arguments, unknown instruction, impossible form, malformed catalog
  kExitOutput = 3,       // an output file could not be written
  kExitMeasure = 4,      // measuring could not start (pinning, calibration, code mapping)
};

struct OutputOptions {
  std::string json, csv, markdown;  // file paths, "-" for stdout, empty for none
  std::string svg;                  // pair heatmap (pairs only)
  bool quiet = false;
  int verbose = 0;
  bool writes_stdout() const { return json == "-" || csv == "-" || markdown == "-" || svg == "-"; }
};

void setup_logging(const OutputOptions& o);
// Fails early (before minutes of measuring) when an output path cannot be created.
bool check_output_paths(const OutputOptions& o, std::string& error);
// Writes every requested format; the console table goes to stdout unless stdout carries a file format.
int emit_outputs(const RunDocument& doc, const OutputOptions& o);
RunDocument new_document(const CpuInfo& host, int argc, char** argv);
// Progress line on stderr, only when stderr is a terminal and not --quiet.
void progress(const OutputOptions& o, size_t done, size_t total, const std::string& what);
void progress_done(const OutputOptions& o);

}  // namespace peakprobe::cli
