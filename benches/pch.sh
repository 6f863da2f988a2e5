#!/usr/bin/env bash
# Precompiled preambles (issue 25): offload-build compile with and without PCH (--no-pch)
# against hipcc, with Debian's ROCm 5.2 and its clang 15, 3 archs (gfx90a;gfx1030;gfx906),
# -j 2, each figure the median of ROUNDS runs (default 3), each run in a fresh directory:
# - four 1-source programs of the usual shapes (a saxpy; a tiled matrix multiply with
#   shared memory and a template; a block reduction with shared memory, a template and expf;
#   a rocPRIM block_reduce), all with -std=c++17 (rocPRIM needs C++14):
#   cold (empty cache), the build after an edit of the kernel body, the edit after that, and
#   a no-op; `hipcc -c` and `hipcc --cuda-device-only -c` of the same source. After the cold
#   build the PCHs are made in the background (Build::pch_background): the script times
#   how long they take to end (waiting on their locks) before the first edit, and, in a
#   fresh directory, the first edit made 0.3 s after the cold build (which waits for them);
# - 8 generated sources sharing their leading includes (hip_runtime.h, a common header),
#   shared memory and a template each: cold, against `hipcc -c` of each source under
#   `xargs -P2` (make -j2).
# An edit is written, then the script waits 0.3 s, as a person would, before building: the
# cache does not trust a file changed less than a clock tick before a job starts. Rounds
# alternate which mode (PCH, no PCH) runs first.
# Prints the tables with the ratios and the medians over the programs: PCH / no PCH is the
# median of the ratios of paired runs (same round; two cold builds per mode and round),
# PCH / hipcc the ratio of the medians.
# HOST_CODE=1 builds with --host-code (each source with its host code, the object hipcc -c
# writes): then offload-build does all that hipcc -c does, and PCH / hipcc compares like
# with like.
#   benches/pch.sh [path/to/offload-build]     (default: target/release/offload-build)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck source=hip_sources.sh
source "$root/benches/hip_sources.sh"
BIN=${1:-$root/target/release/offload-build}
ROUNDS=${ROUNDS:-3}
ARCHS='gfx90a;gfx1030;gfx906'
HIPCC_ARCHS=(--offload-arch=gfx90a --offload-arch=gfx1030 --offload-arch=gfx906)
for f in "$BIN" /usr/bin/hipcc /usr/bin/clang-15 /usr/include/hip/hip_runtime.h /usr/include/rocprim/rocprim.hpp; do
  [[ -e $f ]] || { echo "$f is missing: build offload-build (cargo build --release) and run build-support/setup.sh" >&2; exit 1; }
done
load_before=$(cut -d" " -f1-3 /proc/loadavg)
unset CI OFFLOAD_BUILD_PCH_BACKGROUND OFFLOAD_BUILD_PCH OFFLOAD_BUILD_CACHE_DIR OFFLOAD_BUILD_LAUNCHER OFFLOAD_ARCH HIPFLAGS CLANG HIPCXX

# Milliseconds "$@" takes, read from bash's clock ($EPOCHREALTIME, microseconds): forking
# `date` around it would add 2-4 ms to every figure, a third of a no-op.
ms() { local s e; s=$EPOCHREALTIME; "$@" >/dev/null 2>&1; e=$EPOCHREALTIME; echo $(( (${e/./} - ${s/./}) / 1000 )); }
# Waits for the background PCHs of the out-dir $1 (each clang holds its directory's lock).
wait_bg() { local l; for l in "$1"/offload-build-cache/*.bg/lock; do [[ -e $l ]] && flock -s "$l" true; done; return 0; }
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
edit() { "$@"; sleep 0.3; } # write, then let the clock move on as a person would

saxpy() { # $1: a constant in the body
  cat <<SRC
#include <hip/hip_runtime.h>

__global__ void saxpy(float a, const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i] + $1.0f;
}
SRC
}

matmul() {
  cat <<SRC
#include <hip/hip_runtime.h>
#include <cstddef>

template <unsigned Tile>
__global__ void __launch_bounds__(Tile * Tile)
matmul(const float* a, const float* b, float* c, unsigned n) {
  __shared__ float ta[Tile][Tile];
  __shared__ float tb[Tile][Tile];
  unsigned row = blockIdx.y * Tile + threadIdx.y, col = blockIdx.x * Tile + threadIdx.x;
  float acc = $1.0f;
  for (unsigned t = 0; t < n / Tile; ++t) {
    ta[threadIdx.y][threadIdx.x] = a[row * n + t * Tile + threadIdx.x];
    tb[threadIdx.y][threadIdx.x] = b[(t * Tile + threadIdx.y) * n + col];
    __syncthreads();
    for (unsigned k = 0; k < Tile; ++k) acc += ta[threadIdx.y][k] * tb[k][threadIdx.x];
    __syncthreads();
  }
  c[row * n + col] = acc;
}

template __global__ void matmul<16>(const float*, const float*, float*, unsigned);
SRC
}

reduce() {
  cat <<SRC
#include <hip/hip_runtime.h>
#include <cmath>

template <int Block>
__device__ float block_sum(float v) {
  __shared__ float part[Block];
  part[threadIdx.x] = v;
  __syncthreads();
  for (int s = Block / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s) part[threadIdx.x] += part[threadIdx.x + s];
    __syncthreads();
  }
  return part[0];
}

extern "C" __global__ void softmax_denominator(const float* x, float* out, int n) {
  int i = blockIdx.x * 256 + threadIdx.x;
  float s = block_sum<256>(i < n ? expf(x[i] - $1.0f) : 0.0f);
  if (threadIdx.x == 0) atomicAdd(out, s);
}
SRC
}

rocprim() {
  cat <<SRC
#include <hip/hip_runtime.h>
#include <rocprim/rocprim.hpp>

extern "C" __global__ void __launch_bounds__(256) block_sums(const float* x, float* out) {
  using reduce_t = rocprim::block_reduce<float, 256>;
  __shared__ typename reduce_t::storage_type storage;
  float v = x[blockIdx.x * 256 + threadIdx.x] * $1.0f, sum;
  reduce_t().reduce(v, sum, storage);
  if (threadIdx.x == 0) out[blockIdx.x] = sum;
}
SRC
}


PROGRAMS=(saxpy matmul reduce rocprim)
# rocPRIM 5.3 needs C++14 or later (hipcc's default is C++11): every build gets -std=c++17.
STD=-std=c++17
declare -A T
add() { T[$1]="${T[$1]:-} $2"; }
for r in $(seq 1 "$ROUNDS"); do
  # The order of the modes alternates between rounds: what ran just before a build (hipcc's
  # processes, another mode's files going away) must not favour either.
  modes=(pch nopch); (( r % 2 == 0 )) && modes=(nopch pch)
  for p in "${PROGRAMS[@]}"; do
    for mode in "${modes[@]}"; do
      flag=(); [[ $mode == nopch ]] && flag=(--no-pch); [[ ${HOST_CODE:-0} == 1 ]] && flag+=(--host-code)
      d=$(mktemp -d /tmp/pch-bench.XXXX); mkdir -p "$d/out"
      one() { "$BIN" compile "$d/$p.hip" --archs "$ARCHS" --flag=$STD -o "$d/out/libk.a" --out-dir "$d/od" -j 2 -q "${flag[@]}"; }
      edit eval '"$p" 1 > "$d/$p.hip"'
      add "${p}_cold_$mode" "$(ms one)"
      add "${p}_bg_$mode" "$(ms wait_bg "$d/od")"
      edit eval '"$p" 2 > "$d/$p.hip"'; add "${p}_edit1_$mode" "$(ms one)"
      edit eval '"$p" 3 > "$d/$p.hip"'; add "${p}_edit2_$mode" "$(ms one)"
      add "${p}_noop_$mode" "$(ms one)"
      rm -rf "$d"
      # The first edit 0.3 s after the cold build: it waits for the background PCHs.
      d=$(mktemp -d /tmp/pch-bench.XXXX); mkdir -p "$d/out"
      edit eval '"$p" 1 > "$d/$p.hip"'; add "${p}_cold_$mode" "$(ms one)" # a second cold sample
      edit eval '"$p" 2 > "$d/$p.hip"'; add "${p}_edit0_$mode" "$(ms one)"
      wait_bg "$d/od"; rm -rf "$d"
    done
    d=$(mktemp -d /tmp/pch-bench.XXXX)
    "$p" 1 > "$d/$p.hip"
    add "${p}_hipcc" "$(ms hipcc "${HIPCC_ARCHS[@]}" $STD -c "$d/$p.hip" -o "$d/$p.o")"
    add "${p}_hipcc_dev" "$(ms hipcc "${HIPCC_ARCHS[@]}" $STD --cuda-device-only -c "$d/$p.hip" -o "$d/$p.dev.o")"
    rm -rf "$d"
  done
  for mode in "${modes[@]}"; do
    flag=(); [[ $mode == nopch ]] && flag=(--no-pch); [[ ${HOST_CODE:-0} == 1 ]] && flag+=(--host-code)
    d=$(mktemp -d /tmp/pch-bench.XXXX); mkdir -p "$d/out"
    printf '#pragma once\n#define SCALE 2.0f\n' > "$d/common.h"
    srcs=(); for i in $(seq 1 8); do source_n "$i" > "$d/k$i.hip"; srcs+=("$d/k$i.hip"); done
    sleep 0.3
    eight() { "$BIN" compile "${srcs[@]}" --archs "$ARCHS" --flag=$STD -o "$d/out/libk.a" --out-dir "$d/od" -j 2 -q "${flag[@]}"; }
    add "eight_cold_$mode" "$(ms eight)"
    rm -rf "$d"
  done
  d=$(mktemp -d /tmp/pch-bench.XXXX)
  printf '#pragma once\n#define SCALE 2.0f\n' > "$d/common.h"
  for i in $(seq 1 8); do source_n "$i" > "$d/k$i.hip"; done
  hipcc_all() { printf '%s\n' "$d"/k*.hip | xargs -P2 -I{} hipcc "${HIPCC_ARCHS[@]}" $STD -c {} -o {}.o; }
  add eight_hipcc "$(ms hipcc_all)"
  rm -rf "$d"
done

m() { tr ' ' '\n' <<< "${T[$1]}" | grep . | median; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b == 0) print "-"; else printf "%.2f", a / b }'; }
echo "machine: $(nproc) cores ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')), $(uname -r); load before: $load_before"
echo "clang-15 (Debian ROCm 5.2); archs $ARCHS; -j 2; median of $ROUNDS runs"
echo
printf '| %-10s | %-28s | %8s | %8s | %10s | %10s |\n' program build "PCH ms" "no PCH" "PCH/no" "PCH/hipcc"
printf '|%s|%s|%s|%s|%s|%s|\n' ------------ ------------------------------ ---------- ---------- ------------ ------------
declare -A R
# The median of the ratios of paired runs (the i-th of key $1 over the i-th of key $2: the
# same round, minutes apart), steadier on a shared machine than a ratio of two medians.
paired() {
  paste <(tr ' ' '\n' <<< "${T[$1]:-}" | grep .) <(tr ' ' '\n' <<< "${T[$2]:-}" | grep .) |
    awk '$2 > 0 { print $1 / $2 }' | sort -g |
    awk '{ a[NR] = $1 } END { if (NR) printf "%.2f", a[int((NR + 1) / 2)]; else print "-" }'
}
row() { # program label key
  local p n h pn; p=$(m "${1}_${3}_pch"); n=$(m "${1}_${3}_nopch"); h=$(m "${1}_hipcc")
  pn=$(paired "${1}_${3}_pch" "${1}_${3}_nopch")
  R[${3}_no]="${R[${3}_no]:-} $pn"; R[${3}_hipcc]="${R[${3}_hipcc]:-} $(ratio "$p" "$h")"
  printf '| %-10s | %-28s | %8s | %8s | %10s | %10s |\n' "$1" "$2" "$p" "$n" "$pn" "$(ratio "$p" "$h")"
}
for p in "${PROGRAMS[@]}"; do
  row "$p" "cold (empty cache)" cold
  row "$p" "background PCHs end after" bg
  row "$p" "after an edit of the body" edit1
  row "$p" "the edit 0.3 s after cold" edit0
  row "$p" "the edit after that" edit2
  row "$p" "no-op" noop
done
mr() { tr ' ' '\n' <<< "${R[$1]}" | grep . | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
for k in cold:"cold (empty cache)" edit1:"after an edit of the body" edit0:"the edit 0.3 s after cold" edit2:"the edit after that" noop:no-op; do
  printf '| %-10s | %-28s | %8s | %8s | %10s | %10s |\n' median "${k#*:}" "" "" "$(mr "${k%%:*}_no")" "$(mr "${k%%:*}_hipcc")"
done
echo
for p in "${PROGRAMS[@]}"; do
  echo "$p: hipcc -c $(m "${p}_hipcc") ms, hipcc --cuda-device-only -c $(m "${p}_hipcc_dev") ms; ours cold with PCH / device-only hipcc: $(ratio "$(m "${p}_cold_pch")" "$(m "${p}_hipcc_dev")")"
done
p=$(m eight_cold_pch); n=$(m eight_cold_nopch); h=$(m eight_hipcc)
echo
echo "8 sources sharing their includes, cold: PCH $p ms, no PCH $n ms ($(ratio "$p" "$n")), hipcc -c under xargs -P2 $h ms: PCH/hipcc $(ratio "$p" "$h") (paired runs: $(paired eight_cold_pch eight_hipcc))"
