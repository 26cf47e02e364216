// Tests for src/report/output_file.cpp: whole-or-nothing writes through a temporary file.
#include <catch2/catch.hpp>

#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>

#include "report/output_file.hpp"
#include "skip.hpp"

namespace fs = std::filesystem;

namespace {

// A fresh directory per test, removed afterwards.
struct ScratchDir {
  fs::path path;
  ScratchDir() {
    std::string name = (fs::temp_directory_path() / "peakprobe-output-XXXXXX").string();
    REQUIRE(::mkdtemp(name.data()) != nullptr);
    path = name;
  }
  ~ScratchDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
  std::size_t entries() const { return std::distance(fs::directory_iterator(path), fs::directory_iterator()); }
};

std::string read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void write_text(const fs::path& p, const std::string& text) {
  peakprobe::write_output_file(p.string(), [&](std::ostream& o) { o << text; });
}

}  // namespace

TEST_CASE("output file is written whole", "[report]") {
  ScratchDir dir;
  const fs::path target = dir.path / "out.csv";
  const std::string text(100000, 'x');
  write_text(target, text);
  CHECK(read(target) == text);
  CHECK(dir.entries() == 1);  // no temporary file left beside it
}

TEST_CASE("output file in a missing directory throws and leaves nothing", "[report]") {
  ScratchDir dir;
  const fs::path target = dir.path / "missing" / "out.json";
  try {
    write_text(target, "{}");
    FAIL("no OutputError");
  } catch (const peakprobe::OutputError& e) {
    const std::string what = e.what();
    CHECK(what.find(target.string()) != std::string::npos);
    CHECK(what.find("No such file or directory") != std::string::npos);
  }
  CHECK(!fs::exists(dir.path / "missing"));
  CHECK(dir.entries() == 0);
}

TEST_CASE("output file over a directory throws and removes the temporary", "[report]") {
  ScratchDir dir;
  fs::create_directory(dir.path / "taken");
  CHECK_THROWS_AS(write_text(dir.path / "taken", "x"), peakprobe::OutputError);
  CHECK(fs::is_directory(dir.path / "taken"));
  CHECK(dir.entries() == 1);
}

TEST_CASE("output file replaces an existing file and keeps its permissions", "[report]") {
  ScratchDir dir;
  const fs::path target = dir.path / "out.md";
  write_text(target, "old content\n");
  REQUIRE(::chmod(target.c_str(), 0640) == 0);
  write_text(target, "new\n");
  CHECK(read(target) == "new\n");
  struct stat st {};
  REQUIRE(::stat(target.c_str(), &st) == 0);
  CHECK((st.st_mode & 07777) == 0640);
  CHECK(dir.entries() == 1);
}

TEST_CASE("new output file gets umask permissions, not mkstemp's 0600", "[report]") {
  ScratchDir dir;
  const fs::path target = dir.path / "out.json";
  const mode_t mask = ::umask(022);
  write_text(target, "{}\n");
  ::umask(mask);
  struct stat st {};
  REQUIRE(::stat(target.c_str(), &st) == 0);
  CHECK((st.st_mode & 07777) == 0644);
}

TEST_CASE("a body that throws midway leaves the old file intact", "[report]") {
  ScratchDir dir;
  const fs::path target = dir.path / "out.json";
  write_text(target, "old content\n");
  auto failing_body = [](std::ostream& o) {
    o << "partial output that must never reach the target";
    throw std::runtime_error("formatter failed");
  };
  CHECK_THROWS_WITH(peakprobe::write_output_file(target.string(), failing_body), "formatter failed");
  CHECK(read(target) == "old content\n");
  CHECK(dir.entries() == 1);
}

TEST_CASE("output file: devices and FIFOs are refused, never replaced, and symlinks are followed", "[report]") {
  CHECK_THROWS_AS(peakprobe::write_output_file("/dev/null", [](std::ostream& o) { o << "x"; }), peakprobe::OutputError);
  struct stat st {};
  REQUIRE(::stat("/dev/null", &st) == 0);
  CHECK(S_ISCHR(st.st_mode));  // still the device
  ScratchDir dir;
  const std::string fifo = (dir.path / "fifo").string();
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  try {
    peakprobe::write_output_file(fifo, [](std::ostream& o) { o << "x"; });
    FAIL("a FIFO was accepted");
  } catch (const peakprobe::OutputError& e) {
    CHECK_THAT(e.what(), Catch::Contains("a FIFO"));
  }
  const std::string real = (dir.path / "real.json").string(), link = (dir.path / "link.json").string();
  peakprobe::write_output_file(real, [](std::ostream& o) { o << "old"; });
  REQUIRE(::symlink(real.c_str(), link.c_str()) == 0);
  peakprobe::write_output_file(link, [](std::ostream& o) { o << "new"; });
  REQUIRE(::lstat(link.c_str(), &st) == 0);
  CHECK(S_ISLNK(st.st_mode));  // the link stays a link
  CHECK(read(real) == "new");
}

TEST_CASE("output files: all are written, or none when one fails before the renames", "[report]") {
  ScratchDir dir;
  const fs::path a = dir.path / "a.json", b = dir.path / "b.csv";
  write_text(a, "old a");
  write_text(b, "old b");
  auto ok = [](const char* text) { return [text](std::ostream& o) { o << text; }; };
  peakprobe::write_output_files({{a.string(), ok("new a")}, {b.string(), ok("new b")}});
  CHECK(read(a) == "new a");
  CHECK(read(b) == "new b");
  // The second body throws: the first file must not have been replaced.
  auto throws = [](std::ostream&) -> void { throw std::runtime_error("second failed"); };
  CHECK_THROWS_WITH(peakprobe::write_output_files({{a.string(), ok("newer a")}, {b.string(), throws}}), "second failed");
  CHECK(read(a) == "new a");
  // The second target cannot be created (its directory is missing): no file replaced, no temporary left.
  CHECK_THROWS_AS(peakprobe::write_output_files({{a.string(), ok("newer a")}, {(dir.path / "no" / "c.md").string(), ok("c")}}),
                  peakprobe::OutputError);
  CHECK(read(a) == "new a");
  // A FIFO among the targets is refused before any file is written.
  const std::string fifo = (dir.path / "fifo").string();
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  CHECK_THROWS_AS(peakprobe::write_output_files({{a.string(), ok("newer a")}, {fifo, ok("x")}}), peakprobe::OutputError);
  CHECK(read(a) == "new a");
  CHECK(dir.entries() == 3);  // a, b, fifo
}

TEST_CASE("output paths: what can be written is told before anything is measured", "[report]") {
  ScratchDir dir;
  CHECK(peakprobe::output_path_problem((dir.path / "new.json").string()).empty());
  CHECK(peakprobe::output_path_problem("-").empty());
  CHECK_THAT(peakprobe::output_path_problem(""), Catch::Contains("empty"));
  CHECK_THAT(peakprobe::output_path_problem((dir.path / "missing" / "x.json").string()),
             Catch::Contains("does not exist"));
  CHECK_THAT(peakprobe::output_path_problem(dir.path.string()), Catch::Contains("a directory, not a regular file"));
  const std::string fifo = (dir.path / "fifo").string();
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  CHECK_THAT(peakprobe::output_path_problem(fifo), Catch::Contains("a FIFO"));
  CHECK_THAT(peakprobe::output_path_problem(fifo + "/x.json"), Catch::Contains("is not a directory"));
  // procfs refuses new files whatever the permission bits say (root passes access(2) there): the
  // refusal is found by creating the writer's temporary file, and none is left behind.
  CHECK_FALSE(peakprobe::output_path_problem("/proc/peakprobe-output-test.json").empty());
  CHECK(dir.entries() == 1);  // the fifo: the probes of new.json left nothing
  CHECK(peakprobe::writes_to_stdout("-"));
  CHECK(peakprobe::writes_to_stdout("/dev/stdout"));  // whatever stdout is, this names it
  CHECK_FALSE(peakprobe::writes_to_stdout((dir.path / "new.json").string()));
  CHECK_FALSE(peakprobe::writes_to_stdout(""));
}

TEST_CASE("output folder: made when missing, removed again when nothing was written into it", "[report]") {
  ScratchDir dir;
  const fs::path made = dir.path / "made" / "deeper";
  {
    peakprobe::OutputFolder folder(made.string());
    CHECK(folder.created());
    CHECK(fs::is_directory(made));
  }
  CHECK_FALSE(fs::exists(made));  // the run ended before writing: nothing left behind
  {
    peakprobe::OutputFolder folder(made.string());
    write_text(made / "report.json", "{}");
  }
  CHECK(fs::exists(made / "report.json"));  // a folder with results stays
  {
    peakprobe::OutputFolder existing(dir.path.string());
    CHECK_FALSE(existing.created());
  }
  CHECK(fs::is_directory(dir.path));  // a folder that was there before is never removed
  write_text(dir.path / "file", "x");
  CHECK_THROWS_WITH(peakprobe::OutputFolder((dir.path / "file").string()), Catch::Contains("not a directory"));
  CHECK_THROWS_AS(peakprobe::OutputFolder(""), peakprobe::OutputError);
}

TEST_CASE("output file: SIGTERM while a file is being written leaves no temporary file", "[report]") {
  ScratchDir dir;
  const fs::path target = dir.path / "big.json";
  // Big enough that writing and syncing it takes a while after the temporary file appears.
  const std::string text(64 << 20, 'x');
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    // As in peakprobe itself: nobody else handles SIGTERM (Catch2 does, in this process).
    ::signal(SIGTERM, SIG_DFL);
    try {
      write_text(target, text);
    } catch (...) {
      ::_exit(3);
    }
    ::_exit(0);
  }
  // Wait for the temporary file, then stop the writer.
  bool seen = false;
  for (int i = 0; i < 20000 && !seen; ++i) {
    for (const auto& e : fs::directory_iterator(dir.path))
      if (e.path().filename().string().find(".tmp.") != std::string::npos) seen = true;
    if (!seen) ::usleep(500);
  }
  ::kill(child, SIGTERM);
  int status = 0;
  REQUIRE(::waitpid(child, &status, 0) == child);
  if (!seen || !WIFSIGNALED(status)) {
    // The writer finished before the signal: the point could not be made this time.
    CHECK(dir.entries() <= 1);
    PP_SKIP("the write finished before SIGTERM arrived: the signal's cleanup could not be seen this time");
  }
  CHECK(WTERMSIG(status) == SIGTERM);  // re-raised: the parent sees how the child ended
  for (const auto& e : fs::directory_iterator(dir.path))
    CHECK(e.path().filename().string().find(".tmp.") == std::string::npos);
}
