//! Wall time of `offload_build::Build` against one multi-arch clang call, in one run:
//!
//! 1. a generated heavy kernel file (`BENCH_HEAVY_KERNELS` kernels, default 60: about 10 s
//!    per architecture with clang 19 on a 2-core EPYC) compiled for 4 architectures by one
//!    `clang --offload-arch=a --offload-arch=b ... --cuda-device-only` call;
//! 2. the same through `Build` with 2 jobs (a jobserver with one free token plus the implicit
//!    one, as under `cargo build -j2`), from an empty cache;
//! 3. a no-op rebuild (everything cached; median of 20).
//!
//! Run: `cargo bench --bench build` (`BENCH_HEAVY_KERNELS=10` for a quick look). Under
//! `cargo test --all-targets` it only says so and exits.
//! The acceptance targets of issue 7: (2) ≤ 0.6 × (1); (3) < 50 ms.

use std::path::Path;
use std::time::{Duration, Instant};

const CLANG: &str = "/usr/lib/llvm-19/bin/clang";
const ARCHS: [&str; 4] = ["gfx90a", "gfx942", "gfx1100", "gfx1201"];

fn heavy_source(kernels: usize) -> String {
    let mut s = String::from(
        "#define __global__ __attribute__((global))\n\
         #define __device__ __attribute__((device))\n\
         template <int K> __device__ inline float mix(float x, float y) {\n\
         #pragma unroll\n\
           for (int i = 0; i < 64; ++i) { x = __builtin_fmaf(x, y, (float)(i * K)); \
         y = __builtin_sinf(y) + x * 0.5f; }\n\
           return x + y;\n}\n",
    );
    for k in 0..kernels {
        s.push_str(&format!(
            "extern \"C\" __global__ void heavy_{k}(float* a, const float* b, int n) {{\n\
             int i = __builtin_amdgcn_workgroup_id_x() * 256 + __builtin_amdgcn_workitem_id_x();\n\
             if (i >= n) return;\nfloat x = a[i], y = b[i];\n"
        ));
        for j in 0..8 {
            let t = k * 8 + j + 1;
            s.push_str(&format!("x = mix<{t}>(x, y); y = mix<{}>(y, x);\n", t + 1));
        }
        s.push_str("a[i] = x + y;\n}\n");
    }
    s
}

fn secs(d: Duration) -> String {
    format!("{:.2} s", d.as_secs_f64())
}

fn main() {
    // `cargo bench` passes `--bench`; `cargo test --all-targets` runs this binary without it.
    if !std::env::args().any(|a| a == "--bench") {
        println!(
            "build benchmark: not run under `cargo test`; run it with `cargo bench --bench build`"
        );
        return;
    }
    assert!(
        Path::new(CLANG).is_file(),
        "{CLANG} missing: run build-support/setup.sh"
    );
    let kernels: usize = std::env::var("BENCH_HEAVY_KERNELS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(60);
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("heavy.hip");
    std::fs::write(&src, heavy_source(kernels)).unwrap();
    println!("heavy.hip: {kernels} kernels; archs: {}", ARCHS.join(" "));

    // 1. One clang call for all four architectures.
    let t = Instant::now();
    let mut cmd = std::process::Command::new(CLANG);
    cmd.args(["-x", "hip"]);
    for a in ARCHS {
        cmd.arg(format!("--offload-arch={a}"));
    }
    let st = cmd
        .args(["--cuda-device-only", "-nogpulib", "-nogpuinc", "-O3", "-c"])
        .arg(&src)
        .arg("-o")
        .arg(dir.path().join("single.hipfb"))
        .status()
        .unwrap();
    assert!(st.success());
    let single = t.elapsed();
    println!("one clang call, 4 archs:        {}", secs(single));

    // 2. Build with 2 jobs.
    let build = || {
        let mut b = offload_build::Build::new();
        b.file(&src)
            .archs(ARCHS)
            .out_dir(dir.path().join("out"))
            .cargo_metadata(false)
            .env("CLANG", CLANG)
            .env_remove("OFFLOAD_BUILD_LAUNCHER")
            .env_remove("OFFLOAD_BUILD_MAX_JOBS")
            .env_remove("OFFLOAD_BUILD_CACHE_DIR")
            .env_remove("RUSTC_WRAPPER")
            .jobserver(jobserver::Client::new(1).unwrap());
        b
    };
    let b = build();
    let t = Instant::now();
    let c = b.try_compile("heavy").unwrap();
    let parallel = t.elapsed();
    assert_eq!(c.jobs_run, 4);
    println!(
        "Build, 2 jobs, empty cache:     {}  ({:.2}x the single call; target <= 0.60x)",
        secs(parallel),
        parallel.as_secs_f64() / single.as_secs_f64()
    );

    // 3. No-op rebuilds.
    let mut times: Vec<Duration> = (0..20)
        .map(|_| {
            let t = Instant::now();
            let c = b.try_compile("heavy").unwrap();
            assert_eq!(c.jobs_run, 0);
            t.elapsed()
        })
        .collect();
    times.sort();
    println!(
        "no-op rebuild (median of 20):   {:.1} ms (min {:.1} ms, max {:.1} ms; target < 50 ms)",
        times[10].as_secs_f64() * 1e3,
        times[0].as_secs_f64() * 1e3,
        times[19].as_secs_f64() * 1e3
    );
}
