//! `offload_build::Build` driven in-process with clang 19, each test in its own directory,
//! with a counting launcher (`OFFLOAD_BUILD_LAUNCHER`) that logs the start and end of every
//! source compile: cache hits, header tracking, arch changes, jobserver bounds, fallbacks
//! and typed errors.

use std::path::{Path, PathBuf};

use offload_build::builder::{Build, Container, Error, Language};
use offload_build::bundle::BinaryBundle;

const CLANG: &str = "/usr/lib/llvm-19/bin/clang";

const HEADER: &str = "#pragma once\n#define __global__ __attribute__((global))\n\
                      #define __device__ __attribute__((device))\n";

struct Project {
    dir: tempfile::TempDir,
}

impl Project {
    /// Sources `a.hip` (includes `a.h`), `b.hip` (includes `b.h`), both include `common.h`.
    fn new() -> Project {
        assert!(
            Path::new(CLANG).is_file(),
            "{CLANG} missing: run build-support/setup.sh"
        );
        let p = Project {
            dir: tempfile::tempdir().unwrap(),
        };
        p.write("common.h", HEADER);
        p.write(
            "a.h",
            "#pragma once\n__device__ inline float fa(float x) { return x + 1; }\n",
        );
        p.write(
            "b.h",
            "#pragma once\n__device__ inline float fb(float x) { return x * 2; }\n",
        );
        p.write(
            "a.hip",
            "#include \"common.h\"\n#include \"a.h\"\n\
             extern \"C\" __global__ void ka(float* x) { x[0] = fa(x[0]); }\n",
        );
        p.write(
            "b.hip",
            "#include \"common.h\"\n#include \"b.h\"\n\
             extern \"C\" __global__ void kb(float* x) { x[0] = fb(x[0]); }\n",
        );
        let launcher = p.path("count.sh");
        p.write(
            "count.sh",
            "#!/bin/sh\n\
             echo \"start $(date +%s%N) $*\" >> \"$COUNT_LOG\"\n\
             sleep \"${LAUNCHER_SLEEP:-0}\"\n\
             \"$@\"\nrc=$?\n\
             echo \"end $(date +%s%N)\" >> \"$COUNT_LOG\"\n\
             exit $rc\n",
        );
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&launcher, std::fs::Permissions::from_mode(0o755)).unwrap();
        p
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    fn write(&self, name: &str, text: &str) {
        std::fs::write(self.path(name), text).unwrap();
    }

    fn log(&self) -> PathBuf {
        self.path("compiles.log")
    }

    /// A builder for this project: clang 19 through `CLANG`, the counting launcher, no
    /// architecture variables from the outer environment, no printed directives.
    fn build(&self) -> Build {
        let mut b = Build::new();
        b.out_dir(self.path("out"))
            .cargo_metadata(false)
            .env("CARGO_MANIFEST_DIR", self.dir.path())
            .env("CARGO_PKG_NAME", "test-kernels")
            .env("CLANG", CLANG)
            .env("OFFLOAD_BUILD_LAUNCHER", self.path("count.sh"))
            .env("COUNT_LOG", self.log())
            .jobserver(jobserver::Client::new(1).unwrap());
        let own = ["TEST_KERNELS_OFFLOAD_ARCH", "OFFLOAD_BUILD_MAX_JOBS"];
        for &var in crate::support::BUILD_ENV_VARS.iter().chain(&own) {
            b.env_remove(var);
        }
        b
    }

    /// The compiles logged since the last call (the source file of each), and the log cleared.
    fn take_compiles(&self) -> Vec<String> {
        let text = std::fs::read_to_string(self.log()).unwrap_or_default();
        let _ = std::fs::remove_file(self.log());
        text.lines()
            .filter(|l| l.starts_with("start "))
            .map(|l| {
                let arch = l
                    .split_whitespace()
                    .find_map(|w| w.strip_prefix("--offload-arch="))
                    .unwrap_or("?");
                let src = l
                    .split_whitespace()
                    .find(|w| w.ends_with(".hip") || w.ends_with(".cu"))
                    .map(|w| {
                        Path::new(w)
                            .file_name()
                            .unwrap()
                            .to_string_lossy()
                            .into_owned()
                    })
                    .unwrap_or_default();
                format!("{src}@{arch}")
            })
            .collect()
    }

    /// The most compiles that ran at the same time, from the log's start/end times.
    fn peak_concurrency(&self) -> usize {
        let text = std::fs::read_to_string(self.log()).unwrap_or_default();
        let mut events: Vec<(u128, i32)> = text
            .lines()
            .filter_map(|l| {
                let mut w = l.split_whitespace();
                let kind = w.next()?;
                let t: u128 = w.next()?.parse().ok()?;
                Some((t, if kind == "start" { 1 } else { -1 }))
            })
            .collect();
        events.sort_by_key(|&(t, d)| (t, d)); // an end before a start at the same instant
        let (mut now, mut peak) = (0, 0);
        for (_, d) in events {
            now += d;
            peak = peak.max(now);
        }
        peak as usize
    }
}

fn sorted(mut v: Vec<String>) -> Vec<String> {
    v.sort();
    v
}

#[test]
fn unchanged_rebuild_runs_no_compile_and_header_change_recompiles_its_includers() {
    let p = Project::new();
    let mut b = p.build();
    b.files(["a.hip", "b.hip"].map(|f| p.path(f)))
        .archs("gfx90a;gfx1100");
    let first = b.try_compile("k").unwrap();
    assert_eq!(
        sorted(p.take_compiles()),
        [
            "a.hip@gfx1100",
            "a.hip@gfx90a",
            "b.hip@gfx1100",
            "b.hip@gfx90a"
        ]
    );
    assert_eq!(first.archs, ["gfx1100", "gfx90a"]);
    assert_eq!(first.kernels, ["ka", "kb"]);
    assert_eq!(
        (first.jobs_run, first.jobs_cached),
        (6, 0),
        "4 compiles + 2 device links"
    );
    for h in ["a.h", "b.h", "common.h"] {
        let line = format!("rerun-if-changed={}", p.path(h).display());
        assert!(first.cargo_directives.contains(&line), "{line} missing");
    }
    assert!(
        first
            .cargo_directives
            .contains(&"rerun-if-env-changed=PATH".to_string())
    );
    let fatbin = std::fs::read(&first.container_file).unwrap();
    let mtime = std::fs::metadata(&first.container_file)
        .unwrap()
        .modified()
        .unwrap();

    // Unchanged: nothing runs, nothing is rewritten.
    let again = b.try_compile("k").unwrap();
    assert!(p.take_compiles().is_empty());
    assert_eq!((again.jobs_run, again.jobs_cached), (0, 6));
    assert_eq!(std::fs::read(&again.container_file).unwrap(), fatbin);
    assert_eq!(
        std::fs::metadata(&again.container_file)
            .unwrap()
            .modified()
            .unwrap(),
        mtime
    );

    // Touched but unchanged header: still nothing.
    p.write("b.h", &std::fs::read_to_string(p.path("b.h")).unwrap());
    b.try_compile("k").unwrap();
    assert!(p.take_compiles().is_empty());

    // A changed header recompiles exactly its includers, for every arch.
    p.write(
        "a.h",
        "#pragma once\n__device__ inline float fa(float x) { return x + 2; }\n",
    );
    let changed = b.try_compile("k").unwrap();
    assert_eq!(sorted(p.take_compiles()), ["a.hip@gfx1100", "a.hip@gfx90a"]);
    assert_ne!(std::fs::read(&changed.container_file).unwrap(), fatbin);

    // A header both include: everything.
    p.write("common.h", &format!("{HEADER}// changed\n"));
    b.try_compile("k").unwrap();
    assert_eq!(p.take_compiles().len(), 4);
}

/// `rerun-if-changed` names the project's headers, not the system's (clang's resource
/// directory, `/usr/include`, libstdc++), which the depfile lists by the dozen.
#[test]
fn system_headers_get_no_rerun_if_changed() {
    let p = Project::new();
    p.write(
        "s.hip",
        "#include <stdint.h>\n#include <new>\n#include \"common.h\"\n\
         extern \"C\" __global__ void ks(int32_t* x) { x[0] = 1; }\n",
    );
    let mut b = p.build();
    b.file(p.path("s.hip")).archs("gfx90a");
    let c = b.try_compile("k").unwrap();
    let reruns: Vec<&str> = c
        .cargo_directives
        .iter()
        .filter_map(|l| l.strip_prefix("rerun-if-changed="))
        .collect();
    let own = [p.path("s.hip"), p.path("common.h")];
    assert_eq!(
        reruns,
        own.iter().map(|p| p.to_str().unwrap()).collect::<Vec<_>>()
    );
}

#[test]
fn changing_offload_arch_rebuilds() {
    let p = Project::new();
    let mut b = p.build();
    b.file(p.path("a.hip")).env("OFFLOAD_ARCH", "gfx90a");
    let c = b.try_compile("k").unwrap();
    assert_eq!(c.archs, ["gfx90a"]);
    assert_eq!(c.arch_origin, "OFFLOAD_ARCH");
    assert!(
        c.cargo_directives
            .contains(&"rerun-if-env-changed=OFFLOAD_ARCH".to_string())
    );
    assert_eq!(p.take_compiles(), ["a.hip@gfx90a"]);

    b.env("OFFLOAD_ARCH", "gfx1100;gfx90a");
    let c = b.try_compile("k").unwrap();
    assert_eq!(c.archs, ["gfx1100", "gfx90a"]);
    assert_eq!(p.take_compiles(), ["a.hip@gfx1100"], "gfx90a still cached");

    // The crate-specific variable comes first.
    b.env("TEST_KERNELS_OFFLOAD_ARCH", "gfx942");
    let c = b.try_compile("k").unwrap();
    assert_eq!(
        (c.archs.clone(), c.arch_origin.as_str()),
        (vec!["gfx942".to_string()], "TEST_KERNELS_OFFLOAD_ARCH")
    );
    // Both over the builder's list (the crate's default)…
    b.arch("gfx1201");
    let c = b.try_compile("k").unwrap();
    assert_eq!(c.archs, ["gfx942"]);
    // …which is used when neither is set, both still registered.
    b.env_remove("TEST_KERNELS_OFFLOAD_ARCH")
        .env_remove("OFFLOAD_ARCH");
    let c = b.try_compile("k").unwrap();
    assert_eq!(
        (c.archs, c.arch_origin),
        (vec!["gfx1201".to_string()], "Build::archs".into())
    );
    for var in [
        "TEST_KERNELS_OFFLOAD_ARCH",
        "OFFLOAD_ARCH",
        "AMDGPU_TARGETS",
    ] {
        let line = format!("rerun-if-env-changed={var}");
        assert!(c.cargo_directives.contains(&line), "{line} missing");
    }
    // An exact list wins, and says that the variable is ignored.
    b.env("OFFLOAD_ARCH", "gfx90a").archs_exact("gfx1100");
    let c = b.try_compile("k").unwrap();
    assert_eq!(c.archs, ["gfx1100", "gfx1201"]);
    assert_eq!(
        c.warnings,
        [
            "offload-build: OFFLOAD_ARCH=gfx90a is ignored: the architectures gfx1201;gfx1100 \
          are exact (Build::archs_exact, `offload-build compile --archs`)"
        ]
    );
}

fn peak_with_tokens(free_tokens: usize) -> usize {
    let p = Project::new();
    for name in ["c", "d"] {
        p.write(
            &format!("{name}.hip"),
            &format!("#include \"common.h\"\nextern \"C\" __global__ void k{name}(float* x) {{ x[0] = 1; }}\n"),
        );
    }
    // As under Cargo: the jobserver has n tokens and the build script holds one of them.
    let client = jobserver::Client::new(free_tokens + 1).unwrap();
    let _held = client.acquire().unwrap();
    let mut b = p.build();
    b.files(["a.hip", "b.hip", "c.hip", "d.hip"].map(|f| p.path(f)))
        .arch("gfx1100")
        .jobserver(client)
        .env("LAUNCHER_SLEEP", "0.4");
    b.try_compile("k").unwrap();
    p.peak_concurrency()
}

#[test]
fn jobserver_of_one_token_runs_one_compile_at_a_time() {
    assert_eq!(peak_with_tokens(0), 1);
}

#[test]
fn jobserver_of_two_tokens_runs_two_compiles_at_once() {
    assert_eq!(peak_with_tokens(1), 2);
}

#[test]
fn max_jobs_caps_below_the_jobserver() {
    let p = Project::new();
    let mut b = p.build();
    b.files(["a.hip", "b.hip"].map(|f| p.path(f)))
        .archs("gfx90a;gfx1100")
        .jobserver(jobserver::Client::new(4).unwrap())
        .env("OFFLOAD_BUILD_MAX_JOBS", "1")
        .env("LAUNCHER_SLEEP", "0.2");
    b.try_compile("k").unwrap();
    assert_eq!(p.peak_concurrency(), 1);
}

#[test]
fn native_without_gpu_falls_back_with_a_warning() {
    if Path::new("/sys/class/kfd").exists() {
        eprintln!("skipped: this machine has an AMD GPU driver");
        return;
    }
    let p = Project::new();
    let mut b = p.build();
    // No amdgpu-arch that could find a GPU: only clang in the tool directories.
    let bin = p.path("bin");
    std::fs::create_dir(&bin).unwrap();
    std::os::unix::fs::symlink(CLANG, bin.join("clang")).unwrap();
    std::os::unix::fs::symlink("/usr/lib/llvm-19/bin/ld.lld", bin.join("ld.lld")).unwrap();
    b.file(p.path("a.hip"))
        .env("CLANG", bin.join("clang"))
        .env("PATH", &bin)
        .env("OFFLOAD_ARCH", "native");
    let c = b.try_compile("k").unwrap();
    assert!(
        c.warnings
            .iter()
            .any(|w| w.contains("`native` (from OFFLOAD_ARCH) found no GPU")),
        "{:?}",
        c.warnings
    );
    assert!(c.archs.contains(&"gfx90a".to_string()) && c.archs.contains(&"gfx1201".to_string()));

    // Nothing set at all: the same fallback, with its own warning.
    let mut b = p.build();
    b.file(p.path("a.hip"))
        .env("CLANG", bin.join("clang"))
        .env("PATH", &bin);
    let c = b.try_compile("k").unwrap();
    assert_eq!(c.arch_origin, "default");
    assert!(
        c.warnings
            .iter()
            .any(|w| w.contains("no offload architecture set"))
    );
}

#[test]
fn unknown_arch_is_a_typed_error_with_the_supported_list() {
    let p = Project::new();
    let mut b = p.build();
    b.file(p.path("a.hip"))
        .env("OFFLOAD_ARCH", "gfx90a;gfx9999");
    match b.try_compile("k") {
        Err(Error::ArchUnsupported {
            arch,
            origin,
            supported,
            ..
        }) => {
            assert_eq!(
                (arch.as_str(), origin.as_str()),
                ("gfx9999", "OFFLOAD_ARCH")
            );
            assert!(supported.iter().any(|s| s == "gfx1201"), "{supported:?}");
        }
        other => panic!("{other:?}"),
    }
    assert!(p.take_compiles().is_empty(), "checked before compiling");
    // Every unsupported arch of a list at once, not one per build (issue 28).
    let mut b = p.build();
    b.file(p.path("a.hip"))
        .env("OFFLOAD_ARCH", "gfx9999;gfx90a;gfx9998");
    let e = b.try_compile("k").unwrap_err();
    assert!(
        matches!(&e, Error::ArchUnsupported { arch, .. } if arch == "gfx9999;gfx9998"),
        "{e:?}"
    );
    assert!(
        e.to_string().starts_with(
            "offload archs `gfx9999`, `gfx9998` (from OFFLOAD_ARCH) are not supported by"
        ),
        "{e}"
    );
    let mut b = p.build();
    b.file(p.path("a.hip")).arch("gfx1100:xnack+");
    let e = b.try_compile("k").unwrap_err();
    assert!(matches!(e, Error::InvalidArch { .. }), "{e:?}");
    assert!(e.to_string().contains("no target feature `xnack`"), "{e}");
}

#[test]
fn syntax_error_reports_arch_command_and_stderr() {
    let p = Project::new();
    p.write(
        "bad.hip",
        "#include \"common.h\"\nextern \"C\" __global__ void k(float* x) { x[0] = ; }\n",
    );
    let mut b = p.build();
    b.file(p.path("bad.hip")).arch("gfx942");
    match b.try_compile("k") {
        Err(e @ Error::CompileFailed { .. }) => {
            let text = e.to_string();
            let Error::CompileFailed {
                arch,
                command,
                stderr,
                source,
                ..
            } = e
            else {
                unreachable!()
            };
            assert_eq!(arch, "gfx942");
            assert_eq!(source.as_deref(), Some(p.path("bad.hip").as_path()));
            assert!(command.contains("--offload-arch=gfx942") && command.contains("bad.hip"));
            assert!(stderr.contains("expected expression"), "{stderr}");
            assert!(
                text.contains("command:") && text.contains("expected expression"),
                "{text}"
            );
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn missing_compiler_lists_what_was_searched() {
    let p = Project::new();
    let mut b = p.build();
    b.file(p.path("a.hip"))
        .arch("gfx90a")
        .env("CLANG", "/nonexistent/clang");
    // A variable that names no compiler is an error naming it (issue 14), not a silent
    // fallback to another clang (clang-NN, /usr/lib/llvm-NN would succeed here).
    match b.try_compile("k") {
        Err(e @ Error::CompilerVar { .. }) => {
            let Error::CompilerVar {
                ref var,
                ref value,
                ref searched,
            } = e
            else {
                unreachable!()
            };
            assert_eq!(
                (var.as_str(), value.as_str()),
                ("CLANG", "/nonexistent/clang")
            );
            assert_eq!(searched, &[PathBuf::from("/nonexistent/clang")]);
            let text = e.to_string();
            assert!(
                text.contains("CLANG=`/nonexistent/clang` names no compiler")
                    && text.contains("does not fall back"),
                "{text}"
            );
        }
        other => panic!("{other:?}"),
    }
    b.compiler("/nonexistent/bin/clang");
    match b.try_compile("k") {
        Err(Error::ToolNotFound { searched, .. }) => {
            assert_eq!(searched, [PathBuf::from("/nonexistent/bin/clang")]);
        }
        other => panic!("{other:?}"),
    }
}

/// Per-arch compiles packed by the library give the very bytes of clang's own multi-arch
/// `--cuda-device-only` bundle (same `-cuid`, so the device code is identical).
#[test]
fn bundle_is_byte_identical_to_clangs() {
    let p = Project::new();
    let mut b = p.build();
    b.file(p.path("a.hip"))
        .archs("gfx90a:xnack+;gfx1100;gfx1201")
        .flag("-cuid=offload-build-test");
    let c = b.try_compile("k").unwrap();
    let reference = p.path("ref.hipfb");
    let st = std::process::Command::new(CLANG)
        .args([
            "-x",
            "hip",
            "--offload-arch=gfx1201",
            "--offload-arch=gfx90a:xnack+",
        ])
        .args([
            "--offload-arch=gfx1100",
            "--cuda-device-only",
            "-nogpulib",
            "-nogpuinc",
        ])
        .args(["-O3", "-cuid=offload-build-test", "-c"])
        .arg(p.path("a.hip"))
        .arg("-o")
        .arg(&reference)
        .status()
        .unwrap();
    assert!(st.success());
    assert_eq!(
        std::fs::read(&c.container_file).unwrap(),
        std::fs::read(&reference).unwrap()
    );
    let bytes = std::fs::read(&c.container_file).unwrap();
    let bundle = BinaryBundle::parse(&bytes).unwrap().unwrap();
    assert_eq!(bundle.entries().len(), 4);
    let generated = std::fs::read_to_string(&c.generated).unwrap();
    assert!(
        generated
            .contains("pub const ARCHS: &[&str] = &[\"gfx1100\", \"gfx1201\", \"gfx90a:xnack+\"];")
    );
    assert!(generated.contains("pub const KERNELS: &[&str] = &[\"ka\"];"));
}

#[test]
fn compressed_bundle_and_offload_binary_containers() {
    let p = Project::new();
    let mut b = p.build();
    b.file(p.path("a.hip")).arch("gfx1100").compress(true);
    let c = b.try_compile("k").unwrap();
    let bytes = std::fs::read(&c.container_file).unwrap();
    assert!(
        c.compressed && bytes.starts_with(b"CCOB\x02\x00"),
        "LLVM 19 writes CCOB v2"
    );
    let d = offload_build::bundle::CompressedBundle::parse(&bytes)
        .unwrap()
        .decompress()
        .unwrap();
    assert!(BinaryBundle::parse(&d.data).unwrap().is_some());

    let mut b = p.build();
    b.file(p.path("a.hip"))
        .archs("gfx1100;gfx90a")
        .container(Container::OffloadBinary);
    let c = b.try_compile("ob").unwrap();
    let bytes = std::fs::read(&c.container_file).unwrap();
    let mut archs = Vec::new();
    let mut rest = &bytes[..];
    while !rest.is_empty() {
        let bin = offload_build::package::OffloadBinary::parse(rest).unwrap();
        for e in bin.entries() {
            assert_eq!(e.triple(), b"amdgcn-amd-amdhsa");
            archs.push(String::from_utf8_lossy(e.arch()).into_owned());
        }
        rest = &rest[bin.size() as usize..];
    }
    assert_eq!(archs, ["gfx1100", "gfx90a"]);
}

#[test]
fn images_are_packed_without_a_compiler() {
    let p = Project::new();
    let co = p.path("prebuilt.co");
    let st = std::process::Command::new(CLANG)
        .args([
            "-x",
            "hip",
            "--offload-arch=gfx942",
            "--cuda-device-only",
            "--no-gpu-bundle-output",
        ])
        .args(["-nogpulib", "-nogpuinc", "-c"])
        .arg(p.path("b.hip"))
        .arg("-o")
        .arg(&co)
        .status()
        .unwrap();
    assert!(st.success());
    let mut b = p.build();
    b.image("gfx942", &co)
        .env("CLANG", "/nonexistent")
        .env("PATH", "/nonexistent");
    let c = b.try_compile("img").unwrap();
    assert_eq!(
        (c.archs.clone(), c.kernels.clone()),
        (vec!["gfx942".into()], vec!["kb".into()])
    );
    assert!(c.compiler.is_none());
}

#[test]
fn cuda_sources_give_ptx_offload_binaries() {
    let p = Project::new();
    p.write(
        "v.cu",
        "#define __global__ __attribute__((global))\n\
         extern \"C\" __global__ void vadd(float* a) { a[0] += 1.0f; }\n",
    );
    let mut b = p.build();
    b.file(p.path("v.cu"))
        .archs("sm_80;90-virtual")
        .env_remove("CUDA_PATH")
        .env_remove("CUDA_HOME")
        .env_remove("CUDA_ROOT");
    let c = b.try_compile("cu").unwrap();
    assert_eq!(c.container, Container::OffloadBinary);
    assert_eq!(c.kernels, ["vadd"]);
    assert_eq!(c.archs, ["compute_90", "sm_80"]);
    let bytes = std::fs::read(&c.container_file).unwrap();
    let bin = offload_build::package::OffloadBinary::parse(&bytes).unwrap();
    let e = bin.entries().next().unwrap();
    assert_eq!(e.triple(), b"nvptx64-nvidia-cuda");
    assert!(String::from_utf8_lossy(e.image()).contains(".entry vadd"));
    let _ = Language::Cuda;
}

/// `Embed::HipObject` and `Embed::NewDriverObject`: the library is a GNU archive whose object
/// holds the container; the self-registering one links into a C program with a stand-in HIP
/// runtime and registers the fat binary and both kernels from its constructor, the handle
/// symbols being the addresses the generated `kernels` module names.
#[test]
fn object_embed_modes_write_a_library_that_links_and_registers() {
    use offload_build::Embed;
    let p = Project::new();
    let mut b = p.build();
    b.files([p.path("a.hip"), p.path("b.hip")])
        .archs("gfx1100;gfx90a")
        .embed(Embed::HipObject)
        .env("TARGET", "x86_64-unknown-linux-gnu");
    let c = b.try_compile("k").unwrap();
    let lib = c.library.clone().expect("a library in HipObject mode");
    // `lib<name>-<hash>.a`: a name no other build's library has.
    assert_eq!(lib.parent(), Some(p.path("out").as_path()));
    let file = lib.file_name().unwrap().to_str().unwrap();
    let link = file
        .strip_prefix("libk-")
        .and_then(|f| f.strip_suffix(".a"))
        .unwrap_or_else(|| panic!("{file}"));
    assert!(
        link.len() == 16 && link.bytes().all(|b| b.is_ascii_hexdigit()),
        "{file}"
    );
    let ar = std::fs::read(&lib).unwrap();
    assert!(ar.starts_with(b"!<arch>\n"));
    // The generated module names the kernels' handles: symbols unique to this build
    // (`__offload_build_<hash>_k_<kernel>`), not the bare kernel names two crates could share.
    let generated = std::fs::read_to_string(&c.generated).unwrap();
    let handle = |kernel: &str| {
        generated
            .lines()
            .filter_map(|l| l.trim().strip_prefix("#[link_name = \""))
            .filter_map(|l| l.strip_suffix("\"]"))
            .find(|s| s.starts_with("__offload_build_") && s.ends_with(&format!("_k_{kernel}")))
            .unwrap_or_else(|| panic!("no handle of {kernel} in:\n{generated}"))
            .to_string()
    };
    let (ka, kb) = (handle("ka"), handle("kb"));
    assert!(!generated.contains("#[link_name = \"ka\"]"), "{generated}");
    assert!(
        c.cargo_directives
            .contains(&format!("rustc-link-lib=static:+whole-archive=k-{link}")),
        "{:?}",
        c.cargo_directives
    );

    // A stand-in runtime that records the registrations.
    p.write(
        "shim.c",
        &"#include <stdio.h>\n#include <string.h>\n\
         struct W { unsigned magic, version; const void* data; void* unused; };\n\
         void** __hipRegisterFatBinary(const struct W* w) {\n\
           static void* h; printf(\"fatbin %x %u %.24s\\n\", w->magic, w->version, (const char*)w->data); return &h; }\n\
         void __hipRegisterFunction(void** h, const void* host, const char* dev, const char* name, int t, void* a, void* b, void* c, void* d, int* e) {\n\
           printf(\"function %s %d\\n\", name, host != 0); }\n\
         void __hipRegisterVar(void** h, void* host, const char* dev, const char* name, int ext, unsigned long size, int c, int g) {}\n\
         void __hipUnregisterFatBinary(void** h) { printf(\"unregister\\n\"); }\n\
         extern char ka __asm__(\"KA\"), kb __asm__(\"KB\");\n\
         int main(void) { printf(\"handles %d\\n\", &ka != &kb); return 0; }\n"
            .replace("KA", &ka)
            .replace("KB", &kb),
    );
    let exe = p.path("prog");
    let out = std::process::Command::new("cc")
        .arg(p.path("shim.c"))
        .arg(&lib)
        .arg("-o")
        .arg(&exe)
        .output()
        .expect("cc");
    assert!(
        out.status.success(),
        "link failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let run = std::process::Command::new(&exe).output().expect("run");
    let text = String::from_utf8_lossy(&run.stdout);
    let mut lines: Vec<&str> = text.lines().collect();
    lines.sort_unstable();
    assert_eq!(
        lines,
        [
            "fatbin 48495046 1 __CLANG_OFFLOAD_BUNDLE__",
            "function ka 1",
            "function kb 1",
            "handles 1",
            "unregister"
        ],
        "{text}"
    );

    let mut b = p.build();
    b.file(p.path("a.hip"))
        .arch("gfx1100")
        .container(Container::OffloadBinary)
        .embed(Embed::NewDriverObject)
        .env("TARGET", "x86_64-unknown-linux-gnu");
    let c = b.try_compile("nd").unwrap();
    let ar = std::fs::read(c.library.expect("library")).unwrap();
    let report = offload_build::inspect::inspect(&ar, "libnd.a").expect("inspect");
    let json = serde_json::to_string(&report).unwrap();
    assert!(json.contains("gfx1100"), "{json}");

    // A mismatched container is a typed error, not a wrong object.
    let mut b = p.build();
    b.file(p.path("a.hip"))
        .arch("gfx1100")
        .container(Container::OffloadBinary)
        .embed(Embed::HipObject)
        .env("TARGET", "x86_64-unknown-linux-gnu");
    let e = b.try_compile("bad").unwrap_err();
    assert!(e.to_string().contains("use Container::Bundle"), "{e}");
}

const CLANG22: &str = "/usr/lib/llvm-22/bin/clang";

/// A kernel with a warning clang prints by default (-Wconstant-conversion), in `w.hip`.
fn write_warning_kernel(p: &Project) {
    p.write(
        "w.hip",
        "#include \"common.h\"\n\
         extern \"C\" __global__ void kw(float* x) {\n\
         \x20 int n = 10000000000;\n\
         \x20 x[0] = n;\n\
         }\n",
    );
}

/// The `cargo:warning=` directives of a build, without the prefix.
fn warning_lines(c: &offload_build::builder::Compiled) -> Vec<&str> {
    c.cargo_directives
        .iter()
        .filter_map(|l| l.strip_prefix("warning="))
        .collect()
}

#[test]
fn compiler_warnings_are_shown_once_per_distinct_warning_with_their_archs() {
    let p = Project::new();
    write_warning_kernel(&p);
    let mut b = p.build();
    b.file(p.path("w.hip")).archs("gfx90a;gfx1100;gfx942");
    let c = b.try_compile("k").unwrap();
    let w = warning_lines(&c);
    let headers: Vec<&&str> = w
        .iter()
        .filter(|l| l.contains("warning: implicit conversion"))
        .collect();
    assert_eq!(headers.len(), 1, "once, not once per arch: {w:#?}");
    let expected = format!(
        "[gfx90a, gfx1100, gfx942] {}:3:11: warning: implicit conversion from 'long' to 'int'",
        p.path("w.hip").display()
    );
    assert!(headers[0].starts_with(&expected), "{}", headers[0]);
    // clang's source and caret lines follow, each its own directive; the per-arch summaries
    // ("1 warning generated when compiling for gfx90a.") are left out.
    assert!(
        w.iter().any(|l| l.contains("int n = 10000000000;")),
        "{w:#?}"
    );
    assert!(
        !w.iter().any(|l| l.contains("generated when compiling")),
        "{w:#?}"
    );
    assert!(
        c.cargo_directives
            .iter()
            .all(|l| !l.contains('\n') && !l.contains('\r'))
    );
    assert_eq!(c.diagnostics.len(), 1);
    assert_eq!(c.diagnostics[0].archs, ["gfx90a", "gfx1100", "gfx942"]);
    assert!(
        c.warnings.is_empty(),
        "no offload-build warning: {:?}",
        c.warnings
    );

    // From the cache: no compile, the same warnings.
    p.take_compiles();
    let again = b.try_compile("k").unwrap();
    assert!(p.take_compiles().is_empty());
    assert_eq!(warning_lines(&again), w, "replayed from the cache records");

    // warnings(false): -w, nothing shown.
    let mut quiet = p.build();
    quiet.file(p.path("w.hip")).arch("gfx90a").warnings(false);
    let c = quiet.try_compile("k").unwrap();
    assert!(warning_lines(&c).is_empty(), "{:?}", c.cargo_directives);
    assert!(c.diagnostics.is_empty());

    // warnings_into_errors(true): -Werror, the compile fails with the warning as an error.
    let mut strict = p.build();
    strict
        .file(p.path("w.hip"))
        .arch("gfx90a")
        .warnings_into_errors(true);
    match strict.try_compile("k") {
        Err(Error::CompileFailed {
            command, stderr, ..
        }) => {
            assert!(command.contains(" -Werror "), "{command}");
            assert!(stderr.contains("error: implicit conversion"), "{stderr}");
        }
        other => panic!("{other:?}"),
    }
}

/// clang 22 ignores `-MD -MF` in device-only compiles and says `argument unused during
/// compilation: '-MF ...'`: a failing compile showed that line, and with -Werror a clean
/// kernel failed on it. Headers are still tracked (through the host-side preprocessing).
#[test]
fn clang_22_compiles_show_no_depfile_complaint_and_pass_with_werror() {
    assert!(
        Path::new(CLANG22).is_file(),
        "{CLANG22} missing: run build-support/setup.sh"
    );
    let p = Project::new();
    p.write(
        "bad.hip",
        "#include \"common.h\"\nextern \"C\" __global__ void k(float* x) { x[0] = ; }\n",
    );
    let mut b = p.build();
    b.env("CLANG", CLANG22)
        .file(p.path("bad.hip"))
        .arch("gfx90a");
    let e = b.try_compile("k").unwrap_err();
    let text = e.to_string();
    assert!(text.contains("expected expression"), "{text}");
    assert!(!text.contains("argument unused"), "{text}");

    let mut b = p.build();
    b.env("CLANG", CLANG22)
        .file(p.path("a.hip"))
        .arch("gfx90a")
        .warnings_into_errors(true);
    let c = b.try_compile("k").unwrap();
    assert!(c.diagnostics.is_empty(), "{:?}", c.diagnostics);
    let line = format!("rerun-if-changed={}", p.path("a.h").display());
    assert!(c.cargo_directives.contains(&line), "{line} missing");
}

#[test]
fn progress_reports_each_compile_and_link_that_runs() {
    use offload_build::builder::{Progress, ProgressStep};
    use std::sync::{Arc, Mutex};
    let p = Project::new();
    let seen: Arc<Mutex<Vec<Progress>>> = Arc::default();
    let mut b = p.build();
    let sink = seen.clone();
    b.files(["a.hip", "b.hip"].map(|f| p.path(f)))
        .archs("gfx90a;gfx1100")
        .on_progress(move |pr| sink.lock().unwrap().push(pr.clone()));
    b.try_compile("k").unwrap();
    let got = std::mem::take(&mut *seen.lock().unwrap());
    assert_eq!(got.len(), 6, "4 compiles + 2 device links: {got:#?}");
    for (i, pr) in got.iter().enumerate() {
        assert_eq!((pr.done, pr.total), (i + 1, 6));
    }
    let compiles = got
        .iter()
        .filter(|pr| matches!(pr.step, ProgressStep::Compile(_)))
        .count();
    assert_eq!(compiles, 4);
    let line = got[0].to_string();
    assert!(
        line.starts_with("[1/6] gfx") && line.contains(".hip ") && line.ends_with(" s"),
        "{line}"
    );
    // Unchanged: nothing runs, nothing is reported.
    b.try_compile("k").unwrap();
    assert!(seen.lock().unwrap().is_empty());
    // One header: its includer for each arch, then both links.
    p.write(
        "a.h",
        "#pragma once\n__device__ inline float fa(float x) { return x + 3; }\n",
    );
    b.try_compile("k").unwrap();
    let got: Vec<String> = seen.lock().unwrap().iter().map(|p| p.to_string()).collect();
    assert_eq!(got.len(), 4, "{got:#?}");
    assert!(
        got[0].starts_with("[1/4] ") && got[0].contains(" a.hip "),
        "{got:#?}"
    );
    assert!(
        got[3].starts_with("[4/4] ") && got[3].contains("device link"),
        "{got:#?}"
    );
}

/// The launcher's log is the device compiles' commands: `.opt_level(2)` reaches them as `-O2`
/// (instead of the default `-O3`), `.debug(true)` as `-g`, and `get_compiler` shows the same
/// arguments; `flag_if_supported` keeps a flag clang accepts and drops one it does not.
#[test]
fn opt_level_and_debug_reach_the_device_compiles() {
    let p = Project::new();
    let mut b = p.build();
    b.file(p.path("a.hip")).arch("gfx90a");
    b.try_compile("k").unwrap();
    let log = std::fs::read_to_string(p.log()).unwrap();
    let words = |log: &str| -> Vec<String> {
        let start = log.lines().find(|l| l.starts_with("start ")).unwrap();
        start.split_whitespace().map(str::to_string).collect()
    };
    let first = words(&log);
    assert!(first.iter().any(|w| w == "-O3"), "{first:?}");
    assert!(!first.iter().any(|w| w == "-g"), "{first:?}");
    p.take_compiles();

    b.opt_level(2)
        .debug(true)
        .flag_if_supported("-fno-unroll-loops")
        .flag_if_supported("--no-such-flag-offload-build");
    b.try_compile("k").unwrap();
    let log = std::fs::read_to_string(p.log()).unwrap();
    let second = words(&log);
    assert!(second.iter().any(|w| w == "-O2"), "{second:?}");
    assert!(!second.iter().any(|w| w == "-O3"), "{second:?}");
    assert!(second.iter().any(|w| w == "-g"), "{second:?}");
    assert!(
        second.iter().any(|w| w == "-fno-unroll-loops"),
        "{second:?}"
    );
    assert!(
        !second.iter().any(|w| w.contains("no-such-flag")),
        "{second:?}"
    );

    let cmd = b.try_get_compiler().unwrap();
    assert_eq!(cmd.path(), Path::new(CLANG));
    assert_eq!(cmd.launcher(), [p.path("count.sh").into_os_string()]);
    let args: Vec<String> = cmd
        .args()
        .iter()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    for want in ["--offload-arch=gfx90a", "-O2", "-g", "-fno-unroll-loops"] {
        assert!(args.iter().any(|a| a == want), "{want} missing: {args:?}");
    }
}

/// A workspace in `CARGO_TARGET_TMPDIR/outside-crates/<name>` (the target directory beside it
/// shared and kept between runs):
/// `dep`, whose `build.rs` runs `compiles` (builder calls, each ending in `.compile(NAME)`) on
/// `k.hip` with clang 19 and whose `lib.rs` includes each NAME's module as `dep::NAME`, and
/// `app`, whose `main.rs` prints `dep::NAME::ARCHS` for each (packages `dep-<name>` and
/// `app-<name>`). Returns `cargo run -p app-<name>`
/// with `OFFLOAD_ARCH` set to its argument: (success, stdout, stderr).
fn outside_workspace(
    name: &str,
    kernel: &str,
    compiles: &[(&str, &str)],
) -> impl Fn(&str) -> (bool, String, String) {
    use crate::support::{BUILD_ENV_VARS, CLANG19, repo_root, require};
    require(CLANG19);
    let base = Path::new(env!("CARGO_TARGET_TMPDIR")).join("outside-crates");
    let ws = base.join(name);
    let _ = std::fs::remove_dir_all(&ws);
    let (mut calls, mut mods, mut prints) = (String::new(), String::new(), Vec::new());
    for (call, name) in compiles {
        calls += &format!(
            "    offload_build::Build::new().file(\"k.hip\").compiler({CLANG19:?})\
             .flag(\"-nogpulib\").flag(\"-nogpuinc\").{call}.compile({name:?});\n"
        );
        mods += &format!(
            "pub mod {name} {{ include!(concat!(env!(\"OUT_DIR\"), \"/{name}.rs\")); }}\n"
        );
        prints.push(format!("dep::{name}::ARCHS"));
    }
    let offload_build = repo_root().join("crates/offload-build");
    let files = [
        (
            "Cargo.toml",
            "[workspace]\nresolver = \"2\"\nmembers = [\"dep\", \"app\"]\n".to_string(),
        ),
        (
            "dep/Cargo.toml",
            format!(
                // Package names of their own: two workspaces sharing the target directory
                // would otherwise share the build script's OUT_DIR (Cargo's metadata hash of
                // a path package does not include its path).
                "[package]\nname = \"dep-{name}\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n\
                 [lib]\nname = \"dep\"\n\n\
                 [build-dependencies]\noffload-build = {{ path = {:?} }}\n",
                offload_build.display().to_string()
            ),
        ),
        ("dep/build.rs", format!("fn main() {{\n{calls}}}\n")),
        ("dep/k.hip", format!("{HEADER}{kernel}")),
        ("dep/src/lib.rs", mods),
        (
            "app/Cargo.toml",
            format!(
                "[package]\nname = \"app-{name}\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n\
                 [dependencies]\ndep = {{ package = \"dep-{name}\", path = \"../dep\" }}\n"
            ),
        ),
        (
            "app/src/main.rs",
            format!(
                "fn main() {{ println!(\"{{:?}}\", ({},)); }}\n",
                prints.join(", ")
            ),
        ),
    ];
    for (path, text) in files {
        std::fs::create_dir_all(ws.join(path).parent().unwrap()).unwrap();
        std::fs::write(ws.join(path), text).unwrap();
    }
    std::fs::copy(repo_root().join("Cargo.lock"), ws.join("Cargo.lock")).unwrap();
    let app = format!("app-{name}");
    move |arch: &str| {
        let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
        let mut c = std::process::Command::new(cargo);
        c.current_dir(&ws)
            .args(["run", "--offline", "-p", &app])
            .env(
                "CARGO_TARGET_DIR",
                crate::support::outside_crate_target_dir(),
            )
            .env("OFFLOAD_ARCH", arch);
        for var in BUILD_ENV_VARS.iter().filter(|&&v| v != "OFFLOAD_ARCH") {
            c.env_remove(var);
        }
        let out = c.output().unwrap();
        let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
        (out.status.success(), text(&out.stdout), text(&out.stderr))
    }
}

/// Through Cargo, as issue 28 tells it: an application built with `OFFLOAD_ARCH` gets those
/// architectures from a dependency whose build script calls `.archs("gfx90a")`, a change of
/// the variable rebuilds it, and a list given with `.archs_exact` stays, with a warning.
#[test]
fn offload_arch_overrides_a_dependencys_archs_through_cargo() {
    let run = outside_workspace(
        "arch-override",
        "extern \"C\" __global__ void k(float* x) { x[0] = 1; }\n",
        &[
            ("archs(\"gfx90a\")", "default"),
            ("archs_exact(\"gfx90a\")", "exact"),
        ],
    );
    let (ok, out, err) = run("gfx942");
    assert!(ok, "cargo run failed:\n{err}");
    assert_eq!(out, "([\"gfx942\"], [\"gfx90a\"])\n");
    assert!(
        err.contains("OFFLOAD_ARCH=gfx942 is ignored: the architectures gfx90a are exact"),
        "{err}"
    );
    let (ok, out, err) = run("gfx1100");
    assert!(ok, "cargo run failed:\n{err}");
    assert_eq!(out, "([\"gfx1100\"], [\"gfx90a\"])\n");
}

/// A failed compile under Cargo: the compiler's message once (in the build script's
/// `--- stdout`), and a one-line panic.
#[test]
fn a_failed_compile_is_shown_once_through_cargo() {
    let run = outside_workspace(
        "failed-compile",
        "extern \"C\" __global__ void k(float* x) { x[0] = undeclared_name; }\n",
        &[("archs(\"gfx90a\")", "kernels")],
    );
    let (ok, _, err) = run("gfx90a");
    assert!(!ok, "{err}");
    assert_eq!(
        err.matches("use of undeclared identifier 'undeclared_name'")
            .count(),
        1,
        "{err}"
    );
    assert!(
        err.contains("error occurred in offload-build: compiling ")
            && err.contains("(the whole error is printed above, under `--- stdout`)"),
        "{err}"
    );
}
