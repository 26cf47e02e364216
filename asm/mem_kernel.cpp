#include "asm/mem_kernel.hpp"

namespace peakprobe::isa {

const std::vector<MemKernelInfo>& mem_kernels() {
  static const std::vector<MemKernelInfo> all = {
      {MemKernel::load, "load", 1, 1, 0, false},          {MemKernel::store, "store", 1, 0, 1, false},
      {MemKernel::copy, "copy", 2, 1, 1, false},          {MemKernel::triad, "triad", 3, 2, 1, false},
      {MemKernel::update, "update", 1, 1, 1, false},      {MemKernel::store_nt, "store_nt", 1, 0, 1, true},
      {MemKernel::copy_nt, "copy_nt", 2, 1, 1, true},     {MemKernel::triad_nt, "triad_nt", 3, 2, 1, true},
  };
  return all;
}

Expected<MemKernelInfo> find_mem_kernel(const std::string& name) {
  std::string known;
  for (const auto& k : mem_kernels()) {
    if (name == k.name) return k;
    known += (known.empty() ? "" : ", ") + std::string(k.name);
  }
  return make_error("unknown kernel '" + name + "' (one of: " + known + ")");
}

}  // namespace peakprobe::isa
