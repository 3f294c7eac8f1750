#!/usr/bin/env bash
# Sets up a Debian 12 machine for tally, builds it, and runs either the
# built-in demo or the whole test suite (a normal build with warnings as
# errors, then an AddressSanitizer + UndefinedBehaviorSanitizer build, then a
# ThreadSanitizer build).
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

install_missing() {
    local missing=()
    for p in "${packages[@]}"; do
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

# Headless: no display of the user's leaks into the tests, and the tools that
# want a runtime directory get one.
unset DISPLAY WAYLAND_DISPLAY
export XDG_RUNTIME_DIR="${XDG_RUNTIME_DIR:-/tmp/tally-runtime-$(id -u)}"
mkdir -p -m 700 "$XDG_RUNTIME_DIR"

case "${1:-}" in
demo)
    install_missing
    build build -DCMAKE_BUILD_TYPE=RelWithDebInfo
    ./build/bin/tally demo
    ;;
test)
    install_missing
    build build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTALLY_WERROR=ON
    run_tests build
    build build-sanitize -DCMAKE_BUILD_TYPE=Debug -DTALLY_WERROR=ON \
        -DTALLY_SANITIZE=address,undefined
    run_tests build-sanitize
    build build-tsan -DCMAKE_BUILD_TYPE=Debug -DTALLY_WERROR=ON -DTALLY_SANITIZE=thread
    run_tests build-tsan -LE client
    ;;
*)
    echo "usage: $0 demo|test" >&2
    exit 2
    ;;
esac
