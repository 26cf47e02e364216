#include "report/input_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

namespace peakprobe {
namespace {

std::string size_text(uint64_t bytes) {
  if (bytes >= (uint64_t{1} << 20)) return fmt::format("{:.1f} MiB", double(bytes) / double(1 << 20));
  return fmt::format("{} bytes", bytes);
}

// Length of the valid UTF-8 sequence starting at s[i], 0 when the byte there does not start one.
std::size_t utf8_length(std::string_view s, std::size_t i) {
  const auto byte = [&](std::size_t j) { return static_cast<unsigned char>(s[j]); };
  const unsigned char c = byte(i);
  if (c < 0x80) return 1;
  std::size_t len = 0;
  unsigned char lo = 0x80, hi = 0xBF;  // the allowed range of the second byte
  if (c >= 0xC2 && c <= 0xDF) len = 2;
  else if (c == 0xE0) len = 3, lo = 0xA0;
  else if (c == 0xED) len = 3, hi = 0x9F;  // no UTF-16 surrogates
  else if (c >= 0xE1 && c <= 0xEF) len = 3;
  else if (c == 0xF0) len = 4, lo = 0x90;
  else if (c == 0xF4) len = 4, hi = 0x8F;  // nothing above U+10FFFF
  else if (c >= 0xF1 && c <= 0xF3) len = 4;
  else return 0;
  if (i + len > s.size()) return 0;
  if (byte(i + 1) < lo || byte(i + 1) > hi) return 0;
  for (std::size_t j = 2; j < len; ++j)
    if (byte(i + j) < 0x80 || byte(i + j) > 0xBF) return 0;
  return len;
}

}  // namespace

const char* file_kind(mode_t m) {
  if (S_ISDIR(m)) return "a directory";
  if (S_ISCHR(m)) return "a character device";
  if (S_ISBLK(m)) return "a block device";
  if (S_ISFIFO(m)) return "a FIFO";
  if (S_ISSOCK(m)) return "a socket";
  return "not a regular file";
}

Expected<std::string> read_input_file(const std::string& path, const std::string& what, uint64_t max_bytes) {
  const std::string name = printable(path);
  auto failed = [&](const std::string& why) { return make_error(fmt::format("cannot read {} '{}': {}", what, name, why)); };
  if (path.empty()) return make_error(fmt::format("cannot read {}: the path is empty", what));
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return failed(std::strerror(errno));
  // The type is checked before open(): opening a FIFO would wait for a writer, a device may act.
  if (!S_ISREG(st.st_mode)) return failed(fmt::format("it is {}, not a regular file", file_kind(st.st_mode)));
  // O_NONBLOCK: should the path have been swapped for a FIFO since, open() still returns at once.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (fd < 0) return failed(std::strerror(errno));
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  if (::fstat(fd, &st) != 0) return failed(std::strerror(errno));
  if (!S_ISREG(st.st_mode)) return failed(fmt::format("it is {}, not a regular file", file_kind(st.st_mode)));
  if (uint64_t(st.st_size) > max_bytes)
    return failed(fmt::format("it is {}, more than the {} an input may have", size_text(uint64_t(st.st_size)),
                              size_text(max_bytes)));
  std::string text;
  text.reserve(std::size_t(st.st_size));
  char buf[65536];
  while (true) {
    const ssize_t n = ::read(fd, buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return failed(std::strerror(errno));
    if (n == 0) break;
    text.append(buf, std::size_t(n));
    if (text.size() > max_bytes)  // it grew while being read
      return failed(fmt::format("it is more than the {} an input may have", size_text(max_bytes)));
  }
  return text;
}

Expected<std::string> read_input_stream(std::istream& in, const std::string& what, uint64_t max_bytes) {
  std::string text;
  char buf[65536];
  while (in.read(buf, sizeof(buf)) || in.gcount() > 0) {
    text.append(buf, std::size_t(in.gcount()));
    if (text.size() > max_bytes)
      return make_error(fmt::format("cannot read {}: it is more than the {} an input may have", what,
                                    size_text(max_bytes)));
  }
  if (in.bad()) return make_error(fmt::format("cannot read {}: read error", what));
  return text;
}

bool valid_utf8(std::string_view text) {
  for (std::size_t i = 0; i < text.size();) {
    const std::size_t len = utf8_length(text, i);
    if (len == 0) return false;
    i += len;
  }
  return true;
}

std::string printable(std::string_view text, std::size_t max_chars) {
  std::string out;
  std::size_t chars = 0;
  for (std::size_t i = 0; i < text.size();) {
    if (chars == max_chars) {
      out += "...";
      break;
    }
    ++chars;
    const unsigned char c = static_cast<unsigned char>(text[i]);
    const std::size_t len = utf8_length(text, i);
    if (len == 0 || c < 0x20 || c == 0x7F) {
      if (c == '\t') out += "\\t";
      else if (c == '\n') out += "\\n";
      else if (c == '\r') out += "\\r";
      else out += fmt::format("\\x{:02X}", c);
      ++i;
      continue;
    }
    // C1 controls (U+0080..U+009F) would move a terminal's cursor as surely as C0 ones.
    if (len == 2 && c == 0xC2 && static_cast<unsigned char>(text[i + 1]) < 0xA0) {
      out += fmt::format("\\u{:04X}", static_cast<unsigned char>(text[i + 1]));
      i += 2;
      continue;
    }
    out.append(text.substr(i, len));
    i += len;
  }
  return out;
}

}  // namespace peakprobe
