//! `offload-build check`: whether each file with device code holds a code object the
//! runtime would load on each GPU asked for, as text or JSON.

use std::io::{self, Write};

use super::failure::{Failure, output_error, print_json};
use super::inspect::walk_reports;
use super::installs::{self, Found};
use offload_formats::inspect;

/// The GPUs of `check`'s `--gpu` options (`native`: those of this machine), each once.
/// A GPU that cannot be named or found is reported on `err`: `Err(2)`, the exit status.
fn parse_gpus(
    specs: &[String],
    err: &mut dyn Write,
) -> Result<Vec<(String, offload_formats::compat::Gpu)>, i32> {
    use offload_formats::compat::Gpu;
    let mut gpus: Vec<(String, Gpu)> = Vec::new();
    for spec in specs {
        let names = if spec == "native" {
            let found = installs::native_gpus();
            if found.is_empty() {
                let _ = writeln!(
                    err,
                    "offload-build: error: --gpu native: this machine has no GPU that \
                     offload-build can see (no AMD GPU in /sys/class/kfd/kfd/topology/nodes, \
                     none from amdgpu-arch, rocminfo or nvidia-smi); name one with --gpu, e.g. \
                     --gpu gfx1100 or --gpu sm_86"
                );
                return Err(2);
            }
            found
        } else {
            vec![spec.clone()]
        };
        for name in names {
            match Gpu::parse(&name) {
                Ok(g) => {
                    if !gpus.iter().any(|(n, _)| *n == name) {
                        gpus.push((name, g));
                    }
                }
                Err(e) => {
                    let _ = writeln!(err, "offload-build: error: --gpu: {e}");
                    return Err(2);
                }
            }
        }
    }
    Ok(gpus)
}

/// `check`: exit 0 when every file with device code has a code object for every GPU, 1 when
/// one has none (or a file cannot be read), 2 for a GPU that cannot be named or found.
pub(crate) fn check_files(
    specs: &[String],
    paths: &[String],
    json: bool,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<i32, Failure> {
    let gpus = match parse_gpus(specs, err) {
        Ok(gpus) => gpus,
        Err(status) => return Ok(status),
    };
    let mut status = 0;
    let mut with_code = 0usize;
    let mut results = Vec::new();
    let inspect = |found: &Found<'_>| inspect::inspect(found.data, found.path);
    status |= walk_reports(paths, &mut *err, inspect, &mut |r, explicit| {
        let verdicts: Vec<_> = gpus
            .iter()
            .filter_map(|(name, g)| installs::check(&r, name, g))
            .collect();
        if verdicts.is_empty() {
            if explicit && !json {
                writeln!(out, "{}: no device code", r.path).map_err(output_error)?;
            }
            return Ok(());
        }
        with_code += 1;
        let archs = installs::archs(&r);
        let mut gpu_json = Vec::new();
        for v in &verdicts {
            if v.chosen.is_none() {
                status = 1;
            }
            if json {
                gpu_json.push(verdict_json(v));
            } else {
                print_verdict(&r.path, &archs, v, out).map_err(output_error)?;
            }
        }
        if json {
            results.push(serde_json::json!({
                "path": r.path,
                "archs": archs,
                "gpus": gpu_json,
            }));
        }
        Ok(())
    })?;
    if json {
        print_json(out, &results)?;
    }
    if with_code == 0 && status == 0 {
        let _ = writeln!(
            err,
            "offload-build: error: no device code in {}",
            paths.join(", ")
        );
        status = 1;
    }
    Ok(status)
}

fn print_verdict(
    path: &str,
    archs: &[String],
    v: &installs::Verdict,
    out: &mut dyn Write,
) -> io::Result<()> {
    match &v.chosen {
        Some((id, rule)) => {
            write!(out, "{path}: {}: loads {id} ({rule})", v.gpu)?;
            if !v.conditions.is_empty() {
                write!(out, " if the GPU runs with {}", v.conditions.join(" or "))?;
            }
            if v.containers > 1 {
                write!(out, ", and from each of the {} containers", v.containers)?;
            }
            writeln!(out)
        }
        None => {
            write!(out, "{path}: {}: no code object loads", v.gpu)?;
            if v.containers > 1 {
                let shown: Vec<String> = v.missing.iter().take(8).map(usize::to_string).collect();
                write!(
                    out,
                    " from {} of {} containers ({}{})",
                    v.missing.len(),
                    v.containers,
                    shown.join(", "),
                    if v.missing.len() > 8 { ", ..." } else { "" }
                )?;
            }
            writeln!(
                out,
                "; the file has {}",
                if archs.is_empty() {
                    "no target ID".to_owned()
                } else {
                    archs.join(" ")
                }
            )?;
            for (id, why) in &v.rejected {
                writeln!(out, "  {id}: {why}")?;
            }
            Ok(())
        }
    }
}

fn verdict_json(v: &installs::Verdict) -> serde_json::Value {
    match &v.chosen {
        Some((id, rule)) => serde_json::json!({
            "gpu": v.gpu,
            "loads": true,
            "containers": v.containers,
            "entry": id,
            "rule": rule.to_string(),
            "if_gpu_runs_with_any_of": v.conditions,
        }),
        None => serde_json::json!({
            "gpu": v.gpu,
            "loads": false,
            "containers": v.containers,
            "missing_containers": v.missing,
            "rejected": v.rejected.iter().map(|(id, why)| serde_json::json!({
                "entry": id,
                "reason": why.to_string(),
            })).collect::<Vec<_>>(),
        }),
    }
}
