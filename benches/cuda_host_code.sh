#!/usr/bin/env bash
# CUDA sources with their host code, as the `cc` crate's `.cuda(true)` builds them, against
# `offload-build compile --host-code`: the four cuda-samples programs of
# integration/third-party/ (candle's kernel files compile as device code only: their
# compatibility.cuh redefines device functions in nvcc's host pass), sm_80 and sm_90, the
# nvcc of NVIDIA's wheels (CUDA 13).
#  (a) cc: one `nvcc -c -gencode arch=compute_80,code=[sm_80,compute_80] -gencode ...90...
#      SRC -o SRC.o` per source, JOBS at a time (cc runs a source per jobserver token); cc
#      compiles every source again whenever build.rs runs (an edit included);
#  (b) offload-build compile --host-code --archs 'sm_80;sm_90' SOURCES -o lib.a -j JOBS (the
#      same -std=c++17 in both): one
#      cached `nvcc -c` per source with both gencodes and --threads 2, the depfile in the same
#      pass, a fresh out-dir (cold), then the build after an edit of one source (a comment
#      appended to vectorAdd.cu, 0.3 s before: a change less than a clock tick old is not
#      trusted).
# RUNS rounds (default 3), alternating which runs first; prints the medians and ratios.
#   benches/cuda_host_code.sh [OFFLOAD_BUILD]   (default: target/release/offload-build)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
EXE=${1:-$root/target/release/offload-build}
RUNS=${RUNS:-3}
JOBS=${JOBS:-$(nproc)}
. "$root/benches/common.sh"
nvidia_wheels
[[ -x $EXE ]] || { echo "no $EXE: cargo build --release -p offload-cli" >&2; exit 1; }
tp=$root/integration/third-party
gencodes=(-gencode 'arch=compute_80,code=[sm_80,compute_80]'
          -gencode 'arch=compute_90,code=[sm_90,compute_90]')
export PATH=$cu13/bin:$PATH
unset NVCC_PREPEND_FLAGS NVCC_APPEND_FLAGS CI OFFLOAD_BUILD_CACHE_DIR OFFLOAD_BUILD_LAUNCHER CUDACXX

work=$(mktemp -d /tmp/cuda-host-code.XXXX)
trap 'rm -rf "$work"' EXIT
ms() { local s e; s=$EPOCHREALTIME; "$@" >"$work/log" 2>&1 || { tail -20 "$work/log" >&2; exit 1; }; e=$EPOCHREALTIME; echo $(( (${e/[.,]/} - ${s/[.,]/}) / 1000 )); }

# A copy of the sources (the edit changes one): sources and -I lists.
setup() {
  local d=$1
  mkdir -p "$d/src"
  cp -r "$tp/cuda-samples" "$d/src/"
  srcs=()
  for p in vectorAdd matrixMul simpleAtomicIntrinsics simpleTemplates; do srcs+=("$d/src/cuda-samples/$p/$p.cu"); done
}
cc_way() {  # (a)
  local d=$1
  COMMON=$d/src/cuda-samples/Common
  printf '%s\n' "${srcs[@]}" | xargs -P "$JOBS" -I{} \
    "$nvcc" -c "${gencodes[@]}" -I"$COMMON" -std=c++17 {} -o {}.o
}
ours() {  # (b)
  local d=$1
  "$EXE" compile --host-code --cuda-compiler nvcc --compiler "$nvcc" --archs 'sm_80;sm_90' \
    -I "$d/src/cuda-samples/Common" --flag=-std=c++17 -j "$JOBS" -q --out-dir "$d/od" \
    -o "$d/libk.a" "${srcs[@]}"
}
declare -A T
add() { T[$1]="${T[$1]:-} $2"; }
for r in $(seq 1 "$RUNS"); do
  for way in $( ((r % 2)) && echo "cc ours" || echo "ours cc"); do
    d=$work/$r-$way; setup "$d"; sleep 0.3 # files copied just now are not trusted yet
    if [[ $way == cc ]]; then
      add cc_cold "$(ms cc_way "$d")"
      echo "// edit" >> "$d/src/cuda-samples/vectorAdd/vectorAdd.cu"; sleep 0.3
      add cc_edit "$(ms cc_way "$d")"
    else
      add ours_cold "$(ms ours "$d")"
      echo "// edit" >> "$d/src/cuda-samples/vectorAdd/vectorAdd.cu"; sleep 0.3
      add ours_edit "$(ms ours "$d")"
      add ours_noop "$(ms ours "$d")"
    fi
    echo "round $r: $way done" >&2
  done
done
m() { tr ' ' '\n' <<< "${T[$1]}" | awk NF | median; }
echo "machine: $(cores); nvcc: $("$nvcc" --version | tail -2 | head -1)"
echo "${#srcs[@]} sources (cuda-samples), sm_80;sm_90, JOBS=$JOBS, median of $RUNS"
echo
echo "| build | cc .cuda(true) way (ms) | offload-build --host-code (ms) | ours / cc |"
echo "|---|---:|---:|---:|"
echo "| cold | $(m cc_cold) | $(m ours_cold) | $(ratio "$(m ours_cold)" "$(m cc_cold)") |"
echo "| after an edit of one source | $(m cc_edit) | $(m ours_edit) | $(ratio "$(m ours_edit)" "$(m cc_edit)") |"
echo "| no-op | - | $(m ours_noop) | - |"
# The ratio of each round's pair, whose median moves less with the machine's speed.
paired() { paste <(tr ' ' '\n' <<< "${T[$1]}" | awk NF) <(tr ' ' '\n' <<< "${T[$2]}" | awk NF) | awk '{print $1 / $2}' | median; }
echo "paired (median of the rounds' ratios): cold $(paired ours_cold cc_cold), after an edit $(paired ours_edit cc_edit)"
for k in cc_cold ours_cold cc_edit ours_edit ours_noop; do echo "$k:${T[$k]}"; done
