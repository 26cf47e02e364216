#include "report/output_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <sstream>
#include <string_view>

#include <fmt/format.h>

namespace peakprobe {

namespace {

[[noreturn]] void fail(const std::string& path, std::string_view step, int err) {
  throw OutputError(fmt::format("cannot write '{}': {}: {}", path, step, std::strerror(err)));
}

// mkstemp creates files 0600; a report should get the permissions a plain open() would give it, or
// keep those of the file it replaces.
mode_t target_mode(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode)) return st.st_mode & 07777;
  // umask can only be read by setting it; reports are written after the measuring threads are gone.
  const mode_t mask = ::umask(0);
  ::umask(mask);
  return 0666 & ~mask;
}

std::string directory_of(const std::string& path) {
  const auto slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

// Owns the temporary file until it has been renamed over the target; removes it on every other path.
class TempFile {
 public:
  explicit TempFile(const std::string& target) : target_(target), name_(target + ".tmp.XXXXXX") {
    fd_ = ::mkstemp(name_.data());
    if (fd_ < 0) fail(target_, "cannot create a temporary file next to it", errno);
  }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
  ~TempFile() {
    if (fd_ >= 0) ::close(fd_);
    if (!renamed_) ::unlink(name_.c_str());
  }

  void write_all(std::string_view data) {
    while (!data.empty()) {
      const ssize_t n = ::write(fd_, data.data(), data.size());
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) fail(target_, "write failed", errno);
      data.remove_prefix(static_cast<std::size_t>(n));
    }
  }

  // fsync before rename: otherwise a crash can leave the new name pointing at an empty file.
  void commit(mode_t mode) {
    if (::fchmod(fd_, mode) != 0) fail(target_, "cannot set permissions", errno);
    if (::fsync(fd_) != 0) fail(target_, "fsync failed", errno);
    const int fd = fd_;
    fd_ = -1;
    // close() can report a deferred write error (NFS, quotas).
    if (::close(fd) != 0) fail(target_, "close failed", errno);
    if (::rename(name_.c_str(), target_.c_str()) != 0) fail(target_, "cannot replace it", errno);
    renamed_ = true;
  }

 private:
  std::string target_;
  std::string name_;
  int fd_ = -1;
  bool renamed_ = false;
};

// Makes the rename itself durable. Best effort: some file systems cannot fsync a directory, and the
// file is already complete under its final name.
void sync_directory(const std::string& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  ::fsync(fd);
  ::close(fd);
}

void write_stdout(const std::function<void(std::ostream&)>& body) {
  body(std::cout);
  std::cout.flush();
  if (!std::cout) throw OutputError("cannot write to stdout");
}

const char* file_kind(mode_t m) {
  if (S_ISDIR(m)) return "a directory";
  if (S_ISCHR(m)) return "a character device";
  if (S_ISBLK(m)) return "a block device";
  if (S_ISFIFO(m)) return "a FIFO";
  if (S_ISSOCK(m)) return "a socket";
  return "not a regular file";
}

// A symbolic link is followed: the file it names is replaced and the link stays.
std::string follow_links(const std::string& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0 || !S_ISLNK(st.st_mode)) return path;
  char* real = ::realpath(path.c_str(), nullptr);
  if (!real) return path;  // a dangling link: replaced like a new file
  std::string out(real);
  std::free(real);
  return out;
}

}  // namespace

void write_output_file(const std::string& path, const std::function<void(std::ostream&)>& body) {
  if (path == "-") return write_stdout(body);
  const std::string target = follow_links(path);
  struct stat st {};
  if (::stat(target.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
    // /dev/stdout, /proc/self/fd/1: the same file as standard output is written in place, like '-'.
    struct stat out {};
    if (::fstat(STDOUT_FILENO, &out) == 0 && out.st_dev == st.st_dev && out.st_ino == st.st_ino)
      return write_stdout(body);
    // Never replace a device, FIFO or directory with a regular file (as root that would replace
    // /dev/null for everyone).
    throw OutputError(fmt::format("cannot write '{}': it is {}, not a regular file; give a file path or '-'",
                                  path, file_kind(st.st_mode)));
  }
  // Formatting into memory first keeps a throwing body away from the file system entirely, and
  // write(2) below reports the real errno (ENOSPC, EIO) where an ofstream would only set failbit.
  std::ostringstream text;
  body(text);
  if (!text) throw OutputError(fmt::format("cannot write '{}': formatting the output failed", path));
  const mode_t mode = target_mode(target);
  TempFile tmp(target);
  tmp.write_all(text.view());
  tmp.commit(mode);
  sync_directory(directory_of(target));
}

}  // namespace peakprobe
