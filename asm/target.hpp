// The one ISA seam: everything outside asm/<isa>/ that needs to know about an instruction set asks
// the host's Target. src/ never names a register, mnemonic or feature of one ISA (tests/test_isa_seam.cpp
// keeps it so). No asmjit here and no ISA header; the build compiles exactly one asm/<isa>/
// (cmake/isas.cmake) and host_target() returns its target.
//
// Built step by step (docs/plans/isa-seam.md): today the target answers the questions of the
// roofline, the dual-issue commands, the full report and the matmul roof; the harness, memory
// kernels and matmul kernels still call the ISA folder directly.
#pragma once
#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "peakprobe/expected.hpp"

#include "asm/matmul_kernel.hpp"
#include "asm/mem_kernel.hpp"
#include "asm/probe_form.hpp"
#include "peakprobe/cpu_info.hpp"
#include "peakprobe/matmul_result.hpp"

namespace peakprobe::isa {

// The instruction whose throughput bounds a matmul of one data type: the widest multiply-accumulate
// (or dot product) this CPU runs, as the catalog spells it.
struct MatmulRoof {
  std::string instruction;
  int vector_bits = 0;
  double ops = 0;      // arithmetic operations per instruction (a multiply-add counts two)
  std::string dtype;   // the catalog's dtype name of those operations
  bool tiles = false;  // a matrix-unit instruction (MicroKernelShape::tiles), not a vector one
};

// A multiply (fused multiply-add where there is one) and an add of the same width, for the search of
// the FLOP mix that maximises FLOP/s.
struct FlopPair {
  std::string mul, add;
  bool fused = false;  // `mul` is a fused multiply-add
};

// How the BLAS baselines are held to a vector ISA level (matmul --isa): each library has its own
// switch, and the target knows the values for its levels.
struct LibraryIsaLimit {
  std::string level;              // the --isa level: "" means no limit
  int onednn_max_isa = 0;         // dnnl_cpu_isa_t for dnnl_set_max_cpu_isa; 0: no limit
  std::string openblas_coretype;  // OPENBLAS_CORETYPE before OpenBLAS is loaded (its DYNAMIC_ARCH builds)
  // BLIS 0.9 cannot be told which kernels to use: its row is kept only when the configuration it
  // picked by itself (bli_arch_string) is one of these.
  std::vector<std::string> blis_configs;
  // Only oneDNN has kernels above this level (the matrix unit above the widest vectors): the others
  // run as they are.
  bool onednn_only = false;
};

// An instruction text as the ISA's parser and instruction database understand it: what the catalog,
// the sets and the command line need of it without generating any code.
struct FormInfo {
  std::string display;                // the canonical spelling: catalog key, report label, repro
  std::string mnemonic;
  std::vector<std::string> features;  // CPU features the form needs, canonical names
};

// One form of every form the ISA's encoder knows (`peakprobe table`), before any CPU check.
struct ListedForm {
  std::string text;                   // canonical spelling, as `inst` takes it
  std::string family;                 // one of Target::form_families()
  std::vector<std::string> features;  // CPU features the form needs, canonical names
  std::string refusal;                // "" when a stream can be built, else why not (nothing runs)
};

class Target {
 public:
  virtual ~Target() = default;
  // Short name: the asm/ folder and the probes/<name>.catalog stem.
  virtual std::string name() const = 0;
  // Text -> form, or why not (unknown mnemonic with the nearest names, impossible operands).
  virtual Expected<FormInfo> resolve(const std::string& text) const = 0;
  // "" when `value` fits every immediate operand of the form (`inst --imm`), else why not, with the
  // range: an immediate that does not fit would be cut to its low bits by the encoder while the row
  // and its repro line still said the value given.
  virtual std::string check_immediate(const std::string& text, int64_t value) const = 0;
  // Every instruction form the ISA's encoder knows, one per operand signature and register width,
  // grouped by mnemonic; built on first use.
  virtual const std::vector<ListedForm>& all_forms() const = 0;
  // Operations per instruction and their dtype, from the mnemonic and the operand width, for forms
  // no catalog row describes (the catalog's convention); nullopt when the form has no arithmetic
  // this rule knows, or the text does not resolve.
  struct Arithmetic {
    double ops = 0;
    std::string dtype;
  };
  virtual std::optional<Arithmetic> arithmetic(const std::string& text) const = 0;
  // The family names of all_forms(), in the order `table --group` lists them.
  virtual std::vector<std::string> form_families() const = 0;
  // Widest vector register the matmul kernels use on this CPU, in bits.
  virtual int gemm_vector_bits(const CpuInfo& cpu) const = 0;
  // "" when this CPU can run the matmul kernels of `dtype`, else which features they need, named.
  virtual std::string gemm_unsupported(const CpuInfo& cpu, MatmulDtype dtype) const = 0;
  // Whether the kernels of `dtype` on this CPU take int8 A as A - 128 with column sums after each B
  // panel (MicroKernelShape::signed_a): true where only a signed x signed dot product exists.
  virtual bool gemm_signed_a(const CpuInfo& cpu, MatmulDtype dtype) const = 0;
  // Whether the kernels of `dtype` on this CPU run on widened elements (MicroKernelShape::widened):
  // true where the vector width the GEMM uses has no dot product of that dtype.
  virtual bool gemm_widened(const CpuInfo& cpu, MatmulDtype dtype) const = 0;
  // The CPU as the GEMM sees it when `dtype`'s kernels widen the elements and run on the wider
  // multiply-add instead of the dot product they would use: where both paths exist, for the caller
  // to measure both roofs and keep the faster (a core's dot product may do fewer FLOP a cycle than its
  // multiply-add). Empty where the kernels already widen, run on tiles, or have no such choice.
  virtual std::optional<CpuInfo> gemm_widened_alternative(const CpuInfo& cpu, MatmulDtype dtype) const = 0;
  // Whether the kernels of `dtype` on this CPU run on its matrix unit (MicroKernelShape::tiles).
  virtual bool gemm_tiles(const CpuInfo& cpu, MatmulDtype dtype) const = 0;
  // The tallest register block whose kernels read A in place (MicroKernelShape::a_direct), where
  // a_direct_refusal lets the dtype's A be read in place at all.
  virtual int a_in_place_rows() const = 0;
  // Whether the kernels read A in place where K ends inside a k group (MicroKernelShape::a_tail);
  // where not, such a K packs A.
  virtual bool a_in_place_partial_groups() const { return false; }
  // Whether the in-place B kernels of `shape` (MicroKernelShape::b_direct) also come narrower than a
  // whole panel: their last vector's load masked to the columns B has, so that it never reads past a
  // row. Where they do not, an edge panel is packed ahead of its calls (b_direct_tile_refusal).
  virtual bool b_in_place_edges(const MicroKernelShape& shape) const = 0;
  // Architectural vector registers of one width (what a register block may use).
  virtual int vector_registers(int vector_bits) const = 0;
  // The widest vector the cost model plans with (the GEMM's width where it runs, else the widest
  // the CPU has) and its register count.
  virtual int model_vector_bits(const CpuInfo& cpu) const = 0;
  // Vector registers one register block of shape.mr rows x shape.nv vectors takes (accumulators, B
  // vectors, whatever the kernel uses to spread A, and temporaries of its kind of kernel).
  virtual int registers_needed(const MicroKernelShape& shape) const = 0;
  // "" when the micro-kernels of `shape` can be generated with this many vector registers, else why not.
  virtual std::string check_kernel_shape(const MicroKernelShape& shape, int vector_registers) const = 0;
  // The micro-kernels of one shape (compiled on first use).
  virtual std::unique_ptr<MicroKernels> micro_kernels(const MicroKernelShape& shape) const = 0;
  // The instructions one k step of the micro-kernel of `shape` runs (its loads, its spreading of
  // A, its multiply-adds, and any address arithmetic inside the step; not the pointer adds and the
  // branch that end the loop's iteration, once for kKernelUnroll steps where B is packed, once a
  // step where it is read in place), in the order the kernel issues them. Run as a stream of
  // independent instructions in that ratio (`mix`), what they allow on this core is the ceiling of
  // the kernel's own code (`matmul`: kernel_mix_gflops). Empty where no mix of probe forms stands
  // for the step (the matrix unit's tiles, which the stream harness does not load).
  virtual std::vector<StepInstruction> kernel_step(const MicroKernelShape& shape) const = 0;
  // The name of the matrix unit in kernel names (MicroKernelShape::tiles).
  virtual std::string tiles_name() const = 0;
  // The name of a vector width in results, kernel names and options ("scalar" for 0 or 64 bits).
  virtual std::string width_name(int vector_bits) const = 0;
  virtual MatmulRoof matmul_roof(const CpuInfo& cpu, MatmulDtype dtype) const = 0;
  // The widest multiply + add pair this CPU runs; with `fused_only`, only a fused multiply-add
  // counts (nullopt without one).
  virtual std::optional<FlopPair> flop_pair(const CpuInfo& cpu, bool fused_only) const = 0;
  // A fused multiply-add and the add of the same data type and vector width, for every
  // floating-point type and width the ISA has (the widest f32 first; a type and width may come in
  // several encodings), whether this CPU runs them or not: callers keep those whose catalog rows it
  // runs. The best mix of each sets the ceiling of its type and width where the two issue on
  // separate pipes.
  virtual std::vector<FlopPair> flop_pairs() const = 0;
  // Catalog groups of the ISA's matrix engine (tile multiply-accumulate): they set roofs, int8 ones too.
  virtual std::vector<std::string> matrix_groups() const = 0;
  // The catalog pair set (probes/<name>.sets) of floating-point forms at the widest vector width.
  virtual std::string report_pair_set(const CpuInfo& cpu) const = 0;
  // The vector width an instruction text works on, as a ceiling-table label: "512", "256", "128"
  // (bits), "scalar" (general registers, or one element of a vector register), or tiles_name() for
  // the matrix unit's tile multiplies.
  virtual std::string width_class(const std::string& instruction) const = 0;

  // ---- probe streams (harness/probe_runner, mix_runner, clock) ----
  // Text -> a form ready to plan streams for on this CPU (its ISA level picks encodings and register
  // counts), or why not (unknown mnemonic with the nearest names, impossible operands).
  virtual Expected<std::unique_ptr<ProbeForm>> probe_form(const std::string& text, const CpuInfo& cpu) const = 0;
  // Most rounds of this mix that fit the register budget (0 if not even one does). The parts' forms
  // come from probe_form of this target.
  virtual int max_rounds(const std::vector<MixPart>& parts) const = 0;
  // The parts interleaved in the ratio of their weights, `rounds` groups per copy. Each part's
  // instances rotate through its own independent chains (weight x rounds of them, or the part's
  // `chains` where fewer): no instance reads what another part writes, and a part's chains are
  // independent of each other.
  virtual Expected<StreamHandle> plan_mix(const std::vector<MixPart>& parts, int rounds,
                                          const std::string& dtype) const = 0;
  // Seeds of the pipe basis (`table --pipes`, src/pairs/pipe_groups.cpp): forms that between them
  // reach every kind of execution pipe a core of this ISA may have (integer ALU, multiplier, divider,
  // shifts, loads, stores, FP add/multiply/FMA/divide, shuffles, vector integer, conversions, moves
  // between register files). Each entry lists alternatives, preferred first; the first one this CPU
  // runs is used. Which seeds share a pipe is measured, never assumed.
  virtual std::vector<std::vector<std::string>> pipe_seed_candidates() const = 0;
  // Forms that set the core's widest issue rate (eliminated moves, nops, one-cycle ALU ops): the
  // fastest of them bounds every other figure.
  virtual std::vector<std::string> issue_width_forms() const = 0;

  // The instructions of the clock and its ruler (harness/clock.cpp, Ruler in harness/timing.hpp), in
  // the ISA's notation.
  struct RulerForms {
    // Register-register add (an add with an immediate can run faster than one per cycle on some
    // cores): its dependent chain runs one per core cycle and is the clock.
    std::string one_cycle;
    // A latency of several cycles on every core of the ISA, on an execution unit every core has.
    // Its latency is never assumed: only its ratio to the add chain is used.
    std::string multi_cycle;
  };
  virtual RulerForms ruler_forms() const = 0;

  // What the command-line help shows in this ISA's notation (examples and operand kinds).
  struct HelpTexts {
    std::string notation;        // "Intel-manual notation"
    std::string example_form;    // one form, as `inst` takes it
    std::string operand_kinds;   // `inst` footer: the operand kinds and prefixes, lines ending in \n
    std::string inst_examples;   // `inst` footer: example lines, each "  peakprobe inst ...\n"
    std::string run_filter;      // `run --filter` example value: a group and a width
    std::string run_examples;    // `run` footer: example lines beyond the generic ones
    std::string mix_example;     // `mix` arguments
    std::string pair_example;    // `pair` arguments
    std::string pairs_example;   // `pairs` arguments (instruction texts)
    std::string pairs_set;       // a set name of probes/<name>.sets
    std::string flop_a, flop_b;  // `flopmix` defaults, in words
    std::string table_examples;  // `table` footer: example lines, each "  peakprobe table ...\n"
  };
  virtual HelpTexts help_texts() const = 0;

  // ---- memory kernels ----
  // Every vector width this ISA names, narrowest first, in bits (what `mem --isa` accepts by name).
  virtual std::vector<int> vector_widths() const = 0;
  // The widths this CPU runs the memory kernels at, narrowest first.
  virtual std::vector<int> mem_widths(const CpuInfo& cpu) const = 0;
  // Why `bits`-wide memory kernels cannot run on this CPU: the features they need, named.
  virtual std::string mem_width_unsupported(int bits) const = 0;
  // Bytes the widest bandwidth kernel advances each array in one loop iteration.
  virtual uint64_t mem_max_step_bytes() const = 0;
  virtual Expected<MemKernelCode> compile_mem_kernel(MemKernel kernel, int bits, const CpuInfo& cpu) const = 0;
  // Most independent pointer chases one chase kernel runs at once.
  virtual int max_chase_chains() const = 0;
  virtual Expected<ChaseCode> compile_chase(int chains) const = 0;

  // The vector ISA levels a matmul can be held to (--isa), narrowest first.
  virtual std::vector<std::string> isa_levels() const = 0;
  // `cpu` as the kernels, the roof probe and the cost model see it under --isa `level`: the features
  // above that level taken away. An error names the levels when `level` is unknown, and what is
  // missing when this CPU does not reach it.
  virtual Expected<CpuInfo> limit_isa(const CpuInfo& cpu, const std::string& level) const = 0;
  // The baseline libraries' switches for `level` (one of isa_levels(), or "" for none). The widest
  // level asks nothing of them (`level` empty in the answer): they run as without --isa.
  virtual LibraryIsaLimit library_isa_limit(const std::string& level) const = 0;
  // OpenBLAS's DYNAMIC_ARCH builds pick their kernels by CPU model and fall back to a generic core on
  // a model they do not know: `fallback` is that core's name as its configuration string gives it,
  // `for_features` the OPENBLAS_CORETYPE whose kernels this CPU's features run ("" when none is
  // better), so that a baseline is OpenBLAS at its best here, not at its fallback.
  struct OpenblasCores {
    std::string fallback, for_features;
  };
  virtual OpenblasCores openblas_cores(const CpuInfo& cpu) const = 0;
};

// The target of the ISA this build runs on.
const Target& host_target();

// One pause of a spin-wait loop: the ISA's spin hint, which lets a sibling hardware thread run and
// keeps the loop's exit from flushing the pipeline.
void spin_pause();

// `bytes` of anonymous read-write memory at an address that fits in 32 bits where this ISA's probes
// chase 32-bit pointers (mmap's low-address flag where the ISA needs it), else wherever the OS maps it; nullptr
// when the mapping fails. Released with munmap.
void* map_low_pages(size_t bytes);

}  // namespace peakprobe::isa
