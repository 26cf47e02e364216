// Tests for src/report/output_file.cpp: whole-or-nothing writes through a temporary file.
#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>

#include "report/output_file.hpp"

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
