//! CUDA code nobody in the project wrote, built as its authors build it: the vendored programs
//! of `integration/third-party/` (four NVIDIA cuda-samples, nine candle kernel files; see their
//! `PROVENANCE.md`) through the wheels' `nvcc -fatbin` for `sm_80` and `sm_90`. Each gives a
//! cubin and PTX per architecture, kernels in every image, and the same kernels in the cubin and
//! the PTX of an architecture; our fat binary reader lists the images cuobjdump lists. These are
//! the references (`support::cuda_ref`) that the builds of the same sources through `Build`,
//! CMake and `offload-build compile` are compared with (issue 24).
//!
//! One test per program, so that the harness compiles them in parallel; `candle_binary` (about
//! 25 s of nvcc on one core) is the longest.

use std::collections::BTreeSet;
use std::path::Path;

use offload_formats::nvfatbin::{EntryKind, Fatbin};

use crate::support::cuda_ref::{self, Image, ImageKind};

/// The architectures every program is built for.
const ARCHS: [&str; 2] = ["sm_80", "sm_90"];

/// nvcc of the program `name` for [`ARCHS`], then what cuobjdump and our reader see in it.
fn check_program(name: &str) {
    let out = cuda_ref::reference_fatbin(&cuda_ref::program(name), &ARCHS);
    let bytes = std::fs::read(&out).unwrap();

    let expected: BTreeSet<Image> = ARCHS
        .iter()
        .flat_map(|sm| [Image::of(ImageKind::Elf, sm), Image::of(ImageKind::Ptx, sm)])
        .collect();
    let listed = cuda_ref::images(&out);
    assert_eq!(listed.len(), expected.len(), "{name}: {listed:?}");
    assert_eq!(listed.iter().cloned().collect::<BTreeSet<_>>(), expected);
    let mut sorted = listed.clone();
    sorted.sort();
    assert_eq!(ours(&bytes), sorted, "{name}: our reader against cuobjdump");

    let names = cuda_ref::kernel_names(&out);
    let archs: BTreeSet<&String> = expected.iter().map(|i| &i.arch).collect();
    assert_eq!(names.keys().collect::<BTreeSet<_>>(), archs, "{name}");
    for sm in ARCHS {
        let cubin = &names[sm];
        assert!(!cubin.is_empty(), "{name}: no kernel in the {sm} cubin");
        assert_eq!(
            cubin,
            &names[&cuda_ref::virtual_arch(sm)],
            "{name}: kernels of the {sm} cubin and of its PTX"
        );
    }
}

/// The images our `nvfatbin` reader finds, named as cuobjdump names them, sorted.
fn ours(bytes: &[u8]) -> Vec<Image> {
    let fatbin = Fatbin::parse(bytes).expect("our reader parses nvcc's fat binary");
    let mut images: Vec<Image> = fatbin
        .entries()
        .iter()
        .filter_map(|e| {
            let kind = match e.kind() {
                EntryKind::Elf => ImageKind::Elf,
                EntryKind::Ptx => ImageKind::Ptx,
                EntryKind::Other(_) => return None,
            };
            Some(Image::of(kind, &format!("sm_{}", e.arch())))
        })
        .collect();
    images.sort();
    images
}

macro_rules! programs {
    ($($test:ident => $name:literal),* $(,)?) => {
        $(
            #[test]
            fn $test() {
                check_program($name);
            }
        )*
        /// The names the tests above cover.
        const TESTED: &[&str] = &[$($name),*];
    };
}

programs! {
    vector_add => "vectorAdd",
    matrix_mul => "matrixMul",
    simple_atomic_intrinsics => "simpleAtomicIntrinsics",
    simple_templates => "simpleTemplates",
    candle_affine => "candle-affine",
    candle_binary => "candle-binary",
    candle_cast => "candle-cast",
    candle_fill => "candle-fill",
    candle_indexing => "candle-indexing",
    candle_reduce => "candle-reduce",
    candle_sort => "candle-sort",
    candle_ternary => "candle-ternary",
    candle_unary => "candle-unary",
}

/// Vendored `.cu` files that other tests compile, by directory: HIP sources named `.cu`, and
/// a crate built as cc builds it.
const TESTED_ELSEWHERE: &[(&str, &str)] = &[
    ("hecbench", "hip_fp16_crate"),
    ("autd3-backend-cuda", "cc_cuda_switch"),
];

/// Every vendored `.cu` file is a program of `cuda_ref` (or in a directory another test
/// compiles), and every program has its test.
#[test]
fn every_vendored_source_is_tested() {
    fn sources(dir: &Path, out: &mut BTreeSet<std::path::PathBuf>) {
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            let elsewhere = |p: &Path| {
                p.parent() == Some(cuda_ref::third_party_dir().as_path())
                    && TESTED_ELSEWHERE
                        .iter()
                        .any(|(d, _)| p.file_name().is_some_and(|n| n == *d))
            };
            if p.is_dir() && elsewhere(&p) {
                continue;
            } else if p.is_dir() {
                sources(&p, out);
            } else if p.extension().is_some_and(|x| x == "cu") {
                out.insert(p);
            }
        }
    }
    let mut vendored = BTreeSet::new();
    sources(&cuda_ref::third_party_dir(), &mut vendored);
    let programs = cuda_ref::programs();
    let known: BTreeSet<_> = programs.iter().map(|p| p.source.clone()).collect();
    assert_eq!(vendored, known);
    let names: BTreeSet<_> = programs.iter().map(|p| p.name).collect();
    assert_eq!(names, TESTED.iter().copied().collect::<BTreeSet<_>>());
}

/// The parsers of `cuda_ref` on cuobjdump's text (CUDA 13.5's layout), without running it.
#[test]
fn cuobjdump_text_is_parsed() {
    let listing = "ELF file    1: k.1.sm_80.cubin\nPTX file    1: k.1.sm_80.ptx\n\
                   ELF file    2: dir/a.b.sm_90a.cubin\n";
    assert_eq!(
        cuda_ref::parse_images(listing),
        [
            Image::of(ImageKind::Elf, "sm_80"),
            Image::of(ImageKind::Ptx, "sm_80"),
            Image::of(ImageKind::Elf, "sm_90a"),
        ]
    );
    let dump = "\nFatbin elf code:\n================\narch = sm_80\ncode version = [1,8]\n\n\
        symbols:\nFUNC          GLOBAL  DEFAULT    ENTRY          _Z1kPi\n\
        FUNC          LOCAL   DEFAULT    -              helper\n\
        NOTYPE        LOCAL   INTERNAL   -            U  \n\n\
        Fatbin ptx code:\n================\narch = sm_80\ncompressed\n\n\
        // .globl\t_Z1kPi\n.visible .entry _Z1kPi(\n.param .u64 _Z1kPi_param_0\n)\n\
        .weak .entry w (\n\nFatbin elf code:\n================\narch = sm_90\n\nsymbols:\n";
    let names = cuda_ref::parse_kernel_names(dump);
    let set = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<BTreeSet<_>>();
    assert_eq!(names.len(), 3, "{names:?}");
    assert_eq!(names["sm_80"], set(&["_Z1kPi"]));
    assert_eq!(names["compute_80"], set(&["_Z1kPi", "w"]));
    assert_eq!(names["sm_90"], set(&[]));
}
