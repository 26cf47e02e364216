#!/usr/bin/env bash
# Builds the libFuzzer targets (tests/fuzz/fuzz_*.cpp) with clang into $BUILD (default build-fuzz/) and runs each one
# for SECONDS (default 60) on a temporary copy of its seed corpus (tests/fuzz/corpus/TARGET/), so
# the repository is never modified. Exits non-zero when any target finds a crash, a sanitizer
# report, a leak or a timeout; the inputs that caused it are kept in $BUILD/findings/TARGET/.
# PEAKPROBE_FUZZ_BUILD=DIR uses another tree; one already configured for fuzzing (scripts/sanitize.sh
# makes build-asan/ so when clang is there) is built as it is, not reconfigured.
# Usage: scripts/fuzz.sh [SECONDS] [TARGET...]    (TARGET: e.g. fuzz_sizes; default all)
set -euo pipefail
cd "$(dirname "$0")/.."
SECS=${1:-60}
shift || true
BUILD=${PEAKPROBE_FUZZ_BUILD:-build-fuzz}
JOBS=${JOBS:-1}

if ! grep -qiE '^PEAKPROBE_FUZZ:BOOL=(ON|1|TRUE|YES|Y)$' "$BUILD/CMakeCache.txt" 2>/dev/null; then
  CXX=clang++ cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG="-O1 -g" \
    -DPEAKPROBE_FUZZ=ON -DPEAKPROBE_BUILD_TESTS=OFF
fi
cmake --build "$BUILD" -j"$JOBS" --target fuzz_targets

targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  for src in tests/fuzz/fuzz_*.cpp; do targets+=("$(basename "$src" .cpp)"); done
fi

export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:strict_string_checks=1:check_initialization_order=1}"
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
work=$(mktemp -d "${TMPDIR:-/tmp}/peakprobe-fuzz.XXXXXX")
trap 'rm -rf "$work"' EXIT
failed=()
summary=()
for t in "${targets[@]}"; do
  bin="$BUILD/tests/fuzz/$t"
  [ -x "$bin" ] || { echo "no fuzz target $bin" >&2; exit 2; }
  mkdir -p "$work/$t/corpus" "$work/$t/artifacts"
  if [ -d "tests/fuzz/corpus/$t" ]; then cp -r "tests/fuzz/corpus/$t/." "$work/$t/corpus/"; fi
  dict=()
  if [ -f "tests/fuzz/$t.dict" ]; then dict=(-dict="tests/fuzz/$t.dict"); fi
  echo "== $t: ${SECS}s"
  rc=0
  "$bin" -max_total_time="$SECS" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
    -artifact_prefix="$work/$t/artifacts/" "${dict[@]}" "$work/$t/corpus" >"$work/$t/log" 2>&1 || rc=$?
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/$t/log" | tail -1)
  if [ "$rc" -ne 0 ] || ls "$work/$t/artifacts/"* >/dev/null 2>&1; then
    failed+=("$t")
    summary+=("$t: FINDING (exit $rc, ${execs:-?} runs)")
    mkdir -p "$BUILD/findings/$t"
    cp -r "$work/$t/artifacts/." "$BUILD/findings/$t/" 2>/dev/null || true
    cp "$work/$t/log" "$BUILD/findings/$t/log"
    tail -n 60 "$work/$t/log"
  else
    summary+=("$t: ok, ${execs:-?} runs in ${SECS}s, corpus $(ls "$work/$t/corpus" | wc -l) inputs")
  fi
done
echo
echo "fuzzing summary:"
printf '  %s\n' "${summary[@]}"
if [ ${#failed[@]} -ne 0 ]; then
  echo "findings in: ${failed[*]} (inputs and logs in $BUILD/findings/)" >&2
  exit 1
fi
