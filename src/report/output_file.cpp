#include "report/output_file.hpp"

#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <memory>
#include <mutex>
#include <sstream>
#include <string_view>

#include <fmt/format.h>

#include "report/input_file.hpp"

namespace peakprobe {

namespace {

// ---- cleanup at signal time: what a SIGINT must not leave behind ----
// A fixed table, so that the handler touches no allocator and no lock: it only reads slots and calls
// unlink(2) and rmdir(2), both async-signal-safe.

enum SlotState : int { kFree = 0, kBusy = 1, kFile = 2, kFolder = 3 };

struct CleanupSlot {
  std::atomic<int> state{kFree};
  char path[PATH_MAX];
};

constexpr int kCleanupSlots = 64;
CleanupSlot g_cleanup[kCleanupSlots];
constexpr int kCleanupSignals[] = {SIGINT, SIGTERM, SIGHUP};
struct sigaction g_previous[NSIG];
static_assert(std::atomic<int>::is_always_lock_free, "the signal handler reads the table without a lock");

void cleanup_on_signal(int sig) {
  const int saved_errno = errno;
  // Files first: a folder can only go once it is empty.
  for (int kind : {kFile, kFolder})
    for (auto& slot : g_cleanup)
      if (slot.state.load() == kind) kind == kFile ? (void)::unlink(slot.path) : (void)::rmdir(slot.path);
  // Then whatever was there before decides, as if this handler had never been: the default action
  // (the process dies of the signal, and its parent sees that) or someone else's handler.
  ::sigaction(sig, &g_previous[sig], nullptr);
  ::raise(sig);  // blocked while this handler runs; delivered as it returns
  errno = saved_errno;
}

// Installs the handler unless it is in place; done at every registration, since another part of the
// program (a test framework, a library) may have put its own in place since.
void ensure_cleanup_handlers() {
  static std::mutex mutex;
  std::lock_guard<std::mutex> lock(mutex);
  for (int sig : kCleanupSignals) {
    struct sigaction now {};
    if (::sigaction(sig, nullptr, &now) != 0) continue;
    if ((now.sa_flags & SA_SIGINFO) == 0 && now.sa_handler == cleanup_on_signal) continue;
    if ((now.sa_flags & SA_SIGINFO) == 0 && now.sa_handler == SIG_IGN) continue;  // nohup: keep ignoring
    g_previous[sig] = now;
    struct sigaction sa {};
    sa.sa_handler = cleanup_on_signal;
    sigemptyset(&sa.sa_mask);
    for (int other : kCleanupSignals) sigaddset(&sa.sa_mask, other);  // one cleanup at a time
    sa.sa_flags = SA_RESTART;
    ::sigaction(sig, &sa, nullptr);
  }
}

// -1 when the table is full or the path too long: the object still works, only a signal could then
// leave the path behind.
int register_cleanup(const std::string& path, SlotState kind) {
  ensure_cleanup_handlers();
  if (path.size() >= PATH_MAX) return -1;
  for (int i = 0; i < kCleanupSlots; ++i) {
    int expected = kFree;
    if (!g_cleanup[i].state.compare_exchange_strong(expected, kBusy)) continue;
    std::memcpy(g_cleanup[i].path, path.c_str(), path.size() + 1);
    g_cleanup[i].state.store(kind);
    return i;
  }
  return -1;
}

void unregister_cleanup(int slot) {
  if (slot >= 0) g_cleanup[slot].state.store(kFree);
}

}  // namespace

int remove_on_signal(const std::string& path, bool folder) { return register_cleanup(path, folder ? kFolder : kFile); }
void forget_on_signal(int slot) { unregister_cleanup(slot); }

namespace {

// ---- the writer ----

std::string shown(const std::string& path) { return printable(path, 1000); }

[[noreturn]] void fail(const std::string& path, std::string_view step, int err) {
  throw OutputError(fmt::format("cannot write '{}': {}: {}", shown(path), step, std::strerror(err)));
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

// Owns the temporary file until it has been renamed over the target; removes it on every other path,
// a signal included.
class TempFile {
 public:
  explicit TempFile(const std::string& target) : target_(target), name_(target + ".tmp.XXXXXX") {
    // The template goes into the signal-time table first and mkstemp fills in the name right there:
    // there is no moment in which the file exists and a signal would leave it behind.
    slot_ = register_cleanup(name_, kFile);
    char* name = slot_ >= 0 ? g_cleanup[slot_].path : name_.data();
    fd_ = ::mkstemp(name);
    const int err = errno;
    name_ = name;
    if (fd_ < 0) {
      unregister_cleanup(slot_);
      fail(target_, "cannot create a temporary file next to it", err);
    }
  }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
  ~TempFile() {
    if (fd_ >= 0) ::close(fd_);
    if (!renamed_) ::unlink(name_.c_str());
    unregister_cleanup(slot_);
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
  void finish(mode_t mode) {
    if (::fchmod(fd_, mode) != 0) fail(target_, "cannot set permissions", errno);
    if (::fsync(fd_) != 0) fail(target_, "fsync failed", errno);
    const int fd = fd_;
    fd_ = -1;
    // close() can report a deferred write error (NFS, quotas).
    if (::close(fd) != 0) fail(target_, "close failed", errno);
  }

  void rename_over_target() {
    if (::rename(name_.c_str(), target_.c_str()) != 0) fail(target_, "cannot replace it", errno);
    renamed_ = true;
  }

 private:
  std::string target_;
  std::string name_;
  int fd_ = -1;
  int slot_ = -1;
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

// The path is the file stdout already is (a terminal, a pipe, or a file stdout is redirected to).
bool same_as_stdout(const struct stat& st) {
  struct stat out {};
  return ::fstat(STDOUT_FILENO, &out) == 0 && out.st_dev == st.st_dev && out.st_ino == st.st_ino;
}

std::string not_regular(const std::string& path, mode_t mode) {
  return fmt::format("cannot write '{}': it is {}, not a regular file; give a file path or '-'", shown(path),
                     file_kind(mode));
}

}  // namespace

bool writes_to_stdout(const std::string& path) {
  if (path == "-") return true;
  struct stat st {};
  return !path.empty() && ::stat(path.c_str(), &st) == 0 && same_as_stdout(st);
}

std::string output_path_problem(const std::string& path) {
  if (path.empty()) return "cannot write '': the path is empty";
  if (writes_to_stdout(path)) return "";
  const std::string target = follow_links(path);
  struct stat st {};
  if (::stat(target.c_str(), &st) == 0) {
    // Never replace a device, FIFO or directory with a regular file (as root that would replace
    // /dev/null for everyone).
    if (!S_ISREG(st.st_mode)) return not_regular(path, st.st_mode);
  } else if (errno != ENOENT && errno != ENOTDIR) {  // ENOTDIR: the directory check below says which
    return fmt::format("cannot write '{}': {}", shown(path), std::strerror(errno));
  }
  const std::string dir = directory_of(target);
  struct stat ds {};
  if (::stat(dir.c_str(), &ds) != 0)
    return fmt::format("cannot write '{}': directory '{}' does not exist", shown(path), shown(dir));
  if (!S_ISDIR(ds.st_mode))
    return fmt::format("cannot write '{}': '{}' is not a directory", shown(path), shown(dir));
  // The temporary file is created beside the target, so the directory itself must be writable.
  if (::access(dir.c_str(), W_OK | X_OK) != 0)
    return fmt::format("cannot write '{}': directory '{}' is not writable", shown(path), shown(dir));
  // access(2) answers from the permission bits, which root passes everywhere: a directory whose file
  // system refuses new files (/proc, /sys, no inodes left) says so only when a file is created. The
  // writer's own temporary file is created and removed here, so that the refusal comes before the
  // measurements, not after them.
  try {
    TempFile probe(target);
  } catch (const OutputError& e) {
    return e.what();
  }
  return "";
}

void write_output_files(const std::vector<OutputJob>& jobs) {
  struct Staged {
    const OutputJob* job;
    std::string target;  // links followed
    std::string text;
  };
  std::vector<Staged> files, to_stdout;
  // Formatting into memory first keeps a throwing body away from the file system entirely, and
  // write(2) below reports the real errno (ENOSPC, EIO) where an ofstream would only set failbit.
  for (const auto& job : jobs) {
    Staged s{&job, job.path == "-" ? job.path : follow_links(job.path), {}};
    std::ostringstream text;
    job.body(text);
    if (!text) throw OutputError(fmt::format("cannot write '{}': formatting the output failed", shown(job.path)));
    s.text = std::move(text).str();
    if (writes_to_stdout(job.path)) {
      to_stdout.push_back(std::move(s));
      continue;
    }
    struct stat st {};
    if (::stat(s.target.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) throw OutputError(not_regular(job.path, st.st_mode));
    files.push_back(std::move(s));
  }
  // Every file complete on disk before any target is touched.
  std::vector<std::unique_ptr<TempFile>> temps;
  for (const auto& s : files) {
    const mode_t mode = target_mode(s.target);
    temps.push_back(std::make_unique<TempFile>(s.target));
    temps.back()->write_all(s.text);
    temps.back()->finish(mode);
  }
  for (size_t i = 0; i < files.size(); ++i) {
    temps[i]->rename_over_target();
    sync_directory(directory_of(files[i].target));
  }
  for (const auto& s : to_stdout) {
    std::cout << s.text;
    std::cout.flush();
    if (!std::cout) throw OutputError("cannot write to stdout");
  }
}

void write_output_file(const std::string& path, const std::function<void(std::ostream&)>& body) {
  write_output_files({OutputJob{path, body}});
}

OutputFolder::OutputFolder(std::string path) : path_(std::move(path)) {
  if (path_.empty()) throw OutputError("cannot write the output folder '': the path is empty");
  struct stat st {};
  if (::stat(path_.c_str(), &st) != 0) {
    if (errno != ENOENT)
      throw OutputError(fmt::format("cannot write the output folder '{}': {}", shown(path_), std::strerror(errno)));
    std::error_code ec;
    std::filesystem::create_directories(path_, ec);
    if (ec)
      throw OutputError(fmt::format("cannot create the output folder '{}': {}", shown(path_), ec.message()));
    slot_ = register_cleanup(path_, kFolder);
    if (slot_ < 0) slot_ = kCleanupSlots;  // created, only not in the table
    return;                                // a folder made just now is a writable directory
  }
  if (!S_ISDIR(st.st_mode))
    throw OutputError(fmt::format("cannot write the output folder '{}': it is {}, not a directory", shown(path_),
                                  file_kind(st.st_mode)));
  if (::access(path_.c_str(), W_OK | X_OK) != 0)
    throw OutputError(fmt::format("cannot write the output folder '{}': not writable", shown(path_)));
}

OutputFolder::~OutputFolder() {
  if (slot_ < 0) return;
  ::rmdir(path_.c_str());  // fails, as it should, once anything was written into it
  if (slot_ < kCleanupSlots) unregister_cleanup(slot_);
}

}  // namespace peakprobe
