// What a micro-kernel call costs beyond its k loop on this core, measured for the cost model
// (MeasuredCalls): one register block's kernel over A and B panels that L1 holds, its C tiles in L1,
// in a region that L2 holds, and in one that only L3 holds, swept in the GEMM's own order (down a
// column of tiles, then the next column); the same kernel with a B panel too deep for L1; and the
// packing code's rate. About 0.2 s.
#pragma once
#include <vector>

#include "harness/clock.hpp"
#include "matmul/cost_model.hpp"
#include "matmul/gemm.hpp"
#include "peakprobe/expected.hpp"

namespace peakprobe {

// Times the mr x nv block's kernel with short and long k loops (C in L1: the k step and the call's
// own cost), with C in each larger level, and with a loop whose B panel streams from L2
// (MeasuredCalls::step_cycles_b_l2). Cycles are the measured seconds at machine.ghz, the clock
// the roof probe read for the kernels' own instruction. A level the caches cannot separate (an L3 no
// larger than a few L2s) stays 0. Runs on the first core of the CPU's core order, as the GEMM does.
Expected<MeasuredCalls> measure_calls(Gemm& gemm, const MachineModel& machine, int mr, int nv);

// Seconds a k step of the mr x nv block's kernel takes with its A and B panels and its C tile in L1,
// on logical CPU `cpu` (below 0: the first core of the core order): the kernel that reads a packed A
// panel, or with `a_in_place` the one that reads A's own rows, as a product that leaves A unpacked
// runs (an error where the kernels cannot, Gemm::tile_kernel). What the kernel's own
// instructions allow on this core before memory, packing and threads take their share. The
// difference of 128- and 16-step calls, each the fastest of 41 windows of 32 calls, taken in turn:
// a window of a few to tens of microseconds falls between the host's interruptions, as the calls of
// a small product do. Timings of 3 ms each (the call calibration's) spanned dozens of them on the Sapphire
// Rapids-class VM and read the 6x64 and 9x48 blocks' k steps 10-12% slower than such windows at the
// same moments (4.40 against 3.86 ns), and products of 20 us calls then read 104-110% of their
// kernel alone. Wall seconds at whatever clock ran (the caller reads it around). Tile kernels too
// (each call loads and releases its own tile configuration: the difference leaves that out). An
// error for blocks the registers (or tiles) cannot hold.
Expected<double> measure_step_seconds(Gemm& gemm, int mr, int nv, int cpu = -1, bool a_in_place = false);

// A k step of the kernel alone and the clock it ran at: seconds x ghz are its cycles.
struct StepAtClock {
  double seconds = 0;  // wall seconds of a k step at `ghz`
  double ghz = 0;      // the clock of the fastest long window (the mean of the readings around it); 0 unread
  double cycles() const { return seconds * ghz * 1e9; }
};
// measure_step_seconds with the clock read (`clock`, one round of its chain, the clock alone) before
// the first window and after each: each length's fastest window is taken in cycles at the clock
// around it, and the step is their difference. The clock moves within a run (Zen 5 VM: 3.4-3.75 GHz
// in one session), and the fastest windows fall in its fast moments: taken at one clock read around
// all of them, the bf16 and int8 6x64 blocks read 102.7% and 102.9% of their dot product's measured
// rate, more multiply-adds a cycle than the core's pipes issue.
Expected<StepAtClock> measure_step_at_clock(Gemm& gemm, ClockCalibrator& clock, int mr, int nv, int cpu = -1,
                                            bool a_in_place = false);

// For tile kernels, which run a row of B panels a call with their A panel in L1 (tile_kernel.hpp):
// the k step and the call of the mr x nv block's kernel with one panel in L1, as measure_calls, and
// rows of 16- and of 128-step panels (tile_row_panels of each) whose B blocks L2 holds and L1 does
// not, C beside them: their difference gives a row's k step (MeasuredCalls::step_cycles_b_l2) and
// what each panel costs beyond it (row_panel_cycles). Each the fastest of 7 timings, taken in turn.
// About 0.15 s.
Expected<MeasuredCalls> measure_tile_rows(Gemm& gemm, const MachineModel& machine, int mr, int nv);
// Panels of each measured tile row for a block nr columns wide: enough that the 16-step panels fill
// twice L1, unless the 128-step ones would then fill more than half of L2; at least 2.
int64_t tile_row_panels(const MachineModel& machine, int nr);

// k steps of the deep loop that times a B micro-panel streaming from L2 (MeasuredCalls::
// step_cycles_b_l2) for a block nr columns wide: the fewest whole 128-step loops whose packed panel
// (with its sums, if the target packs them) fills more than twice L1, so that every call streams it
// from L2 again, as the calls of an ic block do when kc x nr does not fit L1. 0 when a quarter of L2
// cannot hold that panel (it would not be L2's): then nothing is measured.
int64_t deep_panel_steps(const MachineModel& machine, int nr, bool sums);

// Bytes of A and of B per second that the packing code packs on this core (MachineModel::pack_a_gbps,
// pack_b_gbps), blocks of a typical size taken in turn from a matrix that only L3 holds; in tile
// blocks where the block runs on tiles (pack_a_tile_blocks: on the Sapphire Rapids-class VM about
// 10 GB/s, a fraction of the row-by-row packing's rate, which the model had assumed).
struct MeasuredPacking {
  double a_gbps = 0, b_gbps = 0;
};
Expected<MeasuredPacking> measure_packing(Gemm& gemm, const MachineModel& machine, int mr, int nv);

// The block a reference problem of the dtype (1024^3 on one thread) would use: the one to measure,
// so that every shape of a run is planned with the same figures.
std::pair<int, int> calibration_block(const MachineModel& machine, MatmulDtype dtype);

// GB/s at which one core reads lines that the next core of the team just wrote (MachineModel::
// handoff_gbps): the team's helper 1 writes 128 KiB, then the caller, pinned to the first core of the
// core order, reads one word of each line; the fastest of 23 rounds. About 1 ms.
Expected<double> measure_handoff(Gemm& gemm);

// Seconds two threads of the team lose at a barrier they meet after each block of work
// (MachineModel::barrier_seconds): blocks of about 50 us of the GEMM's own micro-kernel calls (the
// reference block, calibration_block), 40 of them, on the caller alone and then on the caller and
// helper 1 meeting after each, timed from a first meeting to the last; the time the pair took
// beyond the caller alone, per barrier; the median of 5 trials, at least 0.25 us. Each thread runs
// an untimed block first. It holds the hand-off of the barrier's line and whatever makes one core
// run the kernels slower than the other: a host's stops, a core whose sibling is busy. An error when
// the pair lost a whole block a barrier or there are fewer than two CPUs (they did not run at once),
// and for tile kernels. The block is calibration_block's, computed afresh from `machine`. The caller
// runs on the first core of the core order. About 25 ms.
Expected<double> measure_barrier(Gemm& gemm, const MachineModel& machine);
// measure_barrier's verdict from its trials (each trial's wait a barrier, each trial's block alone,
// in seconds): the median wait, at least 0.25 us, or the error when the median wait is a whole
// median block or more, or nothing finite was timed.
Expected<double> barrier_wait(const std::vector<double>& waits, const std::vector<double>& blocks);

// What waking and joining the GEMM's thread team costs a call, for every count the model plans with
// on `threads` threads (thread_counts) but one, into machine.fork_join_seconds; and, for several
// threads, the hand-off rate and the barrier's wait into machine.handoff_gbps and
// machine.barrier_seconds (0 when they could not be measured; the reasons are returned, "" when
// both were measured or there is one thread). The wake-up and join leave the
// caller where it is; the other two pin it to the first core of the core order for their time. The
// helpers run on the next cores of the CPU's core order, as in a call. About 30 ms.
std::string calibrate_team(MachineModel& machine, Gemm& gemm, int threads);

// Both, for the reference block (calibration_block), into `machine` (calls, pack_a_gbps, pack_b_gbps).
// Returns what could not be measured, "" when everything was; the model prices that part by its
// formula. Tile kernels' calls are measured as rows (measure_tile_rows).
std::string calibrate_machine(MachineModel& machine, Gemm& gemm);

}  // namespace peakprobe
