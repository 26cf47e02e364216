# Cross build for AArch64 Linux on a Debian x86-64 machine (scripts/test-aarch64.sh): Debian's
# g++-aarch64-linux-gnu, the arm64 multiarch -dev packages, and qemu-user-static to run what was built
# (CTest and Catch's test discovery go through CMAKE_CROSSCOMPILING_EMULATOR).
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)
# The emulator finds the arm64 dynamic loader and libraries where multiarch put them (/lib,
# /usr/lib/aarch64-linux-gnu), so no sysroot option is needed.
find_program(PEAKPROBE_QEMU_AARCH64 NAMES qemu-aarch64-static qemu-aarch64)
if(PEAKPROBE_QEMU_AARCH64)
  set(CMAKE_CROSSCOMPILING_EMULATOR ${PEAKPROBE_QEMU_AARCH64})
endif()
# Libraries and packages of the target only; programs of the build machine.
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
# pkg-config must read the arm64 .pc files (hwloc), not the build machine's.
set(ENV{PKG_CONFIG_LIBDIR} "/usr/lib/aarch64-linux-gnu/pkgconfig:/usr/share/pkgconfig")
