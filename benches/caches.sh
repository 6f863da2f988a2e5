#!/usr/bin/env bash
# Compiler caches and a build farm (issue 26) in front of offload-build's device compiles, one
# run: a HIP build of SOURCES generated sources (default 3: hip_runtime.h, a shared header, a
# template kernel with shared memory and a barrier) with Debian's ROCm 5.2 and its clang 15,
# archs gfx90a;gfx1030;gfx906, -j 2, every build in a fresh checkout (its own directory, the
# sources relative to it, as the tests build them) with its own out-dir and offload-build cache:
#  1. reference: `hipcc -c` of each source under `xargs -P2`;
#  2. offload-build compile, no launcher, cold: with precompiled preambles (the default), and
#     without (OFFLOAD_BUILD_PCH=0: none are made under a compiler-cache launcher);
#  3. OFFLOAD_BUILD_LAUNCHER=sccache, empty local cache (SCCACHE_DIR): the cost of a miss;
#  4. sccache local hit: a second checkout, the same SCCACHE_DIR, a fresh sccache server;
#  5. ccache (its own CCACHE_DIR): cold, then a second checkout;
#  6. sccache through redis-server on 127.0.0.1 (SCCACHE_REDIS_ENDPOINT): a first "machine"
#     fills it, a second one (other checkout, HOME, SCCACHE_DIR, server port) hits;
#  7. distributed: an sccache-dist scheduler and one build server (bubblewrap, overlay builder,
#     as integration/distributed.rs configures them) on 127.0.0.1, the client's cache empty,
#     so every compile is distributed: first with the toolchain not yet packaged and sent,
#     then again (another empty client cache) with it on the server.
# Each row: the wall time, the tool's own counts (sccache --show-stats --stats-format=json,
# ccache --print-stats; an sccache server per step, started before the clock), the ratio to
# hipcc. Every output (library and fat binary) is checked with cmp against step 2's, so the
# figures are of correct builds. Every server started is stopped on exit. Prints a table.
#   benches/caches.sh [path/to/offload-build]   (default: target/release/offload-build)
#   SOURCES=3 KEEP=1 (keep the work directory) benches/caches.sh
# The build server runs as root (bubblewrap and overlay mounts need it).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck source=hip_sources.sh
source "$root/benches/hip_sources.sh"
BIN=${1:-$root/target/release/offload-build}
SOURCES=${SOURCES:-3}
ARCHS='gfx90a;gfx1030;gfx906'
HIPCC_ARCHS=(--offload-arch=gfx90a --offload-arch=gfx1030 --offload-arch=gfx906)
TOOLS=/opt/offload-build/tools-venv/bin
SCCACHE=$TOOLS/sccache
for f in "$BIN" /usr/bin/hipcc /usr/bin/clang-15 /usr/include/hip/hip_runtime.h "$SCCACHE" \
  "$TOOLS/sccache-dist" /usr/bin/ccache /usr/bin/redis-server /usr/bin/bwrap /usr/bin/jq \
  /usr/bin/python3; do
  [[ -e $f ]] || { echo "$f is missing: build offload-build (cargo build --release -p offload-cli) and run build-support/setup.sh as root" >&2; exit 1; }
done
[[ $(id -u) == 0 ]] || { echo "the sccache-dist build server needs root (bubblewrap, overlay mounts)" >&2; exit 1; }
unset OFFLOAD_ARCH AMDGPU_TARGETS GPU_TARGETS PYTORCH_ROCM_ARCH HIP_ARCHITECTURES HIPCXX \
  HIP_CLANG_PATH ROCM_PATH HIP_PATH HIPFLAGS CLANG OFFLOAD_BUILD_CACHE_DIR OFFLOAD_BUILD_PCH \
  OFFLOAD_BUILD_LAUNCHER OFFLOAD_BUILD_COMPILE_TIMEOUT RUSTC_WRAPPER
for v in $(compgen -e); do [[ $v == SCCACHE_* || $v == CCACHE_* ]] && unset "$v"; done

read -r LOAD_BEFORE _ < /proc/loadavg
work=$(mktemp -d /tmp/caches-bench.XXXX)
PORTS=() PIDS=()
cleanup() {
  local p
  for p in "${PORTS[@]}"; do SCCACHE_SERVER_PORT=$p "$SCCACHE" --stop-server >/dev/null 2>&1 || true; done
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done
  if [[ ${KEEP:-0} == 1 ]]; then echo "kept $work" >&2; else rm -rf "$work"; fi
}
trap cleanup EXIT

free_port() { /usr/bin/python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
now() { date +%s%N; }
fail() { echo "caches.sh: $*" >&2; exit 1; }


SRCS=()
for i in $(seq 1 "$SOURCES"); do SRCS+=("k$i.hip"); done
COMPILES=$(( SOURCES * 3 ))
checkout() { # $1: name; a fresh checkout: src/{k*.hip,include/common.h}, out/
  local co=$work/$1
  mkdir -p "$co/src/include" "$co/out"
  printf '#pragma once\n#define SCALE 2.0f\n' > "$co/src/include/common.h"
  for i in $(seq 1 "$SOURCES"); do source_n "$i" > "$co/src/k$i.hip"; done
  echo "$co"
}

# `offload-build compile` in checkout $1 with the environment VAR=VALUE... after it; sets MS.
build() {
  local co=$1; shift
  local s; s=$(now)
  (cd "$co/src" && env OFFLOAD_BUILD_CACHE_DIR="$co/obcache" "$@" "$BIN" compile \
    --compiler /usr/bin/clang-15 --archs "$ARCHS" -I include -q --name k -j 2 "${SRCS[@]}" \
    -o "$co/out/libk.a" --out-dir "$co/out/work") > "$co/build.log" 2>&1 \
    || { cat "$co/build.log" >&2; fail "the build in $co failed"; }
  MS=$(( ($(now) - s) / 1000000 ))
}

# The outputs of checkout $1 are those of the reference build (step 2).
same_as_ref() {
  local f
  for f in libk.a work/k.hipfb; do
    cmp "$REF/out/$f" "$1/out/$f" || fail "$1/out/$f differs from the build without launcher"
  done
}

# An sccache server of its own (HOME $1, SCCACHE_DIR $1/cache unless given, a free port,
# VAR=VALUE... after it), started now; SCC holds its environment.
scc_start() {
  local home=$1 port; shift
  port=$(free_port); PORTS+=("$port"); mkdir -p "$home"
  SCC=(HOME="$home" SCCACHE_DIR="$home/cache" SCCACHE_SERVER_PORT="$port"
       SCCACHE_IDLE_TIMEOUT=0 SCCACHE_CONF="$home/none.conf" "$@")
  : > "$home/none.conf"
  for v in "$@"; do [[ $v == SCCACHE_CONF=* ]] && rm "$home/none.conf"; done
  env "${SCC[@]}" "$SCCACHE" --start-server > /dev/null 2>&1 || fail "sccache --start-server ($home)"
}
scc() { env "${SCC[@]}" "$SCCACHE" "$@"; }
scc_stop() { scc --stop-server > /dev/null 2>&1 || true; }
# hits misses distributed dist_errors compile_fails not_cacheable, from the server's statistics.
scc_counts() {
  scc --show-stats --stats-format=json | jq -r '.stats |
    [([.cache_hits.counts[]?] | add // 0), ([.cache_misses.counts[]?] | add // 0),
     ([.dist_compiles[]?] | add // 0), .dist_errors, .compile_fails,
     .requests_not_cacheable + .non_cacheable_compilations + .requests_not_compile] | @tsv'
}
# Sets h m d e f n from the server's statistics, then stops the server.
scc_read() {
  local t; t=$(scc_counts) && [[ -n $t ]] || fail "sccache --show-stats gave no statistics"
  read -r h m d e f n <<< "$t"; scc_stop
}
# ccache's hits misses of CCACHE_DIR $1, zeroed after.
ccache_counts() {
  local text; text=$(CCACHE_DIR=$1 ccache --print-stats)
  CCACHE_DIR=$1 ccache -z > /dev/null
  awk -F'\t' '$1 == "direct_cache_hit" || $1 == "preprocessed_cache_hit" { h += $2 }
              $1 == "cache_miss" { m += $2 } END { print h + 0, m + 0 }' <<< "$text"
}
ccache_read() { # sets h m from ccache_counts $1 (f n: none)
  local t; t=$(ccache_counts "$1") && [[ -n $t ]] || fail "ccache --print-stats gave no statistics"
  read -r h m <<< "$t"; f=0 n=0
}

ROWS=()
row() { ROWS+=("$1|$2|$3"); } # name, ms, counts

# 1. hipcc -c of each source, two at a time.
co=$(checkout hipcc)
s=$(now)
(cd "$co/src" && printf '%s\n' "${SRCS[@]}" | xargs -P2 -I{} hipcc "${HIPCC_ARCHS[@]}" -I include -c {} -o {}.o) \
  > "$co/build.log" 2>&1 || { cat "$co/build.log" >&2; fail "hipcc failed"; }
HIPCC=$(( ($(now) - s) / 1000000 ))
row "\`hipcc -c\` of each source, \`xargs -P2\` (reference)" "$HIPCC" "—"

# 2. No launcher, cold.
REF=$(checkout ref)
build "$REF"
row "offload-build, no launcher, cold" "$MS" "—"
co=$(checkout nopch)
build "$co" OFFLOAD_BUILD_PCH=0
same_as_ref "$co"
! compgen -G "$co/obcache/preamble-*" > /dev/null || fail "OFFLOAD_BUILD_PCH=0 made preambles"
compgen -G "$REF/obcache/preamble-*.pch" > /dev/null || echo "note: the default build made no preamble" >&2
row "offload-build, no launcher, cold, no PCH (as under a launcher)" "$MS" "—"

# counts_are miss|hit: whether the counts read are all misses (none failed or uncacheable), or
# all hits.
counts_are() {
  case $1 in
    miss) [[ $h == 0 && $m == "$COMPILES" && ${f:-0} == 0 && ${n:-0} == 0 ]] ;;
    hit) [[ $h == "$COMPILES" && $m == 0 ]] ;;
  esac
}

# scc_step CHECKOUT LABEL miss|hit: a build of a new checkout under sccache (its server
# started by the caller), checked against the reference, counted, and its row.
scc_step() {
  local co
  co=$(checkout "$1")
  build "$co" OFFLOAD_BUILD_LAUNCHER="$SCCACHE" "${SCC[@]}"
  scc_read; same_as_ref "$co"
  counts_are "$3" || echo "note: $2: $h hits, $m misses, $f failed, $n not cacheable" >&2
  row "$2" "$MS" "$h hits, $m misses"
}

# ccache_step CHECKOUT LABEL miss|hit: the same under ccache, with the cache directory $cdir.
ccache_step() {
  local co
  co=$(checkout "$1")
  build "$co" OFFLOAD_BUILD_LAUNCHER=/usr/bin/ccache CCACHE_DIR="$cdir"
  ccache_read "$cdir"; same_as_ref "$co"
  counts_are "$3" || echo "note: $2: $h hits, $m misses" >&2
  row "$2" "$MS" "$h hits, $m misses"
}

# 3. and 4. sccache, local disk: cold, then a second checkout with a fresh server.
scc_start "$work/sccache-local"
scc_step scc-a "sccache (local disk), cold: every compile a miss" miss
scc_start "$work/sccache-local"
scc_step scc-b "sccache (local disk), second checkout: local hit" hit

# 5. ccache: cold, then a second checkout.
cdir=$work/ccache
mkdir -p "$cdir"
ccache_step ccache-a "ccache, cold" miss
ccache_step ccache-b "ccache, second checkout: local hit" hit

# 6. sccache through redis-server on loopback: two machines.
rport=$(free_port)
/usr/bin/redis-server --port "$rport" --bind 127.0.0.1 --save '' --appendonly no \
  --daemonize no > "$work/redis.log" 2>&1 &
PIDS+=("$!")
for _ in $(seq 100); do (echo > "/dev/tcp/127.0.0.1/$rport") 2>/dev/null && break; sleep 0.05; done
(echo > "/dev/tcp/127.0.0.1/$rport") 2>/dev/null || fail "redis-server did not listen on 127.0.0.1:$rport"
redis=SCCACHE_REDIS_ENDPOINT=redis://127.0.0.1:$rport
scc_start "$work/machine-1" "$redis"
scc_step redis-a "sccache through Redis, first machine: fills it" miss
scc_start "$work/machine-2" "$redis"
scc_step redis-b "sccache through Redis, second machine: remote hit" hit

# 7. sccache-dist: a scheduler and one build server on loopback, the client's cache empty.
farm=$work/farm
mkdir -p "$farm"
sched=$(free_port) server=$(free_port)
cat > "$farm/scheduler.conf" <<EOF
public_addr = "127.0.0.1:$sched"
[client_auth]
type = "token"
token = "offload-build-client"
[server_auth]
type = "token"
token = "offload-build-server"
EOF
cat > "$farm/server.conf" <<EOF
cache_dir = "$farm/toolchains"
public_addr = "127.0.0.1:$server"
scheduler_url = "http://127.0.0.1:$sched"
[builder]
type = "overlay"
build_dir = "$farm/build"
bwrap_path = "/usr/bin/bwrap"
[scheduler_auth]
type = "token"
token = "offload-build-server"
EOF
cat > "$farm/client.conf" <<EOF
[dist]
scheduler_url = "http://127.0.0.1:$sched"
toolchains = []
cache_dir = "$farm/client-toolchains"
rewrite_includes_only = true
[dist.auth]
type = "token"
token = "offload-build-client"
EOF
for role in scheduler server; do
  level=info; [[ $role == server ]] && level=trace # the server logs each compile at trace
  SCCACHE_NO_DAEMON=1 SCCACHE_LOG=$level "$TOOLS/sccache-dist" "$role" --config "$farm/$role.conf" \
    < /dev/null > "$farm/$role.log" 2>&1 &
  PIDS+=("$!")
done
for _ in $(seq 600); do grep -q "Server connected to scheduler" "$farm/server.log" && break; sleep 0.2; done
grep -q "Server connected to scheduler" "$farm/server.log" || { tail -20 "$farm"/*.log >&2; fail "the build server did not connect to the scheduler"; }
dist_run() { # $1: name of the client; the client started, the server registered, one build
  scc_start "$farm/$1" SCCACHE_CONF="$farm/client.conf" SCCACHE_LOG=warn SCCACHE_ERROR_LOG="$farm/$1.log"
  local i
  for i in $(seq 400); do scc --dist-status 2>/dev/null | grep -q '"num_servers":1' && break; sleep 0.3; done
  scc --dist-status | grep -q '"num_servers":1' || fail "the scheduler reports no build server to the client"
  local before; before=$(grep -c "Compile command:" "$farm/server.log" || true)
  co=$(checkout "$1")
  build "$co" OFFLOAD_BUILD_LAUNCHER="$SCCACHE" "${SCC[@]}"
  scc_read; same_as_ref "$co"
  ran=$(( $(grep -c "Compile command:" "$farm/server.log") - before ))
  [[ $d == "$COMPILES" && $e == 0 && $f == 0 ]] || echo "note: $1: $d distributed, $e dist errors, $f failed, $n not cacheable (see $farm/$1.log)" >&2
}
dist_run dist-1
row "sccache-dist, 1 build server, empty client cache, toolchain sent" "$MS" "$d distributed ($ran ran on the server), $m misses, $e errors"
dist_run dist-2
row "sccache-dist, the same, toolchain already on the server" "$MS" "$d distributed ($ran ran on the server), $m misses, $e errors"

read -r l1 l5 l15 _ < /proc/loadavg
echo "machine: $(nproc) cores, $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1), Linux $(uname -r); $(date -u +%F); load average (1 min) $LOAD_BEFORE before, $l1 $l5 $l15 after the run"
echo "clang-15 (Debian ROCm 5.2), $SOURCES sources x 3 archs ($ARCHS) = $COMPILES device compiles, -j 2; sccache $("$SCCACHE" --version | cut -d' ' -f2), ccache $(ccache --version | sed -n '1s/.*version //p'), one run"
echo
echo "| build | ms | / hipcc | the tool's counts |"
echo "| --- | ---: | ---: | --- |"
for r in "${ROWS[@]}"; do
  IFS='|' read -r name ms counts <<< "$r"
  printf '| %s | %s | %s | %s |\n' "$name" "$ms" "$(awk -v a="$ms" -v b="$HIPCC" 'BEGIN { printf "%.2f", a / b }')" "$counts"
done
echo
echo "every output equals the build without launcher (cmp of libk.a and k.hipfb)"
