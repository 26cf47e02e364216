// The generated memory kernels, read back from asmjit's listing: bytes moved per iteration are the
// ones declared, non-temporal variants use non-temporal stores (and fence them), chases chain.
#include <catch2/catch.hpp>

#include <regex>
#include <sstream>

#include "asm/x86/mem_kernels.hpp"

using namespace peakprobe;

namespace {

x86::HostIsa full_isa() {
  x86::HostIsa isa;
  isa.avx = isa.avx2 = isa.fma = isa.avx512f = isa.avx512bw = isa.avx512dq = true;
  return isa;
}

// Lines of the innermost loop: after the last label and before the counter's `dec rax`.
std::vector<std::string> inner_loop(const std::string& listing) {
  std::vector<std::string> all, body;
  std::stringstream in(listing);
  std::string line;
  while (std::getline(in, line)) all.push_back(line);
  size_t start = 0;
  for (size_t i = 0; i < all.size(); ++i)
    if (!all[i].empty() && all[i].back() == ':') start = i + 1;
  for (size_t i = start; i < all.size() && all[i].rfind("dec rax", 0) != 0; ++i) body.push_back(all[i]);
  return body;
}

bool is_store(const std::string& l) {
  // "mnemonic <size> ptr [..], reg": the memory operand comes first.
  const size_t sp = l.find(' '), ptr = l.find("ptr ["), comma = l.find(',');
  return ptr != std::string::npos && sp != std::string::npos && ptr < comma;
}

bool is_load(const std::string& l) {
  const size_t ptr = l.find("ptr ["), comma = l.find(',');
  return ptr != std::string::npos && ptr > comma;
}

}  // namespace

TEST_CASE("memory kernels move exactly the bytes they declare", "[mem_kernels]") {
  const auto isa = full_isa();
  for (const auto& k : x86::mem_kernels())
    for (int w : {64, 128, 256, 512}) {
      INFO(k.name << " " << w);
      std::string listing;
      auto code = x86::compile_mem_kernel(k.kernel, w, isa, &listing);
      REQUIRE(code.ok());
      int loads = 0, stores = 0, nt = 0;
      for (const auto& l : inner_loop(listing)) {
        loads += is_load(l);
        stores += is_store(l);
        nt += is_store(l) && l.find("movnt") != std::string::npos;
      }
      CHECK(loads == k.loads * x86::kMemUnroll);
      CHECK(stores == k.stores * x86::kMemUnroll);
      CHECK(code->bytes_per_iteration == uint64_t(loads + stores) * uint64_t(w / 8));
      CHECK(code->array_step == uint64_t(w / 8) * x86::kMemUnroll);
      // Non-temporal variants store only non-temporally and fence; the others never do.
      CHECK(nt == (k.nontemporal ? stores : 0));
      CHECK((listing.find("sfence") != std::string::npos) == k.nontemporal);
    }
}

TEST_CASE("the load kernel's loop is its loads and the loop's own step: no arithmetic per load", "[mem_kernels]") {
  // An add per load takes a vector ALU port a load: where the widest vector has as few ALU ports as
  // load ports (Golden Cove: two of each for 512 bits) that bound L1 at 1.5 loads a cycle.
  const auto isa = full_isa();
  for (int w : {64, 128, 256, 512}) {
    INFO(w);
    std::string listing;
    auto code = x86::compile_mem_kernel(x86::MemKernel::load, w, isa, &listing);
    REQUIRE(code.ok());
    int loads = 0, other = 0;
    for (const auto& l : inner_loop(listing)) {
      if (l.empty()) continue;
      const bool load = is_load(l), mov = l.rfind("mov", 0) == 0 || l.rfind("vmov", 0) == 0;
      if (load) CHECK(mov);
      loads += load;
      other += !load && l.rfind("add r9", 0) != 0;  // the pointer step is the loop's own
    }
    CHECK(loads == x86::kMemUnroll);
    CHECK(other == 0);
  }
}

TEST_CASE("memory kernels refuse widths the CPU lacks", "[mem_kernels]") {
  x86::HostIsa sse_only;
  CHECK_FALSE(x86::compile_mem_kernel(x86::MemKernel::load, 256, sse_only).ok());
  CHECK_FALSE(x86::compile_mem_kernel(x86::MemKernel::load, 512, sse_only).ok());
  CHECK_FALSE(x86::compile_mem_kernel(x86::MemKernel::load, 96, full_isa()).ok());
  CHECK(x86::mem_widths(sse_only) == std::vector<int>{64, 128});
  CHECK_FALSE(x86::find_mem_kernel("stream").ok());
}

TEST_CASE("pointer chase: every load's address is its own chain's previous value", "[mem_kernels]") {
  for (int chains : {1, 3, 10}) {
    std::string listing;
    auto fn = x86::compile_chase(chains, &listing);
    REQUIRE(fn.ok());
    const std::regex chase(R"(mov (\w+), qword ptr \[(\w+)\])");
    int links = 0;
    for (const auto& l : inner_loop(listing)) {
      std::smatch m;
      if (!std::regex_search(l, m, chase)) continue;
      CHECK(m[1] == m[2]);
      ++links;
    }
    CHECK(links == chains * x86::kChaseUnroll);
  }
  CHECK_FALSE(x86::compile_chase(0).ok());
  CHECK_FALSE(x86::compile_chase(x86::kMaxChains + 1).ok());
}

TEST_CASE("triad fuses multiply and add only where the CPU has FMA", "[mem_kernels]") {
  x86::HostIsa no_fma;
  no_fma.avx = no_fma.avx2 = true;  // AVX2 without FMA: 256-bit kernels, separate multiply and add
  std::string listing;
  REQUIRE(x86::compile_mem_kernel(x86::MemKernel::triad, 256, no_fma, &listing).ok());
  CHECK(listing.find("vfmadd") == std::string::npos);
  CHECK(listing.find("vmulpd") != std::string::npos);
  std::string fused;
  REQUIRE(x86::compile_mem_kernel(x86::MemKernel::triad, 256, full_isa(), &fused).ok());
  CHECK(fused.find("vfmadd213pd") != std::string::npos);
}

TEST_CASE("the scalar kernels set the registers they store by 32-bit moves, not mov r64, imm32", "[mem_kernels]") {
  // A Golden Cove renamer keeps a register written by mov r64, imm32 as a folded constant, which slows
  // its readers (stream_emitter.cpp, set_gp).
  const std::regex folded(R"(\bmov (rbx|rbp|r12|r13|r14|r15), [0-9])");
  for (const auto& k : x86::mem_kernels()) {
    INFO(k.name);
    std::string listing;
    auto code = x86::compile_mem_kernel(k.kernel, 64, full_isa(), &listing);
    REQUIRE(code.ok());
    CHECK_FALSE(std::regex_search(listing, folded));
    CHECK(listing.find("mov ebx, 1") != std::string::npos);
  }
}
