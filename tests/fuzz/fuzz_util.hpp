// Shared by the libFuzzer targets: input bytes as text, and a check that aborts (a finding) when an
// invariant of a parser's successful result does not hold. An error return is never a finding.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace peakprobe::fuzz {

inline std::string text_of(const uint8_t* data, size_t size) {
  return std::string(reinterpret_cast<const char*>(data), size);
}

[[noreturn]] inline void fail(const char* what, const std::string& detail) {
  std::fprintf(stderr, "fuzz invariant broken: %s: %s\n", what, detail.c_str());
  std::abort();
}

// Splits "A\x00B" (or "A" alone) into two texts: targets that read two inputs use it.
inline void split_two(const std::string& in, std::string& a, std::string& b) {
  const size_t nul = in.find('\0');
  if (nul == std::string::npos) {
    a = b = in;
  } else {
    a = in.substr(0, nul);
    b = in.substr(nul + 1);
  }
}

}  // namespace peakprobe::fuzz
