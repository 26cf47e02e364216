#pragma once
// What a worker's memory fault reads as, with and without AddressSanitizer: ASan's own handler
// catches the fault, reports it and exits with code 1, so the worker does not die by the signal.
// GCC announces ASan with __SANITIZE_ADDRESS__; clang 14 (the CI sanitizer build) only through
// __has_feature.
#if defined(__SANITIZE_ADDRESS__)
#define PEAKPROBE_TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define PEAKPROBE_TEST_ASAN 1
#endif
#endif

namespace peakprobe::test {
#if defined(PEAKPROBE_TEST_ASAN)
inline constexpr const char* kSegfaultWords = "exited with code";
#else
inline constexpr const char* kSegfaultWords = "SIGSEGV";
#endif
}  // namespace peakprobe::test
