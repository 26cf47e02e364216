#!/usr/bin/env bash
# Installs what peakprobe needs to build and test, from Debian's archive only (Debian 12 or newer).
# Run as root (or with sudo). Safe to run again.
set -euo pipefail
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
# libdnnl2 (oneDNN), libopenblas0-pthread and libblis4-pthread are optional run-time baselines for `peakprobe matmul`:
# found with dlopen when present, never linked against. opencl-c-headers is needed to build `peakprobe gpu`;
# the OpenCL loader and PoCL (a CPU OpenCL device, what the GPU tests run on) are also opened at run time.
$SUDO apt-get install -y -qq --no-install-recommends \
  build-essential cmake pkg-config \
  libasmjit-dev libcli11-dev libspdlog-dev libfmt-dev catch2 nlohmann-json3-dev libhwloc-dev \
  opencl-c-headers ocl-icd-libopencl1 \
  >/dev/null
# Run-time options, each where Debian builds it for this architecture (on an Arm board some are not).
optional=()
for p in libdnnl2 libopenblas0-pthread libblis4-pthread pocl-opencl-icd; do
  if apt-cache show "$p" >/dev/null 2>&1; then optional+=("$p"); else echo "not available here: $p"; fi
done
if [ ${#optional[@]} -gt 0 ]; then
  $SUDO apt-get install -y -qq --no-install-recommends "${optional[@]}" >/dev/null
fi
echo "peakprobe dependencies installed"
