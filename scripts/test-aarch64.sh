#!/usr/bin/env bash
# The AArch64 build, checked on an x86-64 Debian machine: cross-compiled with Debian's
# g++-aarch64-linux-gnu against the arm64 multiarch -dev packages, then the test suite and the main
# commands run under qemu-aarch64 (user-mode emulation). Timings under emulation mean nothing: the
# tool says so (every figure `mistrusted`, "emulated"), the hardware tests report themselves skipped,
# and this script checks that code runs, computes right and never crashes.
#
# Usage (from a checkout, as root or with sudo; installs what it needs):
#   bash scripts/test-aarch64.sh [build-dir]        default build-aarch64
# On an Arm board no cross build is needed: the README's two commands work there as on x86-64.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build-aarch64}
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive

if ! dpkg --print-foreign-architectures | grep -qx arm64; then $SUDO dpkg --add-architecture arm64; fi
$SUDO apt-get update -qq
# Build tools and header-only packages of the build machine; compiled libraries for arm64.
$SUDO apt-get install -y -qq --no-install-recommends \
  build-essential cmake pkg-config catch2 nlohmann-json3-dev libcli11-dev opencl-c-headers \
  g++-aarch64-linux-gnu qemu-user-static \
  libasmjit-dev:arm64 libspdlog-dev:arm64 libfmt-dev:arm64 libhwloc-dev:arm64 \
  >/dev/null
QEMU=$(command -v qemu-aarch64-static)

cmake -S . -B "$BUILD" -DCMAKE_TOOLCHAIN_FILE=cmake/toolchains/aarch64-linux-gnu.cmake -DCMAKE_BUILD_TYPE=Release
cmake --build "$BUILD" -j"${JOBS:-2}"
ctest --test-dir "$BUILD" -j"${JOBS:-2}" --output-on-failure --timeout 600

# The main commands complete under emulation, every row ok, mistrusted (emulated) or skipped, and the
# matmul result matches its reference.
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
export PEAKPROBE_CHILD_EMULATOR="$QEMU"
PP=("$QEMU" "$BUILD/peakprobe")
"${PP[@]}" --quiet info
# The whole catalog takes about 9 minutes under qemu (553 rows, 2026-11-26): CI runs four families.
"${PP[@]}" --quiet run --filter fp.fma,int.alu,mem.load,vec.int.dot --json "$OUT/run.json"
"${PP[@]}" --quiet pairs --set fp.v128 --json "$OUT/pairs.json"
"${PP[@]}" --quiet mem --sizes 16KiB,1MiB --json "$OUT/mem.json"
"${PP[@]}" --quiet matmul --shape 127,127,127 --json "$OUT/matmul.json"
# int8 by sdot on A - 128, the path of cores without i8mm (qemu's CPU has i8mm: held below it).
"${PP[@]}" --quiet matmul --shape 127,127,127 --dtype int8 --isa dotprod --json "$OUT/matmul-int8-dotprod.json"
"${PP[@]}" --quiet inst "fmla v.4s, v.4s, v.4s" "sdot v.4s, v.16b, v.4b[1]" "ldr x, [x]" --json "$OUT/inst.json"
# JSON has one key per line: an error row fails, and every mistrusted row must say it is emulated.
for f in "$OUT"/*.json; do
  errors=$(grep -c '"status": "error"' "$f" || true)
  mistrusted=$(grep -c '"status": "mistrusted"' "$f" || true)
  emulated=$(grep -c '"reason": "emulated' "$f" || true)
  echo "$(basename "$f"): $errors error, $mistrusted mistrusted ($emulated emulated)"
  if [ "$errors" -ne 0 ] || [ "$mistrusted" -gt "$emulated" ]; then
    grep -n -B3 -A3 '"status": "error"\|"status": "mistrusted"' "$f" | head -60
    exit 1
  fi
done
echo "aarch64: build, tests and emulated commands passed"
