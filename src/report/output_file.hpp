// Writes an output file whole or not at all: the body goes to a temporary file in the target's
// directory, which is synced and then renamed over the target. A reader never sees half a report, and
// a failed run leaves the previous file in place.
#pragma once
#include <functional>
#include <ostream>
#include <stdexcept>
#include <string>

namespace peakprobe {

// The output could not be written; the message names the path and the system's reason.
class OutputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// path "-" writes to stdout. Throws OutputError on any write failure and removes the temporary file;
// an exception thrown by body propagates unchanged and leaves the target untouched.
void write_output_file(const std::string& path, const std::function<void(std::ostream&)>& body);

}  // namespace peakprobe
