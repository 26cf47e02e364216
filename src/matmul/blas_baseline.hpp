// BLAS baselines for `peakprobe matmul`: OpenBLAS and BLIS, found at run time with dlopen (never a
// link-time dependency), so the same binary compares itself with whatever the machine has.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "peakprobe/expected.hpp"

namespace peakprobe {

// One loaded library with a cblas_sgemm; the handle is closed on destruction.
class BlasLibrary {
 public:
  // Loads the first candidate path that exists and exports cblas_sgemm. Candidates for "openblas":
  // libopenblas.so.0 and the Debian pthread/openmp/serial variants; for "blis": libblis.so.4 /
  // libblis.so.3 and the Debian variants; "" or a path containing '/' loads that file.
  static Expected<std::unique_ptr<BlasLibrary>> open(const std::string& name);
  ~BlasLibrary();
  BlasLibrary(const BlasLibrary&) = delete;
  BlasLibrary& operator=(const BlasLibrary&) = delete;

  const std::string& name() const { return name_; }
  const std::string& path() const { return path_; }
  // openblas_set_num_threads / bli_thread_set_num_threads when the library has them; false otherwise.
  bool set_threads(int threads);
  // C = A x B, row-major, no transposes, alpha 1 beta 0.
  void sgemm(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* b, int64_t ldb, float* c,
             int64_t ldc) const;

 private:
  BlasLibrary() = default;
  std::string name_, path_;
  void* handle_ = nullptr;
  void* sgemm_ = nullptr;
  void* set_threads_ = nullptr;
  int set_threads_kind_ = 0;  // which signature set_threads_ has
};

// Names of the libraries to look for by default: {"openblas", "blis"}.
std::vector<std::string> default_blas_names();

}  // namespace peakprobe
