// A fresh directory under the system temp dir (mkdtemp), removed with everything in it when the
// object goes out of scope: tests run in parallel (ctest -j), so no two may share a file name.
#pragma once
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <catch2/catch.hpp>

namespace peakprobe::test {

struct ScratchDir {
  std::filesystem::path path;
  ScratchDir() {
    std::string name = (std::filesystem::temp_directory_path() / "peakprobe-test-XXXXXX").string();
    REQUIRE(::mkdtemp(name.data()) != nullptr);
    path = name;
  }
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  // The full path of `name` inside the directory.
  std::string file(const std::string& name) const { return (path / name).string(); }
  // Writes `text` to `name` inside the directory and returns its full path.
  std::string write(const std::string& name, const std::string& text) const {
    std::ofstream(path / name, std::ios::binary) << text;
    return file(name);
  }
};

}  // namespace peakprobe::test
