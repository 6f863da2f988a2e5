//! An nvcc host-code compile run as the steps nvcc prints with `--dryrun`, its independent
//! chains at once.
//!
//! `nvcc -c` runs one chain: the host side's preprocessing and `cudafe++`, then each
//! architecture's preprocessing, `cicc` and `ptxas` (`--threads` runs the architectures at
//! once), then `fatbinary` and the host compiler on the stub that includes the fat binary.
//! The architectures wait for `cudafe++` only for the module ID file it writes, which names
//! the source and is the same file each `cicc` writes itself when asked
//! (`--gen_module_id_file`, as in a device-only `nvcc -cubin`). So the host side and every
//! architecture can run at once, and only `fatbinary` and the host compile wait for all of
//! them: after an edit of one source, its compile takes about 0.8 of nvcc's time on 2 cores
//! (`benches/cuda_host_code.sh`).
//!
//! A compile given one thread (a build of more sources than cores) runs its chains one after
//! another, as nvcc does, and on any slot the pool lends it once no other source waits to
//! start ([`crate::builder::run::pool::lend`]). It hands its job slot on before `fatbinary`
//! and the host compile ([`crate::builder::run::pool::yield_slot`]): the sources still to
//! start take it first. So the build does not end with one source's steps running alone
//! while a core idles, as it does when each source is one nvcc.
//!
//! The steps are nvcc's own, printed by one `nvcc --dryrun` (with `--keep-dir`, so their
//! files are the job's and keep their names) and run through `sh -c` as nvcc runs them, with
//! the variables nvcc sets. What changes:
//! - each `cicc` but the first writes its own module ID file; after the chains, each must
//!   equal the one `cudafe++` wrote, or nvcc compiles the source itself;
//! - the depfile: each preprocessing step writes one (`-MD -MF`, in the same pass), and the
//!   job's depfile is all of them (nvcc's `-MD` names what its host preprocessing read);
//! - a step's standard output goes with its standard error (nvcc prints both).
//!
//! Anything unexpected (a line that is not a step or a variable, a step that reads the files
//! of two chains, no `fatbinary`) makes no plan: nvcc runs as before. The object is the one
//! `nvcc -c --keep` writes, byte for byte (its file symbol names the kept file instead of
//! nvcc's `tmpxft_<pid>_…` temporary one).

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::ffi::OsString;
use std::path::Path;
use std::sync::{Mutex, mpsc};

use crate::builder::command::Command;
use crate::builder::error::Error;
use crate::builder::run::pool;

/// One step as nvcc would run it (`sh -c <line>`), with its place in nvcc's order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Step {
    /// Its position in what nvcc printed: the steps' output is printed in that order.
    pub(crate) index: usize,
    /// The shell line.
    pub(crate) line: String,
}

/// nvcc's steps for one compile, grouped.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Plan {
    /// The variables nvcc sets for its steps.
    pub(crate) env: Vec<(OsString, OsString)>,
    /// The chains that may run at once: the host side first.
    pub(crate) chains: Vec<Vec<Step>>,
    /// What runs after all of them, in order (`fatbinary`, the host compile).
    pub(crate) tail: Vec<Step>,
    /// Each module ID file a `cicc` writes instead of reading, with the one it stands for.
    pub(crate) module_ids: Vec<(String, String)>,
    /// The depfiles of the preprocessing steps.
    pub(crate) depfiles: Vec<String>,
    /// The files of the chains that the tail reads (the host compile's `.cudafe1.cpp`, the
    /// device code): their size tells how long the tail takes.
    pub(crate) tail_inputs: Vec<String>,
}

/// Options under which nvcc's printed steps are not the whole compile (it prints them
/// itself, keeps its files elsewhere, times them or stops early).
const NOT_WITH: [&str; 15] = [
    "--dryrun",
    "-dryrun",
    "--keep",
    "-keep",
    "--keep-dir",
    "-keep-dir",
    "--save-temps",
    "-save-temps",
    "--time",
    "-time",
    "--verbose",
    "-v",
    "--dependency-output",
    "--generate-dependencies",
    "-M",
];

/// The threads an nvcc host-code compile was given (`--threads=N`, [`CompileJob::threads`],
/// or the user's own `-t N`): `Some` when more than one, the case where all its chains start
/// at once (with one, they run one after another, and on the slots the pool lends).
///
/// [`CompileJob::threads`]: crate::builder::job::CompileJob::threads
pub(crate) fn threads(cmd: &Command) -> Option<usize> {
    let args: Vec<&str> = cmd.args().iter().filter_map(|a| a.to_str()).collect();
    // `--threads=N`, `-t=N`, `-tN`, `--threads N`, `-t N`: the last one counts, as in nvcc.
    let n = (args.iter().enumerate())
        .filter_map(|(i, a)| {
            let value = match a.strip_prefix("--threads").or_else(|| a.strip_prefix("-t")) {
                Some("") => args.get(i + 1).copied(),
                Some(rest) => Some(rest.strip_prefix('=').unwrap_or(rest)),
                None => None,
            };
            value?.parse::<usize>().ok()
        })
        .next_back()?;
    (n > 1).then_some(n)
}

/// The `nvcc --dryrun` of `cmd` (a host-code compile writing its depfile with `-MD -MF`)
/// with its files kept in `keep`; `None` when an option of the compile rules it out.
pub(crate) fn dryrun(cmd: &Command, keep: &Path) -> Option<Command> {
    let mut ask = cmd.clone();
    ask.args.clear();
    ask.add_arg("--dryrun")
        .add_arg("--keep")
        .add_arg("--keep-dir")
        .add_arg(keep);
    let mut args = cmd.args().iter();
    while let Some(a) = args.next() {
        match a.to_str()? {
            "-MD" => continue,
            "-MF" => {
                args.next();
                continue;
            }
            s if NOT_WITH
                .iter()
                .any(|n| s == *n || s.starts_with(&format!("{n}="))) =>
            {
                return None;
            }
            _ => {
                ask.add_arg(a);
            }
        }
    }
    Some(ask)
}

/// The plan of what `nvcc --dryrun` printed, its files kept in `keep`; `None` when it
/// printed anything but steps and variables, or the steps are not of the shape above.
pub(crate) fn plan(printed: &str, keep: &str) -> Option<Plan> {
    if keep.contains(['"', '$', '`', '\\', ' ', '\'']) {
        return None;
    }
    let mut env = Vec::new();
    let mut lines = Vec::new();
    for l in printed.lines().filter(|l| !l.trim().is_empty()) {
        let rest = l.strip_prefix("#$ ")?;
        match assignment(rest) {
            Some((name, value)) => env.push((name.into(), value.into())),
            None => lines.push(strip_redirect(rest).to_string()),
        }
    }
    let tail_at = lines.iter().position(|l| program(l) == Some("fatbinary"))?;
    let mut module_ids = Vec::new();
    let mut depfiles = Vec::new();
    let mut chains: Vec<Vec<Step>> = Vec::new();
    // Each file of `keep` belongs to the chain of the step that names it first (its writer).
    let mut owner: HashMap<String, usize> = HashMap::new();
    for (index, line) in lines[..tail_at].iter().enumerate() {
        let mut line = own_module_id(line, index, &lines[..index], &mut module_ids)?;
        if line.split(' ').any(|w| w == "-E") {
            let dep = format!("{keep}/offload-build-pp{index}.d");
            line = format!("{line} -MD -MF \"{dep}\"");
            depfiles.push(dep);
        }
        let files = files_in(&line, keep);
        let mut owners: Vec<usize> = files.iter().filter_map(|f| owner.get(f)).copied().collect();
        owners.dedup();
        let chain = match owners[..] {
            [] => {
                chains.push(Vec::new());
                chains.len() - 1
            }
            [c] => c,
            _ => return None,
        };
        for f in files {
            owner.entry(f).or_insert(chain);
        }
        chains[chain].push(Step { index, line });
    }
    // Each chain starts with a preprocessing step (one that names no file written before).
    let starts_with_pp = |c: &Vec<Step>| c[0].line.split(' ').any(|w| w == "-E");
    if chains.len() < 2 || module_ids.is_empty() || !chains.iter().all(starts_with_pp) {
        return None;
    }
    // The host side (the chain with `cudafe++`) first: it is the longest.
    chains.sort_by_key(|c| !c.iter().any(|s| program(&s.line) == Some("cudafe++")));
    let tail: Vec<Step> = (tail_at..lines.len())
        .map(|index| Step {
            index,
            line: lines[index].clone(),
        })
        .collect();
    let mut tail_inputs: Vec<String> = (tail.iter())
        .flat_map(|s| files_in(&s.line, keep))
        .filter(|f| owner.contains_key(f))
        .collect();
    let mut seen = std::collections::HashSet::new();
    tail_inputs.retain(|f| seen.insert(f.clone()));
    Some(Plan {
        env,
        chains,
        tail,
        module_ids,
        depfiles,
        tail_inputs,
    })
}

/// `NAME=value` of a variable nvcc sets for its steps.
fn assignment(line: &str) -> Option<(&str, &str)> {
    let (name, value) = line.split_once('=')?;
    let ident = !name.is_empty()
        && !name.starts_with(|c: char| c.is_ascii_digit())
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    ident.then_some((name, value))
}

/// The step without the redirection of its output into nvcc's temporary files
/// (` > <tmp>_stdout 2><tmp>_stderr`).
fn strip_redirect(line: &str) -> &str {
    let Some(at) = line.rfind(" > ") else {
        return line;
    };
    let mut words = line[at + 3..].split(' ');
    match (words.next(), words.next(), words.next()) {
        (Some(out), Some(err), None) if out.ends_with("_stdout") && err.starts_with("2>") => {
            line[..at].trim_end()
        }
        _ => line,
    }
}

/// The file name of the step's program (`"$CICC_PATH/cicc"` is `cicc`).
fn program(line: &str) -> Option<&str> {
    let first = match line.strip_prefix('"') {
        Some(quoted) => quoted.split('"').next()?,
        None => line.split(' ').next()?,
    };
    first.rsplit('/').next()
}

/// `line` with a module ID file of its own when it reads one that an earlier step writes
/// (`--module_id_file_name "X"` without `--gen_module_id_file`); `None` when it reads one
/// that no earlier step writes.
fn own_module_id(
    line: &str,
    index: usize,
    earlier: &[String],
    module_ids: &mut Vec<(String, String)>,
) -> Option<String> {
    const NAME: &str = "--module_id_file_name \"";
    const GEN: &str = "--gen_module_id_file ";
    let Some(at) = line.find(NAME) else {
        return Some(line.to_string());
    };
    if line[..at].ends_with(GEN) {
        return Some(line.to_string());
    }
    let start = at + NAME.len();
    let file = &line[start..start + line[start..].find('"')?];
    let written = format!("{GEN}{NAME}{file}\"");
    if !earlier.iter().any(|l| l.contains(&written)) {
        return None;
    }
    let own = format!("{file}.{index}");
    module_ids.push((own.clone(), file.to_string()));
    Some(format!(
        "{}{GEN}{NAME}{own}{}",
        &line[..at],
        &line[start + file.len()..]
    ))
}

/// The files of `keep` that `line` names, in order (`"<keep>/x"`, `file=<keep>/x`).
fn files_in(line: &str, keep: &str) -> Vec<String> {
    let prefix = format!("{keep}/");
    let mut files = Vec::new();
    let mut rest = line;
    while let Some(at) = rest.find(&prefix) {
        let name = &rest[at..];
        let end = name.find(['"', ' ', ',']).unwrap_or(name.len());
        files.push(name[..end].to_string());
        rest = &name[end..];
    }
    files
}

/// Runs `plan`: its chains on up to `workers` threads (with one, also on the slots the pool
/// lends, [`pool::lend`]), each step by `step` (which stops at the first failure), then, once
/// the pool's jobs still to start had the slot ([`pool::yield_slot`]), the tail in order;
/// what the steps printed, in nvcc's order.
/// `Ok(None)` when a module ID file another `cicc` wrote differs from `cudafe++`'s: then the
/// compile is nvcc's to run. `depfile`: where the preprocessing steps' depfiles are joined.
pub(crate) fn run(
    plan: &Plan,
    workers: usize,
    dir: Option<&Path>,
    depfile: &Path,
    step: impl Fn(&Step) -> Result<Vec<String>, Error> + Sync,
) -> Result<Option<Vec<String>>, Error> {
    let mut printed = run_chains(plan, workers, &step)?;
    let at = |f: &str| match dir {
        Some(d) => d.join(f),
        None => Path::new(f).to_path_buf(),
    };
    let same = |(own, theirs): &(String, String)| {
        let a = std::fs::read(at(own));
        a.is_ok() && a.ok() == std::fs::read(at(theirs)).ok()
    };
    if !plan.module_ids.iter().all(same) {
        return Ok(None);
    }
    // Nothing waits for the host compile but the build's end: the jobs still to start take
    // the slot first, then the longest tails (by what they read), so that the build does not
    // end with one host compile running alone.
    let weight = (plan.tail_inputs.iter())
        .filter_map(|f| std::fs::metadata(at(f)).ok())
        .map(|m| m.len())
        .sum();
    if !pool::yield_slot(weight) {
        return Err(Error::Stopped); // another job failed meanwhile
    }
    for st in &plan.tail {
        printed.insert(st.index, step(st)?);
    }
    // Without one of them, the job's dependency pass writes the depfile.
    let deps: Option<Vec<Vec<u8>>> = plan
        .depfiles
        .iter()
        .map(|d| std::fs::read(at(d)).ok())
        .collect();
    if let Some(deps) = deps {
        let _ = std::fs::write(depfile, deps.concat());
    }
    Ok(Some(printed.into_values().flatten().collect()))
}

/// `plan`'s chains run on up to `workers` threads (with one, also on the slots the pool
/// lends): what each step printed, by its index; the first error.
fn run_chains(
    plan: &Plan,
    workers: usize,
    step: &(impl Fn(&Step) -> Result<Vec<String>, Error> + Sync),
) -> Result<BTreeMap<usize, Vec<String>>, Error> {
    let queue = Mutex::new(plan.chains.iter().collect::<VecDeque<_>>());
    let printed = Mutex::new(BTreeMap::new());
    let failed = Mutex::new(None);
    let work = || {
        loop {
            // Not in a `while let`, whose guard would be held through the chain.
            let Some(chain) = lock(&queue).pop_front() else {
                return;
            };
            for st in chain {
                if lock(&failed).is_some() {
                    return;
                }
                match step(st) {
                    Ok(p) => {
                        lock(&printed).insert(st.index, p);
                    }
                    Err(e) => {
                        lock(&failed).get_or_insert((st.index, e));
                        return;
                    }
                }
            }
        }
    };
    std::thread::scope(|s| {
        for _ in 0..workers.clamp(1, plan.chains.len()) {
            s.spawn(work);
        }
        // One worker: the chains not started yet also run on the slots the pool lends.
        let more = plan.chains.len() - 1;
        let Some(loans) = (workers <= 1 && more > 0)
            .then(|| pool::lend(more))
            .flatten()
        else {
            return;
        };
        while !lock(&queue).is_empty() && lock(&failed).is_none() {
            match loans.recv_timeout(std::time::Duration::from_millis(20)) {
                Ok(loan) => {
                    s.spawn(move || {
                        work();
                        drop(loan);
                    });
                }
                Err(mpsc::RecvTimeoutError::Timeout) => {}
                Err(mpsc::RecvTimeoutError::Disconnected) => break,
            }
        }
    });
    if let Some((_, e)) = failed.into_inner().unwrap_or_else(|e| e.into_inner()) {
        return Err(e);
    }
    Ok(printed.into_inner().unwrap_or_else(|e| e.into_inner()))
}

/// `m` locked, whether or not a thread panicked with it.
fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What CUDA 13.0's `nvcc --dryrun --keep --keep-dir K -c -gencode …80… -gencode …90…
    /// k.cu -o k.o` prints (paths shortened).
    const PRINTED: &str = r#"#$ _NVVM_BRANCH_=nvvm
#$ _SPACE_= 
#$ CICC_PATH=/cu/bin/../nvvm/bin
#$ PATH=/cu/bin/../nvvm/bin:/cu/bin:/usr/bin
#$ INCLUDES="-I/cu/bin/../include"  
#$ gcc -std=c++17 -D__CUDA_ARCH_LIST__=800,900 -E -x c++ -D__CUDACC__ -include "cuda_runtime.h" -m64 "k.cu" -o "K/k.cpp4.ii"  > /tmp/tmpxft_1-3_a_stdout 2>/tmp/tmpxft_1-3_a_stderr
#$ gcc -std=c++17 -D__CUDA_ARCH__=800 -D__CUDA_ARCH_LIST__=800,900 -E -x c++ -include "cuda_runtime.h" -m64 "k.cu" -o "K/k.compute_80.cpp1.ii"  > /tmp/tmpxft_1-3_b_stdout 2>/tmp/tmpxft_1-3_b_stderr
#$ gcc -std=c++17 -D__CUDA_ARCH__=900 -D__CUDA_ARCH_LIST__=800,900 -E -x c++ -include "cuda_runtime.h" -m64 "k.cu" -o "K/k.compute_90.cpp1.ii"  > /tmp/tmpxft_1-3_c_stdout 2>/tmp/tmpxft_1-3_c_stderr
#$ cudafe++ --c++17 --orig_src_file_name "k.cu" --gen_c_file_name "K/k.compute_90.cudafe1.cpp" --stub_file_name "k.compute_90.cudafe1.stub.c" --gen_module_id_file --module_id_file_name "K/k.module_id" --simt-only "K/k.cpp4.ii"  > /tmp/tmpxft_1-3_d_stdout 2>/tmp/tmpxft_1-3_d_stderr
#$ "$CICC_PATH/cicc" --c++17 -arch compute_80 -m64 --include_file_name "k.fatbin.c" -tused --module_id_file_name "K/k.module_id" --gen_c_file_name "K/k.compute_80.cudafe1.c" --stub_file_name "K/k.compute_80.cudafe1.stub.c" --gen_device_file_name "K/k.compute_80.cudafe1.gpu"  "K/k.compute_80.cpp1.ii" --simt-only -o "K/k.compute_80.ptx" > /tmp/tmpxft_1-3_e_stdout 2>/tmp/tmpxft_1-3_e_stderr
#$ "$CICC_PATH/cicc" --c++17 -arch compute_90 -m64 --include_file_name "k.fatbin.c" -tused --module_id_file_name "K/k.module_id" --gen_c_file_name "K/k.compute_90.cudafe1.c" --stub_file_name "K/k.compute_90.cudafe1.stub.c" --gen_device_file_name "K/k.compute_90.cudafe1.gpu"  "K/k.compute_90.cpp1.ii" --simt-only -o "K/k.compute_90.ptx" > /tmp/tmpxft_1-3_f_stdout 2>/tmp/tmpxft_1-3_f_stderr
#$ ptxas -arch=sm_80 -m64  "K/k.compute_80.ptx"  -o "K/k.compute_80.sm_80.cubin"  > /tmp/tmpxft_1-3_g_stdout 2>/tmp/tmpxft_1-3_g_stderr
#$ ptxas -arch=sm_90 -m64  "K/k.compute_90.ptx"  -o "K/k.compute_90.sm_90.cubin"  > /tmp/tmpxft_1-3_h_stdout 2>/tmp/tmpxft_1-3_h_stderr
#$ fatbinary --create="K/k.fatbin" -64 "--image3=kind=elf,sm=80,file=K/k.compute_80.sm_80.cubin" "--image3=kind=ptx,sm=80,file=K/k.compute_80.ptx" "--image3=kind=elf,sm=90,file=K/k.compute_90.sm_90.cubin" "--image3=kind=ptx,sm=90,file=K/k.compute_90.ptx" --embedded-fatbin="K/k.fatbin.c"  > /tmp/tmpxft_1-3_i_stdout 2>/tmp/tmpxft_1-3_i_stderr
#$ gcc -std=c++17 -D__CUDA_ARCH__=900 -c -x c++ -Wno-psabi -m64 "K/k.compute_90.cudafe1.cpp" -o "k.o"  > /tmp/tmpxft_1-3_j_stdout 2>/tmp/tmpxft_1-3_j_stderr
"#;

    fn indices(c: &[Step]) -> Vec<usize> {
        c.iter().map(|s| s.index).collect()
    }

    #[test]
    fn the_host_side_and_each_architecture_are_chains_of_their_own() {
        let p = plan(PRINTED, "K").unwrap();
        let chains: Vec<Vec<usize>> = p.chains.iter().map(|c| indices(c)).collect();
        // Host preprocessing then cudafe++; each architecture's preprocessing, cicc, ptxas.
        assert_eq!(chains, [vec![0, 3], vec![1, 4, 6], vec![2, 5, 7]]);
        assert_eq!(indices(&p.tail), [8, 9]);
        assert_eq!(
            p.tail_inputs,
            [
                "K/k.compute_80.sm_80.cubin",
                "K/k.compute_80.ptx",
                "K/k.compute_90.sm_90.cubin",
                "K/k.compute_90.ptx",
                "K/k.compute_90.cudafe1.cpp"
            ]
        );
        assert_eq!(p.env.len(), 5);
        assert_eq!(p.env[1], ("_SPACE_".into(), " ".into()));
        assert!(
            p.chains
                .iter()
                .flatten()
                .chain(&p.tail)
                .all(|s| !s.line.contains("tmpxft"))
        );
    }

    #[test]
    fn each_cicc_writes_its_own_module_id_and_each_preprocessing_a_depfile() {
        let p = plan(PRINTED, "K").unwrap();
        assert_eq!(
            p.module_ids,
            [
                ("K/k.module_id.4".to_string(), "K/k.module_id".to_string()),
                ("K/k.module_id.5".to_string(), "K/k.module_id".to_string())
            ]
        );
        let cicc = &p.chains[1][1].line;
        assert!(cicc.contains(" -tused --gen_module_id_file --module_id_file_name \"K/k.module_id.4\" --gen_c_file_name"), "{cicc}");
        assert_eq!(p.depfiles.len(), 3);
        assert!(
            p.chains[0][0]
                .line
                .ends_with(" -MD -MF \"K/offload-build-pp0.d\"")
        );
    }

    #[test]
    fn anything_unexpected_makes_no_plan() {
        // A warning of nvcc's.
        let warned = format!("nvcc warning : something\n{PRINTED}");
        assert_eq!(plan(&warned, "K"), None);
        // No fat binary (a device-only compile).
        let no_fatbin: String = PRINTED
            .lines()
            .filter(|l| !l.contains("fatbinary"))
            .map(|l| format!("{l}\n"))
            .collect();
        assert_eq!(plan(&no_fatbin, "K"), None);
        // A step that reads two chains' files.
        let joined = PRINTED.replace(
            "\"K/k.compute_90.cpp1.ii\" --simt-only",
            "\"K/k.compute_90.cpp1.ii\" \"K/k.compute_80.ptx\" --simt-only",
        );
        assert_eq!(plan(&joined, "K"), None);
        // Files not found under the keep directory named.
        assert_eq!(plan(PRINTED, "L"), None);
        // A module ID that no step writes.
        let unwritten = PRINTED.replace("--gen_module_id_file ", "");
        assert_eq!(plan(&unwritten, "K"), None);
        // A keep directory the shell would read otherwise.
        assert_eq!(plan(&PRINTED.replace("K/", "K $x/"), "K $x"), None);
    }

    #[test]
    fn the_dryrun_keeps_the_files_and_leaves_the_depfile_to_the_steps() {
        let mut c = Command::new("nvcc");
        c.add_args([
            "-c",
            "--threads=2",
            "k.cu",
            "-o",
            "k.o",
            "-MD",
            "-MF",
            "k.d",
        ]);
        let ask = dryrun(&c, Path::new("/j/nvcc")).unwrap();
        let args: Vec<&str> = ask.args().iter().map(|a| a.to_str().unwrap()).collect();
        assert_eq!(
            args,
            [
                "--dryrun",
                "--keep",
                "--keep-dir",
                "/j/nvcc",
                "-c",
                "--threads=2",
                "k.cu",
                "-o",
                "k.o"
            ]
        );
        assert_eq!(threads(&c), Some(2));
        let mut kept = c.clone();
        kept.add_arg("--keep-dir=/x");
        assert!(dryrun(&kept, Path::new("/j")).is_none());
        let mut one = Command::new("nvcc");
        one.add_args(["-c", "--threads=1"]);
        assert_eq!(threads(&one), None);
        // The user's own spellings, the last one counting.
        for (args, n) in [
            (&["-t", "4"][..], Some(4)),
            (&["-t3"][..], Some(3)),
            (&["-t=5"][..], Some(5)),
            (&["--threads", "6"][..], Some(6)),
            (&["-t", "4", "--threads=1"][..], None),
            (&["-time", "x"][..], None),
        ] {
            let mut c = Command::new("nvcc");
            c.add_args(args.iter().copied());
            assert_eq!(threads(&c), n, "{args:?}");
        }
    }

    #[test]
    fn redirections_into_nvccs_temporary_files_are_dropped() {
        assert_eq!(
            strip_redirect("ptxas a  > /tmp/x_stdout 2>/tmp/x_stderr"),
            "ptxas a"
        );
        assert_eq!(strip_redirect("echo a > b"), "echo a > b");
        assert_eq!(program("\"$CICC_PATH/cicc\" --c++17"), Some("cicc"));
        assert_eq!(program("/usr/bin/gcc -E"), Some("gcc"));
    }
}
