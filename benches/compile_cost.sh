#!/usr/bin/env bash
# The cost of a change to offload-build compile's no-op and edit builds: two release binaries
# (e.g. target/release/offload-build of two checkouts) compile examples/hip-vector-add's two HIP
# kernels (Debian ROCm 5.2, clang 15, 3 archs), alternating: cold, no-op rebuilds (median of
# 15) and one-kernel edit rebuilds (median of 5), ROUNDS times (default 3).
#   benches/compile_cost.sh OLD/offload-build NEW/offload-build
set -euo pipefail
OLD=$1; NEW=$2; ROUNDS=${ROUNDS:-3}
src="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/examples/hip-vector-add/kernels"
t() { local s e; s=$(date +%s%N); "$@" >/dev/null 2>&1; e=$(date +%s%N); echo $(( (e-s)/1000000 )); }
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
for r in $(seq 1 "$ROUNDS"); do
  for which in old new; do
    exe=$OLD; [[ $which == new ]] && exe=$NEW
    d=$(mktemp -d /tmp/b27.XXXX); cp -r "$src" "$d/k"
    run() { "$exe" compile "$d/k/vector_add.hip" "$d/k/scale.hip" -I "$d/k" -D VECTOR_ADD_BLOCK=256 --archs 'gfx90a;gfx1030;gfx906' -o "$d/out/libk.a" --out-dir "$d/od" -j 2; }
    mkdir -p "$d/out"
    cold=$(t run)
    noop=$(for i in $(seq 15); do t run; done | median)
    edit=$(for i in $(seq 5); do echo "// edit $i" >> "$d/k/scale.hip"; t run; done | median)
    echo "$which round $r: cold ${cold} ms, no-op ${noop} ms, edit ${edit} ms"
    rm -rf "$d"
  done
done
