//! clang and the CUDA toolkit (issue 24, items 2 and 3), through `offload_build::Build` with
//! clang named explicitly: NVIDIA's CUDA 13.5 wheels in the setup script's virtualenv
//! (`VIRTUAL_ENV`) laid out as one links directory for `--cuda-path`, so a kernel including
//! `cuda_runtime.h`, `cuda_fp16.h`, `cuda_bf16.h` and `cub/cub.cuh` builds for `sm_80;sm_90`
//! with clang 22 (one warning: the toolkit is newer than the CUDA 12.9 it knows) and fails
//! with clang 19 naming both versions; with no CUDA anywhere, the standard spelling
//! (`__global__`, `threadIdx`, `__shared__`, atomics) compiles through clang's builtin headers
//! with one warning, and a toolkit header is a clear error; the links directory is reused, and
//! laid out again when the toolkit changes.

use std::path::{Path, PathBuf};

use offload_build::builder::{Build, Compiled, Error};
use offload_build::package::{ImageKind, OffloadBinary};

use crate::cuda_compile::Project;

pub(crate) const VENV: &str = "/opt/offload-build/nvidia-venv";
const CU13: &str = "/opt/offload-build/nvidia-venv/lib/python3.11/site-packages/nvidia/cu13";

pub(crate) fn require_cu13() {
    for f in [
        "include/cuda_runtime.h",
        "include/cccl/cub/cub.cuh",
        "bin/ptxas",
    ] {
        let p = Path::new(CU13).join(f);
        assert!(
            p.is_file(),
            "{} missing: run build-support/setup.sh (it installs NVIDIA's CUDA 13 wheels into \
             {VENV})",
            p.display()
        );
    }
}

/// Real CUDA: the toolkit's headers, fp16 and bf16 arithmetic, a cub block reduction.
const REAL_CUDA: &str = r#"#include <cuda_runtime.h>
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#include <cub/cub.cuh>

extern "C" __global__ void half_axpy(__half *y, const __half *x, __half a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = __hfma(a, x[i], y[i]);
}

extern "C" __global__ void bf16_scale(__nv_bfloat16 *y, float s, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = __float2bfloat16(__bfloat162float(y[i]) * s);
}

extern "C" __global__ void block_sum(const float *x, float *out) {
  typedef cub::BlockReduce<float, 128> Reduce;
  __shared__ typename Reduce::TempStorage tmp;
  float v = Reduce(tmp).Sum(x[blockIdx.x * 128 + threadIdx.x]);
  if (threadIdx.x == 0) out[blockIdx.x] = v;
}
"#;

/// CUDA as tutorials spell it, without any header.
const STANDARD: &str = r#"extern "C" __global__ void scale(float *a, float s, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) a[i] *= s;
}

__constant__ float bias[4];

__device__ __forceinline__ float biased(float x) { return x + bias[0]; }

__host__ __device__ inline int twice(int x) { return 2 * x; }

extern "C" __global__ void __launch_bounds__(256) histogram(const float *x, int *bins,
                                                           unsigned int *seen,
                                                           unsigned long long *total) {
  __shared__ int local[32];
  if (threadIdx.x < 32) local[threadIdx.x] = 0;
  __syncthreads();
  int b = (int)biased(x[blockIdx.x * blockDim.x + threadIdx.x]) % warpSize;
  atomicAdd(&local[b], 1);
  __syncthreads();
  if (threadIdx.x < 32) atomicAdd(&bins[threadIdx.x], local[threadIdx.x]);
  atomicInc(seen, 1000u);
  atomicMax(&bins[0], twice(gridDim.x));
  atomicCAS(total, 0ull, 1ull);
  atomicOr(seen, 1u);
  atomicExch(&bins[1], 7);
  atomicSub(&bins[2], 1);
}
"#;

/// (arch, image kind, image) of every offload binary in the container, in order.
fn images(c: &Compiled) -> Vec<(String, ImageKind, Vec<u8>)> {
    let bytes = std::fs::read(&c.container_file).unwrap();
    let mut out = Vec::new();
    let mut at = 0;
    while at < bytes.len() {
        let bin = OffloadBinary::parse(&bytes[at..]).unwrap();
        for e in bin.entries() {
            out.push((
                String::from_utf8_lossy(e.arch()).into_owned(),
                e.image_kind().kind().unwrap(),
                e.image().to_vec(),
            ));
        }
        at += bin.size() as usize;
    }
    out
}

fn contains(hay: &[u8], needle: &str) -> bool {
    hay.windows(needle.len()).any(|w| w == needle.as_bytes())
}

/// `v.cu` holding `source`, built with clang `major` for `archs` (`PATH` an empty directory,
/// no CUDA variables), with `VIRTUAL_ENV` set when `venv` is given.
fn build(p: &Project, source: &str, major: u32, archs: &str, venv: Option<&Path>) -> Build {
    std::fs::write(p.path("v.cu"), source).unwrap();
    let mut b = p.build(major, archs);
    if let Some(v) = venv {
        b.env("VIRTUAL_ENV", v);
    }
    b
}

fn toolkit_warnings(c: &Compiled) -> Vec<&String> {
    c.warnings
        .iter()
        .filter(|w| w.contains("CUDA toolkit"))
        .collect()
}

#[test]
fn clang_22_builds_real_cuda_with_the_wheels_toolkit() {
    require_cu13();
    let p = Project::new();
    let c = build(&p, REAL_CUDA, 22, "sm_80;sm_90", Some(Path::new(VENV)))
        .try_compile("k")
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(c.kernels, ["bf16_scale", "block_sum", "half_axpy"]);
    let warnings = toolkit_warnings(&c);
    assert_eq!(warnings.len(), 1, "{:?}", c.warnings);
    for want in [
        "is CUDA 13.5",
        "clang 22",
        "supports, 12.9",
        "-Wno-unknown-cuda-version",
    ] {
        assert!(warnings[0].contains(want), "{want:?} in {}", warnings[0]);
    }
    assert!(
        !c.warnings.iter().any(|w| w.contains("ptxas")),
        "{:?}",
        c.warnings
    );
    let imgs = images(&c);
    let kinds: Vec<(&str, ImageKind)> = imgs.iter().map(|(a, k, _)| (a.as_str(), *k)).collect();
    assert_eq!(
        kinds,
        [
            ("sm_80", ImageKind::Ptx),
            ("sm_80", ImageKind::Cubin),
            ("sm_90", ImageKind::Ptx),
            ("sm_90", ImageKind::Cubin),
        ]
    );
    for (arch, kind, data) in &imgs {
        for k in ["half_axpy", "bf16_scale", "block_sum"] {
            let found = match kind {
                ImageKind::Ptx => contains(data, &format!(".entry {k}(")),
                _ => data.starts_with(b"\x7fELF") && contains(data, k),
            };
            assert!(found, "{k} missing from the {arch} {kind:?}");
        }
    }
    // The toolkit's headers are system headers: Cargo watches the source alone.
    let watched: Vec<&String> = c
        .cargo_directives
        .iter()
        .filter(|d| d.contains("rerun-if-changed"))
        .collect();
    assert!(
        watched.len() == 1 && watched[0].ends_with("v.cu"),
        "{watched:?}"
    );
    // The links directory: one root for --cuda-path, CCCL's headers merged into include/.
    let dirs = toolkit_dirs(&p.path("out/offload-build-cache"));
    assert_eq!(dirs.len(), 1, "{dirs:?}");
    let inc = dirs[0].join("include");
    for f in [
        "cuda_runtime.h",
        "cub/cub.cuh",
        "thrust/version.h",
        "curand_mtgp32_kernel.h",
    ] {
        assert!(inc.join(f).is_file(), "{f} missing from {}", inc.display());
    }
    assert!(dirs[0].join("nvvm/libdevice/libdevice.10.bc").is_file());
    assert!(dirs[0].join("bin/ptxas").is_file());
}

#[test]
fn clang_19_with_a_cuda_13_toolkit_fails_naming_the_versions() {
    require_cu13();
    let p = Project::new();
    let e = build(&p, REAL_CUDA, 19, "sm_80", Some(Path::new(VENV)))
        .try_compile("k")
        .unwrap_err();
    let Error::CompileFailed { hint, .. } = &e else {
        panic!("not a compile failure: {e}");
    };
    let hint = hint.as_deref().unwrap_or_else(|| panic!("no hint: {e}"));
    for want in [
        "is clang 19, which supports CUDA up to 12.5",
        "the CUDA toolkit is CUDA 13.5",
        CU13,
        "Use a newer clang",
        "nvcc",
    ] {
        assert!(hint.contains(want), "{want:?} missing from: {hint}");
    }
    assert!(e.to_string().contains("supports CUDA up to 12.5"), "{e}");
}

#[test]
fn cuda_13_ptxas_refuses_old_gpus_with_a_hint_and_no_clang_blame() {
    require_cu13();
    let p = Project::new();
    let source = "#include <cuda_runtime.h>\n\
                  extern \"C\" __global__ void k(float *a) { a[threadIdx.x] += 1.0f; }\n";
    let e = build(&p, source, 22, "sm_70", Some(Path::new(VENV)))
        .try_compile("k")
        .unwrap_err();
    let Error::CompileFailed { hint, command, .. } = &e else {
        panic!("not a compile failure: {e}");
    };
    assert!(command.contains("bin/ptxas -arch=sm_70"), "{command}");
    let hint = hint.as_deref().unwrap_or_else(|| panic!("no hint: {e}"));
    assert!(hint.contains("builds sm_75 and newer only"), "{hint}");
    assert!(!hint.contains("supports CUDA up to"), "{hint}");
    // As PTX only, sm_70 builds.
    let c = build(&p, source, 22, "70-virtual", Some(Path::new(VENV)))
        .try_compile("k")
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(c.archs, ["compute_70"]);
}

#[test]
fn without_cuda_the_standard_spelling_compiles_with_one_warning() {
    for major in [19, 22] {
        let p = Project::new();
        let c = build(&p, STANDARD, major, "sm_75;sm_90", None)
            .try_compile("k")
            .unwrap_or_else(|e| panic!("clang {major}: {e}"));
        assert_eq!(c.kernels, ["histogram", "scale"], "clang {major}");
        let warnings = toolkit_warnings(&c);
        assert_eq!(warnings.len(), 1, "clang {major}: {:?}", c.warnings);
        for want in [
            "no CUDA toolkit found",
            "VIRTUAL_ENV (unset)",
            "/usr/local/cuda (no include/cuda.h",
            "pip install nvidia-cuda-nvcc nvidia-nvvm nvidia-cuda-runtime nvidia-cuda-crt \
             nvidia-cuda-cccl",
        ] {
            assert!(warnings[0].contains(want), "{want:?} in {}", warnings[0]);
        }
        // No compiler warnings either (the prelude's macros are the spelling of v.cu's
        // ancestors, and nothing else is printed).
        assert!(c.diagnostics.is_empty(), "{:?}", c.diagnostics);
        // The prelude in the cache is no header Cargo watches.
        let watched: Vec<&String> = c
            .cargo_directives
            .iter()
            .filter(|d| d.contains("rerun-if-changed"))
            .collect();
        assert!(
            watched.len() == 1 && watched[0].ends_with("v.cu"),
            "{watched:?}"
        );
        let imgs = images(&c);
        let got: Vec<(&str, ImageKind)> = imgs.iter().map(|(a, k, _)| (a.as_str(), *k)).collect();
        assert_eq!(got, [("sm_75", ImageKind::Ptx), ("sm_90", ImageKind::Ptx)]);
        for (arch, _, ptx) in &imgs {
            for k in ["scale", "histogram"] {
                assert!(contains(ptx, &format!(".entry {k}(")), "{k} in {arch}");
            }
            assert!(
                contains(ptx, "atom.") || contains(ptx, "red."),
                "{arch}: no atomics"
            );
            assert!(contains(ptx, "bar.sync"), "{arch}: no __syncthreads");
        }

        // A toolkit header: the error says where a toolkit was looked for and how to get one.
        let e = build(&p, "#include <cuda_fp16.h>\n", major, "sm_90", None)
            .try_compile("k")
            .unwrap_err();
        let text = e.to_string();
        for want in [
            "'cuda_fp16.h' file not found",
            "no CUDA toolkit was found",
            "Looked at: CUDA_PATH (unset)",
            "VIRTUAL_ENV (unset)",
            "pip install nvidia-cuda-nvcc",
        ] {
            assert!(
                text.contains(want),
                "clang {major}: {want:?} missing from: {text}"
            );
        }
    }
}

/// The `cuda-toolkit-*` links directories in a cache directory.
fn toolkit_dirs(cache: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(cache)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("cuda-toolkit-"))
        })
        .collect();
    v.sort();
    v
}

/// A copy of the CUDA 13 wheels' tree in a virtualenv of its own: `bin`, `nvvm` and `lib`
/// linked, `include` a directory of links (so that it can change).
fn fake_venv(dir: &Path) -> PathBuf {
    let venv = dir.join("venv");
    let cu13 = venv.join("lib/python3.11/site-packages/nvidia/cu13");
    std::fs::create_dir_all(cu13.join("include")).unwrap();
    for d in ["bin", "nvvm", "lib"] {
        std::os::unix::fs::symlink(Path::new(CU13).join(d), cu13.join(d)).unwrap();
    }
    for e in std::fs::read_dir(Path::new(CU13).join("include"))
        .unwrap()
        .flatten()
    {
        std::os::unix::fs::symlink(e.path(), cu13.join("include").join(e.file_name())).unwrap();
    }
    venv
}

#[test]
fn the_links_directory_is_reused_and_laid_out_again_when_the_toolkit_changes() {
    require_cu13();
    let p = Project::new();
    let venv = fake_venv(&p.path(""));
    let source = "#include <cuda_runtime.h>\n#include <cub/cub.cuh>\n\
                  extern \"C\" __global__ void k(float *a) { a[threadIdx.x] += 1.0f; }\n";
    let cache = p.path("out/offload-build-cache");
    build(&p, source, 22, "sm_90", Some(&venv))
        .try_compile("k")
        .unwrap();
    let first = toolkit_dirs(&cache);
    assert_eq!(first.len(), 1, "{first:?}");
    let made = std::fs::symlink_metadata(&first[0])
        .unwrap()
        .modified()
        .unwrap();
    // A second build (another library in the same cache): the same directory, not laid out
    // again.
    let c = build(&p, source, 22, "sm_90", Some(&venv))
        .try_compile("k2")
        .unwrap();
    assert_eq!(toolkit_dirs(&cache), first);
    assert_eq!(
        std::fs::symlink_metadata(&first[0])
            .unwrap()
            .modified()
            .unwrap(),
        made
    );
    assert_eq!(toolkit_warnings(&c).len(), 1, "{:?}", c.warnings);
    // The toolkit changes (a header installed into its include directory): a new directory,
    // which has the new header.
    std::thread::sleep(std::time::Duration::from_millis(20));
    let cu13_inc = venv.join("lib/python3.11/site-packages/nvidia/cu13/include");
    std::fs::write(cu13_inc.join("extra_toolkit_header.h"), "#pragma once\n").unwrap();
    build(
        &p,
        &format!("#include <extra_toolkit_header.h>\n{source}"),
        22,
        "sm_90",
        Some(&venv),
    )
    .try_compile("k")
    .unwrap_or_else(|e| panic!("{e}"));
    let now = toolkit_dirs(&cache);
    assert_eq!(now.len(), 2, "{now:?}");
    let new = now.iter().find(|d| !first.contains(d)).unwrap();
    assert!(new.join("include/extra_toolkit_header.h").is_file());
    assert!(!first[0].join("include/extra_toolkit_header.h").exists());
}
