// The full report's kernel on the roofline: the bundled matmul, measured as `matmul` measures it, on
// one core and on all cores, and placed on the report's roofline against the roof of the instruction
// its kernels are made of (the dtype's table ceiling may be an FMA:add mix a matmul cannot use).
#pragma once
#include <cstdint>

#include "cli/commands.hpp"
#include "peakprobe/matmul_result.hpp"
#include "peakprobe/run_document.hpp"
#include "roofline/ceilings.hpp"

namespace peakprobe::cli {

// The shape of the report's matmul: square, compute-bound on any CPU (f32 1024^3: 12 MiB of operands,
// about 170 FLOP a byte against DRAM ridges of 5-15), and short: some 10 ms a call on one Zen 5
// core. --quick: 512^3.
inline constexpr int64_t kReportMatmulSize = 1024, kReportMatmulQuickSize = 512;

// The score request of a finished matmul row: its FLOPs (2 M N K a batch item), the bytes of A, B
// and C moved once (the compulsory traffic, against the DRAM roof), its fastest call, and, under a
// compute roof, that roof as the row measured it (the kernels' instruction on the same cores, at the
// product's clock on one core) as the kernel's own roof. The dtype is the ceiling table's name for
// it ("i8" for int8).
ScoreRequest matmul_score_request(const MatmulResult& r);

// The bundled f32 matmul of kReportMatmulSize^3 on one core and, on a machine of several cores and
// without --cpu, on all of them: each row into doc.matmuls and, when it has a time and a roof, its
// score into doc.scores (doc.ceilings must be set for a score). Nothing under an emulator (its
// timings mean nothing) or where the kernels cannot run; what is left out is logged.
void measure_report_kernels(const GlobalOptions& g, const CpuInfo& cpu, bool quick, RunDocument& doc);

}  // namespace peakprobe::cli
