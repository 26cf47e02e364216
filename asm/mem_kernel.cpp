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

MemKernelCode own_mem_kernel(JitFunction fn, const MemKernelInfo& info, int width_bits, uint64_t bytes_per_iteration,
                             uint64_t array_step) {
  auto owner = std::make_shared<JitFunction>(std::move(fn));
  MemKernelCode out;
  out.fn = owner->as<MemFn>();
  out.code = std::move(owner);
  out.info = info;
  out.width_bits = width_bits;
  out.bytes_per_iteration = bytes_per_iteration;
  out.array_step = array_step;
  return out;
}

ChaseCode own_chase(JitFunction fn, int unroll) {
  auto owner = std::make_shared<JitFunction>(std::move(fn));
  ChaseCode out;
  out.fn = owner->as<ChaseFn>();
  out.code = std::move(owner);
  out.unroll = unroll;
  return out;
}

}  // namespace peakprobe::isa
