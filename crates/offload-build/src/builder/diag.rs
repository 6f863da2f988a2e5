//! The compiler's diagnostics of successful jobs: what clang printed (its warnings), grouped
//! into diagnostics and deduplicated across architectures, so a warning in a source compiled
//! for seven architectures is shown once, with the seven names.
//!
//! A diagnostic is its header line (`k.hip:3:5: warning: ...`, `clang: warning: ...`) with the
//! `In file included from` lines before it and the indented source, caret and fix-it lines and
//! `note:`s after it. The per-compile summaries (`1 warning generated when compiling for
//! gfx90a.`) are left out: the architecture list says the same.

use crate::builder::command::Command;
use std::fmt;
use std::path::Path;

/// One distinct diagnostic of the device compiles, with the architectures whose compiles
/// printed it ([`Compiled::diagnostics`](crate::builder::Compiled::diagnostics)).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Diagnostic {
    /// The architectures, in build order.
    pub archs: Vec<String>,
    /// The compiler's text, one or more lines (no trailing newline).
    pub text: String,
}

impl Diagnostic {
    /// The lines as they are shown: the first prefixed with the architectures
    /// (`[gfx90a, gfx1100] k.hip:3:5: warning: unused variable 'x'`), the others unchanged.
    /// No line holds a newline, so each can be a `cargo:warning=` directive.
    pub fn lines(&self) -> Vec<String> {
        let mut out = Vec::new();
        for (i, l) in self.text.lines().enumerate() {
            if i == 0 {
                out.push(format!("[{}] {l}", self.archs.join(", ")));
            } else {
                out.push(l.to_string());
            }
        }
        out
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.lines().join("\n"))
    }
}

/// The lines of a job's standard error worth keeping: carriage returns and empty lines
/// dropped, and the driver's complaint about the depfile flags (`argument unused during
/// compilation: '-MF <depfile>'`, from compilers that ignore `-MD` for device-only compiles,
/// and the same of `-c`, which a CUDA compile to PTX carries for sccache) left out, since
/// those flags are this crate's, not the user's; and nvcc's `--verbose` lines (`#$ …`).
pub(crate) fn clean(stderr: &str, depfile: Option<&Path>) -> Vec<String> {
    let spurious = depfile.map(|d| {
        [
            format!("argument unused during compilation: '-MF {}'", d.display()),
            "argument unused during compilation: '-MD'".to_string(),
        ]
    });
    stderr
        .lines()
        .map(|l| l.trim_end_matches('\r'))
        .filter(|l| !l.trim().is_empty())
        // The `-c` a sccache-launched CUDA compile to PTX carries for sccache's sake.
        .filter(|l| !l.contains("argument unused during compilation: '-c'"))
        // nvcc's `--verbose` (`-v`) trace of the steps it runs (`#$ cicc …`): what cudaforge
        // passes, and shows only when the build fails (the log of a failed job keeps it).
        .filter(|l| !l.starts_with("#$ "))
        .filter(|l| {
            spurious
                .as_ref()
                .is_none_or(|s| !s.iter().any(|s| l.contains(s.as_str())))
        })
        .map(str::to_string)
        .collect()
}

/// `stderr` with the relative file names that start its lines (`k.hip:3:5: warning: …`,
/// `In file included from include/a.h:2:`) made absolute under `dir`, the directory the
/// compiler ran in with paths relative to it ([`crate::builder::command::Command::to_command`]): the
/// messages name the files as the user's build does.
pub(crate) fn absolute_names(stderr: &str, dir: &Path) -> String {
    let mut out = String::with_capacity(stderr.len());
    for line in stderr.split_inclusive('\n') {
        let (lead, rest) = match line.strip_prefix("In file included from ") {
            Some(rest) => ("In file included from ", rest),
            None => match line.strip_prefix("                 from ") {
                Some(rest) => ("                 from ", rest),
                None => ("", line),
            },
        };
        let name = rest.split(':').next().unwrap_or_default();
        let p = Path::new(name);
        if !name.is_empty() && p.is_relative() && !name.starts_with(' ') && dir.join(p).is_file() {
            out.push_str(lead);
            out.push_str(&dir.join(p).display().to_string());
            out.push_str(&rest[name.len()..]);
        } else {
            out.push_str(line);
        }
    }
    out
}

/// `1 warning generated.`, `2 warnings and 1 error generated when compiling for gfx90a.`
fn is_summary(l: &str) -> bool {
    l.starts_with(|c: char| c.is_ascii_digit())
        && (l.ends_with(" generated.") || l.contains(" generated when compiling for "))
}

fn is_header(l: &str) -> bool {
    !l.starts_with(char::is_whitespace)
        && [": warning: ", ": error: ", ": fatal error: ", ": remark: "]
            .iter()
            .any(|k| l.contains(k))
}

/// Groups a job's cleaned lines into diagnostics (see the [module docs](self)).
pub(crate) fn group(lines: &[String]) -> Vec<String> {
    let mut blocks: Vec<String> = Vec::new();
    let mut pending: Vec<&str> = Vec::new(); // `In file included from` lines
    let mut open = false;
    for l in lines {
        let l = l.as_str();
        if is_summary(l) {
            continue;
        }
        let included = l.starts_with("In file included from ")
            || (!pending.is_empty() && l.trim_start().starts_with("from "));
        if included {
            pending.push(l);
            open = false;
            continue;
        }
        let continuation =
            l.starts_with(char::is_whitespace) || (l.contains(": note: ") && pending.is_empty());
        if open && continuation && !is_header(l) {
            let last = blocks.last_mut().expect("an open block exists");
            last.push('\n');
            last.push_str(l);
            continue;
        }
        let mut block: Vec<&str> = std::mem::take(&mut pending);
        block.push(l);
        blocks.push(block.join("\n"));
        open = true;
    }
    for p in pending {
        blocks.push(p.to_string());
    }
    blocks
}

/// Whether a diagnostic is the driver's `argument unused during compilation: '<flag>'`.
fn is_unused_argument(block: &str) -> bool {
    let first = block.lines().next().unwrap_or_default();
    first.contains(": warning: argument unused during compilation: ")
        && !first.starts_with(char::is_whitespace)
}

/// Keeps a driver's unused-argument warning only where the one driver run of `hipcc -c` (or
/// `clang -x cuda -c`) would print it: that run gives each flag to its host and device
/// compiles and warns about a flag none of them used, where this build's compiles of a source
/// run apart and each warns about what it alone did not use (`-munsafe-fp-atomics` in the host
/// compile). `jobs`: each compile's source and diagnostics ([`group`]ed); a warning stays in a
/// job when every compile of its source printed it.
pub(crate) fn as_one_driver(jobs: &mut [(&Path, Vec<String>)]) {
    // Per job, per block: whether it goes (an unused-argument warning that some compile of
    // its source did not print).
    let dropped: Vec<Vec<bool>> = (jobs.iter())
        .map(|(source, blocks)| {
            (blocks.iter())
                .map(|b| {
                    is_unused_argument(b)
                        && !(jobs.iter())
                            .filter(|(s, _)| s == source)
                            .all(|(_, other)| other.contains(b))
                })
                .collect()
        })
        .collect();
    for ((_, blocks), dropped) in jobs.iter_mut().zip(dropped) {
        let mut dropped = dropped.into_iter();
        blocks.retain(|_| !dropped.next().unwrap_or(false));
    }
}

/// Merges the diagnostics of every job (in job order, each with its architecture) into
/// distinct diagnostics, each listing the architectures that printed it, in first-seen order.
pub(crate) fn merge<'a>(jobs: impl IntoIterator<Item = (&'a str, Vec<String>)>) -> Vec<Diagnostic> {
    let mut out: Vec<Diagnostic> = Vec::new();
    for (arch, blocks) in jobs {
        for text in blocks {
            match out.iter_mut().find(|d| d.text == text) {
                Some(d) => {
                    if !d.archs.iter().any(|a| a == arch) {
                        d.archs.push(arch.to_string());
                    }
                }
                None => out.push(Diagnostic {
                    archs: vec![arch.to_string()],
                    text,
                }),
            }
        }
    }
    out
}

/// What `cmd` printed on standard error, as the build keeps it: names made absolute against
/// its directory, then cleaned ([`clean`]).
pub(crate) fn printed_lines(stderr: &[u8], cmd: &Command, depfile: Option<&Path>) -> Vec<String> {
    let mut printed = String::from_utf8_lossy(stderr).into_owned();
    if let Some(dir) = &cmd.dir {
        printed = absolute_names(&printed, dir);
    }
    clean(&printed, depfile)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(t: &str) -> Vec<String> {
        clean(t, Some(Path::new("/o/k-gfx90a.d")))
    }

    #[test]
    fn groups_dedups_and_drops_the_depfile_complaint() {
        let a = "clang: warning: argument unused during compilation: '-MF /o/k-gfx90a.d' [-Wunused-command-line-argument]\n\
                 In file included from k.hip:1:\n\
                 ./h.h:2:7: warning: unused variable 'y' [-Wunused-variable]\n\
                 \x20   2 | int y;\n\
                 \x20     |     ^\n\
                 k.hip:3:5: warning: unused variable 'x' [-Wunused-variable]\r\n\
                 \x20   3 |   int x;\n\
                 \x20     |       ^\n\
                 2 warnings generated when compiling for gfx90a.\n";
        let g = group(&lines(a));
        assert_eq!(g.len(), 2, "{g:#?}");
        assert!(g[0].starts_with("In file included from k.hip:1:\n./h.h:2:7: warning"));
        assert_eq!(
            g[1],
            "k.hip:3:5: warning: unused variable 'x' [-Wunused-variable]\n    3 |   int x;\n      |       ^"
        );
        let b = a.replace("gfx90a", "gfx1100");
        let b = clean(&b, Some(Path::new("/o/k-gfx1100.d")));
        let m = merge([("gfx90a", g), ("gfx1100", group(&b))]);
        assert_eq!(m.len(), 2);
        assert_eq!(m[1].archs, ["gfx90a", "gfx1100"]);
        let shown = m[1].lines();
        assert_eq!(
            shown[0],
            "[gfx90a, gfx1100] k.hip:3:5: warning: unused variable 'x' [-Wunused-variable]"
        );
        assert!(shown.iter().all(|l| !l.contains('\n') && !l.contains('\r')));
        // The unused -MF line of another depfile is the user's business: kept.
        let other = clean(
            "clang: warning: argument unused during compilation: '-MF x.d'\n",
            Some(Path::new("/o/k-gfx90a.d")),
        );
        assert_eq!(other.len(), 1);
    }

    /// A flag one compile of a source used (`-munsafe-fp-atomics` in the device compiles)
    /// gives no warning from the others, as one `hipcc -c` gives none; a flag no compile of
    /// the source used keeps its warning; nvcc's `--verbose` lines are left out.
    #[test]
    fn unused_arguments_as_one_driver_would_print_them() {
        let unused = |f: &str| {
            format!(
                "clang: warning: argument unused during compilation: '{f}' [-Wunused-command-line-argument]"
            )
        };
        let host = lines(&format!(
            "{}\n{}\n#$ _NVVM_BRANCH_=nvvm\n#$ cicc --c++17 x.ii\n",
            unused("-munsafe-fp-atomics"),
            unused("-lfoo")
        ));
        assert_eq!(host.len(), 2, "{host:?}");
        let device = lines(&unused("-lfoo"));
        let (a, b) = (Path::new("a.hip"), Path::new("b.hip"));
        let mut jobs = vec![
            (a, group(&device)),
            (a, group(&device)),
            (a, group(&host)),
            // Another source whose device compiles did not run (no warning from them): its
            // host compile's warnings are its own, judged with its own compiles only.
            (b, group(&host)),
        ];
        as_one_driver(&mut jobs);
        assert_eq!(jobs[2].1, [unused("-lfoo")]);
        assert_eq!(jobs[0].1, [unused("-lfoo")]);
        assert_eq!(jobs[3].1.len(), 2);
    }
}
