//! A published CUDA crate built with cc's `.cuda(true)`, switched to `compile --host-code`
//! with its flags unchanged (issue 49): autd3-backend-cuda 35.0.0 (MIT), whose
//! `cuda_src/kernel.cu` is kept verbatim in `integration/third-party/autd3-backend-cuda/`.
//! Its build.rs gives cc seven nvcc flags ([`CRATE_FLAGS`]): `-cudart=shared`,
//! `-arch=sm_75` and five `-gencode`s, that is cubins for sm_75, sm_80, sm_86 and sm_87 and
//! PTX for compute_75 (from `-arch=sm_75`) and compute_86, all of which CUDA 13 builds.
//!
//! cc's build is replayed command for command, as cc 1.11.1 runs it for
//! x86_64-unknown-linux-gnu in a release build (its `CC_ENABLE_DEBUG_OUTPUT=1` lines):
//! `nvcc <cc's flags> <the crate's flags> -o kernel.o -c cuda_src/kernel.cu`, `ar cqD`, then
//! `nvcc <the same flags> --device-link -o autd3_cuda_kernel_dlink.o libautd3_cuda_kernel.a`
//! appended to the archive and `ar sD`; cc then has Cargo link `stdc++` and `cudart_static`.
//! `offload-build compile --host-code` gets the seven flags and no `--archs`:
//!
//! - its object holds exactly the images of nvcc's, byte for byte (the flags chose the
//!   architectures, none was added), the same kernels per architecture and the same global
//!   host symbols;
//! - cc's device-link member defines nothing: no global symbol, no undefined one, and a cubin
//!   per real architecture without a symbol (the source is compiled without `-rdc`; cc adds
//!   `--device-c` only for two or more `.cu` files), and a program linked with cc's archive
//!   does not take it out of the archive;
//! - a C++ program (g++, the wheels' static runtime) and a Rust one (rustc with cc's
//!   `rustc-link-lib` values) link with either library and behave the same (without a GPU:
//!   the runtime's error; with one: the kernels' results).
//!
//! Everything comes from NVIDIA's CUDA 13 wheels (`build-support/setup.sh`), g++, ar, nm and
//! rustc; a missing one fails the test with the setup hint.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::host_code::{clean, members, ok, run_program};
use crate::support::cuda_ref::{self, Image, ImageKind};
use crate::support::nvidia;

const EXE: &str = env!("CARGO_BIN_EXE_offload-build");

/// The library the crate's build.rs compiles (`compile("autd3_cuda_kernel")`).
const LIB: &str = "autd3_cuda_kernel";

/// The source, relative to the crate's root, as build.rs names it.
const SOURCE: &str = "cuda_src/kernel.cu";

/// The crate's `.flag(...)`s, in its build.rs's order.
const CRATE_FLAGS: [&str; 7] = [
    "-cudart=shared",
    "-arch=sm_75",
    "-gencode=arch=compute_75,code=sm_75",
    "-gencode=arch=compute_80,code=sm_80",
    "-gencode=arch=compute_86,code=sm_86",
    "-gencode=arch=compute_87,code=sm_87",
    "-gencode=arch=compute_86,code=compute_86",
];

/// What cc 1.11.1 puts before them for `.cuda(true)` (x86_64-unknown-linux-gnu, release:
/// `OPT_LEVEL=3`, `DEBUG=false`, `CXXFLAGS` unset): `-ccbin=` its C++ compiler, then each
/// host flag behind `-Xcompiler` (`Tool::push_cc_arg`), `-m64` bare.
const CC_FLAGS: [&str; 16] = [
    "-ccbin=c++",
    "-Xcompiler",
    "-O3",
    "-Xcompiler",
    "-ffunction-sections",
    "-Xcompiler",
    "-fdata-sections",
    "-Xcompiler",
    "-fPIC",
    "-m64",
    "-Xcompiler",
    "-march=x86-64",
    "-Xcompiler",
    "-Wall",
    "-Xcompiler",
    "-Wextra",
];

/// The images the crate's flags ask nvcc for, sorted.
fn expected_images() -> Vec<Image> {
    let cubins = ["sm_75", "sm_80", "sm_86", "sm_87"].map(|a| Image::of(ImageKind::Elf, a));
    let ptx = ["sm_75", "sm_86"].map(|a| Image::of(ImageKind::Ptx, a));
    let mut all: Vec<Image> = cubins.into_iter().chain(ptx).collect();
    all.sort();
    all
}

/// The crate's root with its source as the crate ships it, copied once per test process
/// (nothing is written into the repository).
fn crate_root() -> PathBuf {
    cuda_ref::once_per_process("autd3-backend-cuda", |root| {
        let include = nvidia::nvidia_dir().join("cu13/include/cuComplex.h");
        assert!(
            include.is_file(),
            "{} is missing: {}",
            include.display(),
            nvidia::NVIDIA_SETUP_HINT
        );
        std::fs::create_dir_all(root.join("cuda_src")).unwrap();
        let vendored = cuda_ref::third_party_dir().join("autd3-backend-cuda");
        std::fs::copy(vendored.join(SOURCE), root.join(SOURCE)).unwrap();
    })
}

/// The wheels' nvcc in the crate's root with cc's flags and the crate's, as cc runs it: its
/// own tools and then the system's on `PATH` (`-ccbin=c++` is `/usr/bin/c++`), nothing from
/// the environment's nvcc variables.
fn nvcc_as_cc() -> Command {
    let mut c = clean(nvidia::nvcc(), &crate_root());
    c.env(
        "PATH",
        format!("{}:/usr/bin:/bin", nvidia::cu13_bin().display()),
    );
    for var in ["NVCC_PREPEND_FLAGS", "NVCC_APPEND_FLAGS", "NVCC_CCBIN"] {
        c.env_remove(var);
    }
    c.args(CC_FLAGS).args(CRATE_FLAGS);
    c
}

/// cc's build, once per test process: the directory holding `kernel.o`,
/// `autd3_cuda_kernel_dlink.o` and `libautd3_cuda_kernel.a` (cc names the object
/// `<hash>-kernel.o`; the name does not matter to the link).
fn cc_build() -> PathBuf {
    cuda_ref::once_per_process("autd3-cc", |out| {
        std::fs::create_dir_all(out).unwrap();
        let (obj, dlink) = (out.join("kernel.o"), out.join(format!("{LIB}_dlink.o")));
        let lib = out.join(format!("lib{LIB}.a"));
        let mut c = nvcc_as_cc();
        c.arg("-o").arg(&obj).args(["-c", SOURCE]);
        ok(c, "nvcc -c, as cc runs it");
        let mut c = clean("ar", out);
        c.arg("cqD").arg(&lib).arg(&obj);
        ok(c, "ar cqD (the object)");
        let mut c = nvcc_as_cc();
        c.args(["--device-link", "-o"]).arg(&dlink).arg(&lib);
        ok(c, "nvcc --device-link, as cc runs it");
        let mut c = clean("ar", out);
        c.arg("cqD").arg(&lib).arg(&dlink);
        ok(c, "ar cqD (the device-link member)");
        let mut c = clean("ar", out);
        c.arg("sD").arg(&lib);
        ok(c, "ar sD");
    })
}

/// `offload-build compile --host-code` of the source with the crate's flags and nothing else
/// about architectures, once per test process: the directory holding
/// `libautd3_cuda_kernel.a` and its `kernel.o` (taken out of it).
fn ours_build() -> PathBuf {
    cuda_ref::once_per_process("autd3-ours", |out| {
        std::fs::create_dir_all(out).unwrap();
        let lib = out.join(format!("lib{LIB}.a"));
        let mut c = clean(EXE, &crate_root());
        for var in crate::support::CUDA_ENV_VARS.iter().chain(&["CXX"]) {
            c.env_remove(var);
        }
        c.env("PATH", "/usr/bin:/bin")
            .args([
                "compile",
                "--host-code",
                "--cuda-compiler",
                "nvcc",
                "--compiler",
            ])
            .arg(nvidia::nvcc())
            .args(CRATE_FLAGS.map(|f| format!("--flag={f}")))
            .args(["-q", SOURCE, "-o"])
            .arg(&lib);
        ok(
            c,
            "offload-build compile --host-code with the crate's flags",
        );
        let mut c = clean("ar", out);
        c.arg("x").arg(&lib).arg("kernel.o");
        ok(c, "ar x");
    })
}

/// The images of `obj` with their bytes, as `cuobjdump -xelf all -xptx all` extracts them
/// into `into`.
fn image_bytes(obj: &Path, into: &Path) -> BTreeMap<Image, Vec<u8>> {
    crate::nvfatbin::cuobjdump_extract(obj, into, &["-xelf", "-xptx"]);
    let mut images = BTreeMap::new();
    for name in crate::support::file_names(into, &[".cubin", ".ptx"]) {
        let kind = if name.ends_with(".cubin") {
            ImageKind::Elf
        } else {
            ImageKind::Ptx
        };
        let image = Image::of(kind, name.rsplit('.').nth(1).unwrap());
        let bytes = std::fs::read(into.join(&name)).unwrap();
        let before = images.insert(image.clone(), bytes);
        assert!(before.is_none(), "{}: two {image:?}", obj.display());
    }
    images
}

/// `nm -g --defined-only` of `obj`: the names of its strong global symbols (`T`, `D`, `B`,
/// `R`; nvcc keeps `dim3`'s constructors weak at `-O0`, inlines them at cc's `-O3`).
fn strong_globals(obj: &Path) -> BTreeSet<String> {
    let mut c = Command::new("nm");
    c.args(["-g", "--defined-only"]).arg(obj);
    String::from_utf8_lossy(&ok(c, "nm").stdout)
        .lines()
        .filter_map(|l| {
            let mut w = l.split_whitespace().rev();
            let (name, kind) = (w.next()?, w.next()?);
            ["T", "D", "B", "R"]
                .contains(&kind)
                .then(|| name.to_string())
        })
        .collect()
}

/// The crate's flags choose the architectures, and offload-build adds none: its object holds
/// exactly the cubins and PTX nvcc writes for them, byte for byte, the same kernels for each
/// architecture (16 each) and the same global host symbols, the launchers among them.
#[test]
fn the_crates_flags_choose_the_architectures_and_the_device_code_is_nvccs() {
    let (theirs, mine) = (cc_build().join("kernel.o"), ours_build().join("kernel.o"));
    for (who, obj) in [("offload-build", &mine), ("nvcc with cc's flags", &theirs)] {
        let mut images = cuda_ref::images(obj);
        images.sort();
        assert_eq!(images, expected_images(), "the images of {who}'s object");
    }
    let dir = tempfile::tempdir().unwrap();
    let ours = image_bytes(&mine, &dir.path().join("ours"));
    let nvccs = image_bytes(&theirs, &dir.path().join("cc"));
    let differ: Vec<&Image> = ours
        .keys()
        .filter(|image| ours.get(*image) != nvccs.get(*image))
        .collect();
    assert!(
        differ.is_empty(),
        "images that differ from nvcc's: {differ:?}"
    );
    assert_eq!(ours.len(), nvccs.len(), "the images of each object");

    let kernels = cuda_ref::kernel_names(&mine);
    assert_eq!(
        kernels,
        cuda_ref::kernel_names(&theirs),
        "the kernels per architecture"
    );
    assert_eq!(kernels.len(), 6, "{kernels:?}");
    for (arch, names) in &kernels {
        assert_eq!(names.len(), 16, "{arch}: {names:?}");
    }

    let symbols = strong_globals(&mine);
    assert_eq!(symbols, strong_globals(&theirs), "the global host symbols");
    for launcher in [
        "cu_exp",
        "cu_make_complex2",
        "cu_generate_propagation_matrix",
    ] {
        assert!(symbols.contains(launcher), "{launcher}: {symbols:?}");
    }
}

/// What cc's `nvcc --device-link` adds to its archive defines nothing a caller needs: the
/// member has no global symbol and needs none, and its images are a cubin per real
/// architecture without a symbol (no relocatable device code to link: the source is compiled
/// without `-rdc`). offload-build's library is the object alone.
#[test]
fn ccs_device_link_member_defines_nothing_a_caller_needs() {
    let cc = cc_build();
    assert_eq!(
        members(&cc.join(format!("lib{LIB}.a"))),
        ["kernel.o".to_string(), format!("{LIB}_dlink.o")]
    );
    assert_eq!(
        members(&ours_build().join(format!("lib{LIB}.a"))),
        ["kernel.o"]
    );
    let dlink = cc.join(format!("{LIB}_dlink.o"));
    for (what, args) in [("defines", "--defined-only"), ("needs", "-u")] {
        let mut nm = Command::new("nm");
        nm.args(["-g", args]).arg(&dlink);
        let out = String::from_utf8_lossy(&ok(nm, "nm").stdout).into_owned();
        assert!(
            out.trim().is_empty(),
            "the device-link member {what} global symbols:\n{out}"
        );
    }
    let images = cuda_ref::images(&dlink);
    let cubins: Vec<Image> = ["sm_75", "sm_80", "sm_86", "sm_87"]
        .map(|a| Image::of(ImageKind::Elf, a))
        .into();
    assert_eq!(images, cubins, "the device-link member's images");
    let symbols = cuda_ref::kernel_names(&dlink);
    assert!(
        symbols.values().all(BTreeSet::is_empty),
        "kernels in the device-link member: {symbols:?}"
    );
}

/// A C++ program that uploads two arrays, runs two of the crate's launchers and prints the
/// result (without a GPU: `cudaMalloc`'s error alone).
const MAIN_CPP: &str = r#"#include <cstdint>
#include <cstdio>
#include <cuComplex.h>
#include <cuda_runtime.h>
extern "C" void cu_make_complex2(const float *re, const float *im, uint32_t row,
                                 uint32_t col, cuFloatComplex *dst);
extern "C" void cu_exp(const cuFloatComplex *a, uint32_t row, uint32_t col,
                       cuFloatComplex *b);
int main() {
  const float re[4] = {0.0f, 1.0f, 0.5f, -1.0f};
  const float im[4] = {0.0f, 0.0f, 3.14159265f, 1.5707963f};
  float *d_re = nullptr, *d_im = nullptr;
  cuFloatComplex *d_c = nullptr, *d_e = nullptr;
  cudaError_t e = cudaMalloc(&d_re, sizeof re);
  std::printf("cudaMalloc: %s\n", cudaGetErrorName(e));
  if (e != cudaSuccess) return 0;
  cudaMalloc(&d_im, sizeof im);
  cudaMalloc(&d_c, 4 * sizeof(cuFloatComplex));
  cudaMalloc(&d_e, 4 * sizeof(cuFloatComplex));
  cudaMemcpy(d_re, re, sizeof re, cudaMemcpyHostToDevice);
  cudaMemcpy(d_im, im, sizeof im, cudaMemcpyHostToDevice);
  cu_make_complex2(d_re, d_im, 2, 2, d_c);
  cu_exp(d_c, 2, 2, d_e);
  cuFloatComplex out[4];
  e = cudaMemcpy(out, d_e, sizeof out, cudaMemcpyDeviceToHost);
  std::printf("kernels: %s\n", cudaGetErrorName(e));
  for (const cuFloatComplex &z : out) std::printf("%.4f %.4f\n", z.x, z.y);
  return 0;
}
"#;

/// The same in Rust, declaring what it calls as the crate's `lib.rs` does.
const MAIN_RS: &str = r#"use std::ffi::{c_char, c_int, c_void, CStr};
unsafe extern "C" {
    fn cu_make_complex2(re: *const f32, im: *const f32, row: u32, col: u32, dst: *mut [f32; 2]);
    fn cudaMalloc(p: *mut *mut c_void, size: usize) -> c_int;
    fn cudaDeviceSynchronize() -> c_int;
    fn cudaGetErrorName(e: c_int) -> *const c_char;
}
fn name(e: c_int) -> String {
    unsafe { CStr::from_ptr(cudaGetErrorName(e)) }.to_string_lossy().into_owned()
}
fn main() {
    let mut p = std::ptr::null_mut();
    let e = unsafe { cudaMalloc(&mut p, 16) };
    println!("cudaMalloc: {}", name(e));
    if e == 0 {
        unsafe { cu_make_complex2(p.cast(), p.cast(), 1, 1, p.cast()) };
        println!("kernels: {}", name(unsafe { cudaDeviceSynchronize() }));
    }
}
"#;

/// Both libraries link the same way into a C++ program (g++ with the wheels' static runtime)
/// and a Rust one (rustc with the `rustc-link-lib` values cc prints: `static=<lib>`, `stdc++`,
/// `cudart_static`; cc finds no search path in the wheels' layout, the test names
/// `cu13/lib`), and each pair behaves the same. The linker takes `kernel.o` out of cc's
/// archive and leaves its device-link member there.
#[test]
fn a_cpp_and_a_rust_caller_link_with_either_library_and_run_alike() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("main.cpp"), MAIN_CPP).unwrap();
    std::fs::write(d.join("main.rs"), MAIN_RS).unwrap();
    let cu13 = nvidia::nvidia_dir().join("cu13");
    let mut runs = Vec::new();
    for (who, libdir) in [("cc", cc_build()), ("ours", ours_build())] {
        let lib = libdir.join(format!("lib{LIB}.a"));
        let map = d.join(format!("{who}.map"));
        let mut cpp = Command::new("g++");
        cpp.current_dir(d)
            .arg("main.cpp")
            .arg(format!("-I{}", cu13.join("include").display()))
            .arg(&lib)
            .arg(format!("-L{}", cu13.join("lib").display()))
            .args(["-lcudart_static", "-ldl", "-lrt", "-lpthread"])
            .arg(format!("-Wl,-Map,{}", map.display()))
            .arg("-o")
            .arg(format!("cpp-{who}"));
        ok(cpp, &format!("g++ linking {}", lib.display()));
        // The link map names every archive member the link took, and only those.
        let map = std::fs::read_to_string(&map).unwrap();
        let archive = format!("lib{LIB}.a(");
        let taken: BTreeSet<&str> = map
            .split_whitespace()
            .filter_map(|w| w.split_once(archive.as_str()))
            .map(|(_, member)| member.trim_end_matches(')'))
            .collect();
        assert_eq!(
            taken,
            BTreeSet::from(["kernel.o"]),
            "{who}: the members linked"
        );

        let mut rust = Command::new("rustc");
        rust.current_dir(d)
            .args(["--edition", "2021", "main.rs", "-L"])
            .arg(format!("native={}", libdir.display()))
            .arg("-l")
            .arg(format!("static={LIB}"))
            .args(["-l", "stdc++", "-L"])
            .arg(format!("native={}", cu13.join("lib").display()))
            .args(["-l", "cudart_static", "-o"])
            .arg(format!("rust-{who}"));
        ok(rust, &format!("rustc linking {}", lib.display()));

        let cpp_run = run_program(&d.join(format!("cpp-{who}")));
        let rust_run = run_program(&d.join(format!("rust-{who}")));
        for run in [&cpp_run, &rust_run] {
            assert_eq!(run.0, Some(0), "{who}: {run:?}");
            assert!(run.1.starts_with("cudaMalloc: "), "{who}: {run:?}");
        }
        runs.push((cpp_run, rust_run));
    }
    assert_eq!(
        runs[0].0, runs[1].0,
        "the C++ programs (cc's library, ours)"
    );
    assert_eq!(
        runs[0].1, runs[1].1,
        "the Rust programs (cc's library, ours)"
    );
}
