// GPU drivers that the OpenCL loader would not find. The ICD loader (libOpenCL.so.1) opens only the
// drivers that a file in /etc/OpenCL/vendors names; a container or VM image may mount a driver (an
// NVIDIA GPU's under /usr/local/nvidia, say) without such a file, and then a machine with a GPU lists
// no OpenCL device. Seen on the device machines: an Ubuntu image whose vendors folder held only a PoCL
// entry (with PoCL not installed) beside NVIDIA's mounted libnvidia-opencl.so.1.
//
// Before it lists devices, peakprobe looks for the usual driver files; those that exist and that no
// .icd file names are offered to the loader through a private vendors folder (OCL_ICD_VENDORS), with
// the folder's own entries kept. An OCL_ICD_VENDORS set by the user is left as it is.
#pragma once
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace peakprobe::gpu {

// The files where GPU vendors' OpenCL drivers usually live: for each driver file name, the usual
// library folders (and the machine's multiarch folders /usr/lib/*-linux-gnu).
std::vector<std::string> known_driver_paths();

// The candidates that exist as regular files and whose file name no .icd file in `vendors_dir` names
// (an .icd file holds a library name or path; the file name is what is compared), at most one per
// file name, in candidate order.
std::vector<std::string> unlisted_drivers(const std::string& vendors_dir, const std::vector<std::string>& candidates);

// The files of a private vendors folder: each .icd file of `vendors_dir` as it is, then one
// "peakprobe-N.icd" per driver naming it; (file name, contents) pairs.
std::vector<std::pair<std::string, std::string>> vendors_folder_entries(const std::string& vendors_dir,
                                                                        const std::vector<std::string>& drivers);

// Once per process: unless the user chose the drivers (OCL_ICD_VENDORS, OCL_ICD_FILENAMES or
// OPENCL_VENDOR_PATH set), and when known_driver_paths() holds unlisted drivers, writes a private
// vendors folder (mkdtemp under the temp directory; its files removed at exit and on SIGINT, SIGTERM
// and SIGHUP), points OCL_ICD_VENDORS at it for this process and its workers, and returns a line for
// the log that names the drivers (or why they could not be offered). nullopt when there was nothing
// to add (or on a later call).
std::optional<std::string> offer_unlisted_drivers();

}  // namespace peakprobe::gpu
