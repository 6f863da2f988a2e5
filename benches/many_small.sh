#!/usr/bin/env bash
# Many small HIP sources with their host code (issue 49): the 20 HeCBench sources of
# integration/third-party/hecbench/ (BSD-3; the list of integration/hip_fp16_crate.rs) for
# gfx1030;gfx90a with Debian's ROCm 5.2 and HeCBench's flags (-std=c++17 -O3; -w on every
# side, so that no side prints warnings), cold, three ways, RUNS rounds (default 2), the
# order rotating:
#  (a) `hipcc -c` of every source at once (as a build script that spawns a compile per
#      source does);
#  (b) `xargs -P2` of `hipcc -c` (make -j2);
#  (c) one `offload-build compile --host-code -j 2` of all the sources, a fresh out-dir
#      (its cache inside), background PCHs on (CI unset); the script waits for them before
#      the next way runs (timed apart).
# Prints the medians, (c)/(a) and (c)/(b), and where (c)'s time goes: the seconds of its
# device and host jobs (from its progress lines) and the PCHs it made.
#   benches/many_small.sh [OFFLOAD_BUILD]   (default: target/release/offload-build)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
EXE=${1:-$root/target/release/offload-build}
RUNS=${RUNS:-2}
. "$root/benches/common.sh"
[[ -x $EXE ]] || { echo "no $EXE: cargo build --release -p offload-cli" >&2; exit 1; }
[[ -x /usr/bin/hipcc ]] || { echo "no /usr/bin/hipcc: run build-support/setup.sh" >&2; exit 1; }
unset CI OFFLOAD_BUILD_CACHE_DIR OFFLOAD_BUILD_LAUNCHER OFFLOAD_BUILD_MAX_JOBS HIPFLAGS \
  OFFLOAD_BUILD_PCH OFFLOAD_BUILD_PCH_BACKGROUND
src=$root/integration/third-party/hecbench
sources=(conversion-hip/main.cu crossEntropy-hip/main.cu ert-hip/main.cu f16max-hip/main.cu
  gelu-hip/main.cu gemv-hip/gemv.cu gemv-hip/main.cu groupnorm-hip/main.cu gru-hip/main.cu
  logprob-hip/main.cu lut-gemm-hip/nQWeight_fp16.cu mf-sgd-hip/src/main.cpp
  mf-sgd-hip/src/sgd.cu quant3MatMul-hip/main.cu quantAQLM-hip/main.cu relu-hip/main.cu
  reverse2D-hip/main.cu rmsnorm-hip/main.cu vadd-hip/main.cu voxelization-hip/main.cu)
flags=(-std=c++17 -O3 -w)
archs=(--offload-arch=gfx1030 --offload-arch=gfx90a)

work=$(mktemp -d /tmp/many-small.XXXX)
trap 'rm -rf "$work"' EXIT
ms() { local s e; s=$EPOCHREALTIME; "$@" >"$work/log" 2>&1 || { tail -20 "$work/log" >&2; exit 1; }; e=$EPOCHREALTIME; echo $(( (${e/[.,]/} - ${s/[.,]/}) / 1000 )); }

at_once() {  # (a)
  local d=$1; mkdir -p "$d"; cd "$src"
  local s o
  for s in "${sources[@]}"; do
    o=$(tr / _ <<< "$s")
    hipcc -c "${archs[@]}" "${flags[@]}" "$s" -o "$d/$o.o" &
  done
  wait
}
two_at_a_time() {  # (b)
  local d=$1; mkdir -p "$d"; cd "$src"
  printf '%s\n' "${sources[@]}" | xargs -P 2 -I{} sh -c \
    'hipcc -c "$@" {} -o "$0/$(echo {} | tr / _).o"' "$d" "${archs[@]}" "${flags[@]}"
}
ours() {  # (c)
  local d=$1 f=(); mkdir -p "$d"; cd "$src"
  for x in "${flags[@]}"; do f+=("--flag=$x"); done
  "$EXE" compile --host-code --language hip --archs 'gfx1030;gfx90a' "${f[@]}" -j 2 \
    --out-dir "$d/od" -o "$d/libhecbench.a" "${sources[@]}" >"$d/progress" 2>&1
}
# The background PCHs (c) leaves for the next build (each clang holds its directory's lock)
# run before the next way starts, timed apart.
wait_bg() { local l; for l in "$1"/od/offload-build-cache/*.bg/lock; do [[ -e $l ]] && flock -s "$l" true; done; return 0; }

declare -A T
ways=(a b c)
for r in $(seq 1 "$RUNS"); do
  for i in 0 1 2; do
    way=${ways[$(( (i + r) % 3 ))]}
    d=$work/$r-$way
    case $way in a) f=at_once ;; b) f=two_at_a_time ;; c) f=ours ;; esac
    T[$way]="${T[$way]:-} $(ms "$f" "$d")"
    [[ $way == c ]] && BG="${BG:-} $(ms wait_bg "$d")"
    echo "round $r: $way done" >&2
  done
done
m() { tr ' ' '\n' <<< "${T[$1]}" | awk NF | median; }
s() { awk -v m="$1" 'BEGIN{printf "%.1f", m/1000}'; }
echo "machine: $(cores)"
echo "${#sources[@]} HeCBench sources with host code, gfx1030;gfx90a, cold, median of $RUNS"
echo
echo "| build | (a) hipcc -c, all at once (s) | (b) xargs -P2 hipcc -c (s) | (c) compile --host-code -j 2 (s) | (c)/(a) | (c)/(b) |"
echo "|---|---:|---:|---:|---:|---:|"
echo "| cold | $(s "$(m a)") | $(s "$(m b)") | $(s "$(m c)") | $(ratio "$(m c)" "$(m a)") | $(ratio "$(m c)" "$(m b)") |"
echo
last=$work/$RUNS-c
awk '/^\[[0-9]+\/[0-9]+\]/ { k = ($2 == "host") ? "host" : "device"; t[k] += $(NF-1); n[k]++ }
     END { for (k in t) printf "(c) %s jobs: %d, %.1f s of job time\n", k, n[k], t[k] }' "$last/progress"
echo "(c) PCHs made in the build: $(find "$last/od" -name '*.pch' -not -path '*.bg/*' | wc -l); in the background after it: $(find "$last/od" -path '*.bg/*' -name '*.pch' | wc -l), waited for apart:$BG ms"
for k in a b c; do echo "$k:${T[$k]}"; done
