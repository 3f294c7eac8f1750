# Cross-compiles tally for arm64 (the Raspberry Pi's VideoCore, where
# EGL_BRCM_event_monitor's users are) with Debian's cross compiler and arm64
# multiarch libraries; ctest runs the arm64 tests through qemu-user.
#   cmake -S . -B build-arm64 -DCMAKE_TOOLCHAIN_FILE=cmake/aarch64-linux-gnu.cmake \
#         -DCMAKE_PREFIX_PATH=<unpacked glslang-dev:arm64 and spirv-tools:arm64>/usr \
#         -DTALLY_CROSS_POCL_ROOT=<unpacked pocl-opencl-icd:arm64 and its libraries>
# Debian: gcc-aarch64-linux-gnu g++-aarch64-linux-gnu qemu-user, and after
# `dpkg --add-architecture arm64` the libraries as :arm64 (setup.sh test,
# arm64_packages). glslang's arm64 static libraries (the GL shim's) are found
# through CMAKE_PREFIX_PATH: setup.sh unpacks them, since spirv-tools:arm64
# cannot be installed beside the host's spirv-tools; PoCL likewise, for the
# OpenCL shim's smoke test (tests/cl, docs/ci.md).
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(TALLY_CROSS_TRIPLE aarch64-linux-gnu)

set(CMAKE_C_COMPILER ${TALLY_CROSS_TRIPLE}-gcc)
set(CMAKE_CXX_COMPILER ${TALLY_CROSS_TRIPLE}-g++)

# Libraries and headers: arm64 ones only (the cross compiler already searches
# the multiarch folders /usr/lib/aarch64-linux-gnu and
# /usr/include/aarch64-linux-gnu). Programs, such as python3, glslangValidator
# and protoc that generate sources and check outputs, are the host's.
set(CMAKE_LIBRARY_ARCHITECTURE ${TALLY_CROSS_TRIPLE})
set(CMAKE_FIND_ROOT_PATH /usr/${TALLY_CROSS_TRIPLE})
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY BOTH)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE BOTH)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE BOTH)

# pkg-config answers for arm64: its .pc files, and the arch-independent ones.
set(ENV{PKG_CONFIG_LIBDIR}
    /usr/lib/${TALLY_CROSS_TRIPLE}/pkgconfig:/usr/share/pkgconfig)
set(ENV{PKG_CONFIG_PATH} "")
set(ENV{PKG_CONFIG_SYSROOT_DIR} "")

# Test programs run under qemu-user, with the arm64 loader and libc of
# multiarch (libc6:arm64, which every :arm64 library depends on): not the
# cross toolchain's in /usr/aarch64-linux-gnu, whose version lags Debian's
# updates, and whose loader with the newer libc the libraries find in
# /lib/aarch64-linux-gnu loops forever in pthread_create.
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-aarch64 -L /)
