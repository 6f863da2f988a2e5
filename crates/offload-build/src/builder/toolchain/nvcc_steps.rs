//! An nvcc host-code compile as the steps nvcc prints with `--dryrun`, grouped into the
//! chains that can run at once: this file plans them (spells the commands); the jobs stage
//! runs each step as a node of the build's job graph.
//!
//! `nvcc -c` runs one chain: the host side's preprocessing and `cudafe++`, then each
//! architecture's preprocessing, `cicc` and `ptxas` (`--threads` runs the architectures at
//! once), then `fatbinary` and the host compiler on the stub that includes the fat binary.
//! The architectures wait for `cudafe++` only for the module ID file it writes, which names
//! the source and is the same file each `cicc` writes itself when asked
//! (`--gen_module_id_file`, as in a device-only `nvcc -cubin`). So the host side and every
//! architecture can run at once, and only `fatbinary` and the host compile wait for all of
//! them: after an edit of one source, its compile takes about 0.8 of nvcc's time on 2 cores
//! (`benches/cuda_host_code.sh`), and the steps of many sources fill the cores and the memory
//! as the job graph orders them (a heavy source's `cicc` beside another's `ptxas`).
//!
//! The module ID is the same in every process for most sources (it names the source and its
//! first kernel), but not for sources whose kernels are all templates or internal (CUTLASS
//! kernels: the ID then ends with a process ID): then the steps that read another's ID run
//! again reading the first architecture's: `cudafe++` ([`Plan::fix_host_id`], a few seconds
//! beside that architecture's `ptxas`) and the other architectures' `cicc`
//! ([`Plan::fix_device_ids`]), so that no device code of a one-architecture build is compiled
//! twice.
//!
//! The steps are nvcc's own, printed by one `nvcc --dryrun` (with `--keep-dir`, so their
//! files are the job's and keep their names) and run through `sh -c` as nvcc runs them, with
//! the variables nvcc sets. What changes:
//! - each `cicc` writes its own module ID file (see above);
//! - the depfile: each preprocessing step writes one (`-MD -MF`, in the same pass), and the
//!   job's depfile is all of them (nvcc's `-MD` names what its host preprocessing read);
//! - a step's standard output goes with its standard error (nvcc prints both).
//!
//! Anything unexpected (a line that is not a step or a variable, a step that reads the files
//! of two chains, no `fatbinary`) makes no plan: nvcc runs as before. The object is the one
//! `nvcc -c --keep` writes, byte for byte (its file symbol names the kept file instead of
//! nvcc's `tmpxft_<pid>_…` temporary one).

use std::collections::HashMap;
use std::ffi::OsString;
use std::path::Path;

use crate::builder::command::Command;

/// One step as nvcc would run it (`sh -c <line>`), with its place in nvcc's order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Step {
    /// Its position in what nvcc printed: the steps' output is printed in that order.
    pub(crate) index: usize,
    /// The shell line.
    pub(crate) line: String,
}

impl Step {
    /// What the step runs, for the memory it is expected to need and the class of steps it
    /// learns that from ([`crate::builder::graph::Node::class`]).
    pub(crate) fn kind(&self) -> StepKind {
        match program(&self.line) {
            Some("cicc") => StepKind::Cicc,
            Some("ptxas") => StepKind::Ptxas,
            Some("cudafe++") => StepKind::Cudafe,
            Some("fatbinary") => StepKind::Fatbinary,
            _ if self.line.split(' ').any(|w| w == "-E") => StepKind::Preprocess,
            _ => StepKind::HostCompile,
        }
    }
}

/// What one of nvcc's steps runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum StepKind {
    /// The host compiler's preprocessing (`-E`).
    Preprocess,
    /// The host side's front end.
    Cudafe,
    /// The device front end and optimizer: the heaviest step.
    Cicc,
    /// PTX to a cubin.
    Ptxas,
    /// The fat binary.
    Fatbinary,
    /// The host compiler on the stub.
    HostCompile,
}

impl StepKind {
    /// How long a step of this kind is taken to run, in milliseconds, before any was
    /// measured: what orders a cold build's steps (`cicc` by far the longest, then `ptxas`).
    pub(crate) fn default_ms(self) -> u64 {
        match self {
            StepKind::Cicc => 10_000,
            StepKind::Ptxas => 4_000,
            StepKind::Cudafe | StepKind::HostCompile => 1_000,
            StepKind::Preprocess => 500,
            StepKind::Fatbinary => 100,
        }
    }

    /// How long a whole compile's steps are taken to run, before any was measured: what the
    /// node that asks nvcc for them stands for until they are known (one architecture).
    pub(crate) fn default_job_ms() -> u64 {
        [
            StepKind::Preprocess,
            StepKind::Cicc,
            StepKind::Ptxas,
            StepKind::Fatbinary,
            StepKind::HostCompile,
        ]
        .iter()
        .map(|k| k.default_ms())
        .sum()
    }

    /// What a step of this kind is expected to need, before any was measured.
    pub(crate) fn default_need(self) -> u64 {
        use crate::builder::memory::default;
        match self {
            StepKind::Cicc => default::NVCC,
            StepKind::Cudafe | StepKind::Ptxas | StepKind::HostCompile => default::NVCC_STEP,
            StepKind::Preprocess | StepKind::Fatbinary => default::LIGHT,
        }
    }
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
    /// Each module ID a `cicc` writes instead of reading ([`OwnId`]), in chain order.
    pub(crate) module_ids: Vec<OwnId>,
    /// The depfiles of the preprocessing steps.
    pub(crate) depfiles: Vec<String>,
}

impl Plan {
    /// The step of the first architecture's `cicc`, whose module ID every step is to use:
    /// its chain and place in it.
    pub(crate) fn first_id(&self) -> Option<(usize, usize)> {
        self.module_ids.first().map(|m| (m.chain, m.at))
    }

    /// The host side's steps to run again once it and the first architecture's `cicc` ran,
    /// so that they used that `cicc`'s module ID: `cudafe++` (and what follows it in its
    /// chain) reading it, when the ID `cudafe++` wrote differs; none when they agree (the ID
    /// names the source and its first kernel). `read`: the content of a file of the plan,
    /// by its name as printed; `None` when one cannot be read.
    pub(crate) fn fix_host_id(&self, read: impl Fn(&str) -> Option<Vec<u8>>) -> Option<Vec<Step>> {
        let first = self.module_ids.first()?;
        if read(&first.theirs)? == read(&first.own)? {
            return Some(Vec::new());
        }
        let writes = format!("{ID_GEN}{ID_NAME}{}\"", first.theirs);
        let (chain, at) = (self.chains.iter())
            .find_map(|c| Some((c, c.iter().position(|s| s.line.contains(&writes))?)))?;
        let mut cudafe = chain[at].clone();
        cudafe.line = reading(&cudafe.line, &first.theirs, &first.own);
        Some(
            std::iter::once(cudafe)
                .chain(chain[at + 1..].iter().cloned())
                .collect(),
        )
    }

    /// The other architectures' steps to run again once every chain ran, so that they used
    /// the first architecture's module ID: each `cicc` whose ID differs (and the steps after
    /// it) reading it. As [`Plan::fix_host_id`].
    pub(crate) fn fix_device_ids(
        &self,
        read: impl Fn(&str) -> Option<Vec<u8>>,
    ) -> Option<Vec<Step>> {
        let first = self.module_ids.first()?;
        let want = read(&first.own)?;
        let mut again = Vec::new();
        for m in &self.module_ids[1..] {
            if read(&m.own)? != want {
                let chain = self.chains.get(m.chain)?;
                let mut cicc = chain.get(m.at)?.clone();
                cicc.line = reading(&m.reading, &m.theirs, &first.own);
                again.push(cicc);
                again.extend(chain[m.at + 1..].iter().cloned());
            }
        }
        Some(again)
    }
}

/// A module ID file a `cicc` writes itself instead of reading the one `cudafe++` writes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct OwnId {
    /// The file it writes.
    pub(crate) own: String,
    /// The file `cudafe++` writes, which nvcc's `cicc` reads.
    pub(crate) theirs: String,
    /// The chain of that `cicc`, and its place in the chain.
    pub(crate) chain: usize,
    pub(crate) at: usize,
    /// Its line as nvcc printed it (reading `theirs`).
    pub(crate) reading: String,
}

/// Options under which nvcc's printed steps are not the whole compile (it keeps its files
/// elsewhere, times them or stops early). `--verbose` is not one: it only prints the steps,
/// which builds show only when they fail (cudaforge passes it).
const NOT_WITH: [&str; 13] = [
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
    "--dependency-output",
    "--generate-dependencies",
    "-M",
];

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
    let (env, lines) = steps_and_env(printed)?;
    let tail_at = lines.iter().position(|l| program(l) == Some("fatbinary"))?;
    let mut module_ids = Vec::new();
    let mut depfiles = Vec::new();
    let mut chains: Vec<Vec<Step>> = Vec::new();
    // Each file of `keep` belongs to the chain of the step that names it first (its writer).
    let mut owner: HashMap<String, usize> = HashMap::new();
    for (index, line) in lines[..tail_at].iter().enumerate() {
        let mut line = match own_module_id(line, index, &lines[..index])? {
            Some((own, theirs)) => {
                let writing = writing_own(line, &theirs, &own);
                module_ids.push(OwnId {
                    own,
                    theirs,
                    chain: usize::MAX,
                    at: 0,
                    reading: line.to_string(),
                });
                writing
            }
            None => line.to_string(),
        };
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
    for m in &mut module_ids {
        let writes = format!("{ID_NAME}{}\"", m.own);
        for (c, chain) in chains.iter().enumerate() {
            if let Some(at) = chain.iter().position(|s| s.line.contains(&writes)) {
                (m.chain, m.at) = (c, at);
            }
        }
    }
    Some(Plan {
        env,
        chains,
        tail,
        module_ids,
        depfiles,
    })
}

/// The variables nvcc sets and the steps, of what `--dryrun` printed; `None` when it printed
/// anything else.
#[allow(clippy::type_complexity)]
fn steps_and_env(printed: &str) -> Option<(Vec<(OsString, OsString)>, Vec<String>)> {
    let mut env = Vec::new();
    let mut lines = Vec::new();
    for l in printed.lines().filter(|l| !l.trim().is_empty()) {
        let rest = l.strip_prefix("#$ ")?;
        match assignment(rest) {
            Some((name, value)) => env.push((name.into(), value.into())),
            None => lines.push(strip_redirect(rest).to_string()),
        }
    }
    Some((env, lines))
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

const ID_NAME: &str = "--module_id_file_name \"";
const ID_GEN: &str = "--gen_module_id_file ";

/// The module ID file `line` reads (`--module_id_file_name "X"` without
/// `--gen_module_id_file`) and the one it would write instead (`X.<index>`): `Some(None)` when
/// it reads none; `None` when it reads one that no earlier step writes.
fn own_module_id(line: &str, index: usize, earlier: &[String]) -> Option<Option<(String, String)>> {
    let Some(at) = line.find(ID_NAME) else {
        return Some(None);
    };
    if line[..at].ends_with(ID_GEN) {
        return Some(None);
    }
    let start = at + ID_NAME.len();
    let file = &line[start..start + line[start..].find('"')?];
    let written = format!("{ID_GEN}{ID_NAME}{file}\"");
    if !earlier.iter().any(|l| l.contains(&written)) {
        return None;
    }
    Some(Some((format!("{file}.{index}"), file.to_string())))
}

/// `line`, which reads the module ID file `from`, writing `to` instead.
fn writing_own(line: &str, from: &str, to: &str) -> String {
    line.replacen(
        &format!("{ID_NAME}{from}\""),
        &format!("{ID_GEN}{ID_NAME}{to}\""),
        1,
    )
}

/// `line`, which reads or writes the module ID file `from`, reading `to` instead.
fn reading(line: &str, from: &str, to: &str) -> String {
    let read = format!("{ID_NAME}{to}\"");
    let gen_from = format!("{ID_GEN}{ID_NAME}{from}\"");
    if line.contains(&gen_from) {
        return line.replacen(&gen_from, &read, 1);
    }
    line.replacen(&format!("{ID_NAME}{from}\""), &read, 1)
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
        let ids: Vec<(&str, &str, usize, usize)> = (p.module_ids.iter())
            .map(|m| (m.own.as_str(), m.theirs.as_str(), m.chain, m.at))
            .collect();
        assert_eq!(
            ids,
            [
                ("K/k.module_id.4", "K/k.module_id", 1, 1),
                ("K/k.module_id.5", "K/k.module_id", 2, 1)
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
        let mut kept = c.clone();
        kept.add_arg("--keep-dir=/x");
        assert!(dryrun(&kept, Path::new("/j")).is_none());
    }

    #[test]
    fn steps_that_read_another_module_id_run_again_reading_the_first_architectures() {
        let p = plan(PRINTED, "K").unwrap();
        // All agree: nothing again.
        let same = |_: &str| Some(b"_id_k_cu__Z1kPf".to_vec());
        assert_eq!(p.fix_host_id(same), Some(Vec::new()));
        assert_eq!(p.fix_device_ids(same), Some(Vec::new()));
        assert_eq!(p.first_id(), Some((1, 1)));
        // An ID with a process ID in it (CUTLASS kernels): cudafe++, and the second
        // architecture's cicc and ptxas, again, reading the first's.
        let per_process = |f: &str| Some(f.as_bytes().to_vec());
        let host = p.fix_host_id(per_process).unwrap();
        assert_eq!(indices(&host), [3]);
        let cudafe = &host[0].line;
        assert!(cudafe.contains(" --module_id_file_name \"K/k.module_id.4\" --simt-only"));
        assert!(!cudafe.contains("--gen_module_id_file"));
        let device = p.fix_device_ids(per_process).unwrap();
        assert_eq!(indices(&device), [5, 7]);
        let cicc = &device[0].line;
        assert!(cicc.contains(" -tused --module_id_file_name \"K/k.module_id.4\" --gen_c"));
        assert!(!cicc.contains("--gen_module_id_file"));
        assert_eq!(p.fix_host_id(|_| None), None);
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
