#include "gpu/icd_vendors.hpp"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <mutex>
#include <set>
#include <system_error>

#include <stdlib.h>
#include <unistd.h>

#include <fmt/format.h>

#include "report/output_file.hpp"
#include "util/text.hpp"

namespace peakprobe::gpu {
namespace {

namespace fs = std::filesystem;

constexpr const char* kSystemVendors = "/etc/OpenCL/vendors";

// The private vendors folder: its files and the folder removed when the process ends (its workers
// have ended by then), and by the signal-time cleanup if a signal ends it first.
struct PrivateVendors {
  std::string dir;
  std::vector<std::string> files;
  std::vector<int> slots;
  ~PrivateVendors() {
    std::error_code ec;
    for (const auto& f : files) fs::remove(f, ec);
    if (!dir.empty()) fs::remove(dir, ec);
    for (int slot : slots) forget_on_signal(slot);
  }
};

bool set(const char* name) {
  const char* v = std::getenv(name);
  return v && *v;
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
    if (std::getline(in, line) && !trim(line).empty()) named.insert(fs::path(trim(line)).filename().string());
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

std::vector<std::pair<std::string, std::string>> vendors_folder_entries(const std::string& vendors_dir,
                                                                        const std::vector<std::string>& drivers) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& f : icd_files(vendors_dir)) {
    std::ifstream in(f, std::ios::binary);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    out.emplace_back(f.filename().string(), text);
  }
  for (size_t i = 0; i < drivers.size(); ++i) out.emplace_back(fmt::format("peakprobe-{}.icd", i), drivers[i] + "\n");
  return out;
}

std::optional<std::string> offer_unlisted_drivers() {
  static std::mutex mutex;
  static bool done = false;
  static PrivateVendors folder;
  std::lock_guard<std::mutex> lock(mutex);
  if (done) return std::nullopt;
  done = true;
  if (set("OCL_ICD_VENDORS") || set("OCL_ICD_FILENAMES") || set("OPENCL_VENDOR_PATH")) return std::nullopt;
  const auto add = unlisted_drivers(kSystemVendors, known_driver_paths());
  if (add.empty()) return std::nullopt;
  std::string names;
  for (size_t i = 0; i < add.size(); ++i) names += (i ? ", " : "") + add[i];
  std::error_code ec;
  std::string dir = (fs::temp_directory_path(ec) / "peakprobe-icd-XXXXXX").string();
  if (ec || !::mkdtemp(dir.data()))
    return fmt::format("OpenCL: no .icd file in {} names {}, and no private vendors folder could be made to "
                       "offer it (set OCL_ICD_VENDORS to a folder with an .icd file that names it)",
                       kSystemVendors, names);
  folder.slots.push_back(remove_on_signal(dir, true));
  folder.dir = dir;
  for (const auto& [name, text] : vendors_folder_entries(kSystemVendors, add)) {
    const std::string path = (fs::path(dir) / name).string();
    folder.slots.push_back(remove_on_signal(path, false));
    folder.files.push_back(path);
    std::ofstream(path, std::ios::binary) << text;
  }
  ::setenv("OCL_ICD_VENDORS", dir.c_str(), 1);
  return fmt::format("OpenCL: no .icd file in {} names {}; offered to the loader through {} (set "
                     "OCL_ICD_VENDORS to choose the drivers yourself)",
                     kSystemVendors, names, dir);
}

}  // namespace peakprobe::gpu
