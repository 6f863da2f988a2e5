# Sourced by the shell benchmarks (as benches/common.rs serves the Rust ones).

# The nvcc of NVIDIA's wheels (CUDA 13) in NVIDIA_VENV (else OFFLOAD_BUILD_NVIDIA_VENV, else
# setup.sh's venv): sets venv, cu13 and nvcc; exits when it is missing.
nvidia_wheels() {
  venv=${NVIDIA_VENV:-${OFFLOAD_BUILD_NVIDIA_VENV:-/opt/offload-build/nvidia-venv}}
  cu13=$(echo "$venv"/lib/python3*/site-packages/nvidia/cu13)
  nvcc=$cu13/bin/nvcc
  [[ -x $nvcc ]] || { echo "no $nvcc: run build-support/setup.sh as root" >&2; exit 1; }
}

# Unpacks crate NAME at VERSION from crates.io (through cargo, so the registry's cache
# serves it again) into DIR/NAME-VERSION, once, after checking the .crate's SHA256.
fetch_crate() {
  local name=$1 version=$2 sha=$3 dir=$4
  [[ -d $dir/$name-$version ]] && return 0
  local f=$dir/fetch-$name crate
  mkdir -p "$f/src"
  printf '[package]\nname = "fetch"\nversion = "0.0.0"\nedition = "2021"\n[dependencies]\n%s = "=%s"\n[workspace]\n' \
    "$name" "$version" > "$f/Cargo.toml"
  echo 'fn main() {}' > "$f/src/main.rs"
  (cd "$f" && cargo fetch -q)
  crate=$(ls "${CARGO_HOME:-$HOME/.cargo}"/registry/cache/*/"$name-$version.crate" | head -1)
  echo "$sha  $crate" | sha256sum -c --quiet || { echo "$crate: not the pinned $name $version" >&2; exit 1; }
  tar xzf "$crate" -C "$dir"
}

# The median of the numbers on standard input, one per line.
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

# A / B with two decimals.
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }

# "N cores (CPU model)", the start of a table's machine line.
cores() { echo "$(nproc) cores ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//'))"; }
