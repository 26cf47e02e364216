#include "asm/matmul_kernel.hpp"

#include <fmt/format.h>

namespace peakprobe::isa {

std::string b_direct_tile_refusal(const MicroKernelShape& s, int rows, int cols) {
  if (!s.b_direct || cols == s.nr()) return "";
  return fmt::format("micro-tile {}x{}: in-place B kernels are whole {} columns wide (an edge panel is packed)", rows,
                     cols, s.nr());
}

std::string b_direct_dtype_refusal(const MicroKernelShape& s) {
  if (!s.b_direct || (b_in_place_possible(s.dtype) && !s.widened)) return "";
  return "in-place B needs f32 (bf16/int8 k groups need packing)";
}

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
