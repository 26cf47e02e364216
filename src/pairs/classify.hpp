// Classifies an interleaved pair of instructions A and B from its time and the times of each alone.
//
// Timings are "per group": one group of the pair holds weight_a instances of A and weight_b of B, so
// the caller passes a_alone_group = weight_a x (cycles per A alone) and likewise for B. If A and B
// issue to different pipes, the pair takes as long as the slower part alone (max); if they compete
// for one pipe, it takes as long as both in sequence (max + min). The same-port measure places the
// pair's time on that scale.
#pragma once
#include "peakprobe/pair_result.hpp"

namespace peakprobe {

// Below this the pair counts as issuing together. Repeated runs of one probe scatter by a few
// percent, so a pair that truly co-issues rarely measures exactly 0; a quarter leaves room for that.
inline constexpr double kCoIssueBelow = 0.25;
// Above this the pair counts as sharing one pipe. The margin below 1 is wider than noise alone needs:
// a front-end or retire-width limit can slow a co-issuing pair by a few tenths, so only a value
// close to 1 is strong evidence of one shared pipe.
inline constexpr double kSharedAbove = 0.75;
// A pair slower than this many times its two parts one after the other is not sharing a pipe: one
// shared pipe costs at most the sum of the parts (same-port 1). What costs more is paid only when
// the two run together: a penalty at every switch between them (a state transition, a fault or an
// assist; on a Zen 3 VM such pairs ran 340 times slower than their parts in sequence), or a rate a
// part reaches alone only (two kinds of store that each ran two a cycle alone ran one a cycle
// mixed on the same VM: 2.0 times). Half as much again as the sum leaves room for a scheduler that
// serves one shared pipe badly, which costs tens of percent.
inline constexpr double kPenaltyAbove = 1.5;

// (t_pair - max(a, b)) / min(a, b), clamped to [0, 1]: 0 = as fast as the slower part alone
// (co-issue), 1 = as slow as both in sequence (one shared pipe). A zero, negative or non-finite
// input cannot come from a valid measurement and gives 0, so that a broken timing never reads
// as contention; callers that need to tell that case apart check their inputs first.
double same_port_measure(double t_pair, double a_alone_group, double b_alone_group);

// True when the pair took more than kPenaltyAbove x (a + b): a penalty, not a pipe (see kPenaltyAbove).
// Inputs that cannot come from a valid measurement give false.
bool slower_than_serial(double t_pair, double a_alone_group, double b_alone_group);

// co-issue below kCoIssueBelow, shared above kSharedAbove, partial in between (bounds included).
PairClass classify_pair(double same_port);

}  // namespace peakprobe
