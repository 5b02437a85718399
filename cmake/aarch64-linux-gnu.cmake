# Cross-compiling for 64-bit ARM Linux (the Raspberry Pi Zero 2 class: Cortex-A53) with Debian's
# g++-aarch64-linux-gnu and arm64 libraries installed by multiarch (scripts/cross.sh). Binaries
# run under qemu-aarch64, which CMake uses as the emulator: ctest and gtest's test discovery run
# through it (QEMU_CPU picks the CPU, e.g. cortex-a53 or max).
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-aarch64 -L /usr/aarch64-linux-gnu)
# Libraries and headers of the target: the cross toolchain's, then multiarch's in /usr (header-only
# packages' CMake files included); programs (protoc, python) are the host's.
set(CMAKE_FIND_ROOT_PATH /usr/aarch64-linux-gnu /usr)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE BOTH)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE BOTH)
