// BLAS baselines for `peakprobe matmul`: OpenBLAS and BLIS, found at run time with dlopen (never a
// link-time dependency), so the same binary compares itself with whatever the machine has.
// Debian packages: libopenblas0-pthread (OpenBLAS), libblis4-pthread (BLIS).
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "peakprobe/expected.hpp"

namespace peakprobe {

// One loaded library with a cblas_sgemm. The handle is closed on destruction, but the library stays
// mapped until the process exits (RTLD_NODELETE, see open()).
class BlasLibrary {
 public:
  // Largest m, n, k or leading dimension sgemm() accepts: Debian's OpenBLAS and BLIS take 32-bit
  // ints (blasint). Callers keep shapes at most 65536 (the CLI's limit), far below this.
  static constexpr int64_t kMaxDim = INT32_MAX;

  // Loads the first candidate that dlopen accepts (RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE) and that
  // exports cblas_sgemm. RTLD_LOCAL keeps OpenBLAS's and BLIS's identically named symbols apart.
  // RTLD_NODELETE because unmapping a BLAS is unsafe: its worker threads, thread-specific-data
  // destructors and exit handlers may still run its code after dlclose (a BLIS test that passed
  // died with SIGSEGV at process exit), so nothing loaded here is unloaded before the process exits.
  // Candidates for "openblas": libopenblas.so.0, then the Debian openblas-pthread /
  // -openmp / -serial variants in the multiarch directory; for "blis": libblis.so.4, libblis.so.3,
  // then the Debian blis-pthread / -openmp / -serial variants. A name containing '/' is a path to
  // that file, and one containing ".so" a soname for the loader's search path; then name() is
  // "openblas" or "blis" when the library is recognised by its symbols, else its file name. Any other
  // name (or "") is an error listing the known names; every error names the files tried and the
  // Debian package to install.
  static Expected<std::unique_ptr<BlasLibrary>> open(const std::string& name);
  ~BlasLibrary();
  BlasLibrary(const BlasLibrary&) = delete;
  BlasLibrary& operator=(const BlasLibrary&) = delete;

  const std::string& name() const { return name_; }
  // The file that defines cblas_sgemm, symlinks resolved (Debian's alternatives point
  // libopenblas.so.0 at e.g. .../openblas-pthread/libopenblasp-r0.3.21.so).
  const std::string& path() const { return path_; }
  // What the library says of itself, for reports: "OpenBLAS 0.3.21 DYNAMIC_ARCH ... SkylakeX",
  // "BLIS 0.9.0 skx pthreads"; "" when it cannot tell.
  const std::string& version() const { return version_; }
  // openblas_set_num_threads / bli_thread_set_num_threads when the library has them; false otherwise,
  // for threads < 1, or when the library's own getter reports a different count afterwards.
  bool set_threads(int threads);
  // C = A x B, row-major, no transposes, alpha 1 beta 0 (C is written, never read).
  // Precondition (sgemm_args_ok): 0 <= m, n, k <= kMaxDim; max(1, k) <= lda, max(1, n) <= ldb and
  // max(1, n) <= ldc, all <= kMaxDim. A violation is a caller bug: it is reported on stderr and aborts
  // (rather than truncating to int or letting cblas_xerbla exit the process).
  void sgemm(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* b, int64_t ldb, float* c,
             int64_t ldc) const;
  static bool sgemm_args_ok(int64_t m, int64_t n, int64_t k, int64_t lda, int64_t ldb, int64_t ldc);

 private:
  BlasLibrary() = default;
  std::string name_, path_, version_;
  void* handle_ = nullptr;
  void* sgemm_ = nullptr;
  void* set_threads_ = nullptr;
  void* get_threads_ = nullptr;
  int set_threads_kind_ = 0;  // which signature set_threads_ has: 0 none, 1 OpenBLAS (int), 2 BLIS (dim_t)
};

// Names of the libraries to look for by default: {"openblas", "blis"}.
std::vector<std::string> default_blas_names();

}  // namespace peakprobe
