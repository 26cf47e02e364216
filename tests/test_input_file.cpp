// Tests for src/report/input_file.cpp: only regular files are read, sizes are capped, and text from
// outside is made printable before it reaches a terminal.
#include <catch2/catch.hpp>

#include <sys/stat.h>

#include <sstream>
#include <string>

#include "report/input_file.hpp"
#include "scratch_dir.hpp"

using namespace peakprobe;

TEST_CASE("input file: a regular file is read whole", "[input_file]") {
  const test::ScratchDir dir;
  const std::string text = std::string(200000, 'x') + "\n{}";
  auto got = read_input_file(dir.write("in.json", text), "document");
  REQUIRE(got.ok());
  CHECK(*got == text);
  auto empty = read_input_file(dir.write("empty.json", ""), "document");
  REQUIRE(empty.ok());
  CHECK(empty->empty());
}

TEST_CASE("input file: directories, FIFOs and devices are refused by type, without blocking", "[input_file]") {
  const test::ScratchDir dir;
  auto d = read_input_file(dir.path.string(), "catalog");
  REQUIRE_FALSE(d.ok());
  CHECK_THAT(d.error(), Catch::StartsWith("cannot read catalog '") && Catch::Contains("it is a directory, not a regular file"));
  // Opening a FIFO for reading would wait for a writer forever.
  const std::string fifo = dir.file("fifo");
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  auto f = read_input_file(fifo, "document");
  REQUIRE_FALSE(f.ok());
  CHECK_THAT(f.error(), Catch::Contains("a FIFO"));
  // /dev/zero never ends.
  auto z = read_input_file("/dev/zero", "document");
  REQUIRE_FALSE(z.ok());
  CHECK_THAT(z.error(), Catch::Contains("a character device"));
  auto missing = read_input_file(dir.file("missing.json"), "document");
  REQUIRE_FALSE(missing.ok());
  CHECK_THAT(missing.error(), Catch::Contains("No such file or directory"));
  auto none = read_input_file("", "document");
  REQUIRE_FALSE(none.ok());
  CHECK_THAT(none.error(), Catch::Contains("empty"));
}

TEST_CASE("input file: a file or stream over the cap is refused", "[input_file]") {
  const test::ScratchDir dir;
  auto big = read_input_file(dir.write("big.json", std::string(1001, ' ')), "ceiling table", 1000);
  REQUIRE_FALSE(big.ok());
  CHECK_THAT(big.error(), Catch::Contains("1001 bytes") && Catch::Contains("1000 bytes"));
  CHECK(read_input_file(dir.write("fits.json", std::string(1000, ' ')), "ceiling table", 1000).ok());
  std::istringstream in(std::string(5000, 'y'));
  auto s = read_input_stream(in, "standard input", 4096);
  REQUIRE_FALSE(s.ok());
  CHECK_THAT(s.error(), Catch::Contains("standard input"));
  std::istringstream small("[1, 2]");
  auto ok = read_input_stream(small, "standard input", 4096);
  REQUIRE(ok.ok());
  CHECK(*ok == "[1, 2]");
}

TEST_CASE("printable: bytes that are not UTF-8 and control characters are escaped", "[input_file]") {
  CHECK(printable("vfmadd231ps ymm, ymm, ymm") == "vfmadd231ps ymm, ymm, ymm");
  CHECK(printable("5 \xC2\xB5s, 3 \xE2\x80\x93 4") == "5 \xC2\xB5s, 3 \xE2\x80\x93 4");  // µ and an en dash stay
  CHECK(printable("a\xFF" "b") == "a\\xFFb");
  CHECK(printable("\x1B[31mred") == "\\x1B[31mred");  // no terminal escape gets through
  CHECK(printable("two\nlines\ttab\r") == "two\\nlines\\ttab\\r");
  CHECK(printable("\xC2\x9B" "1m") == "\\u009B1m");  // C1 control sequence introducer
  CHECK(printable("\xC0\x80") == "\\xC0\\x80");      // overlong NUL
  CHECK(printable("\xE2\x82") == "\\xE2\\x82");      // cut short
  CHECK(printable(std::string(300, 'a'), 10) == "aaaaaaaaaa...");
  CHECK(printable("\xF0\x9F\x98\x80", 1) == "\xF0\x9F\x98\x80");  // one character, four bytes
}

TEST_CASE("valid_utf8: the well-formed byte sequences only", "[input_file]") {
  CHECK(valid_utf8(""));
  CHECK(valid_utf8("plain ascii"));
  CHECK(valid_utf8("\xF4\x8F\xBF\xBF"));       // U+10FFFF
  CHECK_FALSE(valid_utf8("\xF4\x90\x80\x80"));  // above U+10FFFF
  CHECK_FALSE(valid_utf8("\xED\xA0\x80"));      // a UTF-16 surrogate
  CHECK_FALSE(valid_utf8("\xE0\x80\xAF"));      // overlong
  CHECK_FALSE(valid_utf8("\x80"));
  CHECK_FALSE(valid_utf8("\xFF"));
}
