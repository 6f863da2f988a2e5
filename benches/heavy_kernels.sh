#!/usr/bin/env bash
# Heavy kernels (issue 48): a slice of candle-flash-attn 0.11.1's CUDA sources (flash
# attention on CUTLASS/CuTe templates: one nvcc -c takes minutes and gigabytes), for sm_80,
# with the nvcc of NVIDIA's wheels (CUDA 13) and CUTLASS's headers from NVIDIA's
# nvidia-cutlass wheel, with the crate's flags:
#  (a) as cudaforge / bindgen_cuda build them: one `nvcc -gencode=arch=compute_80,code=sm_80
#      -c` per source, MAX_JOBS at a time (xargs -P; flash-attention's MAX_JOBS);
#  (b) benches/heavy-kernels: a build.rs with Build::host_code(true), the same flags, nothing
#      set by hand (no job count, no memory limit), run by cargo (its jobserver: the cores).
# Each cold, in a memory cgroup whose limit is LIMIT_X (1.5) times the largest peak of one
# compile (measured in the unlimited (a) run: /usr/bin/time's maximum resident size), and
# without a limit; then one source alone, `nvcc -c` against (b). It checks that every build
# wrote the same kernels (each object's SASS and symbols, with nvcc's per-compile module ID
# masked: it holds a process ID for these sources), and prints the table of
# docs/performance.md. Needs root (the cgroup) and about 80 minutes on 2 cores (3 sources).
#   benches/heavy_kernels.sh                      (SOURCES, MAX_JOBS, LIMIT_X to change)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
SOURCES=${SOURCES:-"flash_fwd_hdim32_fp16_sm80 flash_fwd_hdim32_bf16_sm80 flash_fwd_hdim64_fp16_sm80"}
MAX_JOBS=${MAX_JOBS:-2}
LIMIT_X=${LIMIT_X:-1.5}
. "$root/benches/common.sh"
nvidia_wheels
((EUID == 0)) || { echo "heavy_kernels.sh makes a memory cgroup: run it as root" >&2; exit 1; }
export PATH=$cu13/bin:$PATH
unset NVCC_PREPEND_FLAGS NVCC_APPEND_FLAGS CI OFFLOAD_BUILD_CACHE_DIR OFFLOAD_BUILD_LAUNCHER \
  CUDACXX OFFLOAD_BUILD_MAX_JOBS OFFLOAD_BUILD_MEMORY

# The inputs, pinned: candle-flash-attn 0.11.1 (MIT/Apache-2.0) from crates.io through cargo,
# and nvidia-cutlass 4.2.0.0 (BSD-3-Clause) from PyPI.
inputs=$root/target/bench-inputs/heavy
CRATE_SHA=e8f233a5d78ac84fac2b097330faae4a26eae4c4009c54fdb0ec8b7b3c23a15b
WHEEL=nvidia_cutlass-4.2.0.0-py3-none-any.whl
WHEEL_SHA=f9599ada45c7bcb6bf53f7d3f0a7d154183e53451c01bfa59eecd37dd4a693f6
fetch() {
  mkdir -p "$inputs"
  fetch_crate candle-flash-attn 0.11.1 "$CRATE_SHA" "$inputs"
  if [[ ! -d $inputs/cutlass ]]; then
    python3 -m pip download -q --no-deps nvidia-cutlass==4.2.0.0 -d "$inputs"
    echo "$WHEEL_SHA  $inputs/$WHEEL" | sha256sum -c --quiet
    (mkdir -p "$inputs/cutlass" && cd "$inputs/cutlass" && python3 -m zipfile -e "../$WHEEL" .)
  fi
}
fetch
cfa=$inputs/candle-flash-attn-0.11.1
cutlass=$inputs/cutlass/cutlass_library/source
srcs=()
for s in $SOURCES; do srcs+=("$cfa/kernels/$s.cu"); done

# The crate's flags (build.rs), then cudaforge's own; the header hash is a constant here.
flags=(-std=c++17 -O3 -U__CUDA_NO_HALF_OPERATORS__ -U__CUDA_NO_HALF_CONVERSIONS__
  -U__CUDA_NO_HALF2_OPERATORS__ -U__CUDA_NO_BFLOAT16_CONVERSIONS__ --expt-relaxed-constexpr
  --expt-extended-lambda --use_fast_math --verbose -DCANDLE_FLASH_ATTN_HEADER_HASH=0x0)
cudaforge=(--default-stream per-thread -I"$cutlass/include" -I"$cutlass/tools/util/include"
  -DUSE_CUTLASS -Xcompiler -fPIC)

work=$root/target/bench-heavy
rm -rf "$work/runs"
mkdir -p "$work/runs"
log=$work/runs/log
ms() {
  local s e; s=$EPOCHREALTIME; "$@"; local rc=$?; e=$EPOCHREALTIME
  echo $(( (${e/[.,]/} - ${s/[.,]/}) / 1000 )) >"$work/runs/ms"
  echo "$(date +%T) rc=$rc $(<"$work/runs/ms") ms: ${*:1:2}" >>"$work/runs/times"  # kept as they come
  return $rc
}

# A memory cgroup (v2 with the memory controller, else v1's hierarchy) of LIMIT bytes.
cg=
cgroup() {
  local limit=$1
  if grep -qw memory /sys/fs/cgroup/cgroup.controllers 2>/dev/null; then
    cg=/sys/fs/cgroup/offload-build-heavy; mkdir -p "$cg"
    echo "$limit" > "$cg/memory.max"; echo 0 > "$cg/memory.swap.max" 2>/dev/null || true
  else
    cg=/sys/fs/cgroup/memory/offload-build-heavy; mkdir -p "$cg"
    echo "$limit" > "$cg/memory.limit_in_bytes"
  fi
}
in_cg() { sh -c 'echo $$ > "$0/cgroup.procs" && exec "$@"' "$cg" "$@"; }
oom_kills() { { grep -h '^oom_kill ' "$cg/memory.events" "$cg/memory.oom_control" 2>/dev/null || echo "x 0"; } | awk '{s+=$2} END {print s+0}'; }

# (a): one nvcc -c per source, MAX_JOBS at a time, objects in $1; each source's peak in $1/peaks.
cudaforge_way() {
  local out=$1 jobs=$2
  mkdir -p "$out"
  printf '%s\n' "${srcs[@]}" | (cd "$cfa" && xargs -P "$jobs" -I{} sh -c '
    o="$0/$(basename "{}" .cu).o"; n=$1; shift
    /usr/bin/time -f "%M {}" -a -o "$0/peaks" "$n" -gencode=arch=compute_80,code=sm_80 -c -o "$o" "$@" "{}"' \
      "$out" "$nvcc" "${flags[@]}" "${cudaforge[@]}")
}
# (b): the build.rs crate, cold: its build script (built once, outside every timing) runs
# again (HEAVY_RUN changes) with an empty OUT_DIR, where offload-build keeps its cache.
build_rs_way() {
  local run=$1
  rm -rf "$work"/warm/target/release/build/heavy-kernels-*/out/*
  (cd "$root/benches/heavy-kernels" &&
    VIRTUAL_ENV=$venv HEAVY_SOURCES="${srcs[*]}" HEAVY_CUTLASS=$cutlass HEAVY_ARCH=80-real \
      HEAVY_RUN=$run CARGO_TARGET_DIR=$work/warm/target cargo build -q --release)
}
(cd "$root/benches/heavy-kernels" && VIRTUAL_ENV=$venv CARGO_TARGET_DIR=$work/warm/target \
  cargo build -q --release)
# The library (b) wrote, kept as $1.a.
keep_lib() { cp "$(find "$work/warm/target/release/build" -name libflashattention.a | head -1)" "$1.a"; }

# The kernels an object holds: its cubins as cuobjdump -elf dumps them (every section's
# content; not the section table, whose offsets move with the module ID's length) and its
# host symbols, nvcc's per-compile module ID and the name of its temporary file (in the
# static initializer's symbol, `_GLOBAL__sub_I_tmpxft_…_<stem>.cudafe1.cpp`) masked.
kernels() {
  local obj=$1
  { cuobjdump -elf "$obj" | grep -vE '^\s+[0-9a-f]+\s+[0-9a-f]+\s+[0-9a-f]+\s+[0-9a-f]+\s+[0-9a-f]+\s+[A-Z_]+'; nm "$obj" | awk '{print $NF}' | sort; } |
    sed -E 's/_cu_[0-9a-f]{8}_[0-9]+/_cu_ID/g; s/tmpxft_[0-9a-f]+_[0-9a-f]+_[0-9]+_//g' | md5sum | cut -c1-16
}
kernels_dir() { for o in "$1"/*.o; do echo "$(basename "$o") $(kernels "$o")"; done; }
kernels_lib() { local t; t=$(mktemp -d); (cd "$t" && ar x "$1"); for o in "$t"/*.o; do echo "$(basename "$o") $(kernels "$o")"; done; rm -rf "$t"; }

declare -A T
echo "== (a) unlimited, MAX_JOBS=$MAX_JOBS" >&2
ms cudaforge_way "$work/runs/a-unlimited" "$MAX_JOBS"; T[a_unl]=$(<"$work/runs/ms")
peak_kb=$(awk '{print $1}' "$work/runs/a-unlimited/peaks" | sort -n | tail -1)
limit=$(awk -v k="$peak_kb" -v x="$LIMIT_X" 'BEGIN { printf "%.0f", k * 1024 * x }')
want=$(kernels_dir "$work/runs/a-unlimited")

echo "== (b) unlimited" >&2
ms build_rs_way unlimited; T[b_unl]=$(<"$work/runs/ms"); keep_lib "$work/runs/b-unlimited"
[[ $(kernels_lib "$work/runs/b-unlimited.a") == "$want" ]] || { echo "(b) unlimited: other kernels than (a)" >&2; exit 1; }

cgroup "$limit"
best=; oomed=
for j in $(seq "$MAX_JOBS" -1 1); do
  echo "== (a) in the cgroup ($((limit >> 20)) MiB), MAX_JOBS=$j" >&2
  before=$(oom_kills)
  if ms in_cg bash -c "$(declare -p srcs flags cudaforge cfa nvcc); $(declare -f cudaforge_way); cudaforge_way \"\$0\" $j" "$work/runs/a-cg-$j" >>"$log" 2>&1 \
      && [[ $(oom_kills) == "$before" ]]; then
    T[a_cg]=$(<"$work/runs/ms"); best=$j; break
  fi
  oomed="$oomed MAX_JOBS=$j:$(( $(oom_kills) - before ))kills"
done
[[ -n $best ]] || { echo "(a) never finished in the cgroup:$oomed" >&2; exit 1; }

echo "== (b) in the cgroup" >&2
before=$(oom_kills)
ms in_cg bash -c "$(declare -p srcs cutlass root venv work); $(declare -f build_rs_way); build_rs_way cgroup" >>"$log" 2>&1
T[b_cg]=$(<"$work/runs/ms"); b_kills=$(( $(oom_kills) - before )); keep_lib "$work/runs/b-cg"
[[ $(kernels_lib "$work/runs/b-cg.a") == "$want" ]] ||
  { echo "(b) in the cgroup: other objects than the unlimited builds'" >&2; exit 1; }

echo "== one source alone" >&2
one=${srcs[0]}
srcs=("$one")
ms cudaforge_way "$work/runs/a-one" 1; T[a_one]=$(<"$work/runs/ms")
ms build_rs_way one; T[b_one]=$(<"$work/runs/ms")

s() { awk -v m="$1" 'BEGIN { printf "%.0f", m / 1000 }'; }
echo "machine: $(cores), $(free -g | awk '/Mem:/ {print $2}') GiB; nvcc: $("$nvcc" --version | tail -2 | head -1)"
echo "sources: $SOURCES (candle-flash-attn 0.11.1, CUTLASS 4.2.0.0), sm_80; largest peak of one nvcc -c: $((peak_kb >> 10)) MiB; cgroup limit $((limit >> 20)) MiB"
echo
echo "| build | (a) cudaforge's way (s) | (b) build.rs, host_code(true) (s) | (b) / (a) |"
echo "|---|---:|---:|---:|"
echo "| unlimited, (a) MAX_JOBS=$MAX_JOBS | $(s "${T[a_unl]}") | $(s "${T[b_unl]}") | $(ratio "${T[b_unl]}" "${T[a_unl]}") |"
echo "| cgroup of $((limit >> 20)) MiB, (a) MAX_JOBS=$best (the most that finished${oomed:+; killed for memory:$oomed}) | $(s "${T[a_cg]}") | $(s "${T[b_cg]}") (${b_kills} kills) | $(ratio "${T[b_cg]}" "${T[a_cg]}") |"
echo "| one source alone ($(basename "$one")) | $(s "${T[a_one]}") | $(s "${T[b_one]}") | $(ratio "${T[b_one]}" "${T[a_one]}") |"
