//! Offload architectures: parsing (typed values and CMake-style lists), `native` detection
//! and the default set.
//!
//! The order the architectures are resolved in, and the list syntax, are the builder's
//! documentation ([architecture resolution](crate::builder#architecture-resolution)); the
//! resolution itself is the plan's ([`crate::builder::plan::archs`]).

use std::fmt;
use std::path::{Path, PathBuf};
use std::process::Command;

use offload_formats::id::target_id::{TargetId, TargetIdError, amdgpu_processor};

use crate::builder::options::Language;
use crate::builder::process::Processes;

/// Architectures used when nothing else names any (HIP): data-centre MI200/MI300 and the
/// RDNA2/3/4 consumer cards. Those unknown to the compiler in use are left out.
pub const DEFAULT_HIP_ARCHS: &[&str] = &[
    "gfx90a", "gfx942", "gfx1030", "gfx1100", "gfx1101", "gfx1200", "gfx1201",
];

/// Architectures used when nothing else names any (CUDA): Turing to Hopper.
pub const DEFAULT_CUDA_ARCHS: &[&str] = &["sm_75", "sm_80", "sm_86", "sm_89", "sm_90"];

/// One offload architecture: an AMDGPU target ID (`gfx90a`, `gfx90a:xnack+`,
/// `gfx11-generic`) or an NVIDIA one (`sm_90`, `sm_90a`, `compute_90` for PTX only).
///
/// AMDGPU target IDs are kept in clang's canonical form (features sorted by name), so
/// `gfx90a:xnack+:sramecc-` and `gfx90a:sramecc-:xnack+` are the same architecture.
///
/// NVIDIA architectures follow CMake's `CMAKE_CUDA_ARCHITECTURES`: `sm_90` (or `90`) gives a
/// cubin and the PTX when `ptxas` is found, the PTX alone otherwise; `90-real` only the cubin
/// ([`Arch::is_real`]; an error without `ptxas`); `90-virtual` (= `compute_90`) only the PTX.
/// `90-real` and `sm_90` are the same architecture otherwise (equal, same name).
#[derive(Clone)]
pub struct Arch {
    id: String,
    real: bool,
}

impl PartialEq for Arch {
    fn eq(&self, other: &Arch) -> bool {
        self.id == other.id
    }
}

impl Eq for Arch {}

impl std::hash::Hash for Arch {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.id.hash(state)
    }
}

impl PartialOrd for Arch {
    fn partial_cmp(&self, other: &Arch) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Arch {
    fn cmp(&self, other: &Arch) -> std::cmp::Ordering {
        self.id.cmp(&other.id)
    }
}

/// Why a string is not an offload architecture ([`Arch::new`]).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ArchError {
    /// An AMDGPU target ID that does not have the target-ID format.
    TargetId(TargetIdError),
    /// An AMDGPU processor given a target feature it does not have.
    UnknownFeature {
        /// The processor.
        processor: String,
        /// The feature given.
        feature: String,
        /// The features the processor has.
        available: Vec<String>,
    },
    /// Neither an AMDGPU target ID nor an NVIDIA architecture.
    Unrecognized,
}

impl fmt::Display for ArchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ArchError::TargetId(e) => write!(f, "{e}"),
            ArchError::UnknownFeature {
                processor,
                feature,
                available,
            } => write!(
                f,
                "{processor} has no target feature `{feature}` (it has: {})",
                if available.is_empty() {
                    "none".to_string()
                } else {
                    available.join(", ")
                }
            ),
            ArchError::Unrecognized => f.write_str(
                "expected an AMDGPU target ID (gfx90a, gfx90a:xnack+, gfx11-generic), an NVIDIA \
                 architecture (sm_90, compute_90, 90, 90-real, 90-virtual), `native` or `default`",
            ),
        }
    }
}

impl std::error::Error for ArchError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            ArchError::TargetId(e) => Some(e),
            _ => None,
        }
    }
}

impl Arch {
    /// Parses one architecture (not a list, not `native`).
    pub fn new(s: &str) -> Result<Arch, ArchError> {
        let s = s.trim();
        if s.starts_with("gfx") {
            let tid = TargetId::parse(s).map_err(ArchError::TargetId)?;
            if let Some(p) = amdgpu_processor(tid.processor()) {
                for (name, _) in tid.features() {
                    if !p.features().contains(&name.as_str()) {
                        return Err(ArchError::UnknownFeature {
                            processor: p.name.to_string(),
                            feature: name.clone(),
                            available: p.features().iter().map(|f| f.to_string()).collect(),
                        });
                    }
                }
            }
            return Ok(Arch {
                id: tid.canonical(),
                real: false,
            });
        }
        let nv = |prefix: &str, rest: &str| -> Option<Arch> {
            let digits = rest.strip_suffix('a').unwrap_or(rest);
            (digits.len() >= 2 && digits.bytes().all(|b| b.is_ascii_digit())).then(|| Arch {
                id: format!("{prefix}{rest}"),
                real: false,
            })
        };
        let found = if let Some(rest) = s.strip_prefix("sm_") {
            nv("sm_", rest)
        } else if let Some(rest) = s.strip_prefix("compute_") {
            nv("compute_", rest)
        } else if let Some(n) = s.strip_suffix("-virtual") {
            nv("compute_", n)
        } else if let Some(n) = s.strip_suffix("-real") {
            nv("sm_", n).map(|a| Arch { real: true, ..a })
        } else {
            nv("sm_", s)
        };
        found.ok_or(ArchError::Unrecognized)
    }

    /// The architecture as passed to `--offload-arch` and written in entry IDs.
    pub fn as_str(&self) -> &str {
        &self.id
    }

    /// The architecture as a list given to a build spells it, so that it parses back to the
    /// same architecture: `80-real` for a cubin only (CMake's spelling; [`Arch::as_str`] says
    /// `sm_80` for it, as `sm_80` says for the cubin and the PTX), else [`Arch::as_str`].
    ///
    /// # Example
    ///
    /// ```
    /// use offload_build::builder::Arch;
    /// assert_eq!(Arch::new("80-real").unwrap().spelling(), "80-real");
    /// assert_eq!(Arch::new("sm_80").unwrap().spelling(), "sm_80");
    /// assert_eq!(Arch::new("gfx90a:xnack+").unwrap().spelling(), "gfx90a:xnack+");
    /// ```
    pub fn spelling(&self) -> String {
        match self.id.strip_prefix("sm_") {
            Some(n) if self.real => format!("{n}-real"),
            _ => self.id.clone(),
        }
    }

    /// The processor without target features (`gfx90a` for `gfx90a:xnack+`).
    pub fn processor(&self) -> &str {
        self.id.split(':').next().unwrap_or(&self.id)
    }

    /// Whether this is an NVIDIA architecture.
    pub fn is_nvidia(&self) -> bool {
        self.id.starts_with("sm_") || self.id.starts_with("compute_")
    }

    /// Whether only PTX is wanted (`compute_NN`, CMake's `NN-virtual`).
    pub fn is_virtual(&self) -> bool {
        self.id.starts_with("compute_")
    }

    /// Whether only a cubin is wanted (CMake's `NN-real`): `ptxas` is required.
    pub fn is_real(&self) -> bool {
        self.real
    }

    /// The PTX ISA version (`63` for 6.3) that LLVM's NVPTX back end needs at least for this
    /// NVIDIA architecture, as clang 22 reports it (`Minimum required PTX version is 6.3`);
    /// `None` for the oldest processors (the default ISA serves them) and unknown ones.
    pub(crate) fn min_ptx(&self) -> Option<u32> {
        let sm = self.offload_arch();
        let n = sm.strip_prefix("sm_")?;
        let (digits, accel) = match n.strip_suffix('a') {
            Some(d) => (d, true),
            None => (n, false),
        };
        let v: u32 = digits.parse().ok()?;
        Some(match (v, accel) {
            (..60, _) => return None,
            (60..=62, _) => 50,
            (70, _) => 60,
            (72, _) => 61,
            (75, _) => 63,
            (80, _) => 70,
            (86, _) => 71,
            (87, _) => 74,
            (88, _) => 90,
            (89, _) => 78,
            (90, false) => 78,
            (90, true) => 80,
            (100 | 101, _) => 86,
            (103, _) => 88,
            (110, _) => 90,
            (120, _) => 87,
            (121, _) => 88,
            _ => return None,
        })
    }

    /// The `sm_NN` name to compile for (`compute_90` compiles as `sm_90`).
    pub(crate) fn offload_arch(&self) -> String {
        match self.id.strip_prefix("compute_") {
            Some(n) => format!("sm_{n}"),
            None => self.id.clone(),
        }
    }

    /// The name used in file names (`:` and `+` are awkward on some file systems).
    pub(crate) fn file_tag(&self) -> String {
        self.id
            .replace(':', "_")
            .replace('+', "on")
            .replace('-', "off")
    }
}

impl fmt::Display for Arch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.id)
    }
}

impl fmt::Debug for Arch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Arch({})", self.id)
    }
}

/// What a job builds: device code for one architecture, the host object of a source (its
/// host compile in a host-code build, [`Build::host_code`](crate::Build::host_code)), or
/// nvcc's device link of a build's relocatable objects for every architecture (a host
/// object too).
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) enum Target {
    /// Device code for this architecture (a compile, or the device link of its objects).
    Device(Arch),
    /// A source's host compile.
    Host,
    /// nvcc's device link (`nvcc -dlink`) of every architecture's relocatable objects.
    DeviceLink,
}

impl Target {
    /// The architecture of device code; `None` for a host object.
    pub(crate) fn device(&self) -> Option<&Arch> {
        match self {
            Target::Device(a) => Some(a),
            Target::Host | Target::DeviceLink => None,
        }
    }

    /// The name used in file names: the architecture's ([`Arch::file_tag`]), or `host` for
    /// a host object.
    pub(crate) fn file_tag(&self) -> String {
        match self {
            Target::Device(a) => a.file_tag(),
            Target::Host | Target::DeviceLink => "host".into(),
        }
    }
}

/// The architecture, or `host` for a host object (what progress lines and errors name).
impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Target::Device(a) => a.fmt(f),
            Target::Host | Target::DeviceLink => f.write_str("host"),
        }
    }
}

impl fmt::Debug for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Target::Device(a) => write!(f, "Device({a})"),
            Target::Host => f.write_str("Host"),
            Target::DeviceLink => f.write_str("DeviceLink"),
        }
    }
}

impl std::str::FromStr for Arch {
    type Err = ArchError;
    fn from_str(s: &str) -> Result<Arch, ArchError> {
        Arch::new(s)
    }
}

impl AsRef<str> for Arch {
    fn as_ref(&self) -> &str {
        &self.id
    }
}

/// One item of an architecture list.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Item {
    Arch(Arch),
    Native,
    Default,
    /// CMake's `all-major` (CUDA).
    AllMajor,
}

/// Splits a CMake-style list (`;`, `,` or white space) and parses each item.
pub(crate) fn parse_list(s: &str) -> Result<Vec<Item>, (String, ArchError)> {
    s.split(|c: char| c == ';' || c == ',' || c.is_whitespace())
        .filter(|p| !p.is_empty())
        .map(|p| match p {
            "native" => Ok(Item::Native),
            "default" => Ok(Item::Default),
            "all-major" => Ok(Item::AllMajor),
            _ => Arch::new(p).map(Item::Arch).map_err(|e| (p.to_string(), e)),
        })
        .collect()
}

/// The default set for `lang`, restricted to what `supported` accepts (when known).
pub(crate) fn default_set(lang: Language, supported: &[String]) -> Vec<Arch> {
    let set = match lang {
        Language::Hip => DEFAULT_HIP_ARCHS,
        Language::Cuda => DEFAULT_CUDA_ARCHS,
    };
    set.iter()
        .filter(|a| supported.is_empty() || supported.iter().any(|s| s == *a))
        .map(|a| Arch {
            id: a.to_string(),
            real: false,
        })
        .collect()
}

/// CMake's `all-major` for CUDA: every `sm_N0` from `sm_50` that the compiler supports (the
/// oldest `ptxas` of CUDA 12 builds `sm_50`).
pub(crate) fn all_major(supported: &[String]) -> Vec<Arch> {
    let mut v: Vec<(u32, Arch)> = supported
        .iter()
        .filter_map(|s| {
            let n: u32 = s.strip_prefix("sm_")?.parse().ok()?;
            (n >= 50 && n % 10 == 0).then(|| {
                (
                    n,
                    Arch {
                        id: s.clone(),
                        real: false,
                    },
                )
            })
        })
        .collect();
    v.sort_by_key(|(n, _)| *n);
    v.into_iter().map(|(_, a)| a).collect()
}

/// Runs `cmd` with the probe timeout (30 s; killed past it); its stdout when it exits
/// successfully.
fn run_probe(p: &Processes, mut cmd: Command) -> Option<String> {
    let out = crate::builder::process::probe(p, &mut cmd).ok().flatten()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).into_owned())
}

/// `gfx_target_version` of a KFD topology node (`90010`) as a processor name (`gfx90a`).
pub(crate) fn gfx_from_target_version(v: u32) -> Option<String> {
    if v == 0 {
        return None;
    }
    let major = v / 10000;
    let minor = (v / 100) % 100;
    let step = v % 100;
    Some(format!("gfx{major}{minor}{step:x}"))
}

fn kfd_archs(root: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let Ok(nodes) = std::fs::read_dir(root.join("topology/nodes")) else {
        return out;
    };
    for node in nodes.flatten() {
        let Ok(props) = std::fs::read_to_string(node.path().join("properties")) else {
            continue;
        };
        for line in props.lines() {
            if let Some(v) = line.strip_prefix("gfx_target_version ") {
                if let Some(name) = v.trim().parse().ok().and_then(gfx_from_target_version) {
                    out.push(name);
                }
            }
        }
    }
    out
}

/// This machine's GPUs, as a list of architectures (empty when none is found), and how they
/// were found.
pub(crate) fn probe_native(
    p: &Processes,
    lang: Language,
    tool_dirs: &[PathBuf],
) -> (Vec<Arch>, String) {
    let find = |name: &str| -> Option<PathBuf> {
        tool_dirs.iter().map(|d| d.join(name)).find(|p| p.is_file())
    };
    let mut names: Vec<String> = Vec::new();
    let mut how = String::new();
    match lang {
        Language::Hip => {
            if let Some(tool) = find("amdgpu-arch") {
                if let Some(out) = run_probe(p, Command::new(&tool)) {
                    names = out.split_whitespace().map(str::to_string).collect();
                    how = tool.display().to_string();
                }
            }
            if names.is_empty() {
                names = kfd_archs(Path::new("/sys/class/kfd/kfd"));
                how = "/sys/class/kfd".to_string();
            }
        }
        Language::Cuda => {
            if let Some(tool) = find("nvptx-arch") {
                if let Some(out) = run_probe(p, Command::new(&tool)) {
                    names = out.split_whitespace().map(str::to_string).collect();
                    how = tool.display().to_string();
                }
            }
            if names.is_empty() {
                if let Some(tool) = find("nvidia-smi") {
                    let mut cmd = Command::new(&tool);
                    cmd.args(["--query-gpu=compute_cap", "--format=csv,noheader"]);
                    if let Some(out) = run_probe(p, cmd) {
                        names = out
                            .lines()
                            .map(|l| format!("sm_{}", l.trim().replace('.', "")))
                            .collect();
                        how = tool.display().to_string();
                    }
                }
            }
        }
    }
    let mut archs: Vec<Arch> = names.iter().filter_map(|n| Arch::new(n).ok()).collect();
    archs.sort();
    archs.dedup();
    (archs, how)
}

/// Values [`Build::archs`](crate::Build::archs) takes: a CMake-style list string, or a collection of [`Arch`]s or
/// strings. Sealed: implemented here only.
///
/// A trait, not one standard bound, because no standard bound takes both a list in one string
/// (`.archs("gfx90a;gfx942")`, as CMake and the environment spell it) and a collection
/// (`.archs(["gfx90a", "gfx942"])`): `&str` is not an `IntoIterator`, and a blanket
/// implementation over `IntoIterator` beside one for `&str` is refused by coherence.
pub trait ArchList: sealed::Sealed {
    /// Appends the items (as strings, parsed when compiling).
    fn append_to(self, out: &mut Vec<String>);
}

mod sealed {
    /// Keeps [`crate::builder::ArchList`] implemented by this crate only.
    pub trait Sealed {}
    impl Sealed for &str {}
    impl Sealed for String {}
    impl Sealed for &String {}
    impl Sealed for crate::builder::arch::Arch {}
    impl<S: AsRef<str>, const N: usize> Sealed for [S; N] {}
    impl<S: AsRef<str>> Sealed for &[S] {}
    impl<S: AsRef<str>> Sealed for Vec<S> {}
}

impl ArchList for &str {
    fn append_to(self, out: &mut Vec<String>) {
        out.push(self.to_string());
    }
}

impl ArchList for String {
    fn append_to(self, out: &mut Vec<String>) {
        out.push(self);
    }
}

impl ArchList for &String {
    fn append_to(self, out: &mut Vec<String>) {
        out.push(self.clone());
    }
}

impl ArchList for Arch {
    fn append_to(self, out: &mut Vec<String>) {
        out.push(self.to_string());
    }
}

impl<S: AsRef<str>, const N: usize> ArchList for [S; N] {
    fn append_to(self, out: &mut Vec<String>) {
        out.extend(self.iter().map(|s| s.as_ref().to_string()));
    }
}

impl<S: AsRef<str>> ArchList for &[S] {
    fn append_to(self, out: &mut Vec<String>) {
        out.extend(self.iter().map(|s| s.as_ref().to_string()));
    }
}

impl<S: AsRef<str>> ArchList for Vec<S> {
    fn append_to(self, out: &mut Vec<String>) {
        out.extend(self.iter().map(|s| s.as_ref().to_string()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_cmake_lists() {
        let items = parse_list("gfx90a; gfx942:xnack+,gfx11-generic native\tdefault").unwrap();
        let ids: Vec<String> = items
            .iter()
            .map(|i| match i {
                Item::Arch(a) => a.to_string(),
                Item::Native => "<native>".into(),
                Item::AllMajor => "<all-major>".into(),
                Item::Default => "<default>".into(),
            })
            .collect();
        assert_eq!(
            ids,
            [
                "gfx90a",
                "gfx942:xnack+",
                "gfx11-generic",
                "<native>",
                "<default>"
            ]
        );
    }

    #[test]
    fn canonicalizes_target_ids_and_checks_features() {
        assert_eq!(
            Arch::new("gfx90a:xnack+:sramecc-").unwrap().as_str(),
            "gfx90a:sramecc-:xnack+"
        );
        assert_eq!(Arch::new("gfx90a:xnack+").unwrap().processor(), "gfx90a");
        let e = Arch::new("gfx1100:xnack+").unwrap_err();
        assert!(e.to_string().contains("no target feature `xnack`"), "{e}");
        assert!(Arch::new("gfx906:xnack").is_err());
        assert!(Arch::new("vega").is_err());
    }

    #[test]
    fn cuda_spellings() {
        assert_eq!(Arch::new("90").unwrap().as_str(), "sm_90");
        assert_eq!(Arch::new("90a").unwrap().as_str(), "sm_90a");
        assert_eq!(Arch::new("80-real").unwrap().as_str(), "sm_80");
        assert!(Arch::new("80-real").unwrap().is_real());
        assert!(!Arch::new("sm_80").unwrap().is_real());
        assert_eq!(Arch::new("80-real").unwrap(), Arch::new("sm_80").unwrap());
        for s in [
            "80-real",
            "90a-real",
            "sm_80",
            "compute_90",
            "gfx90a:xnack-",
        ] {
            let a = Arch::new(s).unwrap();
            let back = Arch::new(&a.spelling()).unwrap();
            assert_eq!(
                (back.as_str(), back.is_real()),
                (a.as_str(), a.is_real()),
                "{s}"
            );
        }
        assert_eq!(Arch::new("sm_75").unwrap().min_ptx(), Some(63));
        assert_eq!(Arch::new("90-virtual").unwrap().min_ptx(), Some(78));
        assert_eq!(Arch::new("sm_90a").unwrap().min_ptx(), Some(80));
        assert_eq!(Arch::new("sm_52").unwrap().min_ptx(), None);
        let supported: Vec<String> = ["sm_35", "sm_50", "sm_52", "sm_90", "sm_90a", "sm_100"]
            .map(String::from)
            .to_vec();
        assert_eq!(
            all_major(&supported)
                .iter()
                .map(Arch::as_str)
                .collect::<Vec<_>>(),
            ["sm_50", "sm_90", "sm_100"]
        );
        let v = Arch::new("80-virtual").unwrap();
        assert_eq!(v.as_str(), "compute_80");
        assert!(v.is_virtual() && v.is_nvidia());
        assert_eq!(v.offload_arch(), "sm_80");
        assert!(Arch::new("sm_x").is_err());
    }

    #[test]
    fn kfd_versions() {
        assert_eq!(gfx_from_target_version(90010).unwrap(), "gfx90a");
        assert_eq!(gfx_from_target_version(110000).unwrap(), "gfx1100");
        assert_eq!(gfx_from_target_version(120001).unwrap(), "gfx1201");
        assert_eq!(gfx_from_target_version(90402).unwrap(), "gfx942");
        assert_eq!(gfx_from_target_version(0), None);
    }

    #[test]
    fn default_set_follows_the_compiler() {
        let supported = vec!["gfx90a".to_string(), "gfx1100".to_string()];
        let d = default_set(Language::Hip, &supported);
        assert_eq!(
            d.iter().map(Arch::as_str).collect::<Vec<_>>(),
            ["gfx90a", "gfx1100"]
        );
        assert_eq!(
            default_set(Language::Hip, &[]).len(),
            DEFAULT_HIP_ARCHS.len()
        );
    }
}
