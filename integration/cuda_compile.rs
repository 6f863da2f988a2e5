//! CUDA through `offload_build::Build` with no CUDA install (issue 15, parts 1 and 2): clang 19
//! and clang 22 compile `sm_75;sm_90;90-virtual` to PTX (the PTX ISA each processor needs;
//! clang 22 alone defaults to 4.2, which none accepts) with one warning about the missing
//! `ptxas`; with `ptxas` from NVIDIA's wheels in the virtualenv the setup script makes
//! (`VIRTUAL_ENV`, whose CUDA 13 wheels are then clang 22's toolkit too, or `Build::ptxas`, or
//! `PTXAS`) they are cubins (NVIDIA ELF) as well, labelled `IMG_Cubin`; CMake's `NN-real`,
//! `all-major` and `native`; a clang crash is one line and a log file.

use std::path::{Path, PathBuf};

use offload_build::builder::{Build, Compiled, Error};
use offload_build::package::{ImageKind, OffloadBinary};

const VENV: &str = "/opt/offload-build/nvidia-venv";
const WHEEL_PTXAS: &str =
    "/opt/offload-build/nvidia-venv/lib/python3.11/site-packages/nvidia/cuda_nvcc/bin/ptxas";

fn clang(major: u32) -> String {
    let c = format!("/usr/lib/llvm-{major}/bin/clang");
    assert!(
        Path::new(&c).is_file(),
        "{c} missing: run build-support/setup.sh"
    );
    c
}

fn require_wheel() {
    assert!(
        Path::new(WHEEL_PTXAS).is_file(),
        "{WHEEL_PTXAS} missing: run build-support/setup.sh (it makes the virtualenv {VENV} with \
         nvidia-cuda-nvcc-cu12)"
    );
}

pub(crate) struct Project {
    dir: tempfile::TempDir,
}

impl Project {
    pub(crate) fn new() -> Project {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("v.cu"),
            "#define __global__ __attribute__((global))\n\
             extern \"C\" __global__ void vadd(float* a, float b) { a[0] += b; }\n",
        )
        .unwrap();
        std::fs::create_dir(dir.path().join("empty-path")).unwrap();
        Project { dir }
    }

    pub(crate) fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// A build of `v.cu` with `clang-<major>`, no CUDA install, no ptxas anywhere (`PATH` is an
    /// empty directory: no `ptxas`, no `nvcc`, no `python3`).
    pub(crate) fn build(&self, major: u32, archs: &str) -> Build {
        let mut b = Build::new();
        b.out_dir(self.path("out"))
            .cargo_metadata(false)
            .compiler(clang(major))
            .file(self.path("v.cu"))
            .archs(archs)
            .env("PATH", self.path("empty-path"))
            .jobserver(jobserver::Client::new(1).unwrap());
        for var in crate::support::CUDA_ENV_VARS {
            b.env_remove(var);
        }
        b.env_remove("OFFLOAD_BUILD_CACHE_DIR");
        b
    }
}

/// (arch, image kind, image) of every offload binary in the container, in order.
pub(crate) fn images(c: &Compiled) -> Vec<(String, ImageKind, Vec<u8>)> {
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

fn ptx_version(ptx: &[u8]) -> String {
    String::from_utf8_lossy(ptx)
        .lines()
        .find_map(|l| l.strip_prefix(".version "))
        .unwrap_or_default()
        .trim()
        .to_string()
}

fn is_cubin(data: &[u8]) -> bool {
    data.starts_with(b"\x7fELF") && data[4] == 2 && u16::from_le_bytes([data[18], data[19]]) == 190
}

#[test]
fn without_a_cuda_install_clang_19_and_22_give_ptx_with_one_warning() {
    for major in [19, 22] {
        let p = Project::new();
        let c = p
            .build(major, "sm_75;sm_90;90-virtual")
            .try_compile("k")
            .unwrap_or_else(|e| panic!("clang {major}: {e}"));
        let ptxas_warnings: Vec<&String> =
            c.warnings.iter().filter(|w| w.contains("ptxas")).collect();
        assert_eq!(ptxas_warnings.len(), 1, "clang {major}: {:?}", c.warnings);
        assert!(
            ptxas_warnings[0].contains("no ptxas found, so sm_75, sm_90 are packed as PTX only"),
            "{}",
            ptxas_warnings[0]
        );
        assert_eq!(c.archs, ["compute_90", "sm_75", "sm_90"]);
        assert_eq!(c.kernels, ["vadd"]);
        let imgs = images(&c);
        let got: Vec<(&str, ImageKind, String)> = imgs
            .iter()
            .map(|(a, k, d)| (a.as_str(), *k, ptx_version(d)))
            .collect();
        // The oldest PTX ISA each processor accepts (clang 22 alone would say 4.2 and crash).
        assert_eq!(
            got,
            [
                ("sm_90", ImageKind::Ptx, "7.8".to_string()),
                ("sm_75", ImageKind::Ptx, "6.3".to_string()),
                ("sm_90", ImageKind::Ptx, "7.8".to_string()),
            ],
            "clang {major}"
        );
        // A cubin-only architecture without ptxas is an error naming what was searched.
        let e = p.build(major, "90-real").try_compile("k").unwrap_err();
        assert!(
            matches!(&e, Error::ToolNotFound { tool, .. } if tool.contains("ptxas") && tool.contains("sm_90")),
            "{e}"
        );
    }
}

#[test]
fn the_wheels_ptxas_makes_cubins() {
    require_wheel();
    for major in [19, 22] {
        let p = Project::new();
        let mut b = p.build(major, "sm_75;sm_90;90-virtual;80-real");
        if major == 22 {
            // The virtualenv's wheels: since issue 24 its CUDA 13 wheels are the toolkit clang
            // 22 compiles with, and their ptxas makes the cubins.
            b.env("VIRTUAL_ENV", VENV);
        } else {
            // clang 19 cannot parse CUDA 13's headers (integration/cuda_toolkit.rs): the CUDA
            // 12.9 ptxas of the same virtualenv alone.
            b.env("PTXAS", WHEEL_PTXAS);
        }
        let c = b
            .try_compile("k")
            .unwrap_or_else(|e| panic!("clang {major}: {e}"));
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
                ("sm_90", ImageKind::Ptx),   // 90-virtual
                ("sm_75", ImageKind::Ptx),   // sm_75: the PTX and the cubin
                ("sm_75", ImageKind::Cubin), //
                ("sm_80", ImageKind::Cubin), // 80-real: the cubin alone
                ("sm_90", ImageKind::Ptx),
                ("sm_90", ImageKind::Cubin),
            ],
            "clang {major}"
        );
        for (a, k, d) in &imgs {
            if *k == ImageKind::Cubin {
                assert!(is_cubin(d), "clang {major}: {a} is no NVIDIA ELF");
            }
        }
        // The same ptxas named by Build::ptxas and by PTXAS.
        let mut b = p.build(major, "sm_90");
        b.ptxas(WHEEL_PTXAS);
        let c = b.try_compile("k").unwrap();
        assert!(
            images(&c)
                .iter()
                .any(|(_, k, d)| *k == ImageKind::Cubin && is_cubin(d))
        );
        let mut b = p.build(major, "sm_75");
        b.env("PTXAS", WHEEL_PTXAS);
        let c = b.try_compile("k").unwrap();
        assert!(
            images(&c)
                .iter()
                .any(|(_, k, d)| *k == ImageKind::Cubin && is_cubin(d))
        );
    }
    // PTXAS naming nothing is an error, not a silent PTX-only build.
    let p = Project::new();
    let mut b = p.build(22, "sm_90");
    b.env("PTXAS", "/nowhere/ptxas");
    let e = b.try_compile("k").unwrap_err().to_string();
    assert!(e.contains("PTXAS=`/nowhere/ptxas` names none"), "{e}");
}

#[test]
fn all_major_native_and_a_clang_crash_in_one_line() {
    let p = Project::new();
    let r = p.build(19, "all-major").try_resolve_archs().unwrap();
    assert_eq!(r.archs, ["sm_50", "sm_60", "sm_70", "sm_80", "sm_90"]);
    // A cubin-only architecture keeps its spelling: CMake's module compiles what it resolved,
    // and `sm_80` would add the PTX.
    let mut b = p.build(19, "80-real;90;90-virtual");
    b.env("PTXAS", WHEEL_PTXAS);
    let r = b.try_resolve_archs().unwrap();
    assert_eq!(r.archs, ["80-real", "sm_90", "compute_90"]);

    // `native`: nvidia-smi's compute capabilities (nvptx-arch beside clang finds no driver
    // here); without any GPU tool, the default set and a warning.
    let smi = p.path("empty-path/nvidia-smi");
    std::fs::write(&smi, "#!/bin/sh\nprintf '9.0\\n7.5\\n9.0\\n'\n").unwrap();
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&smi, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let r = p.build(19, "native").try_resolve_archs().unwrap();
    assert_eq!(r.archs, ["sm_75", "sm_90"]);
    std::fs::remove_file(&smi).unwrap();
    let r = p.build(19, "native").try_resolve_archs().unwrap();
    assert_eq!(r.archs, offload_build::builder::DEFAULT_CUDA_ARCHS);
    assert!(
        r.warnings.iter().any(|w| w.contains("found no GPU")),
        "{:?}",
        r.warnings
    );

    // A flag that chooses the PTX ISA is respected: clang 22 with PTX 4.2 for sm_75 crashes,
    // and the error is its one line plus where the stack dump was kept.
    let mut b = p.build(22, "sm_75");
    b.flag("--cuda-feature=+ptx42");
    let e = b.try_compile("k").unwrap_err();
    let text = e.to_string();
    assert!(
        text.contains("PTX version 4.2 does not support target 'sm_75'"),
        "{text}"
    );
    assert!(!text.contains("Stack dump"), "{text}");
    assert!(!text.contains("PLEASE submit"), "{text}");
    let log = text
        .split("its full output (with the stack dump) is in ")
        .nth(1)
        .and_then(|t| t.split(')').next())
        .unwrap_or_else(|| panic!("no log named: {text}"));
    let kept = std::fs::read_to_string(log.trim()).unwrap();
    assert!(kept.contains("Stack dump"), "{kept}");
}
