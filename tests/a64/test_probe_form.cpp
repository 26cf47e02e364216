// Every row of probes/a64.catalog, run: its throughput stream and every latency chain it has are
// generated, executed a few iterations on the probe buffer, and must return (no fault, no clobbered
// caller state). Under qemu this is how CI knows the AArch64 code is right; timing is not checked.
#include <catch2/catch.hpp>

#include <cstdio>
#include <cstdlib>

#include "asm/a64/probe_form.hpp"
#include "asm/target.hpp"
#include "catalog/catalog.hpp"
#include "cpu/cpu_info.hpp"
#include "harness/probe_buffer.hpp"

using namespace peakprobe;

namespace {

// Runs a stream twice on the buffer; the callee-saved registers and the stack must survive it.
void run_stream(const isa::ProbeStream& stream, const std::string& dtype, ProbeBuffer& buffer) {
  isa::ProbeConstants constants;
  const isa::BufferFill fill = stream.prepare(constants, dtype);
  buffer.fill(fill.pattern, fill.chase_bits, fill.chase_byteswap);
  auto fn = stream.compile(2);
  REQUIRE(fn.ok());
  volatile uint64_t canary = 0x5eed;
  fn->fn()(3, buffer.data(), &constants);
  fn->fn()(1, buffer.data(), &constants);
  CHECK(canary == 0x5eed);
}

}  // namespace

TEST_CASE("a64 probe form: every catalog row runs its throughput and latency streams", "[a64][probe_form]") {
  const CpuInfo cpu = detect_cpu_info();
  auto rows = default_catalog();
  REQUIRE(rows.ok());
  REQUIRE(rows->size() >= 120);
  ProbeBuffer buffer;
  REQUIRE(buffer.ok());
  int ran = 0, chains = 0;
  for (const auto& row : *rows) {
    INFO(row.text);
    if (std::getenv("PEAKPROBE_TRACE_ROWS")) std::fprintf(stderr, "%s\n", row.text.c_str());
    bool supported = true;
    for (const auto& f : row.requires_features) supported = supported && cpu.has(f);
    auto form = isa::host_target().probe_form(row.text, cpu);
    REQUIRE(form.ok());
    if (!supported || (*form)->refusal()) continue;
    const std::string dtype = row.dtype == "-" ? (*form)->default_dtype() : row.dtype;
    auto tput = (*form)->plan_throughput(std::min(8, (*form)->max_chains()), dtype);
    REQUIRE(tput.ok());
    run_stream(**tput, dtype, buffer);
    for (int op : (*form)->latency_operands()) {
      auto lat = (*form)->plan_latency_through(op, dtype);
      REQUIRE(lat.ok());
      run_stream(**lat, dtype, buffer);
      ++chains;
    }
    ++ran;
  }
  // On any AArch64 Linux machine the base ISA and NEON rows run at least.
  CHECK(ran >= 200);
  CHECK(chains >= 200);
}
