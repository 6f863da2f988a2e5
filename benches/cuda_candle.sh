#!/usr/bin/env bash
# candle's nine CUDA kernel files (integration/third-party/candle-kernels) for sm_80;sm_90 with
# the nvcc of NVIDIA's wheels (CUDA 13), two ways, alternating, RUNS times each (default 3),
# cold every time; prints each run, the medians and the ratio ours/theirs.
#  (a) as bindgen_cuda runs nvcc: one nvcc per source, all sources at once on a pool of JOBS
#      (bindgen_cuda's rayon pool has one thread per physical core), each nvcc given both
#      gencodes and candle's flags, writing a fat binary:
#        nvcc -fatbin -gencode arch=compute_80,code=[sm_80,compute_80]
#             -gencode arch=compute_90,code=[sm_90,compute_90] --default-stream per-thread
#             --expt-relaxed-constexpr -std=c++17 -O3 -I<toolkit>/include SRC -o SRC.fatbin
#      (bindgen_cuda itself asks for `--ptx --gpu-architecture=sm_<local GPU>`, one arch and no
#      cubin; the gencodes here make it build what (b) builds.)
#  (b) offload-build compile --cuda-compiler nvcc --archs 'sm_80;sm_90' with the same flags,
#      one fat binary, -j JOBS, a fresh --out-dir and OFFLOAD_BUILD_CACHE_DIR per run. Skipped,
#      with a line saying so, by an offload-build without `--cuda-compiler`.
#   benches/cuda_candle.sh [OFFLOAD_BUILD]   (default: target/release/offload-build)
#   RUNS=5 JOBS=2 NVIDIA_VENV=/opt/offload-build/nvidia-venv benches/cuda_candle.sh
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
EXE=${1:-$root/target/release/offload-build}
RUNS=${RUNS:-3}
JOBS=${JOBS:-$(nproc)}
. "$root/benches/common.sh"
nvidia_wheels
src=$root/integration/third-party/candle-kernels/src
kernels=(affine binary cast fill indexing reduce sort ternary unary)
sources=("${kernels[@]/#/$src/}"); sources=("${sources[@]/%/.cu}")
flags=(--expt-relaxed-constexpr -std=c++17 -O3)
gencodes=(-gencode 'arch=compute_80,code=[sm_80,compute_80]'
          -gencode 'arch=compute_90,code=[sm_90,compute_90]')
export PATH=$cu13/bin:$PATH
unset NVCC_PREPEND_FLAGS NVCC_APPEND_FLAGS

ours=1
if [[ ! -x $EXE ]]; then
  echo "(b) skipped: no $EXE (cargo build --release -p offload-cli)"; ours=0
elif ! "$EXE" compile --help | grep -q -- --cuda-compiler; then
  echo "(b) skipped: $EXE has no --cuda-compiler (nvcc support of issue 24)"; ours=0
fi

work=$(mktemp -d /tmp/cuda-candle.XXXX)
trap 'rm -rf "$work"' EXIT
ms() { local s e; s=$(date +%s%N); "$@"; e=$(date +%s%N); echo $(( (e-s)/1000000 )); }

theirs() {  # (a): one nvcc per source, JOBS at a time
  local d=$1; mkdir -p "$d"
  printf '%s\n' "${kernels[@]}" | xargs -P "$JOBS" -I{} \
    "$nvcc" -fatbin "${gencodes[@]}" --default-stream per-thread "${flags[@]}" \
    -I"$cu13/include" "$src/{}.cu" -o "$d/{}.fatbin"
}
offload() {  # (b): offload-build compile, cold cache
  local d=$1; mkdir -p "$d/cache"
  OFFLOAD_BUILD_CACHE_DIR=$d/cache "$EXE" compile --cuda-compiler nvcc --archs 'sm_80;sm_90' \
    "${flags[@]/#/--flag=}" --container cuda-fatbin --embed fatbin -j "$JOBS" -q \
    --out-dir "$d/od" -o "$d/candle.fatbin" "${sources[@]}"
}

echo "candle kernels, sm_80;sm_90, nvcc $("$nvcc" --version | sed -n 's/.*release \([0-9.]*\).*/\1/p'), JOBS=$JOBS, $(nproc) CPUs"
a=(); b=()
for r in $(seq 1 "$RUNS"); do
  t=$(ms theirs "$work/a$r"); a+=("$t"); line="run $r: (a) nvcc per source ${t} ms"
  if (( ours )); then t=$(ms offload "$work/b$r"); b+=("$t"); line+=", (b) offload-build ${t} ms"; fi
  echo "$line"; rm -rf "$work/a$r" "$work/b$r"
done
ma=$(printf '%s\n' "${a[@]}" | median)
echo "median (a) nvcc as bindgen_cuda runs it: ${ma} ms"
if (( ours )); then
  mb=$(printf '%s\n' "${b[@]}" | median)
  echo "median (b) offload-build compile --cuda-compiler nvcc: ${mb} ms"
  awk -v a="$ma" -v b="$mb" 'BEGIN { printf "ratio (b)/(a): %.2f\n", b / a }'
fi
