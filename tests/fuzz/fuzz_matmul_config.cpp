// matmul's --config (key=value list), --shape (M,N,K), --dtype and --baseline lists
// (src/cli/matmul_common). The first byte picks the vector width the config is read for and the
// tallest block the kernels read A in place for.
#include "cli/matmul_common.hpp"
#include "fuzz_util.hpp"

using namespace peakprobe;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0 || size > 4096) return 0;
  const int vector_bits = data[0] & 1 ? 512 : 256;
  const int a_in_place_rows = (data[0] >> 1) % 10;
  const std::string text = fuzz::text_of(data + 1, size - 1);
  MatmulConfig base;
  base.mr = 6, base.nv = 2, base.nr = 2 * vector_bits / 32, base.mc = 96, base.kc = 256, base.nc = 1536;
  auto c = cli::parse_config(text, base, vector_bits, a_in_place_rows);
  if (c) {
    if (int64_t(c->nr) != int64_t(c->nv) * (vector_bits / 32)) fuzz::fail("nr is not nv x lanes", text);
    if (int64_t(c->threads) != int64_t(c->batch_threads) * c->k_threads * c->thread_rows * c->thread_cols)
      fuzz::fail("threads is not the batch groups x the K parts x the grid", text);
    (void)cli::config_text(*c);
  }
  int64_t m = 0, n = 0, k = 0;
  if (cli::parse_shape(text, m, n, k) && (m < 1 || n < 1 || k < 1 || m > 65536 || n > 65536 || k > 65536))
    fuzz::fail("shape out of range", text);
  (void)cli::parse_dtype(text);
  (void)cli::split_list(text);
  return 0;
}
