//! The AMDGCN processor table of LLVM's TargetParser, as clang sees it.
//!
//! - Names: every CPU `llc -mtriple=amdgcn -mcpu=help` lists (processors, legacy aliases,
//!   generic targets, and the pseudo-CPUs `generic` / `generic-hsa`).
//! - Which are target-ID processors, and their canonical names: `clang
//!   --target=amdgcn-amd-amdhsa -mcpu=<name> -###` either rejects the name as an invalid
//!   target ID (clang's `parseTargetID` fails: `generic`, `generic-hsa`) or passes
//!   `-target-cpu <canonical>` to cc1 (`fiji` → `gfx803`). A name whose canonical name differs
//!   is an alias of that processor.
//! - Features: the same probe with `-mcpu=<canonical>:xnack+` and `:sramecc+`; clang rejects
//!   a feature the processor does not support (`FEATURE_XNACK` / `FEATURE_SRAMECC`).
//! - Generic: the canonical name ends in `-generic` (LLVM's naming of the generic targets).
//! - Order: LLVM's `GPUKind` order, which for `gfx<hex>` names is the order of the hex number
//!   (`gfx909` < `gfx90a` < `gfx940` < `gfx1010`), with the generic targets last ordered by
//!   their version (`gfx9`, `gfx9-4`, `gfx10-1`, …) as in `GPUKind`.

use std::collections::BTreeMap;
use std::process::Command;

use crate::tools::{Llvm, par_map, run};

/// One canonical processor of the union table.
#[derive(Debug, PartialEq)]
pub struct Processor {
    pub name: String,
    /// Alphabetical, as `llc` lists them.
    pub aliases: Vec<String>,
    pub xnack: bool,
    pub sramecc: bool,
    pub generic: bool,
    pub clang19: bool,
    pub clang22: bool,
}

/// What one LLVM says about one canonical processor.
#[derive(Debug, PartialEq, Clone)]
struct Known {
    aliases: Vec<String>,
    xnack: bool,
    sramecc: bool,
}

/// `llc -mtriple=amdgcn -mcpu=help`: the CPU names, alphabetical.
fn llc_cpus(llvm: &Llvm) -> Result<Vec<String>, String> {
    let out = run(Command::new(llvm.bin("llc")).args(["-mtriple=amdgcn", "-mcpu=help"]))?;
    // The list goes to stderr (LLVM 19) or stdout (later); read both.
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    let mut cpus = Vec::new();
    let mut inside = false;
    for line in text.lines() {
        if line.starts_with("Available CPUs") {
            inside = true;
        } else if line.starts_with("Available features") {
            break;
        } else if inside {
            cpus.extend(line.split_whitespace().next().map(str::to_string));
        }
    }
    if cpus.is_empty() {
        return Err(format!(
            "{}: no CPUs in -mcpu=help output",
            llvm.bin("llc").display()
        ));
    }
    Ok(cpus)
}

/// `clang -mcpu=<id> -###`: the canonical processor cc1 gets, or `None` if clang rejects the
/// target ID.
fn clang_target_cpu(llvm: &Llvm, id: &str) -> Result<Option<String>, String> {
    let out = run(Command::new(llvm.bin("clang")).args([
        "--target=amdgcn-amd-amdhsa",
        &format!("-mcpu={id}"),
        "-nogpulib",
        "-###",
        "-c",
        "-x",
        "c",
        "/dev/null",
        "-o",
        "/dev/null",
    ]))?;
    let err = String::from_utf8_lossy(&out.stderr);
    if err.contains(&format!("error: invalid target ID '{id}'")) {
        return Ok(None);
    }
    if !out.status.success() || err.contains("error:") {
        return Err(format!("clang -mcpu={id}: unexpected failure: {err}"));
    }
    let cpu = err
        .split("\"-target-cpu\" \"")
        .nth(1)
        .and_then(|rest| rest.split('"').next())
        .ok_or_else(|| format!("clang -mcpu={id}: no -target-cpu in: {err}"))?;
    Ok(Some(cpu.to_string()))
}

fn known(llvm: &Llvm) -> Result<BTreeMap<String, Known>, String> {
    let cpus = llc_cpus(llvm)?;
    let canon = par_map(&cpus, |c| clang_target_cpu(llvm, c));
    let mut table: BTreeMap<String, Known> = BTreeMap::new();
    for (cpu, canonical) in cpus.iter().zip(canon) {
        let Some(canonical) = canonical? else {
            continue;
        };
        let entry = table.entry(canonical.clone()).or_insert(Known {
            aliases: Vec::new(),
            xnack: false,
            sramecc: false,
        });
        if *cpu != canonical {
            entry.aliases.push(cpu.clone());
        }
    }
    let probes: Vec<(String, &str)> = table
        .keys()
        .flat_map(|p| [(p.clone(), "xnack"), (p.clone(), "sramecc")])
        .collect();
    let results = par_map(&probes, |(p, f)| {
        clang_target_cpu(llvm, &format!("{p}:{f}+"))
    });
    for ((p, f), ok) in probes.iter().zip(results) {
        let ok = ok?.is_some();
        let k = table.get_mut(p).expect("probed processor");
        match *f {
            "xnack" => k.xnack = ok,
            _ => k.sramecc = ok,
        }
    }
    Ok(table)
}

/// Sort key: real processors by the hex number after `gfx`, then the generic targets by
/// version.
fn order(name: &str) -> Result<(bool, u64, u64), String> {
    let bad =
        || format!("unexpected AMDGCN processor name {name:?}: teach gen-tables its GPUKind order");
    let rest = name.strip_prefix("gfx").ok_or_else(bad)?;
    if let Some(version) = rest.strip_suffix("-generic") {
        let (major, minor) = version.split_once('-').unwrap_or((version, "0"));
        Ok((
            true,
            major.parse().map_err(|_| bad())?,
            minor.parse().map_err(|_| bad())?,
        ))
    } else {
        Ok((false, u64::from_str_radix(rest, 16).map_err(|_| bad())?, 0))
    }
}

/// The union of both LLVMs' tables, in `GPUKind` order with the generic targets last.
pub fn processors(llvm19: &Llvm, llvm22: &Llvm) -> Result<Vec<Processor>, String> {
    let (k19, k22) = (known(llvm19)?, known(llvm22)?);
    let mut out = Vec::new();
    for name in k19
        .keys()
        .chain(k22.keys().filter(|n| !k19.contains_key(*n)))
    {
        let (a, b) = (k19.get(name), k22.get(name));
        if a.is_some() && b.is_some() && a != b {
            return Err(format!(
                "{name}: LLVM 19 and 22 disagree ({a:?} vs {b:?}); the table has one entry per processor"
            ));
        }
        let k = a.or(b).expect("name from one of the tables").clone();
        out.push(Processor {
            generic: name.ends_with("-generic"),
            name: name.clone(),
            aliases: k.aliases,
            xnack: k.xnack,
            sramecc: k.sramecc,
            clang19: a.is_some(),
            clang22: b.is_some(),
        });
    }
    let mut keyed = out
        .into_iter()
        .map(|p| Ok((order(&p.name)?, p)))
        .collect::<Result<Vec<_>, String>>()?;
    keyed.sort_by_key(|(k, _)| *k);
    Ok(keyed.into_iter().map(|(_, p)| p).collect())
}

#[cfg(test)]
mod tests {
    use super::order;

    #[test]
    fn gpukind_order() {
        let names = [
            "gfx12-generic",
            "gfx1010",
            "gfx90a",
            "gfx9-4-generic",
            "gfx940",
            "gfx909",
            "gfx9-generic",
            "gfx600",
            "gfx10-1-generic",
        ];
        let mut sorted = names.to_vec();
        sorted.sort_by_key(|n| order(n).unwrap());
        assert_eq!(
            sorted,
            [
                "gfx600",
                "gfx909",
                "gfx90a",
                "gfx940",
                "gfx1010",
                "gfx9-generic",
                "gfx9-4-generic",
                "gfx10-1-generic",
                "gfx12-generic",
            ]
        );
        assert!(order("fiji").is_err());
        assert!(order("gfx9-x-generic").is_err());
    }
}
