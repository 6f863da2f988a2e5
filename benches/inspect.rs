//! Benchmark: reading a large shipped library's device code, ours against LLVM 22.
//!
//! Run with `cargo bench --bench inspect`. Under `cargo test --all-targets` it only says so.
//!
//! The input is a library others ship: `xla_rocm_plugin.so` from the wheel
//! `jax-rocm7-pjrt==0.12.0` (459 MB, 45 zstd-compressed bundles, 1,260 entries), downloaded
//! once with pip into `target/bench-inputs/inspect-v1/` and checked against its pinned
//! SHA-256. Its bundles are also written out one per file (from our own listing).
//!
//! Rows, each timed `BENCH_RUNS` times (default 5) after one warm-up, tools interleaved:
//! * listing every entry: `offload-build inspect` (header-speed), `offload-build inspect
//!   --verify` (every bundle decompressed and its MD5 checked: what `inspect` did before it
//!   read at header speed) and `llvm-objdump-22 --offloading` (which writes every entry to a
//!   file);
//! * `offload-build extract --index 1` of one 48 KB entry;
//! * `-list` of each of the 45 bundles: `offload-bundler` and `clang-offload-bundler-22`
//!   (the time of all 45 runs).
//!
//! The listings are checked to agree: the same IDs in the same order from ours and LLVM's
//! bundler for every bundle, and the extracted entry is the entry LLVM's bundler unbundles.

#[path = "common.rs"]
mod common;

use std::ffi::OsString;
use std::fs;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

use common::{Result, Sample, kib_to_mib, machine_line, measure, median, ms, peak};

const WHEEL: &str = "jax-rocm7-pjrt==0.12.0";
const WHEEL_FILE: &str = "jax_rocm7_pjrt-0.12.0-py3-none-manylinux_2_27_x86_64.whl";
const WHEEL_SHA256: &str = "4551d0714523355f2946ca1958c3f584e95661e467a641d36b726f718a1c7934";
const MEMBER: &str = "jax_plugins/xla_rocm7/xla_rocm_plugin.so";
const LLVM22_BIN: &str = "/usr/lib/llvm-22/bin";
const OFFLOAD_BUILD: &str = env!("CARGO_BIN_EXE_offload-build");
const OFFLOAD_BUNDLER: &str = env!("CARGO_BIN_EXE_offload-bundler");

fn main() -> ExitCode {
    if !std::env::args().any(|a| a == "--bench") {
        println!(
            "inspect benchmark: not run under `cargo test`; run it with `cargo bench --bench inspect`"
        );
        return ExitCode::SUCCESS;
    }
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("\ninspect benchmark FAILED: {e}");
            ExitCode::FAILURE
        }
    }
}

fn target_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target"))
}

fn sh(program: &str, args: &[&str], cwd: &Path) -> Result<Vec<u8>> {
    let out = Command::new(program)
        .args(args)
        .current_dir(cwd)
        .output()
        .map_err(|e| format!("cannot run {program}: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "{program} {}: {}\n{}",
            args.join(" "),
            out.status,
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    Ok(out.stdout)
}

/// The library, downloaded and checked once.
fn ensure_library(dir: &Path) -> Result<PathBuf> {
    let so = dir.join("xla_rocm_plugin.so");
    if so.is_file() {
        return Ok(so);
    }
    fs::create_dir_all(dir).map_err(|e| e.to_string())?;
    let wheel = dir.join(WHEEL_FILE);
    if !wheel.is_file() {
        eprintln!("downloading {WHEEL} (133 MB) into {}", dir.display());
        let d = dir.to_str().ok_or("non-UTF-8 target directory")?;
        sh(
            "python3",
            &["-m", "pip", "download", "-q", "--no-deps", WHEEL, "-d", d],
            dir,
        )?;
    }
    let sum = sh("sha256sum", &[WHEEL_FILE], dir)?;
    let sum = String::from_utf8_lossy(&sum);
    if !sum.starts_with(WHEEL_SHA256) {
        return Err(format!(
            "{WHEEL_FILE}: SHA-256 {} is not the pinned {WHEEL_SHA256}",
            sum.split_whitespace().next().unwrap_or("")
        ));
    }
    let script = format!(
        "import zipfile; open('xla_rocm_plugin.so.tmp','wb').write(zipfile.ZipFile('{WHEEL_FILE}').read('{MEMBER}'))"
    );
    sh("python3", &["-c", &script], dir)?;
    fs::rename(dir.join("xla_rocm_plugin.so.tmp"), &so).map_err(|e| e.to_string())?;
    Ok(so)
}

/// Our listing: (offset, size) of every compressed bundle, and the entry IDs of each.
type Bundles = Vec<((u64, u64), Vec<String>)>;

fn our_bundles(so: &Path, dir: &Path) -> Result<Bundles> {
    let json = sh(
        OFFLOAD_BUILD,
        &["inspect", "--json", so.to_str().unwrap()],
        dir,
    )?;
    let v: serde_json::Value = serde_json::from_slice(&json).map_err(|e| e.to_string())?;
    let mut out = Vec::new();
    for c in v[0]["containers"].as_array().ok_or("no containers")? {
        let ids = c["entries"]
            .as_array()
            .ok_or("no entries")?
            .iter()
            .map(|e| e["id"].as_str().unwrap_or("").to_owned())
            .collect();
        let at = (c["offset"].as_u64().unwrap(), c["size"].as_u64().unwrap());
        out.push((at, ids));
    }
    Ok(out)
}

struct Row {
    what: String,
    ours: Vec<(String, Vec<Sample>)>,
    llvm: Option<(String, Vec<Sample>)>,
}

fn run() -> Result<()> {
    let runs: usize = std::env::var("BENCH_RUNS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(5);
    let target = target_dir();
    let dir = target.join("bench-inputs/inspect-v1");
    let so = ensure_library(&dir)?;
    let so_arg: OsString = so.clone().into();
    let work = dir.join("work");
    let _ = fs::remove_dir_all(&work);
    fs::create_dir_all(&work).map_err(|e| e.to_string())?;

    // Every bundle on its own, and the listings compared with LLVM 22's bundler.
    let bundles = our_bundles(&so, &dir)?;
    // Read only the bundles: a child's peak RSS is at least this process's (see
    // `benches/bundler.rs`), so the library is never read whole here.
    let library = fs::File::open(&so).map_err(|e| e.to_string())?;
    let llvm_bundler = format!("{LLVM22_BIN}/clang-offload-bundler");
    let mut files = Vec::new();
    for (i, ((offset, size), ids)) in bundles.iter().enumerate() {
        let path = dir.join(format!("bundle-{i}.ccob"));
        let mut bytes = vec![0; *size as usize];
        library
            .read_exact_at(&mut bytes, *offset)
            .map_err(|e| e.to_string())?;
        fs::write(&path, &bytes).map_err(|e| e.to_string())?;
        let input = format!("-input={}", path.display());
        let listed = sh(&llvm_bundler, &["-list", "-type=o", &input], &dir)?;
        let mut llvm: Vec<String> = String::from_utf8_lossy(&listed)
            .lines()
            .map(str::to_owned)
            .collect();
        let mut ours = ids.clone();
        llvm.sort();
        ours.sort();
        if llvm != ours {
            return Err(format!("bundle {i}: LLVM lists {llvm:?}, we list {ours:?}"));
        }
        files.push(path);
    }
    drop(library);
    let entries: usize = bundles.iter().map(|(_, ids)| ids.len()).sum();
    eprintln!(
        "{} bundles, {entries} entries agree with clang-offload-bundler 22",
        bundles.len()
    );

    // The extracted entry is what LLVM unbundles.
    let one = work.join("one.co");
    sh(
        OFFLOAD_BUILD,
        &[
            "extract",
            so.to_str().unwrap(),
            "--index",
            "1",
            "-o",
            one.to_str().unwrap(),
        ],
        &dir,
    )?;
    let second_id = &bundles[0].1[1];
    let llvm_one = work.join("llvm-one.co");
    sh(
        &llvm_bundler,
        &[
            "-unbundle",
            "-type=o",
            &format!("-input={}", files[0].display()),
            &format!("-targets={second_id}"),
            &format!("-output={}", llvm_one.display()),
        ],
        &dir,
    )?;
    if fs::read(&one).map_err(|e| e.to_string())?
        != fs::read(&llvm_one).map_err(|e| e.to_string())?
    {
        return Err("extract --index 1 differs from LLVM's unbundled entry".into());
    }

    let objdump = PathBuf::from(format!("{LLVM22_BIN}/llvm-objdump"));
    let a = |s: &str| OsString::from(s);
    let time =
        |program: &Path, args: &[OsString], cwd: &Path| measure(program, args, &[], &work, cwd);
    let mut rows = Vec::new();

    // Listing.
    let mut plain = Vec::new();
    let mut verified = Vec::new();
    let mut llvm = Vec::new();
    let objdump_dir = work.join("objdump");
    for round in 0..=runs {
        let _ = fs::remove_dir_all(&objdump_dir);
        fs::create_dir_all(&objdump_dir).map_err(|e| e.to_string())?;
        let p = time(
            Path::new(OFFLOAD_BUILD),
            &[a("inspect"), so_arg.clone()],
            &work,
        )?;
        let v = time(
            Path::new(OFFLOAD_BUILD),
            &[a("inspect"), a("--verify"), so_arg.clone()],
            &work,
        )?;
        let l = time(&objdump, &[a("--offloading"), so_arg.clone()], &objdump_dir)?;
        if round > 0 {
            plain.push(p);
            verified.push(v);
            llvm.push(l);
        }
    }
    rows.push(Row {
        what: format!("list every entry ({entries})"),
        ours: vec![
            ("`offload-build inspect`".into(), plain),
            (
                "`inspect --verify` (whole decode + MD5: the old `inspect`)".into(),
                verified,
            ),
        ],
        llvm: Some((
            "`llvm-objdump-22 --offloading` (writes every entry)".into(),
            llvm,
        )),
    });

    // One entry.
    let mut extract = Vec::new();
    for round in 0..=runs {
        let e = time(
            Path::new(OFFLOAD_BUILD),
            &[
                a("extract"),
                so_arg.clone(),
                a("--index"),
                a("1"),
                a("-o"),
                one.clone().into(),
            ],
            &work,
        )?;
        if round > 0 {
            extract.push(e);
        }
    }
    rows.push(Row {
        what: "extract one entry (`--index 1`, 48 KB)".into(),
        ours: vec![("`offload-build extract`".into(), extract)],
        llvm: None,
    });

    // -list of every bundle, 45 runs each.
    let mut ours_list = Vec::new();
    let mut llvm_list = Vec::new();
    for round in 0..=runs {
        let mut o = Sample {
            wall: Default::default(),
            max_rss_kib: 0,
        };
        let mut l = o;
        for f in &files {
            let args = [
                a("-list"),
                a("-type=o"),
                OsString::from(format!("-input={}", f.display())),
            ];
            let s = time(Path::new(OFFLOAD_BUNDLER), &args, &work)?;
            o.wall += s.wall;
            o.max_rss_kib = o.max_rss_kib.max(s.max_rss_kib);
            let s = time(Path::new(&llvm_bundler), &args, &work)?;
            l.wall += s.wall;
            l.max_rss_kib = l.max_rss_kib.max(s.max_rss_kib);
        }
        if round > 0 {
            ours_list.push(o);
            llvm_list.push(l);
        }
    }
    rows.push(Row {
        what: format!("`-list` of each of the {} bundles (all runs)", files.len()),
        ours: vec![("`offload-bundler -list`".into(), ours_list)],
        llvm: Some(("`clang-offload-bundler-22 -list`".into(), llvm_list)),
    });

    let size = fs::metadata(&so).map_err(|e| e.to_string())?.len();
    println!(
        "\nInput: `xla_rocm_plugin.so` of `{WHEEL}` ({:.0} MB, {} compressed bundles, {entries} entries).\n",
        size as f64 / 1e6,
        files.len()
    );
    println!("| operation | tool | median ms | peak RSS MiB | LLVM 22 / ours |");
    println!("| --- | --- | --- | --- | --- |");
    for r in &rows {
        let reference = r.llvm.as_ref().map(|(_, s)| median(s));
        for (label, s) in &r.ours {
            let ratio = reference.map_or_else(
                || "—".to_owned(),
                |m| format!("{:.0}×", m.as_secs_f64() / median(s).as_secs_f64()),
            );
            println!(
                "| {} | {label} | {:.1} | {:.1} | {ratio} |",
                r.what,
                ms(median(s)),
                kib_to_mib(peak(s))
            );
        }
        if let Some((label, s)) = &r.llvm {
            println!(
                "| {} | {label} | {:.1} | {:.1} | 1× |",
                r.what,
                ms(median(s)),
                kib_to_mib(peak(s))
            );
        }
    }
    println!("\n{}", machine_line(&target, runs));
    Ok(())
}
