//! Benchmark: `offload-bundler` against LLVM 19's `clang-offload-bundler`.
//!
//! Run with `cargo bench --bench bundler`. It is a benchmark, not a test: under
//! `cargo test --all-targets` (no `--bench` argument) it only says so and exits.
//!
//! What it does:
//! * builds (once, cached under `target/bench-inputs/`) 8 real AMDGPU code objects of
//!   about 11 MiB each with `/usr/lib/llvm-19/bin/clang -x hip`, one per GPU arch, from a
//!   generated `.hip` source whose `__device__` array lands in `.data`;
//! * runs bundle and unbundle, `-type=o -bundle-align=4096` (what the HIP driver runs)
//!   and `-type=bc`, with both tools and identical arguments, checking that every run's
//!   output is byte-identical to the reference tool's (and that unbundling gives back
//!   the original code objects);
//! * times each (tool, operation) `BENCH_RUNS` times (default 7) after one warm-up,
//!   interleaved A/B with alternating order, and prints a Markdown table of the median
//!   wall time and the peak RSS of the child (`wait4` `ru_maxrss`).
//!
//! * then (or alone with `BENCH_ONLY=targets`) a second table, against LLVM 22's
//!   `clang-offload-bundler`: bundling 100,000 targets (`-type=bc`, one tiny input file per
//!   target, the arguments in a response file) and listing the result, outputs checked
//!   byte-identical. Unbundling into 100,000 outputs is left out: on this machine's ext4 it
//!   takes minutes for either tool, all of it in the file system (creating, renaming and
//!   evicting 100,000 inodes).
//!
//! Environment:
//! * `BENCH_RUNS`: measured runs per (tool, operation), default 7.
//! * `BENCH_ONLY`: `plain`, `compress` or `targets`: only those rows.
//! * `BENCH_OURS`: path of the tool to measure as "ours" instead of this crate's
//!   `offload-bundler` (e.g. another LLVM's bundler, to check the harness itself).
//!
//! Peak RSS caveat: on Linux a spawned child's `ru_maxrss` is at least the spawning
//! process's own high-water RSS (exec records the old address space's peak), so this
//! process never reads a large file into memory; the floor is measured with `/bin/true`
//! and printed.

#[path = "common.rs"]
mod common;

use std::ffi::OsString;
use std::fmt::Write as _;
use std::fs::{self, File};
use std::io::{self, BufWriter, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::time::Instant;

use common::{
    Result, Sample, bytes_to_mib, kib_to_mib, machine_line, measure, median, min_max, ms, peak,
    tool_version,
};

const LLVM19_BIN: &str = "/usr/lib/llvm-19/bin";
const OURS_BUILT: &str = env!("CARGO_BIN_EXE_offload-bundler");
const LLVM22_BUNDLER: &str = "/usr/lib/llvm-22/bin/clang-offload-bundler";
/// Targets of the many-targets table.
const MANY_TARGETS: usize = 100_000;

/// The GPU archs, one code object each.
const ARCHS: [&str; 8] = [
    "gfx900", "gfx906", "gfx908", "gfx90a", "gfx942", "gfx1030", "gfx1100", "gfx1101",
];
/// Size of the `__device__` array that makes each code object large.
const BLOB_BYTES: usize = 11 * 1024 * 1024;
/// Every code object must be at least this large.
const MIN_OBJECT_BYTES: u64 = 10 * 1024 * 1024;
/// Bump when the generated source or the compile command changes: new cache directory.
const INPUTS_VERSION: &str = "v1";
const HOST_TARGET: &str = "host-x86_64-unknown-linux-gnu";
const DEVICE_TRIPLE: &str = "hipv4-amdgcn-amd-amdhsa-";
const EM_AMDGPU: u16 = 224;
const DEFAULT_RUNS: usize = 7;

fn main() -> ExitCode {
    // `cargo bench` passes `--bench`; `cargo test --all-targets` runs this binary without it.
    if !std::env::args().any(|a| a == "--bench") {
        println!(
            "bundler benchmark: not run under `cargo test`; run it with `cargo bench --bench bundler`"
        );
        return ExitCode::SUCCESS;
    }
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("\nbundler benchmark FAILED: {e}");
            ExitCode::FAILURE
        }
    }
}

/// A tool being measured.
struct Tool {
    label: String,
    path: PathBuf,
    /// Ours (gets the operation's `ours_args`/`ours_env`).
    ours: bool,
}

#[derive(Clone, Copy, PartialEq)]
enum Kind {
    Bundle,
    Unbundle,
}

/// One benchmarked operation: its arguments are the same for both tools, plus
/// `ours_args`/`ours_env` for ours.
struct Operation {
    kind: Kind,
    file_type: &'static str,
    /// The bundle that unbundling reads (the reference tool's bundle output).
    bundle_input: Option<PathBuf>,
    /// `-compress` (both tools).
    compress: bool,
    /// Extra arguments for ours only.
    ours_args: &'static [&'static str],
    /// Extra environment for ours only.
    ours_env: &'static [(&'static str, &'static str)],
    /// Whether ours must write the reference's exact bytes; otherwise compressed outputs
    /// must decompress to the same bundle.
    identical: bool,
}

impl Operation {
    fn name(&self) -> String {
        let base = match (self.kind, self.file_type) {
            (Kind::Bundle, "o") => "bundle `-type=o -bundle-align=4096".to_string(),
            (Kind::Bundle, t) => format!("bundle `-type={t}"),
            (Kind::Unbundle, t) => format!("unbundle `-type={t}"),
        };
        let mut name = base;
        if self.compress {
            name.push_str(" -compress");
        }
        name.push('`');
        if !self.ours_args.is_empty() {
            name.push_str(&format!(" (ours: `{}`)", self.ours_args.join(" ")));
        }
        if self.kind == Kind::Unbundle {
            name.push_str(", 8 targets");
        }
        name
    }

    /// Output file names, relative to the run's output directory.
    fn outputs(&self) -> Vec<String> {
        match self.kind {
            Kind::Bundle => vec![format!("bundle.{}.hipfb", self.file_type)],
            Kind::Unbundle => ARCHS.iter().map(|a| format!("{a}.out")).collect(),
        }
    }

    fn args(&self, inputs: &[PathBuf], out_dir: &Path) -> Vec<OsString> {
        let device_targets: Vec<String> = ARCHS
            .iter()
            .map(|a| format!("{DEVICE_TRIPLE}-{a}"))
            .collect();
        let mut args: Vec<OsString> = vec![format!("-type={}", self.file_type).into()];
        let outputs = self.outputs();
        match self.kind {
            Kind::Bundle => {
                if self.file_type == "o" {
                    args.push("-bundle-align=4096".into());
                }
                args.push(format!("-targets={HOST_TARGET},{}", device_targets.join(",")).into());
                args.push("-input=/dev/null".into());
                for input in inputs {
                    args.push(prefixed("-input=", input));
                }
                if self.compress {
                    args.push("-compress".into());
                }
            }
            Kind::Unbundle => {
                args.push("-unbundle".into());
                let bundle = self.bundle_input.as_ref().expect("unbundle reads a bundle");
                args.push(prefixed("-input=", bundle));
                args.push(format!("-targets={}", device_targets.join(",")).into());
            }
        }
        for output in &outputs {
            args.push(prefixed("-output=", &out_dir.join(output)));
        }
        args
    }

    /// What each output must be byte-identical to, besides the reference tool's output.
    fn originals<'a>(&self, inputs: &'a [PathBuf]) -> Option<&'a [PathBuf]> {
        (self.kind == Kind::Unbundle).then_some(inputs)
    }
}

fn prefixed(prefix: &str, path: &Path) -> OsString {
    let mut s = OsString::from(prefix);
    s.push(path);
    s
}

fn run() -> Result<()> {
    let runs = match std::env::var("BENCH_RUNS") {
        Ok(v) => v
            .trim()
            .parse::<usize>()
            .ok()
            .filter(|&n| n >= 1)
            .ok_or_else(|| format!("BENCH_RUNS={v:?} is not a positive integer"))?,
        Err(_) => DEFAULT_RUNS,
    };
    if runs < 5 {
        eprintln!("note: BENCH_RUNS={runs} is below 5: fine for a smoke run, not for the docs");
    }

    let reference = Tool {
        label: "clang-offload-bundler 19".to_string(),
        path: PathBuf::from(LLVM19_BIN).join("clang-offload-bundler"),
        ours: false,
    };
    let ours = match std::env::var_os("BENCH_OURS") {
        Some(p) => Tool {
            label: format!("BENCH_OURS={}", Path::new(&p).display()),
            path: PathBuf::from(p),
            ours: true,
        },
        None => Tool {
            label: "offload-bundler".to_string(),
            path: PathBuf::from(OURS_BUILT),
            ours: true,
        },
    };
    for tool in [&reference, &ours] {
        if !tool.path.is_file() {
            return Err(format!(
                "{} not found at {} (run `sudo build-support/setup.sh`?)",
                tool.label,
                tool.path.display()
            ));
        }
    }

    // target/<profile>/offload-bundler -> target/ (follows CARGO_TARGET_DIR).
    let target_dir = Path::new(OURS_BUILT)
        .parent()
        .and_then(Path::parent)
        .ok_or("cannot find the target directory")?
        .to_path_buf();
    let only = std::env::var("BENCH_ONLY").unwrap_or_default();
    if !["", "plain", "compress", "targets"].contains(&only.as_str()) {
        return Err(format!(
            "BENCH_ONLY={only:?}: expected plain, compress or targets"
        ));
    }

    // Outputs go next to the inputs (same filesystem); removed when done.
    let work = WorkDir::create(
        target_dir
            .join("bench-inputs")
            .join(format!("work-{}", std::process::id())),
    )?;

    let rss_floor = measure(Path::new("/bin/true"), &[], &[], work.path(), work.path())?;
    eprintln!(
        "peak RSS floor (a child spawned by this process, /bin/true): {:.1} MiB",
        kib_to_mib(rss_floor.max_rss_kib)
    );

    if only == "targets" {
        let table = many_targets(&ours, &target_dir, &work, runs, rss_floor)?;
        println!("\n{table}");
        return Ok(());
    }
    let inputs_dir = target_dir.join("bench-inputs").join(INPUTS_VERSION);
    let inputs = ensure_inputs(&inputs_dir)?;
    let total_input: u64 = inputs.iter().map(|p| file_len(p)).sum::<Result<u64>>()?;

    let mut ops = vec![];
    let plain = |kind, file_type, bundle_input| Operation {
        kind,
        file_type,
        bundle_input,
        compress: false,
        ours_args: &[],
        ours_env: &[],
        identical: true,
    };
    if only.is_empty() || only == "plain" {
        for file_type in ["o", "bc"] {
            // Unbundling reads the reference tool's bundle, kept from the bundle operation.
            let kept = work.path().join(format!("reference.{file_type}.hipfb"));
            ops.push(plain(Kind::Bundle, file_type, None));
            ops.push(plain(Kind::Unbundle, file_type, Some(kept)));
        }
    }
    if only.is_empty() || only == "compress" {
        // LLVM 19 writes CCOB v2; ours writes v2 too when asked, byte for byte.
        const V2: &[(&str, &str)] = &[("COMPRESSED_BUNDLE_FORMAT_VERSION", "2")];
        let compress = |ours_args, identical| Operation {
            compress: true,
            ours_args,
            ours_env: V2,
            identical,
            ..plain(Kind::Bundle, "o", None)
        };
        ops.push(compress(&[], true));
        ops.push(compress(&["-compression-threads=2"], false));
        let kept = work.path().join("reference.o.hipfb");
        ops.push(Operation {
            compress: true,
            ..plain(Kind::Unbundle, "o", Some(kept.clone()))
        });
        ops.push(Operation {
            compress: true,
            ours_args: &["-verify-hash"],
            ..plain(Kind::Unbundle, "o", Some(kept))
        });
    }

    let mut rows = vec![];
    for op in &ops {
        let input_desc = match op.kind {
            Kind::Bundle => format!(
                "8 × {:.1} MiB AMDGPU code objects ({:.1} MiB) + host `/dev/null`",
                bytes_to_mib(total_input / 8),
                bytes_to_mib(total_input)
            ),
            Kind::Unbundle => {
                let bundle = op.bundle_input.as_ref().expect("set above");
                format!("{:.1} MiB bundle", bytes_to_mib(file_len(bundle)?))
            }
        };
        let (ref_samples, our_samples) =
            bench_operation(op, &inputs, &reference, &ours, &work, runs)?;
        rows.push((op.name(), input_desc, ref_samples, our_samples));
    }

    // The table, ready for docs/performance.md.
    let mut out = String::new();
    let _ = writeln!(
        out,
        "| operation | input | {} (median ms, peak RSS MiB) | {} (median ms, peak RSS MiB) | speed-up |",
        reference.label, ours.label
    );
    let _ = writeln!(out, "| --- | --- | --- | --- | --- |");
    for (name, input, r, o) in &rows {
        let (rm, om) = (median(r), median(o));
        let _ = writeln!(
            out,
            "| {name} | {input} | {:.1} ms, {:.1} MiB | {:.1} ms, {:.1} MiB | {:.2}× |",
            ms(rm),
            kib_to_mib(peak(r)),
            ms(om),
            kib_to_mib(peak(o)),
            rm.as_secs_f64() / om.as_secs_f64()
        );
    }
    let _ = writeln!(out);
    let _ = writeln!(out, "{}", machine_line(&target_dir, runs));
    let spread: Vec<String> = rows
        .iter()
        .map(|(name, _, r, o)| {
            format!(
                "{name}: {} {}, {} {}",
                reference.label,
                min_max(r),
                ours.label,
                min_max(o)
            )
        })
        .collect();
    let _ = writeln!(out, "Spread (min–max ms): {}.", spread.join("; "));
    let _ = writeln!(
        out,
        "Tools: {} ({}); {} ({}). Every run's output was checked byte-identical to the reference's. \
         Peak RSS of a child spawned by the harness is at least {:.1} MiB (measured with /bin/true).",
        reference.path.display(),
        tool_version(&reference.path),
        ours.path.display(),
        tool_version(&ours.path),
        kib_to_mib(rss_floor.max_rss_kib)
    );
    println!("\n{out}");
    if only.is_empty() {
        let table = many_targets(&ours, &target_dir, &work, runs, rss_floor)?;
        println!("\n{table}");
    }
    Ok(())
}

/// The many-targets table: `ours` against LLVM 22 bundling 100,000 tiny targets and listing
/// the bundle, `runs` interleaved runs each after a warm-up whose outputs are compared.
fn many_targets(
    ours: &Tool,
    target_dir: &Path,
    work: &WorkDir,
    runs: usize,
    rss_floor: Sample,
) -> Result<String> {
    let reference = Tool {
        label: "clang-offload-bundler 22".to_string(),
        path: PathBuf::from(LLVM22_BUNDLER),
        ours: false,
    };
    if !reference.path.is_file() {
        return Err(format!(
            "{} not found at {} (run `sudo build-support/setup.sh`?)",
            reference.label,
            reference.path.display()
        ));
    }
    let dir = work.path().join("many-targets");
    fs::create_dir_all(&dir).map_err(|e| format!("creating {}: {e}", dir.display()))?;
    eprintln!("\nmany targets: writing {MANY_TARGETS} inputs");
    // The host and 99,999 OpenMP targets that differ in their OS version, as the
    // descriptor-limit test of integration/outputs.rs names them.
    let mut targets = vec![HOST_TARGET.to_string()];
    targets.extend((1..MANY_TARGETS).map(|i| format!("openmp-x86_64-unknown-linux{i}.0-gnu")));
    let mut rsp = String::from("-type=bc\n-output=out/fat.bc\n");
    let mut input_bytes = 0u64;
    for i in 0..MANY_TARGETS {
        let name = format!("in{i}.bin");
        let payload = format!("payload {i}");
        input_bytes += payload.len() as u64;
        fs::write(dir.join(&name), payload).map_err(|e| format!("{name}: {e}"))?;
        let _ = writeln!(rsp, "-input={name}");
    }
    let _ = writeln!(rsp, "-targets={}", targets.join(","));
    fs::write(dir.join("bundle.rsp"), rsp).map_err(|e| format!("bundle.rsp: {e}"))?;
    let bundle_args = [OsString::from("@bundle.rsp")];
    let list_args: Vec<OsString> = ["-type=bc", "-list", "-input=fat.bc"]
        .iter()
        .map(OsString::from)
        .collect();

    let out = dir.join("out");
    let run = |tool: &Tool, args: &[OsString]| -> Result<Sample> {
        remove_dir(&out)?;
        fs::create_dir_all(&out).map_err(|e| format!("creating {}: {e}", out.display()))?;
        // SAFETY: sync(2) has no preconditions.
        unsafe { libc::sync() };
        measure(&tool.path, args, &[], work.path(), &dir)
            .map_err(|e| format!("{}: {e}", tool.label))
    };
    let tools = [&reference, ours];
    let mut rows = Vec::new();

    // Bundling: the warm-up's bundles must be byte-identical; LLVM's is kept for listing.
    eprintln!("many targets: bundle warm-up");
    run(&reference, &bundle_args)?;
    fs::rename(out.join("fat.bc"), dir.join("fat.bc")).map_err(|e| e.to_string())?;
    run(ours, &bundle_args)?;
    same_bytes(&out.join("fat.bc"), &dir.join("fat.bc"))
        .map_err(|e| format!("many targets: ours and LLVM 22's bundles differ: {e}"))?;
    let bundle_len = file_len(&dir.join("fat.bc"))?;
    let mut samples: [Vec<Sample>; 2] = [vec![], vec![]];
    for round in 0..runs {
        let order = if round % 2 == 0 { [0, 1] } else { [1, 0] };
        for i in order {
            let s = run(tools[i], &bundle_args)?;
            eprintln!(
                "many targets: bundle: {} run {}/{runs}: {:.1} ms, {:.1} MiB",
                tools[i].label,
                round + 1,
                ms(s.wall),
                kib_to_mib(s.max_rss_kib)
            );
            samples[i].push(s);
        }
    }
    let [r, o] = samples;
    rows.push((
        format!("bundle `-type=bc`, {MANY_TARGETS} targets (`@` response file)"),
        format!(
            "{MANY_TARGETS} files of 9–13 bytes ({:.1} MiB)",
            bytes_to_mib(input_bytes)
        ),
        r,
        o,
    ));

    // Listing: the same lines from both.
    let listing = |tool: &Tool| -> Result<Vec<u8>> {
        run(tool, &list_args)?;
        fs::read(work.path().join("child.stdout")).map_err(|e| e.to_string())
    };
    let want = listing(&reference)?;
    if want
        .split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .count()
        != MANY_TARGETS
    {
        return Err("many targets: LLVM 22 does not list every target".into());
    }
    if listing(ours)? != want {
        return Err("many targets: ours lists other lines than LLVM 22".into());
    }
    let mut samples: [Vec<Sample>; 2] = [vec![], vec![]];
    for round in 0..runs {
        let order = if round % 2 == 0 { [0, 1] } else { [1, 0] };
        for i in order {
            samples[i].push(run(tools[i], &list_args)?);
        }
    }
    let [r, o] = samples;
    rows.push((
        "`-list -type=bc`".to_string(),
        format!(
            "that bundle ({:.1} MiB, {MANY_TARGETS} entries)",
            bytes_to_mib(bundle_len)
        ),
        r,
        o,
    ));

    let mut text = String::new();
    let _ = writeln!(
        text,
        "| operation | input | {} (median ms, peak RSS MiB) | {} (median ms, peak RSS MiB) | speed-up |",
        reference.label, ours.label
    );
    let _ = writeln!(text, "| --- | --- | --- | --- | --- |");
    for (name, input, r, o) in &rows {
        let (rm, om) = (median(r), median(o));
        let _ = writeln!(
            text,
            "| {name} | {input} | {:.1} ms, {:.1} MiB | {:.1} ms, {:.1} MiB | {:.2}× |",
            ms(rm),
            kib_to_mib(peak(r)),
            ms(om),
            kib_to_mib(peak(o)),
            rm.as_secs_f64() / om.as_secs_f64()
        );
    }
    let _ = writeln!(text);
    let _ = writeln!(text, "{}", machine_line(target_dir, runs));
    let spread: Vec<String> = rows
        .iter()
        .map(|(name, _, r, o)| {
            format!(
                "{name}: {} {}, {} {}",
                reference.label,
                min_max(r),
                ours.label,
                min_max(o)
            )
        })
        .collect();
    let _ = writeln!(text, "Spread (min–max ms): {}.", spread.join("; "));
    let _ = writeln!(
        text,
        "Tools: {} ({}); {} ({}). Outputs checked identical in the warm-up. Peak RSS floor {:.1} MiB.",
        reference.path.display(),
        tool_version(&reference.path),
        ours.path.display(),
        tool_version(&ours.path),
        kib_to_mib(rss_floor.max_rss_kib)
    );
    Ok(text)
}

/// Warm-up plus `runs` interleaved measured runs of each tool; every output is checked.
fn bench_operation(
    op: &Operation,
    inputs: &[PathBuf],
    reference: &Tool,
    ours: &Tool,
    work: &WorkDir,
    runs: usize,
) -> Result<(Vec<Sample>, Vec<Sample>)> {
    let name = op.name();
    let expected_dir = work.path().join("expected");
    let out_dir = work.path().join("out");
    remove_dir(&expected_dir)?;

    // Warm-up: the reference tool's output becomes what every later run must produce.
    eprintln!("\n{name}: warm-up");
    run_tool(reference, op, inputs, &expected_dir, work.path())?;
    if let Some(originals) = op.originals(inputs) {
        for (output, original) in op.outputs().iter().zip(originals) {
            same_bytes(&expected_dir.join(output), original).map_err(|e| {
                format!(
                    "{name}: {} did not give back the original code object: {e}",
                    reference.label
                )
            })?;
        }
    }
    run_tool(ours, op, inputs, &out_dir, work.path())?;
    check_outputs(op, &out_dir, &expected_dir, ours)?;
    remove_dir(&out_dir)?;

    let mut samples: [Vec<Sample>; 2] = [vec![], vec![]];
    let tools = [reference, ours];
    for round in 0..runs {
        // ABBA...: alternate which tool goes first.
        let order = if round % 2 == 0 { [0, 1] } else { [1, 0] };
        for i in order {
            let tool = tools[i];
            let s = run_tool(tool, op, inputs, &out_dir, work.path())?;
            check_outputs(op, &out_dir, &expected_dir, tool)?;
            remove_dir(&out_dir)?;
            eprintln!(
                "{name}: {} run {}/{runs}: {:.1} ms, {:.1} MiB",
                tool.label,
                round + 1,
                ms(s.wall),
                kib_to_mib(s.max_rss_kib)
            );
            samples[i].push(s);
        }
    }

    // Keep the reference bundle: the matching unbundle operation reads it.
    if op.kind == Kind::Bundle {
        let kept = work
            .path()
            .join(format!("reference.{}.hipfb", op.file_type));
        fs::rename(expected_dir.join(&op.outputs()[0]), &kept)
            .map_err(|e| format!("keeping {}: {e}", kept.display()))?;
    }
    remove_dir(&expected_dir)?;
    let [r, o] = samples;
    Ok((r, o))
}

/// Runs one tool once into a fresh `out_dir` and checks it succeeded.
fn run_tool(
    tool: &Tool,
    op: &Operation,
    inputs: &[PathBuf],
    out_dir: &Path,
    work: &Path,
) -> Result<Sample> {
    remove_dir(out_dir)?;
    fs::create_dir_all(out_dir).map_err(|e| format!("creating {}: {e}", out_dir.display()))?;
    // Start each run without other runs' dirty pages still being written back.
    // SAFETY: sync(2) has no preconditions.
    unsafe { libc::sync() };
    let mut args = op.args(inputs, out_dir);
    let mut env: &[(&str, &str)] = &[];
    if tool.ours {
        args.extend(op.ours_args.iter().map(OsString::from));
        env = op.ours_env;
    }
    measure(&tool.path, &args, env, work, out_dir)
        .map_err(|e| format!("{}: {}: {e}", op.name(), tool.label))
}

fn check_outputs(op: &Operation, out_dir: &Path, expected_dir: &Path, tool: &Tool) -> Result<()> {
    if !op.identical && tool.ours {
        // Other bytes by design (zstd workers): the same bundle once decompressed.
        for output in op.outputs() {
            let decompressed = |p: &Path| -> Result<Vec<u8>> {
                let data = fs::read(p).map_err(|e| format!("{}: {e}", p.display()))?;
                let b = offload_build::bundle::CompressedBundle::parse(&data)
                    .map_err(|e| format!("{}: {e}", p.display()))?;
                Ok(b.decompress()
                    .map_err(|e| format!("{}: {e}", p.display()))?
                    .data)
            };
            if decompressed(&out_dir.join(&output))? != decompressed(&expected_dir.join(&output))? {
                return Err(format!(
                    "{}: {}'s output {output} does not decompress to the reference's bundle",
                    op.name(),
                    tool.label
                ));
            }
        }
        return Ok(());
    }
    for output in op.outputs() {
        same_bytes(&out_dir.join(&output), &expected_dir.join(&output)).map_err(|e| {
            format!(
                "{}: {}'s output {output} differs from clang-offload-bundler 19's: {e}\n  \
                 (a benchmark of wrong output is meaningless)",
                op.name(),
                tool.label
            )
        })?;
    }
    Ok(())
}

/// Compares two files without reading either whole into memory (see the RSS caveat).
fn same_bytes(a: &Path, b: &Path) -> Result<()> {
    let open = |p: &Path| File::open(p).map_err(|e| format!("{}: {e}", p.display()));
    let (mut fa, mut fb) = (open(a)?, open(b)?);
    let (la, lb) = (file_len(a)?, file_len(b)?);
    if la != lb {
        return Err(format!(
            "{} is {la} bytes, {} is {lb} bytes",
            a.display(),
            b.display()
        ));
    }
    let mut ba = vec![0u8; 1 << 20];
    let mut bb = vec![0u8; 1 << 20];
    let mut offset = 0u64;
    loop {
        let n = read_full(&mut fa, &mut ba).map_err(|e| format!("{}: {e}", a.display()))?;
        let m = read_full(&mut fb, &mut bb).map_err(|e| format!("{}: {e}", b.display()))?;
        if n != m {
            return Err(format!("{} changed size while being read", a.display()));
        }
        if n == 0 {
            return Ok(());
        }
        if ba[..n] != bb[..n] {
            let at = ba[..n]
                .iter()
                .zip(&bb[..n])
                .position(|(x, y)| x != y)
                .unwrap_or(0);
            return Err(format!(
                "first difference at byte {} ({:#04x} vs {:#04x})",
                offset + at as u64,
                ba[at],
                bb[at]
            ));
        }
        offset += n as u64;
    }
}

fn read_full(f: &mut File, buf: &mut [u8]) -> io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match f.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}

// ---------------------------------------------------------------------------
// Inputs: real AMDGPU code objects, built once.

/// Returns the 8 code objects, building the missing ones with clang 19.
fn ensure_inputs(dir: &Path) -> Result<Vec<PathBuf>> {
    fs::create_dir_all(dir).map_err(|e| format!("creating {}: {e}", dir.display()))?;
    let source = dir.join("bench.hip");
    let mut objects = vec![];
    for arch in ARCHS {
        let object = dir.join(format!("{arch}.o"));
        if check_code_object(&object).is_err() {
            if !source.is_file() {
                eprintln!("generating {}", source.display());
                write_source(&source)?;
            }
            compile(&source, arch, &object)?;
        }
        check_code_object(&object).map_err(|e| format!("{}: {e}", object.display()))?;
        objects.push(object);
    }
    Ok(objects)
}

/// A HIP source whose device code is large: an 11 MiB `__device__` array with a
/// non-zero, non-repeating-per-page initializer (so it lands in `.data`), used by a
/// kernel so that it is kept.
fn write_source(path: &Path) -> Result<()> {
    let tmp = path.with_extension("hip.tmp");
    let write = || -> io::Result<()> {
        let mut w = BufWriter::new(File::create(&tmp)?);
        // -nogpuinc: no HIP headers, so spell out the attributes.
        writeln!(
            w,
            "// Generated by benches/bundler.rs: large device code for the bundler benchmark."
        )?;
        writeln!(w, "#define __device__ __attribute__((device))")?;
        writeln!(w, "#define __global__ __attribute__((global))")?;
        write!(w, "__device__ unsigned char bench_blob[{BLOB_BYTES}] =\n\"")?;
        // BLOB_BYTES - 1 characters plus the terminating NUL fill the array exactly.
        // Printable characters except '"', '\\' and '?' (trigraphs), 120 per line.
        let mut x: u32 = 0x9e37_79b9;
        for i in 0..BLOB_BYTES - 1 {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            let c = match b'#' + (x % 90) as u8 {
                b'"' | b'\\' | b'?' => b'A',
                c => c,
            };
            w.write_all(&[c])?;
            if i % 120 == 119 {
                w.write_all(b"\"\n\"")?;
            }
        }
        writeln!(w, "\";")?;
        writeln!(
            w,
            "extern \"C\" __global__ void bench_kernel(unsigned char *out, __SIZE_TYPE__ n) {{\n  \
             __SIZE_TYPE__ i = __builtin_amdgcn_workgroup_id_x() * 256u + __builtin_amdgcn_workitem_id_x();\n  \
             if (i < n) out[i] = bench_blob[(i * 4099u) % sizeof(bench_blob)] ^ (unsigned char)i;\n}}"
        )?;
        w.into_inner().map_err(|e| e.into_error())?.sync_all()
    };
    write().map_err(|e| format!("writing {}: {e}", tmp.display()))?;
    fs::rename(&tmp, path).map_err(|e| format!("renaming {}: {e}", tmp.display()))
}

fn compile(source: &Path, arch: &str, object: &Path) -> Result<()> {
    let clang = Path::new(LLVM19_BIN).join("clang");
    let tmp = object.with_extension("o.tmp");
    eprintln!("compiling {} for {arch}", source.display());
    let start = Instant::now();
    // --no-gpu-bundle-output: the linked code object itself, as the HIP driver bundles
    // it (otherwise clang 19 wraps a device-only -c output in a bundle).
    let output = Command::new(&clang)
        .args(["-x", "hip", &format!("--offload-arch={arch}")])
        .args([
            "-nogpulib",
            "-nogpuinc",
            "--cuda-device-only",
            "--no-gpu-bundle-output",
        ])
        .args(["-O2", "-c"])
        .arg(source)
        .arg("-o")
        .arg(&tmp)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("cannot run {}: {e}", clang.display()))?;
    if !output.status.success() {
        return Err(format!(
            "{} failed for {arch} ({}):\n{}",
            clang.display(),
            output.status,
            String::from_utf8_lossy(&output.stderr)
        ));
    }
    check_code_object(&tmp).map_err(|e| format!("clang's output for {arch}: {e}"))?;
    fs::rename(&tmp, object).map_err(|e| format!("renaming {}: {e}", tmp.display()))?;
    eprintln!("  {arch}: {:.1} s", start.elapsed().as_secs_f64());
    Ok(())
}

/// At least `MIN_OBJECT_BYTES`, and a 64-bit little-endian ELF for EM_AMDGPU.
fn check_code_object(path: &Path) -> Result<()> {
    let len = file_len(path)?;
    if len < MIN_OBJECT_BYTES {
        return Err(format!("{len} bytes, expected at least {MIN_OBJECT_BYTES}"));
    }
    let mut header = [0u8; 20];
    File::open(path)
        .and_then(|mut f| f.read_exact(&mut header))
        .map_err(|e| format!("{}: {e}", path.display()))?;
    if &header[..4] != b"\x7fELF" || header[4] != 2 || header[5] != 1 {
        return Err("not a 64-bit little-endian ELF file".to_string());
    }
    let machine = u16::from_le_bytes([header[18], header[19]]);
    if machine != EM_AMDGPU {
        return Err(format!(
            "ELF e_machine {machine}, expected {EM_AMDGPU} (AMDGPU)"
        ));
    }
    Ok(())
}

// ---------------------------------------------------------------------------
// Small helpers.

/// A directory removed on drop.
struct WorkDir(PathBuf);

impl WorkDir {
    fn create(path: PathBuf) -> Result<Self> {
        remove_dir(&path)?;
        fs::create_dir_all(&path).map_err(|e| format!("creating {}: {e}", path.display()))?;
        Ok(WorkDir(path))
    }
    fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for WorkDir {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

fn remove_dir(path: &Path) -> Result<()> {
    match fs::remove_dir_all(path) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(format!("removing {}: {e}", path.display())),
    }
}

fn file_len(path: &Path) -> Result<u64> {
    fs::metadata(path)
        .map(|m| m.len())
        .map_err(|e| format!("{}: {e}", path.display()))
}
