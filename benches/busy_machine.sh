#!/usr/bin/env bash
# One HIP source built as a user builds it while other work keeps the machine busy (issue
# 48): LOAD processes (default: one per core) spin beside every build of both sides, at the
# build's priority, for the whole run. Sources of AMD's rocm-examples (benches/make_style/:
# saxpy, matrix_multiplication, convolution, rocPRIM device_sum), gfx90a;gfx1030;gfx906,
# Debian's ROCm 5.2 and its clang 15, -std=c++17:
# - hipcc: `hipcc -c` (host code) and `hipcc --cuda-device-only -c` of the source;
# - ours:  `offload-build compile SRC --archs … -o OBJ` with --host-code and without (device
#          code only), cold (empty out-dir), then, EDIT_AFTER seconds later (default 10: the
#          user reads the output, changes a line), the build after an edit of the kernel body.
# The background PCHs of the cold build run then as they would (nothing waits for them).
# ROUNDS rounds (default 3); prints per program and mode the medians and ratios to hipcc,
# and the median of the ratios over the programs. LOAD=0 measures a quiet machine.
#   benches/busy_machine.sh [path/to/offload-build]   (default: target/release/offload-build)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BIN=${1:-$root/target/release/offload-build}
ROUNDS=${ROUNDS:-3}
LOAD=${LOAD:-$(nproc)}
EDIT_AFTER=${EDIT_AFTER:-10}
PROGRAMS=${PROGRAMS:-"saxpy matrix_multiplication convolution device_sum"}
SRC=$root/benches/make_style
ARCHS='gfx90a;gfx1030;gfx906'
HIPCC_ARCHS=(--offload-arch=gfx90a --offload-arch=gfx1030 --offload-arch=gfx906)
STD=-std=c++17
for f in "$BIN" /usr/bin/hipcc /usr/bin/clang-15 /usr/include/rocprim/rocprim.hpp; do
  [[ -e $f ]] || { echo "$f is missing: cargo build --release -p offload-cli; build-support/setup.sh" >&2; exit 1; }
done
unset CI OFFLOAD_BUILD_PCH_BACKGROUND OFFLOAD_BUILD_PCH OFFLOAD_BUILD_CACHE_DIR OFFLOAD_BUILD_LAUNCHER \
  OFFLOAD_ARCH HIPFLAGS CLANG HIPCXX OFFLOAD_BUILD_MEMORY OFFLOAD_BUILD_MAX_JOBS

busy=()
stop() { ((${#busy[@]})) && kill "${busy[@]}" 2>/dev/null; rm -rf "${work:-}"; }
trap stop EXIT
for _ in $(seq 1 "$LOAD"); do (while :; do :; done) & busy+=($!); done
work=$(mktemp -d /tmp/busy-bench.XXXX)

ms() { local s e; s=$EPOCHREALTIME; "$@" >/dev/null 2>&1 || { "$@"; exit 1; }; e=$EPOCHREALTIME; echo $(( (${e/[.,]/} - ${s/[.,]/}) / 1000 )); }
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
declare -A T
add() { T[$1]="${T[$1]:-} $2"; }
for r in $(seq 1 "$ROUNDS"); do
  for p in $PROGRAMS; do
    d=$work/$r-$p; mkdir -p "$d"
    cp "$SRC/$p.hip" "$d/"
    add "${p}_hipcc_host" "$(ms hipcc "${HIPCC_ARCHS[@]}" $STD -I "$SRC/Common" -c "$d/$p.hip" -o "$d/h.o")"
    add "${p}_hipcc_device" "$(ms hipcc "${HIPCC_ARCHS[@]}" $STD -I "$SRC/Common" --cuda-device-only -c "$d/$p.hip" -o "$d/hd.o")"
    for mode in host device; do
      m=$d/$mode; mkdir -p "$m"; cp "$SRC/$p.hip" "$m/"; sleep 0.3
      flag=(); [[ $mode == host ]] && flag=(--host-code)
      one() { "$BIN" compile "$m/$p.hip" --archs "$ARCHS" -I "$SRC/Common" --flag=$STD -o "$m/k.o" -q "${flag[@]}"; }
      add "${p}_cold_$mode" "$(ms one)"
      sleep "$EDIT_AFTER"
      # An edit of the kernel body (a statement at the end of the file changes no preamble).
      echo "// edited" >> "$m/$p.hip"; sleep 0.3
      add "${p}_edit_$mode" "$(ms one)"
    done
    echo "round $r: $p" >&2
  done
done

m() { tr ' ' '\n' <<< "${T[$1]}" | grep . | median; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
echo "machine: $(nproc) cores ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')); LOAD=$LOAD spinning processes; edit $EDIT_AFTER s after the cold build; median of $ROUNDS"
echo
echo "| program | mode | hipcc (ms) | ours cold (ms) | ours edit (ms) | cold / hipcc | edit / hipcc |"
echo "|---|---|---:|---:|---:|---:|---:|"
declare -A R
for p in $PROGRAMS; do
  for mode in host device; do
    h=$(m "${p}_hipcc_$mode"); c=$(m "${p}_cold_$mode"); e=$(m "${p}_edit_$mode")
    R[${mode}_cold]="${R[${mode}_cold]:-} $(ratio "$c" "$h")"; R[${mode}_edit]="${R[${mode}_edit]:-} $(ratio "$e" "$h")"
    echo "| $p | $mode | $h | $c | $e | $(ratio "$c" "$h") | $(ratio "$e" "$h") |"
  done
done
mr() { tr ' ' '\n' <<< "${R[$1]}" | grep . | median; }
echo
echo "median over the programs: host code cold $(mr host_cold), edit $(mr host_edit); device code only (against hipcc --cuda-device-only) cold $(mr device_cold), edit $(mr device_edit)"
for k in "${!T[@]}"; do echo "$k:${T[$k]}"; done | sort
