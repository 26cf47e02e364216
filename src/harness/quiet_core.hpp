// Which core to measure on. A cloud VM's vCPUs are hardware threads of a shared host: the sibling of
// one may run another tenant's work flat out while the sibling of another sits idle. A core whose
// sibling is busy gives away issue slots, so its figures are either slowed or (rightly) mistrusted.
// Seen on a 16-vCPU Emerald Rapids VM: one `inst` batch came out all `ok` on CPU 15, all
// `mistrusted` on CPUs 0 and 10 (the register add at 0.36-0.44 cycles against 0.20), and a whole
// `run` on CPU 0 had 3 `ok` rows of 577.
//
// Without a --cpu, measuring commands therefore time the ruler's two reference streams (the dependent
// add chain and the same add on every register, see harness/timing.hpp) on the first hardware thread
// of every core and start with the quietest. The wide stream shares the core's ALUs with a sibling;
// the chain, one add per cycle, barely notices it, so their ratio is low where nobody else runs.
#pragma once
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "peakprobe/cpu_info.hpp"

namespace peakprobe {

// One sample of a core's wide/chain ratio that a steadily moving clock cannot bias: chain, wide, wide,
// chain back to back, (w1 + w2) / (c1 + c2), each call's ticks from the callables. A core that sat
// idle may start slow and speed up over milliseconds; timed chain-then-wide it would look quieter than
// it is. The symmetric order cancels a linear drift (and each core is warmed first). On a 16-vCPU
// Emerald Rapids VM the idle cores still read 0.61-0.71 and the starting core 0.88-1.84 with this
// pairing, so there the gap is real load beside the starting core, not a ramp.
double drift_free_ratio(const std::function<double()>& time_chain, const std::function<double()>& time_wide);

// A core's quietest ratio among `ratios` (drift_free_ratio samples of one pass, at one clock), given
// the ticks of each sample's two chain calls: the lowest that a second confirms within 1%, among the
// samples whose chain ran within kChainSlowedLimit of the fastest. A chain call that was interrupted
// makes its ratio low, the wide stream look fast: on the Zen 3 VM (4 ALUs) the lowest confirmed ratio
// of all samples once read 4.95 adds a cycle. 0 when no ratio is confirmed.
inline constexpr double kChainSlowedLimit = 0.02;
double quietest_ratio(const std::vector<double>& ratios, const std::vector<double>& chain_ticks);

// Ratios within this of the quietest core's count as equally quiet: undisturbed ratios of one core
// spread by about 3% (see kRulerCleanLimit).
inline constexpr double kQuietTie = 0.05;

struct CoreQuietness {
  int cpu = -1;
  // Ticks of wide-stream calls over the chain calls beside them (drift_free_ratio samples): the worse
  // (higher) of two passes' medians, so a core must be quiet in both. 0 when the core could not be timed.
  double wide_ratio = 0;
  // The wide stream's rate at the core's quietest moment of both passes, adds per core cycle (the lower
  // of the passes' quietest_ratio, as Ruler::wide_rate): what the core can issue when nothing runs
  // beside it. A runner judges the window in which its own ruler learned that rate against
  // it (CpuInfo::wide_rate_seen). 0 when the core could not be timed.
  double widest = 0;
};

// `order` with its first `n` entries rearranged by `ratio` (one per entry, 0 = not measured): those
// within kQuietTie of the lowest ratio first, in their original order, then the rest by ratio, then
// the unmeasured; entries from `n` on are kept in place. The original order wins ties, so a machine
// whose cores are all quiet keeps its usual first core.
std::vector<int> quiet_cores_first(const std::vector<int>& order, size_t n, const std::vector<double>& ratio);

// `order` (a core order) with `chosen` first, for a --cpu given by hand: then the first CPU in
// `order` of every other core, then the rest in order, so that a team of threads started from the
// chosen CPU (the matmul's helpers, the memory workers, the multi-thread probes) still gets a core
// per thread, whichever hardware thread of its core was chosen. `cpu_core` (CpuInfo::cpu_core) says
// which core each CPU belongs to; a CPU it does not name counts as a core of its own. `order`
// unchanged when `chosen` is not in it.
std::vector<int> chosen_cpu_first(const std::vector<int>& order, const std::vector<int>& cpu_core, int chosen);

// The core to move to from `here`: the quietest measured one, when it is clearly quieter (by more
// than kQuietTie; moving costs a calibration) or `here` was not measured. -1 to stay.
int quieter_core(const std::vector<CoreQuietness>& cores, int here);

// Times the reference streams on the first hardware thread of each core (core_order's first
// physical_cores entries, at most 64) for about `seconds_per_core` in two passes, each pass after a
// warm-up as long as itself (so about twice that in all); the calling thread's CPU set is restored.
// Empty when the streams cannot be built.
std::vector<CoreQuietness> measure_core_quietness(const CpuInfo& cpu, double seconds_per_core = 0.002);

// Another program on a core, sharing its CPU by turns, is what the ratios cannot see: both reference
// streams wait alike, or a chain call that waited makes the core look quieter. With a busy loop
// pinned to CPU 1 of the Zen 5 VM, a run moved there at ratio 0.736 (CPU 0: 0.964), and its catalog
// rows took 26.8 s instead of 6.6. So the core chosen is also checked: the calling thread spins
// there for kTakenWindowSeconds and reads how long it waited for the CPU (harness/run_delay.hpp); a
// core where it waited more than kRunDelayLimit of that is taken. The window outlasts the scheduler's
// first turn for a thread that just arrived: up to 8 ms on the 2-vCPU Zen 5 VM (then about half of
// every 10 ms went to the busy loop), and the scheduler's turns grow with the CPU count (Linux's CFS
// up to four times at 8 CPUs and more). At most kTakenChecks cores are checked a ranking: a machine
// where every core is taken pays for that many windows, not one a core.
inline constexpr double kTakenWindowSeconds = 0.025;
inline constexpr size_t kTakenChecks = 4;
// The share of `seconds` the calling thread waited for CPU `cpu` while spinning there, its affinity
// restored after; nullopt when it cannot be pinned there or the kernel keeps no run delays.
std::optional<double> taken_share(int cpu, double seconds = kTakenWindowSeconds);
// Whether another program takes turns on CPU `cpu`: its taken_share is above kRunDelayLimit (the share
// into `share` when given). A CPU that cannot be checked is not taken.
bool core_taken(int cpu, double* share = nullptr);

// `order` with the first of its first `n` entries that `taken` does not call taken moved to the front,
// the ones found taken before it moved behind the first n's others; `taken` is asked in order until
// a free one is found (each check spins a window), and the CPUs found taken are added to `found`.
// `order` unchanged when all n are taken.
std::vector<int> free_core_first(const std::vector<int>& order, size_t n, const std::function<bool(int)>& taken,
                                 std::vector<int>* found = nullptr);

// Reorders cpu.core_order quietest core first (quiet_cores_first), a core another program takes behind
// the others (free_core_first), when there is more than one core to choose from, and keeps each
// measured core's widest rate in cpu.wide_rate_seen. Returns a line for the log that says what was
// measured and chosen ("" when there was no choice).
std::string order_cores_quietest_first(CpuInfo& cpu);

// The wide rate that CPU `here` should reach when nothing runs beside it, from the ranking
// (cpu.wide_rate_seen): the higher of its own and the median over the cores of its kind
// (cpu.cpu_kind; every core when no kinds are named). A core busy through the whole ranking reads
// low in both its ranking and its window, and alone would pass: on the 16-vCPU Emerald Rapids VM the
// chosen core once read 4.20 adds a cycle at the ranking and 4.22 in its window, the add `ok` at 0.224
// cycles (its 5 ALUs: 0.200), while the other cores read 4.9-5.0. Only cores of one kind are compared:
// a hybrid CPU's efficiency cores issue fewer. 0 when nothing is known of `here`'s kind.
double quiet_wide_rate(const CpuInfo& cpu, int here);

// Each core's widest rate into cpu.wide_rate_seen (indexed by CPU id, grown as needed); cores not
// timed keep what was there.
void note_widest_rates(const std::vector<CoreQuietness>& cores, CpuInfo& cpu);

}  // namespace peakprobe
