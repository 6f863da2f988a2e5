#!/bin/sh
# Installs offload-build under a prefix: the tools (offload-build, offload-bundler,
# offload-packager) into PREFIX/bin and the CMake package into PREFIX/lib/cmake/OffloadBuild,
# where find_package(OffloadBuild CONFIG) finds it (the package looks for the helper in
# PREFIX/bin first).
#
#   build-support/install.sh [--prefix PREFIX] [--bin-dir DIR]
#
# PREFIX defaults to /usr/local. The tools are built with `cargo build --release` unless
# --bin-dir names a directory that already holds them.
set -eu

root=$(cd "$(dirname "$0")/.." && pwd)
prefix=/usr/local
bin_dir=
while [ $# -gt 0 ]; do
  case $1 in
    --prefix) prefix=${2:?--prefix needs a directory}; shift 2 ;;
    --prefix=*) prefix=${1#--prefix=}; shift ;;
    --bin-dir) bin_dir=${2:?--bin-dir needs a directory}; shift 2 ;;
    --bin-dir=*) bin_dir=${1#--bin-dir=}; shift ;;
    -h|--help) sed -n '2,10s/^# \{0,1\}//p' "$0"; exit 0 ;;
    *) echo "install.sh: unknown argument '$1' (see --help)" >&2; exit 1 ;;
  esac
done

tools="offload-build offload-bundler offload-packager"
if [ -z "$bin_dir" ]; then
  (cd "$root" && cargo build --release --locked -p offload-cli --bins)
  bin_dir=${CARGO_TARGET_DIR:-$root/target}/release
fi
for t in $tools; do
  if [ ! -x "$bin_dir/$t" ]; then
    echo "install.sh: $bin_dir/$t is missing or not executable" >&2
    exit 1
  fi
done

mkdir -p "$prefix/bin" "$prefix/lib/cmake/OffloadBuild"
for t in $tools; do
  install -m 755 "$bin_dir/$t" "$prefix/bin/$t"
done
for f in OffloadBuild.cmake OffloadBuildConfig.cmake OffloadBuildConfigVersion.cmake; do
  install -m 644 "$root/build-support/cmake/$f" "$prefix/lib/cmake/OffloadBuild/$f"
done
echo "installed offload-build into $prefix (bin/, lib/cmake/OffloadBuild/)"
