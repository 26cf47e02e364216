#include "gpu/icd_vendors.hpp"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <set>
#include <system_error>

#include <unistd.h>

#include <fmt/format.h>

namespace peakprobe::gpu {
namespace {

namespace fs = std::filesystem;

constexpr const char* kSystemVendors = "/etc/OpenCL/vendors";

// The private vendors folder, removed when the process ends (its workers have ended by then).
struct PrivateVendors {
  std::string dir;
  ~PrivateVendors() {
    if (dir.empty()) return;
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
};

std::string trimmed(std::string s) {
  const auto first = s.find_first_not_of(" \t\r\n");
  if (first == std::string::npos) return "";
  const auto last = s.find_last_not_of(" \t\r\n");
  return s.substr(first, last - first + 1);
}

std::vector<fs::path> icd_files(const std::string& vendors_dir) {
  std::vector<fs::path> out;
  std::error_code ec;
  for (fs::directory_iterator it(vendors_dir, ec), end; !ec && it != end; it.increment(ec))
    if (it->path().extension() == ".icd") out.push_back(it->path());
  return out;
}

}  // namespace

std::vector<std::string> known_driver_paths() {
  std::vector<std::string> dirs = {"/usr/local/nvidia/lib64", "/usr/local/nvidia/lib", "/usr/lib64", "/usr/lib"};
  std::error_code ec;
  for (fs::directory_iterator it("/usr/lib", ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.size() > 10 && name.compare(name.size() - 10, 10, "-linux-gnu") == 0) dirs.push_back(it->path().string());
  }
  // NVIDIA, AMD (ROCm), Intel (compute-runtime).
  std::vector<std::string> out;
  for (const auto& d : dirs) out.push_back(d + "/libnvidia-opencl.so.1");
  out.push_back("/opt/rocm/lib/libamdocl64.so");
  out.push_back("/opt/rocm/opencl/lib/libamdocl64.so");
  for (const auto& d : dirs) out.push_back(d + "/intel-opencl/libigdrcl.so");
  return out;
}

std::vector<std::string> unlisted_drivers(const std::string& vendors_dir, const std::vector<std::string>& candidates) {
  std::set<std::string> named;
  for (const auto& f : icd_files(vendors_dir)) {
    std::ifstream in(f);
    std::string line;
    if (std::getline(in, line) && !trimmed(line).empty()) named.insert(fs::path(trimmed(line)).filename().string());
  }
  std::vector<std::string> out;
  std::set<std::string> taken;
  for (const auto& c : candidates) {
    const std::string name = fs::path(c).filename().string();
    std::error_code ec;
    if (named.count(name) || taken.count(name) || !fs::is_regular_file(c, ec)) continue;
    taken.insert(name);
    out.push_back(c);
  }
  return out;
}

std::optional<std::string> offer_unlisted_drivers() {
  static std::mutex mutex;
  static bool done = false;
  static PrivateVendors folder;
  std::lock_guard<std::mutex> lock(mutex);
  if (done) return std::nullopt;
  done = true;
  if (const char* set = std::getenv("OCL_ICD_VENDORS"); set && *set) return std::nullopt;
  const auto add = unlisted_drivers(kSystemVendors, known_driver_paths());
  if (add.empty()) return std::nullopt;
  std::error_code ec;
  const fs::path dir = fs::temp_directory_path(ec) / fmt::format("peakprobe-icd-{}", ::getpid());
  if (ec || !fs::create_directories(dir, ec) || ec) return std::nullopt;
  folder.dir = dir.string();
  for (const auto& f : icd_files(kSystemVendors)) fs::copy_file(f, dir / f.filename(), ec);
  std::string names;
  for (size_t i = 0; i < add.size(); ++i) {
    std::ofstream(dir / fmt::format("peakprobe-{}.icd", i)) << add[i] << "\n";
    names += (i ? ", " : "") + add[i];
  }
  ::setenv("OCL_ICD_VENDORS", folder.dir.c_str(), 1);
  return fmt::format("OpenCL: no .icd file in {} names {}; offered to the loader through {} (set "
                     "OCL_ICD_VENDORS to choose the drivers yourself)",
                     kSystemVendors, names, folder.dir);
}

}  // namespace peakprobe::gpu
