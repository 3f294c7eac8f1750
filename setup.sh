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
# Debian's cross compiler, qemu-user to run its tests, and for arm64
# (multiarch) the libraries of libtally and its tests, the Vulkan loader and
# lavapipe for the layer's smoke test (docs/ci.md).
arm64_packages=(gcc-aarch64-linux-gnu qemu-user libc6:arm64 libcmocka-dev:arm64
                libjson-c-dev:arm64 libxxhash-dev:arm64 uuid-dev:arm64
                libvulkan-dev:arm64 mesa-vulkan-drivers:arm64)

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

# arm64: libtally, the tally command, the Vulkan layer and their tests (not
# the other front doors, whose arm64 GL, EGL, OpenCL and glslang libraries
# the tests do not need), the tests labelled "portable" run by ctest through
# qemu-user.
test_arm64() {
    if ! dpkg --print-foreign-architectures | grep -qx arm64; then
        local sudo=
        [ "$(id -u)" -eq 0 ] || sudo=sudo
        $sudo dpkg --add-architecture arm64
    fi
    install_missing "${arm64_packages[@]}"
    build build-arm64 -DCMAKE_TOOLCHAIN_FILE=cmake/aarch64-linux-gnu.cmake \
        -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTALLY_WERROR=ON -DTALLY_FRONT_DOORS=OFF \
        -DTALLY_VULKAN_LAYER=ON
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
