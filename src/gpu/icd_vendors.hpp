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
#include <vector>

namespace peakprobe::gpu {

// The files where GPU vendors' OpenCL drivers usually live: for each driver file name, the usual
// library folders (and the machine's multiarch folders /usr/lib/*-linux-gnu).
std::vector<std::string> known_driver_paths();

// The candidates that exist as regular files and whose file name no .icd file in `vendors_dir` names
// (an .icd file holds a library name or path; the file name is what is compared), at most one per
// file name, in candidate order.
std::vector<std::string> unlisted_drivers(const std::string& vendors_dir, const std::vector<std::string>& candidates);

// Once per process: when OCL_ICD_VENDORS is unset and known_driver_paths() holds unlisted drivers,
// writes a private vendors folder (the system folder's .icd files plus one per unlisted driver),
// points OCL_ICD_VENDORS at it for this process and its workers, and returns a line for the log that
// names the drivers. nullopt when there was nothing to add (or on a later call).
std::optional<std::string> offer_unlisted_drivers();

}  // namespace peakprobe::gpu
