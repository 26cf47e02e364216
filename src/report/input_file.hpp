// Reading what a user hands in (catalogs, documents for compare, ceiling tables, kernel lists) and
// quoting what a user typed back in messages: the edge where untrusted bytes come in.
#pragma once
#include <sys/types.h>

#include <cstdint>
#include <istream>
#include <string>
#include <string_view>

#include "peakprobe/expected.hpp"

namespace peakprobe {

// Far above any document peakprobe writes (a full report's JSON is a few MB), far below what would
// hurt the machine to hold in memory.
inline constexpr uint64_t kMaxInputBytes = uint64_t{256} << 20;

// The whole content of a regular file. A directory, FIFO, socket or device is refused by its type
// before it is opened for reading (a FIFO never blocks, /dev/zero is never read), and a file over
// max_bytes is refused by its size. Errors name the path, as `what 'PATH': reason`
// (e.g. "cannot read catalog 'x': it is a directory, not a regular file").
Expected<std::string> read_input_file(const std::string& path, const std::string& what,
                                      uint64_t max_bytes = kMaxInputBytes);
// What a file that is not a regular file is, for messages: "a directory", "a FIFO", "a character
// device", ... (input and output paths are refused in the same words).
const char* file_kind(mode_t mode);
// The rest of a stream (standard input), refused past max_bytes.
Expected<std::string> read_input_stream(std::istream& in, const std::string& what,
                                        uint64_t max_bytes = kMaxInputBytes);

// `text` fit for one line of a message: valid UTF-8 stays as it is; every byte that is not part of
// valid UTF-8, and every control character, becomes \xNN (tab, newline and CR as \t, \n, \r); a
// backslash stays a backslash. Longer than max_chars, it is cut there and "..." added.
std::string printable(std::string_view text, std::size_t max_chars = 200);
// True when `text` is valid UTF-8 (no overlong forms, no surrogates, nothing above U+10FFFF).
bool valid_utf8(std::string_view text);

}  // namespace peakprobe
