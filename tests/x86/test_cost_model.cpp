// The cost model's machine on x86 CPUs: the vector width and register count the features give.
// The ISA-neutral cost model tests are in tests/test_cost_model.cpp.
#include <catch2/catch.hpp>

#include "matmul/cost_model.hpp"

using namespace peakprobe;

TEST_CASE("machine_model_from: AVX-512 plans with 32 zmm registers, AVX2 with 16 ymm", "[cost_model]") {
  CpuInfo cpu;
  cpu.physical_cores = 8;
  cpu.features = {"avx", "avx2", "fma", "avx512_f"};
  const MachineModel avx512 = machine_model_from(cpu, 3.0, 2, 4);
  CHECK(avx512.vector_bits == 512);
  CHECK(avx512.vector_registers == 32);
  cpu.features = {"avx", "avx2", "fma"};
  const MachineModel avx2 = machine_model_from(cpu, 3.0, 2, 4);
  CHECK(avx2.vector_bits == 256);
  CHECK(avx2.vector_registers == 16);
}
