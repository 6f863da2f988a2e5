//! Architectures chosen in the flags, the way a `cc` or `hipcc` user chooses them
//! (`-gencode arch=compute_80,code=sm_80`, `-arch=sm_90`, `--offload-arch=gfx90a`): read into
//! this crate's architecture names, and taken out of the flags, since every compile is given
//! its own architecture.

use crate::builder::env::Env;
use crate::builder::options::Language;
use std::ffi::OsString;

/// `HIPFLAGS` or `CUDAFLAGS`, split at white space: flags of every compile, which may choose
/// architectures too.
pub(crate) fn env_flags(env: &Env<'_>, lang: Language) -> Vec<OsString> {
    env.get(match lang {
        Language::Hip => "HIPFLAGS",
        Language::Cuda => "CUDAFLAGS",
    })
    .map(|v| v.split_whitespace().map(OsString::from).collect())
    .unwrap_or_default()
}

/// The architectures the flags choose, in this crate's names (`80-real`, `sm_90`,
/// `90-virtual`, `gfx90a:xnack+`), in the order given, and the flags that chose them as
/// written (for messages).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct ArchFlags {
    pub archs: Vec<String>,
    pub spelled: Vec<String>,
}

/// nvcc's flags that choose architectures: each takes its value joined (`-arch=sm_80`) or as
/// the next argument (`-gencode arch=…`).
const NVCC: &[&str] = &[
    "-gencode",
    "--generate-code",
    "-arch",
    "--gpu-architecture",
    "-code",
    "--gpu-code",
];
/// clang's (HIP and CUDA): the value joined only (`--offload-arch=gfx90a`).
const CLANG: &[&str] = &["--offload-arch", "--cuda-gpu-arch", "--amdgpu-target"];

/// One architecture-choosing flag of a list: where it is, how many arguments it takes (1 or
/// 2), its name and its value.
struct Found {
    at: usize,
    args: usize,
    name: &'static str,
    value: String,
}

/// The architecture-choosing flags of `flags`, in order.
fn split(flags: &[OsString], lang: Language) -> Vec<Found> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < flags.len() {
        let f = flags[i].to_string_lossy();
        let names = NVCC.iter().filter(|_| lang == Language::Cuda).chain(CLANG);
        let found = names.into_iter().find_map(|&name| {
            if let Some(v) = f.strip_prefix(name).and_then(|r| r.strip_prefix('=')) {
                Some((1, name, v.to_string()))
            } else if f == name && NVCC.contains(&name) && i + 1 < flags.len() {
                Some((2, name, flags[i + 1].to_string_lossy().into_owned()))
            } else {
                None
            }
        });
        match found {
            Some((args, name, value)) => {
                out.push(Found {
                    at: i,
                    args,
                    name,
                    value,
                });
                i += args;
            }
            None => i += 1,
        }
    }
    out
}

/// The flags without those that choose architectures ([`parse`]).
pub(crate) fn strip(flags: Vec<OsString>, lang: Language) -> Vec<OsString> {
    let found = split(&flags, lang);
    if found.is_empty() {
        return flags;
    }
    let mut drop = vec![false; flags.len()];
    for f in found {
        drop[f.at..f.at + f.args].fill(true);
    }
    (flags.into_iter().zip(drop))
        .filter_map(|(f, d)| (!d).then_some(f))
        .collect()
}

/// What a virtual architecture (`compute_80`, or `sm_80` where nvcc takes one) names: 80.
fn number(s: &str) -> Option<&str> {
    let n = s
        .strip_prefix("compute_")
        .or_else(|| s.strip_prefix("sm_"))?;
    (!n.is_empty() && n.bytes().all(|b| b.is_ascii_alphanumeric())).then_some(n)
}

/// The architectures read so far: per architecture number whether its cubin and its PTX are
/// wanted (first-seen order), and the names taken as they are (`gfx90a`, `native`).
#[derive(Default)]
struct Chosen {
    nv: Vec<(String, bool, bool)>,
    named: Vec<String>,
}

/// The error of a choice this crate cannot build as asked.
fn unsupported(what: &str, why: &str) -> String {
    format!("the flag {what} {why}; choose the architectures with Build::archs (`--archs`)")
}

impl Chosen {
    fn add(&mut self, n: &str, cubin: bool, ptx: bool) {
        match self.nv.iter_mut().find(|e| e.0 == n) {
            Some(e) => {
                e.1 |= cubin;
                e.2 |= ptx;
            }
            None => self.nv.push((n.to_string(), cubin, ptx)),
        }
    }

    /// The codes (`sm_80`, `compute_80`) built from virtual architecture `n`.
    fn codes(&mut self, what: &str, n: &str, codes: &[String]) -> Result<(), String> {
        for c in codes {
            match number(c) {
                Some(m) if m == n => self.add(n, c.starts_with("sm_"), c.starts_with("compute_")),
                _ => {
                    return Err(unsupported(
                        what,
                        &format!("builds {c} from compute_{n}, which this crate does not"),
                    ));
                }
            }
        }
        Ok(())
    }

    /// `-gencode arch=compute_80,code=[sm_80,compute_80]` (brackets and quotes taken off).
    fn gencode(&mut self, written: &str, value: &str) -> Result<(), String> {
        let (mut arch, mut code, mut in_code) = (None, Vec::new(), false);
        for part in value.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            if let Some(v) = part.strip_prefix("arch=") {
                arch = Some(v.to_string());
                in_code = false;
            } else if let Some(v) = part.strip_prefix("code=") {
                code.push(v.to_string());
                in_code = true;
            } else if in_code {
                code.push(part.to_string());
            } else {
                return Err(unsupported(written, "is not arch=…,code=…"));
            }
        }
        let arch = arch.ok_or_else(|| unsupported(written, "names no arch="))?;
        let n = number(&arch).ok_or_else(|| unsupported(written, "names no compute_NN"))?;
        if code.is_empty() {
            code = vec![format!("sm_{n}"), format!("compute_{n}")];
        }
        self.codes(written, n, &code)
    }

    /// `-arch=sm_80` (cubin and PTX), `-arch=compute_80` (PTX), with `-code=…` if given.
    fn arch(&mut self, a: &str, codes: Option<&[String]>) -> Result<(), String> {
        match (a, number(a), codes) {
            ("native", _, _) => self.named.push("native".into()),
            (_, Some(n), None) => self.add(n, a.starts_with("sm_"), true),
            (_, Some(n), Some(codes)) => self.codes(&format!("-arch={a}"), n, codes)?,
            _ => {
                return Err(unsupported(
                    &format!("-arch={a}"),
                    "names no one architecture (all, all-major)",
                ));
            }
        }
        Ok(())
    }

    /// This crate's names: `sm_80` (cubin and PTX), `80-real`, `80-virtual`, then the others.
    fn names(self) -> Vec<String> {
        let mut archs: Vec<String> = (self.nv.into_iter())
            .filter(|(_, cubin, ptx)| *cubin || *ptx)
            .map(|(n, cubin, ptx)| match (cubin, ptx) {
                (true, true) => format!("sm_{n}"),
                (true, false) => format!("{n}-real"),
                _ => format!("{n}-virtual"),
            })
            .collect();
        archs.extend(self.named);
        archs
    }
}

/// Reads the architectures the flags choose; `None` when no flag chooses any; an error for a
/// choice this crate cannot build as asked (`code=sm_86` of `arch=compute_80`, `-arch=all`).
pub(crate) fn parse(flags: &[OsString], lang: Language) -> Result<Option<ArchFlags>, String> {
    let found = split(flags, lang);
    if found.is_empty() {
        return Ok(None);
    }
    let mut chosen = Chosen::default();
    let mut spelled = Vec::new();
    let (mut arch, mut codes) = (None::<String>, None::<Vec<String>>);
    for Found { name, value, .. } in &found {
        let written = format!("{name}={value}");
        spelled.push(written.clone());
        let clean: String = value.chars().filter(|c| !"\"'[]".contains(*c)).collect();
        match *name {
            "-gencode" | "--generate-code" => chosen.gencode(&written, &clean)?,
            "-arch" | "--gpu-architecture" => arch = Some(clean),
            "-code" | "--gpu-code" => codes
                .get_or_insert_with(Vec::new)
                .extend(clean.split(',').map(str::trim).map(String::from)),
            // clang's --offload-arch=a,b (HIP and CUDA), --cuda-gpu-arch, --amdgpu-target.
            _ => {
                for a in clean.split(',').map(str::trim).filter(|a| !a.is_empty()) {
                    match number(a).filter(|_| lang == Language::Cuda) {
                        Some(n) => chosen.add(n, true, true),
                        None => chosen.named.push(a.to_string()),
                    }
                }
            }
        }
    }
    match (&arch, &codes) {
        (Some(a), codes) => chosen.arch(a, codes.as_deref())?,
        (None, Some(_)) => return Err(unsupported("-code", "comes without -arch")),
        (None, None) => {}
    }
    Ok(Some(ArchFlags {
        archs: chosen.names(),
        spelled,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn os(v: &[&str]) -> Vec<OsString> {
        v.iter().map(OsString::from).collect()
    }

    fn archs(v: &[&str], lang: Language) -> Vec<String> {
        parse(&os(v), lang).unwrap().unwrap().archs
    }

    #[test]
    fn reads_nvcc_spellings() {
        let cuda = Language::Cuda;
        assert_eq!(
            archs(&["-gencode", "arch=compute_80,code=sm_80", "-O3"], cuda),
            ["80-real"]
        );
        // cc passes the quotes literally; nvcc takes them off.
        assert_eq!(
            archs(
                &["-gencode", "arch=compute_80,code=\"compute_80,sm_80\""],
                cuda
            ),
            ["sm_80"]
        );
        assert_eq!(
            archs(
                &[
                    "-gencode=arch=compute_90,code=[sm_90,compute_90]",
                    "--generate-code=arch=compute_75,code=compute_75"
                ],
                cuda
            ),
            ["sm_90", "75-virtual"]
        );
        assert_eq!(archs(&["-arch=sm_86"], cuda), ["sm_86"]);
        assert_eq!(
            archs(&["--gpu-architecture", "compute_70"], cuda),
            ["70-virtual"]
        );
        assert_eq!(
            archs(&["-arch=compute_80", "-code=sm_80"], cuda),
            ["80-real"]
        );
        assert_eq!(
            archs(&["--offload-arch=sm_80,sm_90"], cuda),
            ["sm_80", "sm_90"]
        );
        assert_eq!(parse(&os(&["-O3", "-std=c++17"]), cuda).unwrap(), None);
        for bad in [
            &["-gencode", "arch=compute_80,code=sm_86"][..],
            &["-arch=all-major"],
            &["-code=sm_80"],
        ] {
            let e = parse(&os(bad), cuda).unwrap_err();
            assert!(e.contains("Build::archs"), "{e}");
        }
    }

    #[test]
    fn reads_hip_spellings_and_strips_them() {
        let hip = Language::Hip;
        assert_eq!(
            archs(&["--offload-arch=gfx90a:xnack+,gfx1030", "-O2"], hip),
            ["gfx90a:xnack+", "gfx1030"]
        );
        // -arch is no HIP flag (clang's -arch is Darwin's): left alone.
        assert_eq!(parse(&os(&["-arch", "x86_64"]), hip).unwrap(), None);
        assert_eq!(
            strip(os(&["-O2", "--offload-arch=gfx90a", "-g"]), hip),
            os(&["-O2", "-g"])
        );
        assert_eq!(
            strip(
                os(&[
                    "-gencode",
                    "arch=compute_80,code=sm_80",
                    "-O3",
                    "-arch=sm_90"
                ]),
                Language::Cuda
            ),
            os(&["-O3"])
        );
    }
}
