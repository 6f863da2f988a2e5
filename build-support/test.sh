#!/usr/bin/env bash
# THE test command of offload-build, from a fresh clone:
#
#   build-support/test.sh
#
# Run as root (as CI does), it first runs build-support/setup.sh, which installs the
# LLVM reference tools when missing. Run as a normal user, it only checks that they are
# there (run `sudo build-support/setup.sh` once if not).
# Then: rustfmt check, clippy (warnings are errors), unit + integration tests, doc tests,
# rustdoc of public and private items (warnings, such as broken intra-doc links, are errors).
# Every step runs even if an earlier one failed; the exit status is non-zero if any failed.
set -uo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 1

# A rustup toolchain lives in ~/.cargo/bin, which a bare environment may lack on PATH.
if ! command -v cargo >/dev/null 2>&1 && [[ -x "${HOME:-}/.cargo/bin/cargo" ]]; then
    export PATH="$HOME/.cargo/bin:$PATH"
fi
export RUST_BACKTRACE="${RUST_BACKTRACE:-1}"

section() { printf '\n==> %s\n' "$*"; }

# --- setup: a failure here stops everything ---------------------------------
if ((EUID == 0)); then
    section "setup: build-support/setup.sh (running as root: installs what is missing)"
    bash build-support/setup.sh || { echo "test.sh: setup failed, stopping" >&2; exit 1; }
else
    section "setup: build-support/setup.sh --check (not root: checks only)"
    bash build-support/setup.sh --check || {
        echo "test.sh: prerequisites missing; run 'sudo build-support/setup.sh' once, or run this script as root" >&2
        exit 1
    }
fi

# --- the checks --------------------------------------------------------------
failed=()
steps=0
step() {
    local name="$1"
    shift
    steps=$((steps + 1))
    section "$name: $*"
    local start=$SECONDS
    if "$@"; then
        printf -- '--- %s: OK (%ds)\n' "$name" $((SECONDS - start))
    else
        local rc=$?
        printf -- '--- %s: FAILED with exit status %d (%ds)\n' "$name" "$rc" $((SECONDS - start))
        failed+=("$name")
    fi
}

# examples/cuda-kernels is not a default member (its CUDA headers need a toolkit): linted
# here with the nvcc of the setup script's NVIDIA virtualenv; the integration tests build and
# run it with nvcc and with clang.
NVIDIA_VENV="${OFFLOAD_BUILD_NVIDIA_VENV:-/opt/offload-build/nvidia-venv}"

step format cargo fmt --all -- --check
step clippy cargo clippy --all-targets -- -D warnings
step clippy-cuda-kernels env VIRTUAL_ENV="$NVIDIA_VENV" \
    cargo clippy -p cuda-kernels -p cuda-launch --all-targets -- -D warnings
# The configuration a user gets (background PCHs on, `CI` unset) is the one the suite covers:
# under CI, the PCH and cache tests run with `CI` removed, as a person runs them (and not a
# second time with it: each of their builds sets or removes `CI` itself).
# --no-fail-fast: a failing unit test does not hide the integration tests' verdicts.
if [[ -n "${CI:-}" ]]; then
    step tests cargo test --all-targets --no-fail-fast -- --skip pch:: --skip cache_faults::
    step tests-without-ci env -u CI cargo test --all-targets --no-fail-fast -- pch:: cache_faults::
else
    step tests cargo test --all-targets --no-fail-fast
fi
step doctests cargo test --doc
step docs env RUSTDOCFLAGS="-D warnings" cargo doc --workspace --exclude cuda-kernels --exclude cuda-launch \
    --no-deps --quiet --document-private-items

section "summary"
if ((${#failed[@]} > 0)); then
    echo "test.sh: FAILED steps: ${failed[*]} (of $steps)"
    exit 1
fi
echo "test.sh: all $steps steps OK"
