// Bandwidth rows measured again while another program holds a core. A row whose threads waited for
// their CPUs in every repetition (BandwidthResult::waited_every_repetition) measured the CPU time it
// got, not memory: with a busy loop pinned beside the second thread on the Zen 5 VM, 2-core L1 copy
// read 41 B/cycle against 125 and DRAM load 6.2 against 8.8, every row `mistrusted` and yet taken
// as a ceiling. Such a row is measured again after a pause (a burst of another program passes);
// a disturbance that outlasts the attempts of kPersistentWaitRows rows in a row is taken as lasting,
// and later rows get one attempt only: a program that holds a core for the whole run would
// otherwise cost every one of a roofline's 24 memory rows its pauses (1.25 s each).
#pragma once
#include <functional>

#include "peakprobe/mem_result.hpp"

namespace peakprobe {

inline constexpr int kWaitAttempts = 3;
inline constexpr int kWaitPauseMs[kWaitAttempts - 1] = {250, 1000};
inline constexpr int kPersistentWaitRows = 2;

class WaitRetries {
 public:
  // `pause(ms)` sleeps between attempts (a test passes one that only records).
  explicit WaitRetries(std::function<void(int)> pause = {});
  // `once()` measured, and again while its threads waited in every repetition, as above. The last
  // attempt's row is returned; a row whose attempts all waited keeps waited_every_repetition.
  BandwidthResult measure(const std::function<BandwidthResult()>& once);
  // Rows in a row (up to now) whose every attempt waited; persistent() once kPersistentWaitRows.
  int spoiled_in_a_row() const { return spoiled_in_a_row_; }
  bool persistent() const { return spoiled_in_a_row_ >= kPersistentWaitRows; }

 private:
  std::function<void(int)> pause_;
  int spoiled_in_a_row_ = 0;
};

}  // namespace peakprobe
