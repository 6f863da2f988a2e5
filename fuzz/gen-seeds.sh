#!/bin/sh
# Regenerates fuzz/seeds/: small real files for every fuzz target, made by clang 19,
# LLVM 22's clang-offload-bundler, llvm-offload-binary and llvm-ar, and by this crate's
# offload-bundler (version-2 compressed bundles), and python3 (zlib compressed bundles). Needs the tools
# build-support/setup.sh installs. Run from the repository root: sh fuzz/gen-seeds.sh
set -eu
ROOT=$(pwd)
S=$ROOT/fuzz/seeds
L22=/usr/lib/llvm-22/bin
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
cargo build -q --bin offload-bundler
OURS=$ROOT/target/debug/offload-bundler
# fuzz/seeds/nv_fatbin holds NVIDIA fat binaries made by NVIDIA's tools (nvFatbin, fatbinary,
# nvcc -fatbin from the wheels of build-support/setup.sh, as in integration/nvfatbin.rs), kept
# as they are: everything else is regenerated.
find "$S" -mindepth 1 -maxdepth 1 ! -name nv_fatbin -exec rm -rf {} +
for t in entry_id target_id binary_bundle text_bundle ccob offload_binary archive fat_object scan \
    bundler_cli packager_cli roundtrip_binary roundtrip_text roundtrip_ccob roundtrip_offload; do
    mkdir -p "$S/$t"
done
cd "$W"
cat > k.hip <<'HIP'
struct dim3 { unsigned x, y, z; __attribute__((host, device)) dim3(unsigned a = 1, unsigned b = 1, unsigned c = 1) : x(a), y(b), z(c) {} };
typedef struct ihipStream_t *hipStream_t;
extern "C" int hipLaunchKernel(const void *, dim3, dim3, void **, unsigned long, hipStream_t);
extern "C" int __hipPopCallConfiguration(dim3 *, dim3 *, unsigned long *, hipStream_t *);
extern "C" int __hipPushCallConfiguration(dim3, dim3, unsigned long, hipStream_t);
extern "C" __attribute__((global)) void k(int *p) { *p = 1; }
HIP
HIPC="clang-19 -x hip -nogpulib -nogpuinc -O1"
$HIPC --cuda-device-only --no-gpu-bundle-output --offload-arch=gfx906 -c k.hip -o gfx906.co
$HIPC -fgpu-rdc --offload-arch=gfx906 -c k.hip -o fat.o

$HIPC -fgpu-rdc --offload-arch=gfx906 --offload-new-driver -c k.hip -o new.o
$HIPC --cuda-device-only -emit-llvm --offload-arch=gfx906 -c k.hip -o dev.bc
printf 'int host;\n' > host.txt
printf 'int dev;\n' > dev.txt
printf 'host payload' > host.bin
HOST=host-x86_64-unknown-linux-gnu
DEV=hip-amdgcn-amd-amdhsa--gfx906
DEV2=hipv4-amdgcn-amd-amdhsa--gfx90a:xnack+
B="$L22/clang-offload-bundler"

# IDs.
printf '%s\n%s\n%s\nopenmp-amdgcn-amd-amdhsa-gfx1100\nhip-amdgcn--amdhsa-gfx908:sramecc-:xnack+\n' \
    "$HOST" "$DEV" "$DEV2" > "$S/entry_id/ids"
printf 'host-x86_64-pc-linux-gnu-\nhip-spirv64-amd-amdhsa--amdgcnspirv\nhip-nvptx64-nvidia-cuda--sm_70\n' > "$S/entry_id/more"
printf 'gfx90a:xnack+\ngfx908:sramecc-:xnack+\ngfx1100\ngfx90a:xnack-\nx86_64-unknown-linux-gnu\n' > "$S/target_id/ids"
printf 'amdgcn-amd-amdhsa\nr600--\nnvptx64-nvidia-cuda\nspirv64-amd-amdhsa\ncypress\n' > "$S/target_id/triples"

# Binary and text bundles written by LLVM 22.
$B -type=bc -targets=$HOST,$DEV,$DEV2 -input=host.bin -input=gfx906.co -input=dev.txt -output="$S/binary_bundle/llvm22.bc"
$B -type=o -targets=$HOST,$DEV -input=host.bin -input=dev.txt -output="$S/binary_bundle/small.hipfb" -bundle-align=64
$B -type=bc -targets=$HOST,$DEV -input=host.bin -input=dev.txt -output=small.bc
cp small.bc "$S/binary_bundle/"
for ty in ll s i; do
    $B -type=$ty -targets=$HOST,$DEV -input=host.txt -input=dev.txt -output="$S/text_bundle/llvm22.$ty"
done
printf '\001' | cat - "$S/text_bundle/llvm22.s" > "$S/text_bundle/hash-comment.s"

# Compressed bundles: LLVM 22's zstd v3, ours in version 2, zlib ones in versions 1 to 3.
$B -type=bc -compress -targets=$HOST,$DEV -input=host.bin -input=gfx906.co -output="$S/ccob/llvm22-zstd-v3.bc"
$B -type=bc -compress -targets=$HOST,$DEV -input=host.bin -input=dev.txt -output="$S/ccob/llvm22-small.bc"
python3 - small.bc "$S/ccob" <<'PY'
# zlib CCOBs in versions 1 to 3 (LLVM writes zlib only where it lacks zstd).
import hashlib, struct, sys, zlib
bundle, out = open(sys.argv[1], 'rb').read(), sys.argv[2]
z = zlib.compress(bundle, 6)
h = struct.unpack('<Q', hashlib.md5(bundle).digest()[:8])[0]
hdr = {1: struct.pack('<4sHHIQ', b'CCOB', 1, 0, len(bundle), h),
       2: struct.pack('<4sHHIIQ', b'CCOB', 2, 0, 24 + len(z), len(bundle), h),
       3: struct.pack('<4sHHQQQ', b'CCOB', 3, 0, 32 + len(z), len(bundle), h)}
for v, head in hdr.items():
    open(f'{out}/zlib-v{v}.bc', 'wb').write(head + z)
PY
COMPRESSED_BUNDLE_FORMAT_VERSION=2 $OURS -type=bc -compress -targets=$HOST,$DEV -input=host.bin -input=dev.txt -output="$S/ccob/ours-zstd-v2.bc"

# Offload binaries written by llvm-offload-binary 22 (one and two images).
$L22/llvm-offload-binary -o "$S/offload_binary/one.bin" --image=file=gfx906.co,triple=amdgcn-amd-amdhsa,arch=gfx906,kind=hip
$L22/llvm-offload-binary -o "$S/offload_binary/two.bin" --image=file=dev.txt,triple=amdgcn-amd-amdhsa,arch=gfx906,kind=hip \
    --image=file=host.txt,triple=amdgcn-amd-amdhsa,arch=gfx90a,kind=openmp

# Fat objects from clang 19 and the archives llvm-ar makes of them.
cp fat.o "$S/fat_object/clang19-fat.o"
cp dev.bc "$S/fat_object/dev.bc"
$B -type=o -targets=$HOST,$DEV -input=fat.o -input=dev.txt -output="$S/fat_object/llvm22-fat.o" 2>/dev/null || true
$L22/llvm-ar rc "$S/archive/fat.a" fat.o
$L22/llvm-ar rc "$S/archive/two.a" fat.o small.bc


# Containers of offload binaries: the new driver's object, an archive of it, raw binaries.
cp new.o "$S/scan/new-driver.o"
$L22/llvm-ar rc "$S/scan/new-driver.a" new.o
cp "$S/offload_binary/two.bin" "$S/scan/"

# Command lines: <file count> then per file <name> <extension index> <u16 length> <bytes>,
# then arguments separated by newlines (see src/fuzz_targets.rs: run_cli).
cli() { # $1: output; $2: contents of file f0.o (or -); the rest: arguments
    out=$1; f=$2; shift 2
    python3 - "$out" "$f" "$@" <<'PY'
import struct, sys
out, f, args = sys.argv[1], sys.argv[2], sys.argv[3:]
b = bytearray()
if f == '-':
    b.append(0)
else:
    data = open(f, 'rb').read()[:16384]
    b += bytes([1, 0, 1]) + struct.pack('<H', len(data)) + data
b += '\n'.join(args).encode()
open(out, 'wb').write(b)
PY
}
cli "$S/bundler_cli/bundle" dev.txt -type=bc -targets=$HOST,$DEV -input=f0.o -input=f0.o -output=f1.bc
cli "$S/bundler_cli/list" "$S/binary_bundle/llvm22.bc" -type=bc -list -input=f0.o
cli "$S/bundler_cli/unbundle" "$S/ccob/llvm22-small.bc" -type=bc -unbundle -targets=$DEV -input=f0.o -output=f1
cli "$S/bundler_cli/fatobj" fat.o -type=o -unbundle -targets=$DEV -input=f0.o -output=f1
cli "$S/bundler_cli/text" "$S/text_bundle/llvm22.ll" -type=ll -unbundle -targets=$HOST,$DEV -input=f0.o -output=f1 -output=f2 -allow-missing-bundles
cli "$S/packager_cli/package" gfx906.co -o f1.bin --image=file=f0.o,triple=amdgcn-amd-amdhsa,arch=gfx906,kind=hip
cli "$S/packager_cli/extract" new.o f0.o --image=arch=gfx906,file=f1.o
cli "$S/packager_cli/archive" new.o f0.o --image=kind=hip,file=f2.a --archive

# inspect reads whatever the container scanners and fat-object readers read.
mkdir -p "$S/inspect"
cp "$S"/scan/* "$S"/fat_object/* "$S/inspect/"
cp "$S"/nv_fatbin/lz4-nvfatbin.fatbin "$S"/nv_fatbin/fatbinary.fatbin "$S/inspect/"

# Round trips: structured bytes (see the targets); small random ones are as good as any.
for t in roundtrip_binary roundtrip_text roundtrip_ccob roundtrip_offload; do
    for i in 1 2 3; do head -c $((i * 97)) /dev/urandom > "$S/$t/random-$i"; done
done
ls -lR "$S" | awk '$5 > 8192 { print "large seed: " $0 }'
