// A stand-in BLAS for the isolation tests: it exports cblas_sgemm like OpenBLAS and BLIS do, and
// misbehaves as PEAKPROBE_FAKE_BLAS_MODE says, the ways real libraries have taken peakprobe down:
//   crash  - a memory fault (BLIS's OpenMP build died with SIGSEGV inside libgomp)
//   abort  - abort(), as an assertion inside a library does
//   exit   - exit(7) (cblas_xerbla exits the process on a bad argument)
//   hang   - never returns
//   wrong  - a product off by one in every element (a library whose answer is wrong)
//   crash-later - right in the first process that calls it, a memory fault in every later one
//                 (counted in PEAKPROBE_FAKE_BLAS_LOG: a library that fails in a later round)
//   (unset or anything else) - a plain, correct row-major sgemm.
// With PEAKPROBE_FAKE_BLAS_LOG set to a file, each process that calls it appends one line there
// on its first call, so a test can count the worker processes a run started.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

extern "C" {

void cblas_sgemm(int /*order*/, int /*transa*/, int /*transb*/, int m, int n, int k, float alpha, const float* a,
                 int lda, const float* b, int ldb, float beta, float* c, int ldc) {
  static bool logged = false;
  static bool later_process = false;  // another process called it before this one
  if (const char* log = std::getenv("PEAKPROBE_FAKE_BLAS_LOG"); log != nullptr && !logged) {
    logged = true;
    if (FILE* f = std::fopen(log, "a+")) {
      std::rewind(f);
      later_process = std::fgetc(f) != EOF;
      std::fputs("called\n", f);
      std::fclose(f);
    }
  }
  const char* mode = std::getenv("PEAKPROBE_FAKE_BLAS_MODE");
  const bool wrong = mode != nullptr && std::strcmp(mode, "wrong") == 0;
  if (mode != nullptr) {
    if (std::strcmp(mode, "crash") == 0 || (std::strcmp(mode, "crash-later") == 0 && later_process)) {
      volatile int* nowhere = nullptr;
      *nowhere = 1;
    }
    if (std::strcmp(mode, "abort") == 0) std::abort();
    if (std::strcmp(mode, "exit") == 0) std::exit(7);
    if (std::strcmp(mode, "hang") == 0)
      for (;;) ::pause();
  }
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) {
      double sum = 0;
      for (int p = 0; p < k; ++p) sum += double(a[i * lda + p]) * double(b[p * ldb + j]);
      c[i * ldc + j] = float(alpha * sum) + (beta == 0 ? 0.0f : beta * c[i * ldc + j]) + (wrong ? 1.0f : 0.0f);
    }
}
}
