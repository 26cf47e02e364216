// Dual-issue measurements built from mixes: pairs with their classification, pair matrices with
// inferred pipe groups, and the search for the FLOP-maximising ratio of two instructions.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "harness/probe_runner.hpp"
#include "peakprobe/pair_result.hpp"

namespace peakprobe {

using PairProgress = std::function<void(size_t done, size_t total, const std::string& what)>;

// One instruction alone, measured exactly as the pairs are (a one-part mix with as many chains as
// the registers allow), so the comparison is like for like.
MixResult measure_alone(ProbeRunner& runner, const ProbeSpec& spec);

// A mix of any parts as `peakprobe mix` measures it: each part alone (as a one-part mix, twice, the
// faster kept) and its chain through the destination (as `inst` measures it), then the mix laid out
// so that no part's own chains bind it where the registers allow (pairs/mix_layout.hpp). A mix that
// still ran at its chains' floor is mistrusted, with why. Each part's alone_cycles is filled in.
MixResult measure_mix(ProbeRunner& runner, const std::vector<MixSpec>& parts);

// A and B interleaved wa:wb, laid out as measure_mix lays out a mix; `alone_a`/`alone_b` reuse earlier alone measurements when given.
PairResult measure_pair(ProbeRunner& runner, const ProbeSpec& a, const ProbeSpec& b, int wa, int wb,
                        const MixResult* alone_a = nullptr, const MixResult* alone_b = nullptr);

// A pair's verdict from its measured mix and the parts' alone figures (status, parts' alone
// cycles, classification).
PairResult pair_from(MixResult mix, const MixResult& alone_a, const MixResult& alone_b);

// Fills the classification of a pair from its mix and the parts' alone figures.
void classify(PairResult& p);

// True when, at `issue_width` instructions per cycle, the pair could not run faster if its parts
// issued together than if they shared one pipe: its classification then says nothing about pipes.
bool at_issue_width(const PairResult& p, double issue_width);

PairMatrix measure_pair_matrix(ProbeRunner& runner, const std::vector<ProbeSpec>& specs,
                               const PairProgress& progress = {});

// Guided search over ratios a:b (each side 0..8) for the most FLOP per cycle: the coarse ratios
// 1:0, 0:1, 1:1, 2:1, 1:2, 3:1, 1:3, then mediants between the best and its neighbours while they
// improve. `exhaustive` tries every reduced ratio with both sides <= 4 instead.
// `runner` measures on one core; measure_best_mix_on_all_threads then runs the best ratio on every
// core of a runner with several threads (s.best_all_threads), for the all-cores ceiling.
FlopMixSearch search_flop_mix(ProbeRunner& runner, const ProbeSpec& a, const ProbeSpec& b, bool exhaustive,
                              const PairProgress& progress = {});
void measure_best_mix_on_all_threads(ProbeRunner& team, const ProbeSpec& a, const ProbeSpec& b, FlopMixSearch& s);

}  // namespace peakprobe
