#include "memory/wait_retries.hpp"

#include <chrono>
#include <thread>

namespace peakprobe {

WaitRetries::WaitRetries(std::function<void(int)> pause) : pause_(std::move(pause)) {
  if (!pause_) pause_ = [](int ms) { std::this_thread::sleep_for(std::chrono::milliseconds(ms)); };
}

BandwidthResult WaitRetries::measure(const std::function<BandwidthResult()>& once) {
  BandwidthResult r = once();
  const int attempts = persistent() ? 1 : kWaitAttempts;
  for (int attempt = 2; attempt <= attempts && r.waited_every_repetition; ++attempt) {
    pause_(kWaitPauseMs[attempt - 2]);
    r = once();
  }
  // A row that measured memory ends the run of spoiled ones: the disturbance has passed.
  spoiled_in_a_row_ = r.waited_every_repetition ? spoiled_in_a_row_ + 1 : 0;
  return r;
}

}  // namespace peakprobe
