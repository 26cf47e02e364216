#!/usr/bin/env bash
# Builds peakprobe and its tests with AddressSanitizer + UndefinedBehaviorSanitizer into build-asan/
# and runs the test suite under them. Any finding aborts the test that hit it (halt on error).
# With clang and its runtimes (clang, libclang-rt-14-dev; CI installs both) the same tree also carries
# libFuzzer's coverage instrumentation and the fuzz targets, so
# `PEAKPROBE_FUZZ_BUILD=build-asan scripts/fuzz.sh` fuzzes without compiling the library a second time;
# without them, GCC builds the suite alone. A tree configured with the other compiler is reconfigured
# from scratch (CMake cannot change a tree's compiler).
# The hardware timing tests (names starting with "hw:") are left out: they check measured rates, which
# the instrumentation distorts. Every other test runs, those executing generated code included.
# Usage: [JOBS=N] scripts/sanitize.sh   (docs/testing.md)
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${PEAKPROBE_ASAN_BUILD:-build-asan}
JOBS=${JOBS:-1}

# -O1: the usual optimisation for sanitizer builds (fast enough, exact stack traces); Debug keeps asserts.
# clang's ASan runtime is a separate package: clang++ alone would fail at the first link.
use_clang=false
if command -v clang++ >/dev/null 2>&1 && [ -f "$(clang++ -print-file-name="libclang_rt.asan-$(uname -m).a")" ]; then
  use_clang=true
fi
cached=$(sed -n 's/^CMAKE_CXX_COMPILER:[A-Z]*=//p' "$BUILD/CMakeCache.txt" 2>/dev/null || true)
if [ -n "$cached" ]; then
  cached_clang=false
  if [[ "$cached" == *clang* ]]; then cached_clang=true; fi
  if [ "$cached_clang" != "$use_clang" ]; then
    echo "$BUILD was configured with $cached: configuring it again from scratch"
    rm -rf "$BUILD/CMakeCache.txt" "$BUILD/CMakeFiles"
  fi
fi
# With clang the fuzz targets are part of `all` (tests/fuzz/CMakeLists.txt).
fuzz=()
if $use_clang; then
  export CXX=clang++
  fuzz=(-DPEAKPROBE_FUZZ=ON)
fi
cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG="-O1 -g" -DPEAKPROBE_SANITIZE=ON "${fuzz[@]}"
cmake --build "$BUILD" -j"$JOBS"

# detect_leaks stays on, with no suppressions: nothing leaks, asmjit's JIT runtime included (its code
# memory is mmap'ed and released by the runtime, which lives as long as the process).
# allocator_may_return_null=1: tests ask for impossible allocations (2^51 bytes) to check that they
#   become errors; without it ASan aborts there instead of returning null as malloc does.
# intercept_tls_get_addr=0: LeakSanitizer's tracking of dynamic TLS misreads the thread-local blocks of
#   dlopen'ed BLIS threads under Debian 12's glibc and crashes at exit ("Tracer caught signal 11",
#   google/sanitizers#1322). Leaks are still checked; only TLS of dlopen'ed libraries is not scanned.
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:allocator_may_return_null=1:intercept_tls_get_addr=0:strict_string_checks=1:check_initialization_order=1}"
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
# The OpenCL device tests ("gpu:") are left out too: they load the OpenCL runtime (PoCL brings a
# whole LLVM) into an instrumented worker, which measures that runtime rather than peakprobe.
ctest --test-dir "$BUILD" -j2 --output-on-failure --exclude-regex '^(hw|gpu):'
