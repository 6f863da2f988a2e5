#!/usr/bin/env bash
# Precompiled preambles (issue 25): offload-build compile with and without PCH (--no-pch)
# against hipcc, with Debian's ROCm 5.2 and its clang 15, 3 archs (gfx90a;gfx1030;gfx906),
# -j 2, each figure the median of ROUNDS runs (default 3), each run in a fresh directory:
# - a 1-source saxpy: cold (empty cache), the build after an edit of the kernel body, the
#   edit after that, and a no-op; `hipcc -c` of the same source;
# - 8 generated sources sharing their leading includes (hip_runtime.h, a common header),
#   shared memory and a template each: cold, against `hipcc -c` of each source under
#   `xargs -P2` (make -j2).
# Prints a table with the ratios.
#   benches/pch.sh [path/to/offload-build]     (default: target/release/offload-build)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BIN=${1:-$root/target/release/offload-build}
ROUNDS=${ROUNDS:-3}
ARCHS='gfx90a;gfx1030;gfx906'
HIPCC_ARCHS=(--offload-arch=gfx90a --offload-arch=gfx1030 --offload-arch=gfx906)
for f in "$BIN" /usr/bin/hipcc /usr/bin/clang-15 /usr/include/hip/hip_runtime.h; do
  [[ -e $f ]] || { echo "$f is missing: build offload-build (cargo build --release) and run build-support/setup.sh" >&2; exit 1; }
done
unset OFFLOAD_BUILD_PCH OFFLOAD_BUILD_CACHE_DIR OFFLOAD_ARCH HIPFLAGS CLANG HIPCXX

ms() { local s e; s=$(date +%s%N); "$@" >/dev/null 2>&1; e=$(date +%s%N); echo $(( (e-s)/1000000 )); }
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

saxpy() { # $1: the constant in the body
  cat <<SRC
#include <hip/hip_runtime.h>

__global__ void saxpy(float a, const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i] + $1.0f;
}
SRC
}

source_n() { # $1: the index
  cat <<SRC
#include <hip/hip_runtime.h>
#include "common.h"

template <int Tile> __device__ float block_sum_$1(const float* x, int n) {
  __shared__ float tile[Tile];
  int i = blockIdx.x * Tile + threadIdx.x;
  tile[threadIdx.x] = i < n ? x[i] * SCALE + $1 : 0.0f;
  __syncthreads();
  for (int s = Tile / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s) tile[threadIdx.x] += tile[threadIdx.x + s];
    __syncthreads();
  }
  return tile[0];
}

extern "C" __global__ void reduce_$1(const float* x, float* out, int n) {
  float v = block_sum_$1<256>(x, n);
  if (threadIdx.x == 0) atomicAdd(out, expf(v));
}
SRC
}

declare -A T
add() { T[$1]="${T[$1]:-} $2"; }
for r in $(seq 1 "$ROUNDS"); do
  for mode in pch nopch; do
    flag=(); [[ $mode == nopch ]] && flag=(--no-pch)
    d=$(mktemp -d /tmp/pch-bench.XXXX)
    saxpy 1 > "$d/saxpy.hip"
    one() { "$BIN" compile "$d/saxpy.hip" --archs "$ARCHS" -o "$d/out/libk.a" --out-dir "$d/od" -j 2 -q "${flag[@]}"; }
    mkdir -p "$d/out"
    add "saxpy_cold_$mode" "$(ms one)"
    saxpy 2 > "$d/saxpy.hip"; add "saxpy_edit1_$mode" "$(ms one)"
    saxpy 3 > "$d/saxpy.hip"; add "saxpy_edit2_$mode" "$(ms one)"
    add "saxpy_noop_$mode" "$(ms one)"
    rm -rf "$d"
    d=$(mktemp -d /tmp/pch-bench.XXXX); mkdir -p "$d/out"
    printf '#pragma once\n#define SCALE 2.0f\n' > "$d/common.h"
    srcs=(); for i in $(seq 1 8); do source_n "$i" > "$d/k$i.hip"; srcs+=("$d/k$i.hip"); done
    eight() { "$BIN" compile "${srcs[@]}" --archs "$ARCHS" -o "$d/out/libk.a" --out-dir "$d/od" -j 2 -q "${flag[@]}"; }
    add "eight_cold_$mode" "$(ms eight)"
    rm -rf "$d"
  done
  d=$(mktemp -d /tmp/pch-bench.XXXX)
  saxpy 1 > "$d/saxpy.hip"
  add saxpy_hipcc "$(ms hipcc "${HIPCC_ARCHS[@]}" -c "$d/saxpy.hip" -o "$d/saxpy.o")"
  printf '#pragma once\n#define SCALE 2.0f\n' > "$d/common.h"
  for i in $(seq 1 8); do source_n "$i" > "$d/k$i.hip"; done
  hipcc_all() { printf '%s\n' "$d"/k*.hip | xargs -P2 -I{} hipcc "${HIPCC_ARCHS[@]}" -c {} -o {}.o; }
  add eight_hipcc "$(ms hipcc_all)"
  rm -rf "$d"
done

m() { tr ' ' '\n' <<< "${T[$1]}" | grep . | median; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
hs=$(m saxpy_hipcc); he=$(m eight_hipcc)
echo "machine: $(nproc) cores, $(uname -r); clang-15 (Debian ROCm 5.2); archs $ARCHS; median of $ROUNDS"
printf '| %-40s | %9s | %9s | %11s | %11s |\n' build "PCH (ms)" "no PCH" "PCH/no PCH" "PCH/hipcc"
printf '|%s|%s|%s|%s|%s|\n' ------------------------------------------ ----------- ----------- ------------- -------------
row() { # name key hipcc
  local p n; p=$(m "${2}_pch"); n=$(m "${2}_nopch")
  printf '| %-40s | %9s | %9s | %11s | %11s |\n' "$1" "$p" "$n" "$(ratio "$p" "$n")" "$(ratio "$p" "$3")"
}
row "saxpy, cold" saxpy_cold "$hs"
row "saxpy, after an edit of the body" saxpy_edit1 "$hs"
row "saxpy, the edit after that" saxpy_edit2 "$hs"
row "saxpy, no-op" saxpy_noop "$hs"
row "8 sources sharing includes, cold" eight_cold "$he"
echo "hipcc -c saxpy.hip: $hs ms; hipcc -c of the 8 sources under xargs -P2: $he ms"
