#!/usr/bin/env bash
# A make-style project: 12 real HIP sources from AMD's rocm-examples (benches/make_style/,
# see its README.md: 9 HIP-Basic examples, the convolution application, 2 rocPRIM
# examples), built as `make -j2` builds a project: one compiler invocation per source, two
# at a time, all writing into one out-dir, for gfx90a;gfx1030;gfx906 with Debian's ROCm 5.2
# and its clang 15, -std=c++17 (rocPRIM needs C++14; hipcc's default is C++11). Every run
# starts from an empty out-dir (cold). Three modes:
# - hipcc:  `hipcc --offload-arch=… ×3 -std=c++17 -I Common -c SRC -o OBJ` (hipcc's defaults
#           otherwise: -O3 and its -mllvm flags, which offload-build passes too);
# - bg:     `offload-build compile SRC --archs 'gfx90a;gfx1030;gfx906' -I Common
#           --flag=-std=c++17 -o OBJ --out-dir OUT_DIR -q`, background PCHs on (the default:
#           CI and OFFLOAD_BUILD_PCH_BACKGROUND unset);
# - nobg:   the same with OFFLOAD_BUILD_PCH_BACKGROUND=0;
# - host:   bg with --host-code: each source with its host code, the object hipcc -c writes
#           (offload-build then does all that hipcc -c does);
# - hostdriver: host with OFFLOAD_BUILD_DIRECT=0: each device compile through the clang
#           driver (3 processes: driver, cc1, lld) instead of the cc1 and lld commands the
#           driver prints (`-###`, asked once per architecture and kept);
# - onebuild: every source in one `offload-build compile --host-code SRC… -o lib.a -j 2`, as
#           a build.rs builds a crate's sources (one job graph for the whole project), not
#           through make; against hipcc's `make -j2`.
# hipcc -c also compiles each source's host code; offload-build compiles the device code and
# embeds it in a host object (as in benches/pch.sh).
# The build is a generated Makefile run by `make -r -j2` in benches/make_style/ (sources and
# -I relative to it; objects and the out-dir in a fresh directory under /tmp). Its recipes
# are marked `+` (JOBSERVER=1, the default), so GNU make hands its jobserver to offload-build
# and there are at most 2 device compiles at once, as there are 2 hipcc at once (each runs
# its 3 device compiles one after the other); JOBSERVER=0 leaves the `+` out: then each
# offload-build runs up to one compile per CPU of its own (no -j is passed).
# GNU make (4.3) drains its jobserver pipe before it exits, so it waits for every process
# that holds the pipe's write end: offload-build's background PCH clangs keep no descriptor
# they inherited (they once held make's, and make's exit waited for them).
# After each offload-build run the script waits for the background PCH clangs to end (their
# locks, as in benches/pch.sh) before anything else runs, and times that wait separately.
# ROUNDS rounds (default 3); the order of the modes rotates from round to round, so that
# each mode runs first, second and third in turn. MODES (default "hipcc bg nobg") selects
# modes; without bg and nobg the offload-build binary is not needed.
# Prints per mode: the median, the ratio of its median to hipcc's, and the median of the
# ratios of paired runs (the same round, minutes apart).
#   benches/make_style.sh [path/to/offload-build]     (default: target/release/offload-build)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BIN=${1:-$root/target/release/offload-build}
ROUNDS=${ROUNDS:-3}
MODES=${MODES:-hipcc bg nobg}
JOBSERVER=${JOBSERVER:-1}
SRC=$root/benches/make_style
ARCHS='gfx90a;gfx1030;gfx906'
HIPCC_ARCHS='--offload-arch=gfx90a --offload-arch=gfx1030 --offload-arch=gfx906'
STD=-std=c++17
SOURCES=(saxpy matrix_multiplication shared_memory dynamic_shared warp_shuffle bit_extract
  device_globals moving_average cooperative_groups convolution block_sum device_sum)

read -r -a modes_all <<< "$MODES"
for m in "${modes_all[@]}"; do
  [[ $m == hipcc || $m == bg || $m == nobg || $m == host || $m == hostdriver || $m == onebuild ]] || { echo "MODES: unknown mode '$m' (hipcc, bg, nobg, host, hostdriver, onebuild)" >&2; exit 2; }
done
[[ $ROUNDS =~ ^[1-9][0-9]*$ ]] || { echo "ROUNDS must be a positive number, not '$ROUNDS'" >&2; exit 2; }
need=(/usr/bin/hipcc /usr/bin/clang-15 /usr/include/hip/hip_runtime.h /usr/include/rocprim/rocprim.hpp)
[[ " ${modes_all[*]} " == *" bg "* || " ${modes_all[*]} " == *" nobg "* || " ${modes_all[*]} " == *" host"* || " ${modes_all[*]} " == *" onebuild "* ]] && need=("$BIN" "${need[@]}")
for f in "${need[@]}"; do
  [[ -e $f ]] || { echo "$f is missing: build offload-build (cargo build --release) and run build-support/setup.sh" >&2; exit 1; }
done
for t in make flock; do
  command -v "$t" >/dev/null || { echo "$t is missing: apt-get install make util-linux" >&2; exit 1; }
done
for s in "${SOURCES[@]}"; do
  [[ -e $SRC/$s.hip ]] || { echo "$SRC/$s.hip is missing (see $SRC/README.md)" >&2; exit 1; }
done
load_before=$(cut -d" " -f1-3 /proc/loadavg)
unset CI OFFLOAD_BUILD_PCH_BACKGROUND OFFLOAD_BUILD_PCH OFFLOAD_BUILD_DIRECT OFFLOAD_BUILD_CACHE_DIR OFFLOAD_BUILD_LAUNCHER OFFLOAD_ARCH HIPFLAGS CLANG HIPCXX
# A make that runs this script must not lend its jobserver to ours.
unset MAKEFLAGS MFLAGS MAKELEVEL CARGO_MAKEFLAGS

d=
trap 'if [[ -n $d ]]; then rm -rf "$d"; fi' EXIT
# Runs "$@" (output into $d/log) and sets t to the milliseconds it took, read from bash's
# clock ($EPOCHREALTIME, microseconds) rather than a forked `date`. A failure ends the
# benchmark with the end of the log.
timed() {
  local s e
  s=$EPOCHREALTIME
  if ! "$@" >"$d/log" 2>&1; then
    echo "failed: $*" >&2; tail -n 40 "$d/log" >&2; exit 1
  fi
  e=$EPOCHREALTIME
  t=$(( (${e/[.,]/} - ${s/[.,]/}) / 1000 ))
}
# Waits for the background PCHs of the out-dir $1 (each clang holds its directory's lock).
wait_bg() { local l; for l in "$1"/offload-build-cache/*.bg/lock; do [[ -e $l ]] && flock -s "$l" true; done; return 0; }
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
# A word for a make recipe: in single quotes for sh where it needs them, `$` doubled for make.
mkq() {
  local q=$1
  [[ $q =~ ^[A-Za-z0-9_./=+:,@%-]+$ ]] || q="'${q//\'/\'\\\'\'}'"
  printf '%s' "${q//\$/\$\$}"
}

# The recipe (make syntax: $< the source, $@ the object) of mode $1 for the out-dir $2.
recipe() {
  case $1 in
    hipcc) printf 'hipcc %s %s -I Common -c $< -o $@' "$HIPCC_ARCHS" "$STD" ;;
    bg) printf '%s compile $< --archs %s -I Common --flag=%s -o $@ --out-dir %s -q' \
          "$(mkq "$BIN")" "$(mkq "$ARCHS")" "$STD" "$(mkq "$2")" ;;
    nobg) printf 'OFFLOAD_BUILD_PCH_BACKGROUND=0 %s' "$(recipe bg "$2")" ;;
    host) printf '%s --host-code' "$(recipe bg "$2")" ;;
    hostdriver) printf 'OFFLOAD_BUILD_DIRECT=0 %s' "$(recipe host "$2")" ;;
    onebuild) printf '(no make: %s compile --host-code SOURCES… --archs %s -I Common --flag=%s -o lib.a -j 2 -q)' \
          "$(mkq "$BIN")" "$(mkq "$ARCHS")" "$STD" ;;
  esac
}
# Writes $d/Makefile: one object per source in $d/obj, each made by the recipe of mode $1.
makefile() {
  local plus='' s
  [[ $JOBSERVER == 1 ]] && plus=+
  {
    printf 'OBJS :='
    for s in "${SOURCES[@]}"; do printf ' %s/obj/%s.o' "$(mkq "$d")" "$s"; done
    # shellcheck disable=SC2016 # $(OBJS) is make's
    printf '\n.PHONY: all\nall: $(OBJS)\n'
    printf '%s/obj/%%.o: %%.hip\n\t%s%s\n' "$(mkq "$d")" "$plus" "$(recipe "$1" "$d/od")"
  } > "$d/Makefile"
}
build() { make -r -j2 -C "$SRC" -f "$d/Makefile"; }
# The onebuild mode: one compile of every source, its objects taken out of the library.
onebuild() {
  (cd "$SRC" && "$BIN" compile --host-code "${SOURCES[@]/%/.hip}" --archs "$ARCHS" -I Common \
    --flag="$STD" -o "$d/lib.a" --out-dir "$d/od" -j 2 -q) && (cd "$d/obj" && ar x "$d/lib.a")
}

declare -A T
add() { T[$1]="${T[$1]:-} $2"; }
for r in $(seq 1 "$ROUNDS"); do
  # The order rotates: what ran just before a build (another mode's processes, its files
  # going away) must not favour one mode.
  n=${#modes_all[@]}; modes=()
  for i in $(seq 0 $((n - 1))); do modes+=("${modes_all[$(( (i + r - 1) % n ))]}"); done
  for mode in "${modes[@]}"; do
    d=$(mktemp -d /tmp/make-style-bench.XXXX); mkdir "$d/obj"
    if [[ $mode == onebuild ]]; then
      timed onebuild
    else
      makefile "$mode"
      timed build
    fi
    add "$mode" "$t"
    for s in "${SOURCES[@]}"; do
      [[ -s $d/obj/$s.o ]] || { echo "$mode: no $d/obj/$s.o" >&2; tail -n 40 "$d/log" >&2; exit 1; }
    done
    if [[ $mode != hipcc ]]; then
      timed wait_bg "$d/od"
      add "${mode}_bg" "$t"
    fi
    echo "round $r: $mode ${T[$mode]##* } ms$([[ $mode != hipcc ]] && echo ", background PCHs ended ${T[${mode}_bg]##* } ms later")" >&2
    rm -rf "$d"; d=
  done
done

m() { tr ' ' '\n' <<< "${T[$1]:-}" | awk NF | median; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "" || b == "" || b == 0) print "-"; else printf "%.2f", a / b }'; }
# The median of the ratios of paired runs (the i-th of key $1 over the i-th of key $2: the
# same round), steadier on a shared machine than a ratio of two medians.
paired() {
  paste <(tr ' ' '\n' <<< "${T[$1]:-}" | awk NF) <(tr ' ' '\n' <<< "${T[$2]:-}" | awk NF) |
    awk '$2 > 0 { print $1 / $2 }' | sort -g |
    awk '{ a[NR] = $1 } END { if (NR) printf "%.2f", a[int((NR + 1) / 2)]; else print "-" }'
}
label() {
  case $1 in
    hipcc) echo "hipcc -c" ;;
    bg) echo "offload-build, background PCHs" ;;
    nobg) echo "offload-build, PCH_BACKGROUND=0" ;;
    host) echo "offload-build --host-code" ;;
    hostdriver) echo "--host-code, DIRECT=0" ;;
    onebuild) echo "one build, --host-code" ;;
  esac
}
echo "machine: $(nproc) cores ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')), $(uname -r); load before: $load_before"
echo "clang-15 (Debian ROCm 5.2); ${#SOURCES[@]} rocm-examples sources; archs $ARCHS; make -j2 (jobserver to offload-build: $([[ $JOBSERVER == 1 ]] && echo yes || echo no)); cold; median of $ROUNDS runs"
echo
printf '| %-32s | %9s | %9s | %12s | %16s |\n' mode "median ms" "/ hipcc" "paired/hipcc" "bg PCHs end (ms)"
printf '|%s|%s|%s|%s|%s|\n' ---------------------------------- ----------- ----------- -------------- ------------------
for mode in "${modes_all[@]}"; do
  h=$(m hipcc); v=$(m "$mode"); b=-
  [[ $mode != hipcc ]] && b=$(m "${mode}_bg")
  if [[ $mode == hipcc ]]; then pr=1.00; else pr=$(paired "$mode" hipcc); fi
  printf '| %-32s | %9s | %9s | %12s | %16s |\n' "$(label "$mode")" "$v" "$(ratio "$v" "$h")" "$pr" "$b"
done
echo
echo "Each source's command (run in benches/make_style; \$< the source, \$@ its object):"
for mode in "${modes_all[@]}"; do
  printf '  %-6s %s%s\n' "$mode:" "$([[ $JOBSERVER == 1 ]] && echo +)" "$(recipe "$mode" /tmp/make-style-bench.XXXX/od)"
done
echo
for mode in "${modes_all[@]}"; do
  echo "$(label "$mode") runs (ms):${T[$mode]}$([[ $mode != hipcc ]] && echo "; background PCHs ended after (ms):${T[${mode}_bg]}")"
done
