#include "asm/matmul_kernel.hpp"

#include <fmt/format.h>

namespace peakprobe::isa {

std::string b_direct_tile_refusal(const MicroKernelShape& s, int rows, int cols, bool edges) {
  if (!s.b_direct || cols == s.nr() || edges) return "";
  return fmt::format("micro-tile {}x{}: in-place B kernels are whole {} columns wide (an edge panel is packed)", rows,
                     cols, s.nr());
}

std::string b_direct_dtype_refusal(const MicroKernelShape& s) {
  if (!s.b_direct || (b_in_place_possible(s.dtype) && !s.widened)) return "";
  return "in-place B needs f32 (bf16/int8 k groups need packing)";
}

std::string a_direct_refusal(const MicroKernelShape& s, int max_rows) {
  if (s.a_tail != 0 && (!s.a_direct || s.a_tail < 0 || s.a_tail >= s.k_group()))
    return fmt::format("in-place A: a last k group of {} values needs A read in place and fewer values than a group "
                       "holds ({})",
                       s.a_tail, s.k_group());
  if (!s.a_direct) return "";
  if (s.widened) return "in-place A: widened elements are packed wider than A holds them";
  if (s.signed_a) return "in-place A: int8 A is packed shifted by 128 (signed_a)";
  if (s.tiles) return "in-place A: tile kernels read A packed in blocks of tile depth";
  if (s.mr > max_rows)
    return fmt::format("in-place A: the kernels keep row pointers for at most {} rows, the block has {}", max_rows,
                       s.mr);
  return "";
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
