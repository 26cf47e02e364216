// Writes an output file whole or not at all: the body goes to a temporary file in the target's
// directory, which is synced and then renamed over the target. A reader never sees half a report, and
// a failed run leaves the previous file in place. A temporary file is removed on every exit path,
// SIGINT, SIGTERM and SIGHUP included (the signal is then raised again, so the exit status tells).
#pragma once
#include <functional>
#include <ostream>
#include <stdexcept>
#include <string>
#include <vector>

namespace peakprobe {

// The output could not be written; the message names the path and the system's reason.
class OutputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// path "-" writes to stdout. Throws OutputError on any write failure and removes the temporary file;
// an exception thrown by body propagates unchanged and leaves the target untouched.
void write_output_file(const std::string& path, const std::function<void(std::ostream&)>& body);

struct OutputJob {
  std::string path;  // "-" or the same file as standard output: written there, in place
  std::function<void(std::ostream&)> body;
};

// Several outputs as one: every body is formatted and every file written and synced to its temporary
// file first; only when all of them are complete are the temporaries renamed over their targets, and
// standard output is written last. A failure before the renames (a body that throws, a full disk)
// leaves every target untouched and no temporary behind.
void write_output_files(const std::vector<OutputJob>& jobs);

// True for "-" and for a path that names the file standard output already is (/dev/stdout,
// /proc/self/fd/1, the terminal, or the very file stdout is redirected to): such an output is
// written to stdout in place, never replaced, and counts as stdout (one document per stream).
bool writes_to_stdout(const std::string& path);

// Why `path` cannot be written, "" when it can be: an empty path, a missing or unwritable
// directory, or a path that exists and is not a regular file (directory, FIFO, device, socket) and
// not standard output. For checking every output before minutes of measuring.
std::string output_path_problem(const std::string& path);

// For other temporary paths (a file, or a folder that is empty once its registered files are gone):
// removed if SIGINT, SIGTERM or SIGHUP stops the process, in the same signal-time table as the
// outputs' temporary files. Register before creating the path. Returns a slot for forget_on_signal
// (-1 when the table is full: only a signal could then leave the path behind).
int remove_on_signal(const std::string& path, bool folder);
void forget_on_signal(int slot);

// A folder for outputs (the report's, roofline --out). It is created with its parents when missing;
// a folder this object created is removed again if it is still empty when the object goes away (the
// run failed before writing into it) or when SIGINT, SIGTERM or SIGHUP stops the process.
class OutputFolder {
 public:
  // Throws OutputError when the folder cannot be created, is not a directory or is not writable.
  explicit OutputFolder(std::string path);
  ~OutputFolder();
  OutputFolder(const OutputFolder&) = delete;
  OutputFolder& operator=(const OutputFolder&) = delete;
  const std::string& path() const { return path_; }
  bool created() const { return slot_ >= 0; }

 private:
  std::string path_;
  int slot_ = -1;  // in the signal-time cleanup table, when created here
};

}  // namespace peakprobe
