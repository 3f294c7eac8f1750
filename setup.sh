#!/usr/bin/env bash
# Sets up a Debian 12 machine for tally, builds it, and runs either the
# built-in demo or the whole test suite (a normal build with warnings as
# errors, then an AddressSanitizer + UndefinedBehaviorSanitizer build, then a
# ThreadSanitizer build, then an arm64 cross build whose portable tests run
# under qemu-user).
#
#   ./setup.sh demo     install what is missing, build, run `tally demo`
#   ./setup.sh test     install what is missing, build twice, run every test
set -euo pipefail
cd "$(dirname "$0")"

# The engine's build and tests, then the front doors and the real drivers and
# clients their tests run: Vulkan on lavapipe, GL/GLES/EGL on llvmpipe (Xvfb or
# surfaceless EGL), OpenCL on PoCL; Chromium opens tally report --html's page.
packages=(build-essential cmake pkg-config python3 libcmocka-dev uuid-dev clang
          libjson-c-dev libxxhash-dev locales
          libvulkan-dev vulkan-tools mesa-vulkan-drivers vulkan-validationlayers
          glslang-tools glslang-dev spirv-tools spirv-headers gfxreconstruct
          libegl-dev libgles-dev libgl-dev libx11-dev libegl-mesa0 libgl1-mesa-dri mesa-utils
          khronos-api xvfb xauth waffle-utils piglit apitrace glmark2-x11 glmark2-es2-x11
          ocl-icd-opencl-dev opencl-headers pocl-opencl-icd clinfo protobuf-compiler
          renderdoccmd python3-renderdoc python3-pandas chromium)

# The arm64 build (the Raspberry Pi's, where EGL_BRCM_event_monitor is used):
# Debian's cross compilers (C, and C++ for libigdmd), qemu-user to run its
# tests, and for arm64 (multiarch) the libraries of libtally and its tests,
# the front doors' GL, GLES, EGL, X11 and OpenCL (ICD loader) libraries, and
# the drivers the tests run on under qemu-user: the Vulkan loader and
# lavapipe, Mesa's EGL and llvmpipe (docs/ci.md). glslang and PoCL come
# apart (unpack_arm64).
arm64_packages=(gcc-aarch64-linux-gnu g++-aarch64-linux-gnu qemu-user libc6:arm64
                libcmocka-dev:arm64 libjson-c-dev:arm64 libxxhash-dev:arm64 uuid-dev:arm64
                libvulkan-dev:arm64 mesa-vulkan-drivers:arm64
                libgl-dev:arm64 libegl-dev:arm64 libgles-dev:arm64 libopengl0:arm64
                libx11-dev:arm64 ocl-icd-opencl-dev:arm64
                libegl-mesa0:arm64 libgl1-mesa-dri:arm64)

install_missing() { # install_missing PACKAGE...
    local missing=()
    for p in "$@"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
            missing+=("$p")
    done
    [ ${#missing[@]} -eq 0 ] && return
    local sudo=
    [ "$(id -u)" -eq 0 ] || sudo=sudo
    echo "setup.sh: installing ${missing[*]}"
    $sudo apt-get update -q
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends \
        "${missing[@]}"
}

build() { # build DIR CMAKE-OPTIONS...
    local dir=$1
    shift
    cmake -S . -B "$dir" "$@"
    cmake --build "$dir" -j "$(nproc)"
}

run_tests() { # run_tests DIR [CTEST-OPTIONS...]
    local dir=$1
    shift
    (cd "$dir" && ctest -j "$(nproc)" --output-on-failure "$@")
}

# Unpacks arm64 packages (NAME:arm64[=VERSION]) into DIR/root, where the
# cross build finds them, for those that cannot be installed beside the
# host's packages; again only when the list changes.
unpack_arm64() { # unpack_arm64 DIR PACKAGE...
    local dir=$1 deb
    shift
    [ "$(cat "$dir/unpacked" 2>/dev/null)" = "$*" ] && return
    rm -rf "$dir"
    mkdir -p "$dir/debs"
    # apt's lists may be older than the packages installed from them
    if ! (cd "$dir/debs" && apt-get download -q "$@"); then
        local sudo=
        [ "$(id -u)" -eq 0 ] || sudo=sudo
        $sudo apt-get update -q
        (cd "$dir/debs" && apt-get download -q "$@")
    fi
    for deb in "$dir"/debs/*.deb; do
        dpkg-deb -x "$deb" "$dir/root"
    done
    echo "$*" > "$dir/unpacked"
}

# glslang's static libraries for arm64, which the GL shim links:
# glslang-dev:arm64 needs spirv-tools:arm64, which is not multiarch in
# Debian 12 and would replace the host's spirv-tools (and with it
# glslang-dev, glslang-tools and RenderDoc). The headers are the host's
# glslang-dev's: the same version is unpacked.
arm64_glslang=(glslang-dev spirv-tools)
# PoCL for arm64, which the OpenCL shim's smoke test runs on under qemu-user:
# pocl-opencl-icd:arm64 needs clang-15:arm64, which would replace the host's
# clang-15 and compilers. The rest of what it loads (LLVM) comes with Mesa.
arm64_pocl=(pocl-opencl-icd:arm64 libpocl2:arm64 libpocl2-common libclang-cpp15:arm64
            libclang-common-15-dev:arm64 libhwloc15:arm64 libudev1:arm64)

# arm64: libtally, the tally command, every front door (the Vulkan layer,
# the GL, EGL and OpenCL shims, libigdmd) and their tests, cross-compiled;
# ctest runs the tests labelled "portable" through qemu-user: the core's, and
# the front doors' that run in process on no driver or on llvmpipe and
# lavapipe (docs/ci.md).
test_arm64() {
    if ! dpkg --print-foreign-architectures | grep -qx arm64; then
        local sudo=
        [ "$(id -u)" -eq 0 ] || sudo=sudo
        $sudo dpkg --add-architecture arm64
    fi
    install_missing "${arm64_packages[@]}"
    local p glslang=()
    for p in "${arm64_glslang[@]}"; do
        glslang+=("$p:arm64=$(dpkg-query -W -f='${Version}' "$p")")
    done
    unpack_arm64 build-arm64/glslang-arm64 "${glslang[@]}"
    unpack_arm64 build-arm64/pocl-arm64 "${arm64_pocl[@]}"
    build build-arm64 -DCMAKE_TOOLCHAIN_FILE=cmake/aarch64-linux-gnu.cmake \
        -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTALLY_WERROR=ON \
        -DCMAKE_PREFIX_PATH="$PWD/build-arm64/glslang-arm64/root/usr" \
        -DTALLY_CROSS_POCL_ROOT="$PWD/build-arm64/pocl-arm64/root"
    run_tests build-arm64 -L portable
}

# Headless: no display of the user's leaks into the tests, and the tools that
# want a runtime directory get one.
unset DISPLAY WAYLAND_DISPLAY
export XDG_RUNTIME_DIR="${XDG_RUNTIME_DIR:-/tmp/tally-runtime-$(id -u)}"
mkdir -p -m 700 "$XDG_RUNTIME_DIR"

case "${1:-}" in
demo)
    install_missing "${packages[@]}"
    build build -DCMAKE_BUILD_TYPE=RelWithDebInfo
    ./build/bin/tally demo
    ;;
test)
    install_missing "${packages[@]}"
    build build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTALLY_WERROR=ON
    run_tests build
    build build-sanitize -DCMAKE_BUILD_TYPE=Debug -DTALLY_WERROR=ON \
        -DTALLY_SANITIZE=address,undefined
    run_tests build-sanitize
    build build-tsan -DCMAKE_BUILD_TYPE=Debug -DTALLY_WERROR=ON -DTALLY_SANITIZE=thread
    run_tests build-tsan -LE client
    test_arm64
    ;;
*)
    echo "usage: $0 demo|test" >&2
    exit 2
    ;;
esac
