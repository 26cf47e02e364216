// Pieces every subcommand shares: exit codes, logging set-up, output routing, the host description.
#pragma once
#include <chrono>
#include <string>
#include <vector>

#include "peakprobe/cpu_info.hpp"
#include "peakprobe/run_document.hpp"
#include "report/output_file.hpp"

namespace peakprobe::cli {

// Stable exit codes (docs/cli.md).
enum ExitCode : int {
  kExitOk = 0,           // ran; rows may be ok, skipped or mistrusted
  kExitResultErrors = 1, // ran, but at least one row has status error
  kExitUsage = 2,        // bad arguments, unknown instruction, impossible form, malformed catalog
  kExitOutput = 3,       // an output file could not be written
  kExitMeasure = 4,      // measuring could not start (pinning, calibration, code mapping)
  kExitInterrupted = 130,// `table` (or `report --table`) stopped by Ctrl-C after writing what it measured (128 + SIGINT)
};

struct OutputOptions {
  std::string json, csv, markdown;  // file paths, "-" for stdout, empty for none
  std::string svg;                  // pair heatmap (pairs only)
  bool quiet = false;
  int verbose = 0;
  // Some output goes to stdout ('-', or /dev/stdout and the like): then no console text is printed.
  bool writes_stdout() const;
};

// One output of a command and the option that asked for it ("--json", "--out").
struct OutputTarget {
  std::string option;
  std::string path;
};
// The outputs of `o` that are set.
std::vector<OutputTarget> output_targets(const OutputOptions& o);

// Multi-line text (CLI11's usage errors) made printable line by line; the line breaks stay.
std::string escape_lines(const std::string& text);
// Log messages go to stderr with every byte a terminal could misread escaped (see printable()).
void setup_logging(const OutputOptions& o);
// The whole set of outputs a command will write, checked before anything is measured, so that a
// bad last path never throws away a long measurement: at most one of them goes to stdout (one
// document per stream), no file is named twice, every file can be written (its directory exists and
// is writable; an existing directory, FIFO or device is refused). kExitOk, or after logging why:
// kExitUsage for two outputs on stdout or one file named twice, kExitOutput for a path that cannot be
// written.
int check_outputs(const std::vector<OutputTarget>& targets);
int check_outputs(const OutputOptions& o);
// Refuses (kExitUsage, after logging) the formats `command` does not write, e.g. info's --csv: a
// silently ignored option looks like a lost file.
int refuse_outputs(const OutputOptions& o, const std::string& command, bool json_ok, bool csv_ok, bool markdown_ok);
// write_output_files (all files, or none of them): kExitOk, or kExitOutput after logging why.
int write_jobs(const std::vector<OutputJob>& jobs);
// Writes every requested format; the console table goes to stdout unless stdout carries a file format.
int emit_outputs(const RunDocument& doc, const OutputOptions& o);
// kExitResultErrors when any row of the document (results, their multi-thread runs, bandwidth,
// latency, mixes, pairs) has status error, else kExitOk: the exit code emit_outputs returns.
int document_exit_code(const RunDocument& doc);
RunDocument new_document(const CpuInfo& host, int argc, char** argv);
// Progress line on stderr, only when stderr is a terminal and not --quiet.
void progress(const OutputOptions& o, size_t done, size_t total, const std::string& what);
void progress_done(const OutputOptions& o);

// For -v: logs at debug level how long each part of a command took, "PREFIX: PART in S s", each lap
// from the one before (the first from construction).
class PartTimer {
 public:
  explicit PartTimer(std::string prefix);
  void lap(const std::string& part);

 private:
  std::string prefix_;
  std::chrono::steady_clock::time_point last_;
};

}  // namespace peakprobe::cli
