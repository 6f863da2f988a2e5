#!/usr/bin/env bash
# The main job of offload-build, from a fresh clone on Debian 12 (run as root for the set-up):
#
#   build-support/main-job.sh
#
# 1. installs what is missing (build-support/setup.sh) and builds offload-bundler (release);
# 2. compiles examples/hip-fatbin/saxpy.hip for four AMD GPU architectures with clang 19
#    (no ROCm, no GPU needed), one of them with a target feature (gfx90a:xnack+);
# 3. bundles the code objects into a HIP fat binary the way clang's HIP driver does
#    (-type=o -bundle-align=4096, host entry from /dev/null), lists and unbundles it;
# 4. checks that clang-offload-bundler 22 writes the very same bytes and that every
#    unbundled code object is identical to what clang produced.
# Results land in target/main-job/.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

if ((EUID == 0)); then
    bash build-support/setup.sh
else
    bash build-support/setup.sh --check
fi
if ! command -v cargo >/dev/null 2>&1 && [[ -x "${HOME:-}/.cargo/bin/cargo" ]]; then
    export PATH="$HOME/.cargo/bin:$PATH"
fi

echo "==> building offload-bundler (release)"
cargo build --release --bins
BUNDLER=$PWD/target/release/offload-bundler
CLANG=/usr/lib/llvm-19/bin/clang
LLVM22=/usr/lib/llvm-22/bin/clang-offload-bundler

OUT=target/main-job
rm -rf "$OUT"
mkdir -p "$OUT"
ARCHS=(gfx906 gfx908 "gfx90a:xnack+" gfx1100)

echo "==> compiling examples/hip-fatbin/saxpy.hip for ${ARCHS[*]}"
targets=host-x86_64-unknown-linux-gnu
inputs=(-input=/dev/null)
for arch in "${ARCHS[@]}"; do
    obj="$OUT/saxpy-${arch//:/_}.o"
    "$CLANG" -x hip --offload-arch="$arch" -nogpulib -nogpuinc --cuda-device-only \
        --no-gpu-bundle-output -O2 -c examples/hip-fatbin/saxpy.hip -o "$obj"
    targets+=",hipv4-amdgcn-amd-amdhsa--$arch"
    inputs+=(-input="$obj")
done

echo "==> bundling into $OUT/saxpy.hipfb"
"$BUNDLER" -type=o -bundle-align=4096 -targets="$targets" "${inputs[@]}" -output="$OUT/saxpy.hipfb"
"$LLVM22" -type=o -bundle-align=4096 -targets="$targets" "${inputs[@]}" -output="$OUT/saxpy-llvm22.hipfb"
cmp "$OUT/saxpy.hipfb" "$OUT/saxpy-llvm22.hipfb"
echo "    identical to clang-offload-bundler 22's output ($(stat -c %s "$OUT/saxpy.hipfb") bytes)"

echo "==> entries (offload-bundler -list)"
"$BUNDLER" -type=o -list -input="$OUT/saxpy.hipfb" | sed 's/^/    /'

echo "==> unbundling"
outputs=(-output="$OUT/host.out")
for arch in "${ARCHS[@]}"; do
    outputs+=(-output="$OUT/unbundled-${arch//:/_}.o")
done
# Every unbundled code object equals the one clang compiled.
same_code_objects() {
    for arch in "${ARCHS[@]}"; do
        cmp "$OUT/saxpy-${arch//:/_}.o" "$OUT/unbundled-${arch//:/_}.o"
    done
}
"$BUNDLER" -type=o -unbundle -targets="$targets" -input="$OUT/saxpy.hipfb" "${outputs[@]}"
same_code_objects
echo "    every code object came back byte for byte"

echo "==> compressing (CCOB v3, as clang --offload-compress with LLVM 22)"
"$BUNDLER" -type=o -bundle-align=4096 -targets="$targets" "${inputs[@]}" -output="$OUT/saxpy.ccob" -compress
"$LLVM22" -type=o -bundle-align=4096 -targets="$targets" "${inputs[@]}" -output="$OUT/saxpy-llvm22.ccob" -compress
cmp "$OUT/saxpy.ccob" "$OUT/saxpy-llvm22.ccob"
echo "    identical to clang-offload-bundler 22's output ($(stat -c %s "$OUT/saxpy.ccob") bytes)"
"$LLVM22" -type=o -unbundle -targets="$targets" -input="$OUT/saxpy.ccob" "${outputs[@]}"
same_code_objects
echo "    clang-offload-bundler 22 unbundles it to the same code objects"

echo "==> the build.rs example: cargo run --release -p hip-vector-add"
cargo run --release --quiet -p hip-vector-add | tee "$OUT/example.txt" | sed 's/^/    /'
EXE=target/release/hip-vector-add
printed=$(awk '/^entry/{f=1; next} /^archs:/{f=0} f{print $1}' "$OUT/example.txt" | sort)
inspected=$(target/release/offload-build inspect "$EXE" | awk '$1=="entry"{print $3}' | sort)
/usr/lib/llvm-22/bin/llvm-objcopy --dump-section=.hip_fatbin="$OUT/example.hipfb" "$EXE" "$OUT/example.copy"
listed=$("$LLVM22" -type=o -list -input="$OUT/example.hipfb" | sort)
if [ "$printed" != "$inspected" ] || [ "$printed" != "$listed" ]; then
    echo "the example's own report, offload-build inspect and clang-offload-bundler -list differ:" >&2
    printf 'example:\n%s\ninspect:\n%s\nclang-offload-bundler 22 -list:\n%s\n' "$printed" "$inspected" "$listed" >&2
    exit 1
fi
echo "    its entries equal offload-build inspect's and clang-offload-bundler 22 -list's"
echo "main job: OK"
