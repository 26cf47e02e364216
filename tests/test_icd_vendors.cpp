#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "gpu/icd_vendors.hpp"
#include "scratch_dir.hpp"

using namespace peakprobe::gpu;
namespace fs = std::filesystem;

namespace {
void write(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream(p) << text;
}
}  // namespace

TEST_CASE("unlisted_drivers: existing driver files that no .icd names, one per file name", "[gpu]") {
  peakprobe::test::ScratchDir scratch;
  const fs::path root = scratch.path;
  const fs::path vendors = root / "vendors";
  fs::create_directories(vendors);
  // The loader's folder names PoCL (by name only) and one driver by full path in another folder.
  write(vendors / "pocl.icd", "libpocl.so.2\n");
  write(vendors / "intel.icd", "  /somewhere/else/libigdrcl.so  \n");
  write(vendors / "notes.txt", "libnvidia-opencl.so.1\n");  // not an .icd: ignored
  const std::string nvidia_a = (root / "a/libnvidia-opencl.so.1").string();
  const std::string nvidia_b = (root / "b/libnvidia-opencl.so.1").string();
  const std::string intel = (root / "c/intel-opencl/libigdrcl.so").string();
  const std::string missing = (root / "d/libamdocl64.so").string();
  write(nvidia_b, "");
  write(intel, "");
  fs::create_directories(root / "a/libnvidia-opencl.so.1");  // a folder of that name is no driver

  SECTION("the first existing file of each name, and only names no .icd holds") {
    CHECK(unlisted_drivers(vendors.string(), {nvidia_a, nvidia_b, intel, missing}) == std::vector<std::string>{nvidia_b});
  }
  SECTION("a second copy of a name already offered is left out") {
    write(nvidia_a + "x/libnvidia-opencl.so.1", "");
    CHECK(unlisted_drivers(vendors.string(), {nvidia_b, nvidia_a + "x/libnvidia-opencl.so.1"}) ==
          std::vector<std::string>{nvidia_b});
  }
  SECTION("once an .icd names the driver, nothing is offered") {
    write(vendors / "nvidia.icd", "libnvidia-opencl.so.1");
    CHECK(unlisted_drivers(vendors.string(), {nvidia_b, intel}).empty());
  }
  SECTION("no vendors folder: every existing driver is unlisted") {
    CHECK(unlisted_drivers((root / "none").string(), {nvidia_b, intel, missing}) ==
          std::vector<std::string>{nvidia_b, intel});
  }
}

TEST_CASE("known_driver_paths: the usual folders of NVIDIA's, AMD's and Intel's OpenCL drivers", "[gpu]") {
  const auto paths = known_driver_paths();
  auto has = [&](const std::string& p) { return std::find(paths.begin(), paths.end(), p) != paths.end(); };
  CHECK(has("/usr/local/nvidia/lib64/libnvidia-opencl.so.1"));  // a driver mounted into a container
  CHECK(has("/usr/lib/libnvidia-opencl.so.1"));
  CHECK(has("/opt/rocm/lib/libamdocl64.so"));
  for (const auto& p : paths) CHECK(fs::path(p).is_absolute());
}

TEST_CASE("vendors_folder_entries: the system folder's .icd files kept, one more per driver", "[gpu]") {
  peakprobe::test::ScratchDir scratch;
  const fs::path vendors = scratch.path / "vendors";
  write(vendors / "pocl.icd", "libpocl.so.2\n");
  write(vendors / "readme", "not an icd");
  auto entries = vendors_folder_entries(vendors.string(), {"/usr/local/nvidia/lib64/libnvidia-opencl.so.1"});
  std::sort(entries.begin(), entries.end());
  REQUIRE(entries.size() == 2);
  CHECK(entries[0] == std::pair<std::string, std::string>{"peakprobe-0.icd", "/usr/local/nvidia/lib64/libnvidia-opencl.so.1\n"});
  CHECK(entries[1] == std::pair<std::string, std::string>{"pocl.icd", "libpocl.so.2\n"});
  CHECK(vendors_folder_entries((scratch.path / "none").string(), {}).empty());
}

