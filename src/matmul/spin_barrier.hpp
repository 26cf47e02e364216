// The spin barrier the GEMM's threads meet at: between packing a shared B block and using it, and
// around the sums of a K split. The cost model's barrier price is measured with it
// (call_calibration.hpp, measure_barrier).
#pragma once
#include <atomic>
#include <thread>

#include "asm/target.hpp"

namespace peakprobe {

// Spinning is right while each thread has a core of its own; after a while it yields, so an
// oversubscribed machine still makes progress.
class SpinBarrier {
 public:
  explicit SpinBarrier(int parties) : parties_(parties) {}
  int parties() const { return parties_; }
  void wait() {
    if (parties_ == 1) return;
    const int gen = generation_.load(std::memory_order_acquire);
    if (arrived_.fetch_add(1, std::memory_order_acq_rel) == parties_ - 1) {
      arrived_.store(0, std::memory_order_relaxed);
      generation_.fetch_add(1, std::memory_order_release);
      return;
    }
    for (int spins = 0; generation_.load(std::memory_order_acquire) == gen; ++spins) {
      if (spins < 20000) isa::spin_pause();
      else std::this_thread::yield();
    }
  }

 private:
  const int parties_;
  std::atomic<int> arrived_{0}, generation_{0};
};

}  // namespace peakprobe
