// Timings of a product that something else may have slowed: judged, and taken again while doubted
// (run_matmul's own product and each baseline library's).
#pragma once
#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <thread>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "harness/pin.hpp"
#include "matmul/gemm.hpp"
#include "matmul/team_witness.hpp"
#include "peakprobe/expected.hpp"

namespace peakprobe {

// Whether a timing ran undisturbed: `own_doubt` judges it first (its threads' waits for their CPUs,
// where they can be read); then, on `witness_threads` > 1, the side-by-side witness right after it
// (team_witness.hpp). While doubted, waits and times again (`time_once`), up to kCrowdedAttempts
// timings in all: `kept` ends as the first timing not doubted, else the fastest. Returns the last
// doubt (nothing: undisturbed, or nothing could be judged); a timing that fails when taken again
// ends the attempts, with its error added to the doubt, and `kept` stays a checked timing.
inline constexpr int kCrowdedAttempts = 3;
inline constexpr auto kCrowdedPause = std::chrono::milliseconds(300);

template <typename T>
std::optional<std::string> retime_while_crowded(Gemm& gemm, const MatmulConfig& config, int witness_threads,
                                                int pin_cpu, const std::string& what, T& kept,
                                                const std::function<Expected<T>()>& time_once,
                                                const std::function<double(const T&)>& min_ms,
                                                const std::function<std::optional<std::string>()>& own_doubt,
                                                std::chrono::milliseconds pause = kCrowdedPause) {
  std::optional<T> fastest;  // of the timings set aside
  std::optional<std::string> crowded;
  for (int attempt = 1;; ++attempt) {
    crowded = own_doubt ? own_doubt() : std::nullopt;
    if (!crowded && witness_threads > 1) {
      Expected<TeamWitness> w = [&] {
        AffinityGuard caller_affinity;
        if (pin_cpu >= 0) pin_current_thread(pin_cpu);
        return witness_team(gemm, config.mr, config.nv, witness_threads);
      }();
      if (w) {
        spdlog::debug("{}: side by side, the slowest thread ran the witness at {:.0f}% of its own speed (thread {}; "
                      "timing {} of at most {})",
                      what, w->side_by_side * 100, w->slowest, attempt, kCrowdedAttempts);
        crowded = team_witness_doubt(*w, witness_threads);
      } else {
        spdlog::debug("{}: no side-by-side witness of the threads: {}", what, w.error());
      }
    }
    if (!crowded || attempt == kCrowdedAttempts) break;
    spdlog::info("{}: {}; timing it again", what, *crowded);
    std::this_thread::sleep_for(pause);
    Expected<T> again = time_once();
    if (!again) {
      crowded = fmt::format("{}; timed again, it failed: {}", *crowded, again.error());
      break;
    }
    if (!fastest || min_ms(kept) < min_ms(*fastest)) fastest = std::move(kept);
    kept = std::move(*again);
  }
  // Doubted every time: the fastest timing is the nearest to what the cores can do.
  if (crowded && fastest && min_ms(*fastest) < min_ms(kept)) kept = std::move(*fastest);
  return crowded;
}

}  // namespace peakprobe
