// Library baselines for `peakprobe matmul`: oneDNN, OpenBLAS and BLIS, found at run time with dlopen
// (never a link-time dependency), so the same binary compares itself with whatever the machine has.
// Debian packages: libdnnl2 (oneDNN), libopenblas0-pthread (OpenBLAS), libblis4-pthread (BLIS).
// OpenBLAS and BLIS are called through CBLAS (f32 only); oneDNN through its row-major BLAS-like
// functions, dnnl_sgemm (f32), dnnl_gemm_bf16bf16f32 (bf16, C in f32) and dnnl_gemm_u8s8s32 (int8),
// which run the JIT kernels it generates for the CPU at hand.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "asm/target.hpp"
#include "peakprobe/expected.hpp"
#include "peakprobe/matmul_result.hpp"

namespace peakprobe {

// One loaded library with a cblas_sgemm or a dnnl_sgemm. The handle is closed on destruction, but the
// library stays mapped until the process exits (RTLD_NODELETE, see open()).
class BlasLibrary {
 public:
  // Largest m, n, k or leading dimension sgemm() accepts: Debian's OpenBLAS and BLIS take 32-bit
  // ints (blasint). Callers keep shapes at most 65536 (the CLI's limit), far below this.
  static constexpr int64_t kMaxDim = INT32_MAX;

  // Loads the first candidate that dlopen accepts (RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE) and that
  // exports cblas_sgemm (dnnl_sgemm for oneDNN). RTLD_LOCAL keeps OpenBLAS's and BLIS's identically
  // named symbols apart.
  // RTLD_NODELETE because unmapping a BLAS is unsafe: its worker threads, thread-specific-data
  // destructors and exit handlers may still run its code after dlclose (a BLIS test that passed
  // died with SIGSEGV at process exit), so nothing loaded here is unloaded before the process exits.
  // Candidates for "onednn": libdnnl.so.3, libdnnl.so.2; for "openblas": libopenblas.so.0, then the
  // Debian openblas-pthread / -openmp / -serial variants in the multiarch directory; for "blis":
  // libblis.so.4, libblis.so.3, then the Debian blis-pthread / -openmp / -serial variants. A name
  // containing '/' is a path to that file, and one containing ".so" a soname for the loader's search
  // path; then name() is "onednn", "openblas" or "blis" when the library is recognised by its
  // symbols, else its file name. Any other
  // name (or "") is an error listing the known names; every error names the files tried and the
  // Debian package to install.
  // With an ISA limit that names an OpenBLAS core type, OPENBLAS_CORETYPE is set before OpenBLAS is
  // loaded (its DYNAMIC_ARCH builds read it once, when loaded); hold_to() then checks it was obeyed.
  static Expected<std::unique_ptr<BlasLibrary>> open(const std::string& name,
                                                     const isa::LibraryIsaLimit& limit = {});
  ~BlasLibrary();
  BlasLibrary(const BlasLibrary&) = delete;
  BlasLibrary& operator=(const BlasLibrary&) = delete;

  const std::string& name() const { return name_; }
  // The file that defines cblas_sgemm, symlinks resolved (Debian's alternatives point
  // libopenblas.so.0 at e.g. .../openblas-pthread/libopenblasp-r0.3.21.so).
  const std::string& path() const { return path_; }
  // What the library says of itself, for reports: "OpenBLAS 0.3.21 DYNAMIC_ARCH ... SkylakeX",
  // "BLIS 0.9.0 skx pthreads", "oneDNN 2.6.3 OpenMP"; "" when it cannot tell.
  const std::string& version() const { return version_; }
  // openblas_set_num_threads / bli_thread_set_num_threads when the library has them; for oneDNN,
  // omp_set_num_threads of the OpenMP runtime it runs on (its sequential build takes 1 only). False
  // otherwise, for threads < 1, or when the library's own getter reports a different count
  // afterwards. The count holds for calls from the calling thread.
  bool set_threads(int threads);
  // Holds the library to `limit.level` before its first GEMM, or says why it cannot be: oneDNN through
  // dnnl_set_max_cpu_isa, OpenBLAS through the core type open() set (checked against
  // openblas_get_corename), BLIS only when the configuration it picked is within the level. Any other
  // library cannot be held. "" when held (and version() then says so), or when there is no limit.
  std::string hold_to(const isa::LibraryIsaLimit& limit);
  // Whether gemm() can run this dtype: f32 everywhere, bf16 and int8 with oneDNN.
  bool supports(MatmulDtype dtype) const;
  // C = A x B in `dtype` with the operand types of peakprobe's own GEMM (f32; bf16 x bf16 -> f32;
  // u8 x s8 -> s32 with zero offsets), row-major, alpha 1 beta 0, the same preconditions as sgemm().
  // An error when the dtype is not supported or the library returns a failure status.
  Expected<bool> gemm(MatmulDtype dtype, int64_t m, int64_t n, int64_t k, const void* a, int64_t lda, const void* b,
                      int64_t ldb, void* c, int64_t ldc) const;
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
  bool dnnl_ = false;            // oneDNN's functions instead of CBLAS
  void* sgemm_ = nullptr;        // cblas_sgemm or dnnl_sgemm
  void* gemm_bf16_ = nullptr;    // dnnl_gemm_bf16bf16f32
  void* gemm_u8s8_ = nullptr;    // dnnl_gemm_u8s8s32
  void* set_threads_ = nullptr;
  void* get_threads_ = nullptr;
  // Which signature set_threads_ has: 0 none, 1 OpenBLAS or OpenMP (int), 2 BLIS (dim_t), 3 a
  // sequential library (1 thread only).
  int set_threads_kind_ = 0;
};

// Names of the libraries to look for by default: {"onednn", "openblas", "blis"}.
std::vector<std::string> default_blas_names();

}  // namespace peakprobe
