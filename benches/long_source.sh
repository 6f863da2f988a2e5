#!/usr/bin/env bash
# A published CUDA crate whose sources differ much in cost (issue 48: the longest must start
# first): mistralrs-paged-attn 0.8.1's kernels (MIT, from crates.io through cargo, pinned by
# checksum; its build.rs hands src/cuda/*.cu to cudaforge), sm_80, the nvcc of NVIDIA's
# wheels (CUDA 13), the crate's flags and cudaforge's own, cold:
#  (a) as cudaforge builds them: one `nvcc -gencode=arch=compute_80,code=sm_80 -c` per
#      source, JOBS at a time (xargs -P; cudaforge runs a source per core);
#  (b) `offload-build compile --host-code --archs 80-real` of all the sources with the same
#      flags and -j JOBS, a fresh out-dir.
# SOURCES (stems) builds some of them only. RUNS rounds (default 2), alternating which runs
# first; prints the medians and the ratio, and the longest nvcc -c of (a)'s first round (each
# beside another, `/usr/bin/time`).
#   benches/long_source.sh [OFFLOAD_BUILD]   (default: target/release/offload-build)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
EXE=${1:-$root/target/release/offload-build}
RUNS=${RUNS:-2}
JOBS=${JOBS:-$(nproc)}
. "$root/benches/common.sh"
nvidia_wheels
[[ -x $EXE ]] || { echo "no $EXE: cargo build --release -p offload-cli" >&2; exit 1; }
export PATH=$cu13/bin:$PATH
unset NVCC_PREPEND_FLAGS NVCC_APPEND_FLAGS CI OFFLOAD_BUILD_CACHE_DIR OFFLOAD_BUILD_LAUNCHER \
  CUDACXX OFFLOAD_BUILD_MAX_JOBS OFFLOAD_BUILD_MEMORY

inputs=$root/target/bench-inputs/long-source
CRATE_SHA=6e53ddf1537426997b46abdadbe6ca8a7ce7668004ed2b7cf00115016558bae8
fetch_crate mistralrs-paged-attn 0.8.1 "$CRATE_SHA" "$inputs"
cu=$inputs/mistralrs-paged-attn-0.8.1/src/cuda
srcs=()
if [[ -n ${SOURCES:-} ]]; then for s in $SOURCES; do srcs+=("$cu/$s.cu"); done; else srcs=("$cu"/*.cu); fi

# The crate's flags (build.rs), then cudaforge's own.
flags=(-std=c++17 -O3 -U__CUDA_NO_HALF_OPERATORS__ -U__CUDA_NO_HALF_CONVERSIONS__
  -U__CUDA_NO_HALF2_OPERATORS__ -U__CUDA_NO_BFLOAT16_CONVERSIONS__ --expt-relaxed-constexpr
  --expt-extended-lambda --use_fast_math --verbose --compiler-options -fPIC
  --default-stream per-thread)

work=$(mktemp -d /tmp/long-source.XXXX)
trap 'rm -rf "$work"' EXIT
ms() { local s e; s=$EPOCHREALTIME; "$@" >"$work/log" 2>&1 || { tail -20 "$work/log" >&2; exit 1; }; e=$EPOCHREALTIME; echo $(( (${e/[.,]/} - ${s/[.,]/}) / 1000 )); }

cudaforge_way() {  # (a)
  local d=$1; mkdir -p "$d"
  printf '%s\n' "${srcs[@]}" | (cd "$cu" && xargs -P "$JOBS" -I{} sh -c '
    d=$0; n=$1; shift
    /usr/bin/time -f "%e s %M KiB $(basename {})" -a -o "$d/times" "$n" -gencode=arch=compute_80,code=sm_80 -c -o "$d/$(basename {} .cu).o" "$@" {}' \
      "$d" "$nvcc" "${flags[@]}")
}
ours() {  # (b)
  local d=$1 f=()
  mkdir -p "$d"
  for x in "${flags[@]}"; do f+=("--flag=$x"); done
  (cd "$cu" && "$EXE" compile --host-code --cuda-compiler nvcc --compiler "$nvcc" --archs 80-real \
    "${f[@]}" -j "$JOBS" -q --out-dir "$d/od" -o "$d/libmistralrspagedattention.a" "${srcs[@]}")
}
declare -A T
add() { T[$1]="${T[$1]:-} $2"; }
for r in $(seq 1 "$RUNS"); do
  for way in $( ((r % 2)) && echo "a b" || echo "b a"); do
    d=$work/$r-$way
    t=$(ms "$( [[ $way == a ]] && echo cudaforge_way || echo ours)" "$d") || exit 1
    add "$way" "$t"
    echo "round $r: $way done" >&2
  done
done
m() { tr ' ' '\n' <<< "${T[$1]}" | awk NF | median; }
echo "machine: $(cores); nvcc: $("$nvcc" --version | tail -2 | head -1)"
echo "${#srcs[@]} sources (mistralrs-paged-attn 0.8.1), sm_80, JOBS=$JOBS, median of $RUNS"
echo
echo "| build | (a) cudaforge's way (s) | (b) offload-build --host-code (s) | (b) / (a) |"
echo "|---|---:|---:|---:|"
echo "| cold | $(awk -v m="$(m a)" 'BEGIN{printf "%.0f", m/1000}') | $(awk -v m="$(m b)" 'BEGIN{printf "%.0f", m/1000}') | $(ratio "$(m b)" "$(m a)") |"
echo
echo "each nvcc -c of (a)'s first round (beside another): $(sort -rn "$work/1-a/times" | head -3 | tr '\n' ';') ..."
for k in a b; do echo "$k:${T[$k]}"; done
