#include "asm/matmul_kernel.hpp"

namespace peakprobe::isa {

Expected<MicroKernelFn> CachedMicroKernels::get(int rows, int cols) {
  std::lock_guard<std::mutex> lock(mutex_);
  const auto key = std::make_pair(rows, cols);
  auto it = kernels_.find(key);
  if (it == kernels_.end()) {
    auto fn = compile(rows, cols);
    if (!fn) return make_error(fn.error());
    it = kernels_.emplace(key, std::move(fn.value())).first;
  }
  return it->second.as<MicroKernelFn>();
}

}  // namespace peakprobe::isa
