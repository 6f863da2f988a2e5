//! Precompiled preambles on a project of real shape (issue 25's "realapps-style checks"): the
//! device code `offload-build compile` builds with PCH on is what hipcc builds, kernel by
//! kernel, and the same bytes as without PCH.
//!
//! Five HIP sources sharing their leading includes (`hip/hip_runtime.h` and the project's
//! `common.h`): shared arrays of several sizes, `extern __shared__` beside a static array,
//! template kernels instantiated for several types and block sizes, `__launch_bounds__`,
//! `expf` and `sqrtf`, shared and global atomics, struct and scalar arguments of several sizes
//! and alignments, and rocPRIM's `block_reduce` and `block_scan` (Debian's `librocprim-dev`
//! 5.3.3, included after the shared preamble between `#pragma clang diagnostic` lines, which
//! end the precompiled part). Built for `gfx90a;gfx1030;gfx906` with Debian's ROCm 5.2 and its
//! clang 15 (`-std=c++17`: rocPRIM needs C++14, hipcc's default is C++11):
//!
//! - `offload-build compile --embed fatbin` with PCH on (the default) and a launcher logging
//!   every device compile, with `--hip-version=3.5.0` (what clang 15 assumes for Debian's ROCm
//!   when no version is passed): each of the 15 compiles used a PCH (`-include-pch`), one PCH
//!   per architecture for all the sources;
//! - the same with the default flags (hipcc's `--hip-version=5.2.21153`: clang pre-includes
//!   its HIP runtime wrapper, whose weak functions a PCH would reorder in this `-fgpu-rdc`
//!   build): no compile used a PCH;
//! - hipcc (`--cuda-device-only -c -O3`, every architecture, one process per source): per
//!   architecture, each of our code objects (the multi-source build is `-fgpu-rdc`,
//!   device-linked) has the union of hipcc's kernels, each with the same
//!   `.group_segment_fixed_size` (LDS), `.kernarg_segment_size` and `.args` (offset, size,
//!   value kind, address space) in its AMDGPU metadata (`llvm-readelf --notes`; register
//!   counts are not compared), and no undefined symbol (`llvm-nm -u`);
//! - `--no-pch` with `--hip-version=3.5.0` into another out-dir and cache: the fat binary is
//!   byte-identical to the PCH build's.
//!
//! The hipcc compiles run beside our builds, all CPU-bound: about 63 s of CPU in all (PCH build
//! 18 s, `--no-pch` 26 s, hipcc 20 s), 37 s on this 2-core machine beside other builds. A
//! missing ROCm package, hipcc or rocPRIM fails the test naming `build-support/setup.sh`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::time::Instant;

use offload_build::bundle::BinaryBundle;

const EXE: &str = env!("CARGO_BIN_EXE_offload-build");
const HIPCC: &str = "/usr/bin/hipcc";
const ROCPRIM: &str = "/usr/include/rocprim/rocprim.hpp";
const READELF: &str = "/usr/lib/llvm-19/bin/llvm-readelf";
const NM: &str = "/usr/lib/llvm-19/bin/llvm-nm";
const ARCHS: [&str; 3] = ["gfx90a", "gfx1030", "gfx906"];
/// rocPRIM needs C++14; hipcc's default is C++11, clang 15's gnu++14.
const STD: &str = "-std=c++17";

const COMMON: &str = r#"// Shared by every kernel of the project: sizes, argument structs, device helpers.
#pragma once
#include <stdint.h>

#define TILE 256
#define BINS 64

struct Params {
  float scale;
  int n;
  double bias;
};

struct alignas(16) Vec4 {
  float x, y, z, w;
};

struct Small {
  char tag;
  short count;
};

template <class T>
__device__ inline T square(T x) {
  return x * x;
}
"#;

const SOFTMAX: &str = r#"#include <hip/hip_runtime.h>
#include "common.h"

// A block-wide softmax numerator: a shared tile, a barrier, expf.
__global__ void __launch_bounds__(TILE)
softmax_numerators(const float* x, float* y, unsigned n) {
  __shared__ float tile[TILE];
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  tile[threadIdx.x] = i < n ? x[i] : 0.0f;
  __syncthreads();
  if (i < n) y[i] = expf(tile[threadIdx.x] - tile[0]);
}

__global__ void scale_rows(float* m, int rows, int cols, float s) {
  int r = blockIdx.x, c = threadIdx.x;
  if (r < rows && c < cols) m[r * cols + c] *= s;
}
"#;

const REDUCE: &str = r#"#include <hip/hip_runtime.h>
#include "common.h"

// Block sums of several types and block sizes: template kernels, shared arrays of
// different sizes, an atomic into the total.
template <class T, int Block>
__global__ void __launch_bounds__(Block) block_sum(const T* in, T* partial, T* total, int n) {
  __shared__ T s[Block];
  int i = blockIdx.x * Block + threadIdx.x;
  s[threadIdx.x] = i < n ? in[i] : T(0);
  __syncthreads();
  for (int w = Block / 2; w > 0; w /= 2) {
    if (threadIdx.x < w) s[threadIdx.x] += s[threadIdx.x + w];
    __syncthreads();
  }
  if (threadIdx.x == 0) {
    partial[blockIdx.x] = s[0];
    atomicAdd(total, s[0]);
  }
}

template __global__ void block_sum<float, 256>(const float*, float*, float*, int);
template __global__ void block_sum<double, 64>(const double*, double*, double*, int);
template __global__ void block_sum<int, 128>(const int*, int*, int*, int);

__global__ void sum_of_squares(const float* in, float* total, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) atomicAdd(total, square(in[i]));
}
"#;

const DYNAMIC: &str = r#"#include <hip/hip_runtime.h>
#include "common.h"

// Dynamic shared memory beside a static array; arguments of several sizes and alignments.
__global__ void normalize(Params p, Vec4 weights, Small tag, char c, short s, int64_t offset,
                          double d, const float* in, float* out) {
  extern __shared__ float dyn[];
  __shared__ int counts[32];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (threadIdx.x < 32) counts[threadIdx.x] = 0;
  dyn[threadIdx.x] = i < p.n ? in[i] : 0.0f;
  __syncthreads();
  if (i < p.n) {
    float v = dyn[threadIdx.x] * p.scale + (float)p.bias;
    v = sqrtf(square(v) + weights.x * weights.y + weights.z * weights.w);
    atomicAdd(&counts[threadIdx.x % 32], tag.count + c + s);
    out[i + offset] = v + (float)d;
  }
  __syncthreads();
  if (threadIdx.x == 0) out[0] += counts[tag.tag & 31];
}

__global__ void fill(float* out, float value, size_t n) {
  extern __shared__ double scratch[];
  size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
  scratch[threadIdx.x] = value;
  __syncthreads();
  if (i < n) out[i] = (float)scratch[(threadIdx.x + 1) % blockDim.x];
}
"#;

const HISTOGRAM: &str = r#"#include <hip/hip_runtime.h>
#include "common.h"

// A shared-memory histogram: shared and global atomics (add, or, max, compare-and-swap).
__global__ void __launch_bounds__(128, 2)
histogram(const uint8_t* data, size_t n, unsigned* bins, unsigned* max_bin, int* first) {
  __shared__ unsigned local[BINS];
  __shared__ unsigned long long seen[4];
  for (int b = threadIdx.x; b < BINS; b += blockDim.x) local[b] = 0;
  if (threadIdx.x < 4) seen[threadIdx.x] = 0;
  __syncthreads();
  for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    atomicAdd(&local[data[i] % BINS], 1u);
    atomicOr(&seen[data[i] % 4], 1ull << (data[i] % 64));
    atomicCAS(first, -1, (int)i);
  }
  __syncthreads();
  for (int b = threadIdx.x; b < BINS; b += blockDim.x) {
    atomicAdd(&bins[b], local[b]);
    atomicMax(max_bin, local[b]);
  }
}
"#;

/// rocPRIM after the shared preamble: a `#pragma` ends the part a PCH carries, so this source
/// uses the same PCH as the others and parses rocPRIM itself.
const BLOCK_PRIMS: &str = r#"#include <hip/hip_runtime.h>
#include "common.h"
#pragma clang diagnostic push
#pragma clang diagnostic ignored "-Wshadow"
#include <rocprim/rocprim.hpp>
#pragma clang diagnostic pop

// rocPRIM's block-wide reduction and scan.
template <unsigned Block>
__global__ void __launch_bounds__(Block) block_sums(const float* in, float* out) {
  using reduce = rocprim::block_reduce<float, Block>;
  __shared__ typename reduce::storage_type storage;
  float v = in[blockIdx.x * Block + threadIdx.x];
  float sum;
  reduce().reduce(v, sum, storage);
  if (threadIdx.x == 0) out[blockIdx.x] = sum;
}

template __global__ void block_sums<256>(const float*, float*);
template __global__ void block_sums<64>(const float*, float*);

__global__ void __launch_bounds__(128) prefix_sums(const int* in, int* out) {
  using scan = rocprim::block_scan<int, 128>;
  __shared__ scan::storage_type storage;
  int i = blockIdx.x * 128 + threadIdx.x;
  int v = in[i];
  scan().inclusive_scan(v, v, storage);
  out[i] = v;
}
"#;

const SOURCES: [(&str, &str); 5] = [
    ("softmax.hip", SOFTMAX),
    ("reduce.hip", REDUCE),
    ("dynamic.hip", DYNAMIC),
    ("histogram.hip", HISTOGRAM),
    ("block_prims.hip", BLOCK_PRIMS),
];

/// The kernels of the sources above, per architecture.
const KERNELS: usize = 12;

/// Logs each device compile's arguments to `$REALAPPS_LOG`, then runs it.
const LAUNCHER: &str = "#!/bin/sh\necho \"$*\" >> \"$REALAPPS_LOG\"\nexec \"$@\"\n";

fn require_tools() {
    crate::rocm::require_rocm();
    for f in [HIPCC, ROCPRIM, READELF, NM] {
        assert!(
            Path::new(f).is_file(),
            "{f} is missing: run build-support/setup.sh as root (Debian's ROCm 5.2 with \
             hipcc, librocprim-dev; LLVM 19)"
        );
    }
}

/// The project's sources, `common.h` and the logging launcher.
fn project() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("common.h"), COMMON).unwrap();
    for (name, text) in SOURCES {
        std::fs::write(dir.path().join(name), text).unwrap();
    }
    let launcher = dir.path().join("log.sh");
    std::fs::write(&launcher, LAUNCHER).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&launcher, std::fs::Permissions::from_mode(0o755)).unwrap();
    // A file changed less than a tick before a job starts is not trusted (see pch::settle).
    std::thread::sleep(std::time::Duration::from_millis(200));
    dir
}

/// `offload-build compile --embed fatbin` of the project into `dir/<out>`, with its cache in
/// `dir/<out>-cache`; `--no-pch` when `pch` is false; the compiles through the logging
/// launcher when `log` is given; `flags` added with `--flag`. Returns the fat binary.
fn offload_build(dir: &Path, out: &str, pch: bool, log: Option<&Path>, flags: &[&str]) -> Vec<u8> {
    let fatbin = dir.join(out).join("k.hipfb");
    std::fs::create_dir_all(dir.join(out)).unwrap();
    let mut c = Command::new(EXE);
    c.current_dir(dir)
        .arg("compile")
        .args(SOURCES.map(|s| s.0))
        .args(["--archs", &ARCHS.join(";")])
        .args(["--embed", "fatbin", "-q", "-j", "2", "--out-dir", out, "-o"])
        .arg(&fatbin)
        .args((!pch).then_some("--no-pch"))
        .args(flags.iter().map(|f| format!("--flag={f}")));
    for var in crate::support::BUILD_ENV_VARS.iter().chain(&[
        "CLANG",
        "OFFLOAD_BUILD_LAUNCHER",
        "RUSTC_WRAPPER",
    ]) {
        c.env_remove(var);
    }
    c.env("OFFLOAD_BUILD_CACHE_DIR", dir.join(format!("{out}-cache")));
    if let Some(log) = log {
        c.env("OFFLOAD_BUILD_LAUNCHER", dir.join("log.sh"))
            .env("REALAPPS_LOG", log);
    }
    let o = c.output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    std::fs::read(&fatbin).unwrap()
}

/// hipcc's device-only compile of `source` for every architecture into `dir/hipcc/`, started.
fn spawn_hipcc(dir: &Path, source: &str) -> (PathBuf, Child) {
    let out = dir.join("hipcc").join(source).with_extension("o");
    std::fs::create_dir_all(out.parent().unwrap()).unwrap();
    let mut c = Command::new(HIPCC);
    c.current_dir(dir)
        .env("TMPDIR", crate::support::compilers_tmpdir())
        .args(["--cuda-device-only", "-c", "-O3", STD])
        .args(ARCHS.map(|a| format!("--offload-arch={a}")))
        .arg(source)
        .arg("-o")
        .arg(&out)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    for var in crate::support::BUILD_ENV_VARS.iter().chain(&[
        "HIP_PLATFORM",
        "HIPCC_COMPILE_FLAGS_APPEND",
        "HIPCC_LINK_FLAGS_APPEND",
        "HIPCC_VERBOSE",
    ]) {
        c.env_remove(var);
    }
    (out, c.spawn().expect("hipcc starts"))
}

/// The code object of each architecture in a bundle (hipcc's object or our fat binary).
fn code_objects(bundle: &[u8]) -> BTreeMap<String, Vec<u8>> {
    let bundle = BinaryBundle::parse(bundle)
        .expect("a valid bundle")
        .expect("a bundle");
    let mut out = BTreeMap::new();
    for e in bundle.entries() {
        let id = e.id_str().into_owned();
        if let Some(arch) = id.strip_prefix("hipv4-amdgcn-amd-amdhsa--") {
            assert!(!e.data.is_empty(), "{id}: empty");
            out.insert(arch.to_string(), e.data.to_vec());
        } else {
            assert!(id.starts_with("host-"), "{id}");
        }
    }
    out
}

/// `tool args… file` on a code object written to `file`: its standard output.
fn inspect(tool: &str, args: &[&str], co: &[u8], file: &Path) -> String {
    std::fs::write(file, co).unwrap();
    let o = Command::new(tool).args(args).arg(file).output().unwrap();
    assert!(
        o.status.success(),
        "{tool} {args:?} {}: {o:?}",
        file.display()
    );
    String::from_utf8(o.stdout).unwrap()
}

/// A kernel's entry in the AMDGPU metadata: what the runtime reserves and lays out for it.
#[derive(Debug, Default, PartialEq, Eq)]
struct Kernel {
    /// `.group_segment_fixed_size`: the static LDS bytes.
    lds: String,
    /// `.kernarg_segment_size`.
    kernarg_size: String,
    /// `.args`: each argument's keys among [`ARG_KEYS`] with their values, in order.
    args: Vec<Vec<(String, String)>>,
}

const ARG_KEYS: [&str; 4] = [".offset", ".size", ".value_kind", ".address_space"];

/// The kernels, by name, of every `NT_AMDGPU_METADATA` note that `llvm-readelf --notes`
/// printed (YAML documents between `---` and `...`). A device link of several objects keeps
/// one note per object (lld concatenates `.note`); the runtime's comgr merges their kernel
/// lists, so do we.
fn kernels(notes: &str) -> BTreeMap<String, Kernel> {
    let mut found: Vec<(String, Kernel)> = Vec::new();
    let (mut in_doc, mut top, mut field) = (false, "", "");
    for line in notes.lines() {
        match line.trim() {
            "---" => in_doc = true,
            "..." => in_doc = false,
            _ if in_doc => {}
            _ => continue,
        }
        let mut rest = line.trim_start();
        let mut indent = line.len() - rest.len();
        let item = rest.starts_with("- ");
        if item {
            rest = &rest[2..];
            indent += 2;
        }
        let (key, value) = rest
            .split_once(':')
            .map_or(("", rest), |(k, v)| (k.trim(), v.trim()));
        match indent {
            0 => top = key,
            4 if top == "amdhsa.kernels" => {
                if item {
                    found.push(Default::default());
                }
                field = key;
                let (name, k) = found.last_mut().expect("a kernel entry");
                match key {
                    ".name" => *name = value.to_string(),
                    ".group_segment_fixed_size" => k.lds = value.to_string(),
                    ".kernarg_segment_size" => k.kernarg_size = value.to_string(),
                    _ => {}
                }
            }
            8 if top == "amdhsa.kernels" && field == ".args" => {
                let args = &mut found.last_mut().expect("a kernel entry").1.args;
                if item {
                    args.push(Vec::new());
                }
                if ARG_KEYS.contains(&key) {
                    let arg = args.last_mut().expect("an argument entry");
                    arg.push((key.to_string(), value.to_string()));
                }
            }
            _ => {}
        }
    }
    let mut out = BTreeMap::new();
    for (name, k) in found {
        assert!(!name.is_empty() && !k.lds.is_empty(), "{notes}");
        assert!(out.insert(name.clone(), k).is_none(), "{name} twice");
    }
    out
}

/// The kernels of one code object, and its undefined symbols (`llvm-nm -u`).
fn read_code_object(co: &[u8], file: &Path) -> (BTreeMap<String, Kernel>, String) {
    let notes = inspect(READELF, &["--notes"], co, file);
    (kernels(&notes), inspect(NM, &["-u"], co, file))
}

/// Per architecture, our code object against hipcc's per source: the same kernels with the
/// same LDS size, kernel argument segment size and arguments; nothing undefined in ours.
fn compare_with_hipcc(dir: &Path, ours: &[u8], hipcc: &[(String, Vec<u8>)]) {
    let ours = code_objects(ours);
    assert_eq!(
        ours.keys().collect::<Vec<_>>(),
        ["gfx1030", "gfx906", "gfx90a"]
    );
    let hipcc: Vec<(&String, BTreeMap<String, Vec<u8>>)> =
        hipcc.iter().map(|(s, b)| (s, code_objects(b))).collect();
    for (arch, co) in &ours {
        let (mine, undefined) = read_code_object(co, &dir.join(format!("ours-{arch}.co")));
        assert!(
            undefined.trim().is_empty(),
            "{arch}: undefined: {undefined}"
        );
        let mut theirs = BTreeMap::new();
        for (source, objects) in &hipcc {
            let co = objects
                .get(arch)
                .unwrap_or_else(|| panic!("hipcc: no {arch} code object for {source}"));
            let file = dir.join(format!("hipcc-{source}-{arch}.co"));
            for (name, k) in read_code_object(co, &file).0 {
                assert!(theirs.insert(name.clone(), k).is_none(), "{name} twice");
            }
        }
        assert_eq!(
            mine.keys().collect::<Vec<_>>(),
            theirs.keys().collect::<Vec<_>>(),
            "{arch}: the kernels differ from hipcc's"
        );
        assert_eq!(mine.len(), KERNELS, "{arch}: {:?}", mine.keys());
        assert_read_as_written(arch, &mine);
        for (name, k) in &mine {
            assert_eq!(k, &theirs[name], "{arch} {name}: ours, then hipcc's");
        }
    }
}

/// A few entries as the sources declare them: the metadata was read, so equal entries are
/// not equally empty.
fn assert_read_as_written(arch: &str, kernels: &BTreeMap<String, Kernel>) {
    let normalize = &kernels["_Z9normalize6Params4Vec45SmallcsldPKfPf"];
    // Params (16 bytes), then the 16-byte aligned Vec4 by value.
    let vec4 = [
        (".offset", "16"),
        (".size", "16"),
        (".value_kind", "by_value"),
    ]
    .map(|(k, v)| (k.to_string(), v.to_string()));
    assert!(
        normalize.kernarg_size == "72" && normalize.args.len() == 9 && normalize.args[1] == vec4,
        "{arch}: {normalize:?}"
    );
    assert_eq!(
        kernels["_Z18softmax_numeratorsPKfPfj"].lds, "1024",
        "{arch}"
    );
    assert_eq!(
        kernels["_Z9block_sumIdLi64EEvPKT_PS0_S3_i"].lds, "512",
        "{arch}"
    );
}

/// Every device compile of the build with PCH (the launcher's log) used a PCH, one per
/// architecture for all the sources.
fn assert_every_compile_used_a_pch(log: &Path) {
    let log = std::fs::read_to_string(log).unwrap();
    let compiles: Vec<&str> = log.lines().collect();
    assert_eq!(compiles.len(), SOURCES.len() * ARCHS.len(), "{log}");
    let mut pchs = BTreeMap::<&str, usize>::new();
    for c in &compiles {
        let mut args = c.split(' ');
        args.find(|a| *a == "-include-pch")
            .unwrap_or_else(|| panic!("a compile without PCH: {c}"));
        let pch = args.nth(1).expect("the PCH after -Xclang");
        *pchs.entry(pch).or_default() += 1;
    }
    assert_eq!(pchs.len(), ARCHS.len(), "{pchs:?}");
    assert!(pchs.values().all(|&n| n == SOURCES.len()), "{pchs:?}");
}

/// No device compile of the build (the launcher's log) used a PCH.
fn assert_no_compile_used_a_pch(log: &Path) {
    let log = std::fs::read_to_string(log).unwrap();
    let compiles: Vec<&str> = log.lines().collect();
    assert_eq!(compiles.len(), SOURCES.len() * ARCHS.len(), "{log}");
    for c in &compiles {
        assert!(!c.contains("-include-pch"), "a compile with a PCH: {c}");
    }
}

/// The HIP version clang 15 assumes for Debian's ROCm when none is passed: it then does not
/// pre-include its HIP runtime wrapper, and every device compile can use a PCH.
const OLD_HIP: &str = "--hip-version=3.5.0";

/// With hipcc's `--hip-version` (the default) clang pre-includes its HIP runtime wrapper, whose
/// weak functions stay in an `-fgpu-rdc` code object and which a PCH would put in another order
/// (`pch::job::preincludes_hip_wrapper`): no device compile of this multi-source build uses
/// one (with one, the fat binary differed from the `--no-pch` one). With `OLD_HIP` every
/// device compile uses one and the fat binary is the `--no-pch` one byte for byte. Both
/// builds have hipcc's kernels.
#[test]
fn pch_build_matches_hipcc_per_arch_and_no_pch_bytes() {
    require_tools();
    let t = Instant::now();
    let dir = project();
    let d = dir.path();
    // hipcc beside our builds: the machine's cores stay busy.
    let started: Vec<(&str, PathBuf, Child)> = SOURCES
        .iter()
        .map(|(s, _)| {
            let (out, child) = spawn_hipcc(d, s);
            (*s, out, child)
        })
        .collect();
    let log = d.join("compiles.log");
    let default = offload_build(d, "default", true, Some(&log), &[STD]);
    assert_no_compile_used_a_pch(&log);
    std::fs::remove_file(&log).unwrap();
    let with = offload_build(d, "pch", true, Some(&log), &[STD, OLD_HIP]);
    let t_pch = t.elapsed().as_secs_f64();
    assert_every_compile_used_a_pch(&log);
    let without = offload_build(d, "no-pch", false, None, &[STD, OLD_HIP]);
    let t_plain = t.elapsed().as_secs_f64();
    assert!(
        with == without,
        "the fat binaries with and without PCH differ"
    );
    let hipcc: Vec<(String, Vec<u8>)> = started
        .into_iter()
        .map(|(s, out, child)| {
            let o = child.wait_with_output().unwrap();
            assert!(
                o.status.success(),
                "hipcc {s}: {}",
                String::from_utf8_lossy(&o.stderr)
            );
            (s.to_string(), std::fs::read(&out).unwrap())
        })
        .collect();
    let t_hipcc = t.elapsed().as_secs_f64();
    compare_with_hipcc(d, &with, &hipcc);
    compare_with_hipcc(d, &default, &hipcc);
    println!(
        "realapps: PCH build done at {t_pch:.1} s, --no-pch at {t_plain:.1} s, hipcc at \
         {t_hipcc:.1} s, checks at {:.1} s",
        t.elapsed().as_secs_f64()
    );
}
