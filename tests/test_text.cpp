// Tests for src/util/text.cpp: trimming, lower case and case-free search of file and option texts.
#include <catch2/catch.hpp>

#include <string>

#include "util/text.hpp"

using namespace peakprobe;

TEST_CASE("text: trim takes white space off both ends only", "[text]") {
  CHECK(trim("") == "");
  CHECK(trim(" \t\r\n\v\f") == "");
  CHECK(trim("  a b \t") == "a b");
  CHECK(trim("x") == "x");
  CHECK(trim("line\r") == "line");  // a file written on Windows
  CHECK(trim("\n/usr/lib/libOpenCL.so.1\n") == "/usr/lib/libOpenCL.so.1");
  const std::string with_nul("a\0b", 3);
  CHECK(trim(" " + with_nul + " ") == with_nul);  // bytes inside stay, even odd ones
}

TEST_CASE("text: lower changes ASCII capitals and nothing else", "[text]") {
  CHECK(lower("KiB MiB") == "kib mib");
  CHECK(lower("already") == "already");
  CHECK(lower("A-Z_[]@") == "a-z_[]@");
  const std::string utf8 = "\xC3\x89t\xC3\xA9";  // "Été": bytes above 127 are left alone
  CHECK(lower(utf8) == "\xC3\x89t\xC3\xA9");
}

TEST_CASE("text: contains_nocase ignores case on both sides", "[text]") {
  CHECK(contains_nocase("NVIDIA H100 80GB HBM3", "h100"));
  CHECK(contains_nocase("OpenBLAS 0.3.21", "OPENblas"));
  CHECK_FALSE(contains_nocase("pthread", "openmp"));
  CHECK(contains_nocase("anything", ""));
  CHECK_FALSE(contains_nocase("", "x"));
}
