//! `Triple::normalize` of LLVM 22: components recognised and moved to their canonical
//! positions ([`place`], [`move_left`], [`push_right`]), the Windows, Android, SUSE and
//! DXIL rules, and the padding or truncation to a [`CanonicalForm`].

use std::borrow::Cow;
use std::fmt;

use super::names::{Arch, Environment, ObjectFormat, Os, Vendor};
use super::parse::{parse_arch, parse_environment, parse_format, parse_os, parse_vendor};

/// LLVM's `Triple::CanonicalForm`: how many components [`normalize`] emits.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CanonicalForm {
    /// Keep however many components normalization produced.
    Any,
    /// `ARCHITECTURE-VENDOR-OPERATING_SYSTEM`.
    ThreeIdent,
    /// `ARCHITECTURE-VENDOR-OPERATING_SYSTEM-ENVIRONMENT`.
    FourIdent,
    /// `ARCHITECTURE-VENDOR-OPERATING_SYSTEM-ENVIRONMENT-FORMAT`.
    FiveIdent,
}

impl CanonicalForm {
    /// The number of components this form pads or truncates to, if any.
    pub fn component_count(self) -> Option<usize> {
        match self {
            CanonicalForm::Any => None,
            CanonicalForm::ThreeIdent => Some(3),
            CanonicalForm::FourIdent => Some(4),
            CanonicalForm::FiveIdent => Some(5),
        }
    }
}

/// Why [`try_normalize`] could not normalize a triple.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum NormalizeError {
    /// A `dxil` triple names a shader model `6.N` with `N` above 9, for which
    /// LLVM has no DXIL version: LLVM stops the process with
    /// `LLVM ERROR: Unsupported Shader Model version`.
    UnsupportedShaderModel,
}

impl fmt::Display for NormalizeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NormalizeError::UnsupportedShaderModel => {
                f.write_str("Unsupported Shader Model version")
            }
        }
    }
}

impl std::error::Error for NormalizeError {}

/// `llvm::Triple::normalize(Str, Form)` of LLVM 22, byte-exact.
///
/// Components that parse as an arch, vendor, OS or environment/object format
/// are moved to their canonical positions, empty ones become `unknown`, and
/// the Windows (`win32`, `mingw*`, `cygwin`, `msys`), Android
/// (`androideabi`), SUSE and DXIL shader-model rules are applied. `form`
/// then pads with `unknown` or truncates to 3, 4 or 5 components.
///
/// # Panics
///
/// Where LLVM stops the process: a `dxil` triple whose shader model is `6.N`
/// with `N > 9` (see [`try_normalize`]).
pub fn normalize(s: &str, form: CanonicalForm) -> String {
    match try_normalize(s, form) {
        Ok(normalized) => normalized,
        Err(err) => panic!("LLVM ERROR: {err} (normalizing target triple {s:?})"),
    }
}

/// [`normalize`], reporting as an error the one input on which LLVM aborts
/// instead of returning.
pub fn try_normalize(s: &str, form: CanonicalForm) -> Result<String, NormalizeError> {
    let mut components: Vec<Cow<'_, str>> = s.split('-').map(Cow::Borrowed).collect();
    // A component that already parses in its own position stays there; this
    // avoids moving a component that is both (say) a valid arch and OS.
    let mut r = Recognized::in_place(&components);
    let mut found = r.found();
    for pos in 0..found.len() {
        if !found[pos] {
            place(&mut components, &mut found, &mut r, pos);
        }
    }
    r.finish(&mut components, &found)?;
    if let Some(n) = form.component_count() {
        components.resize(n, Cow::Borrowed("unknown"));
    }
    Ok(components.join("-"))
}

/// What `normalize` recognised the components of a triple as.
struct Recognized {
    arch: Arch,
    vendor: Vendor,
    os: Os,
    environment: Environment,
    object_format: ObjectFormat,
    is_cygwin: bool,
    is_mingw32: bool,
}

/// Whether position `i` holds a component recognised in place.
fn fixed(found: &[bool; 4], i: usize) -> bool {
    i < found.len() && found[i]
}

impl Recognized {
    /// Each component parsed in its own position.
    fn in_place(components: &[Cow<'_, str>]) -> Recognized {
        let count = components.len();
        let mut r = Recognized {
            arch: parse_arch(&components[0]),
            vendor: Vendor::Unknown,
            os: Os::Unknown,
            environment: Environment::Unknown,
            object_format: ObjectFormat::Unknown,
            is_cygwin: false,
            is_mingw32: false,
        };
        if count > 1 {
            r.vendor = parse_vendor(&components[1]);
        }
        if count > 2 {
            let c = &components[2];
            r.os = parse_os(c);
            r.is_cygwin = c.starts_with("cygwin") || c.starts_with("msys");
            r.is_mingw32 = c.starts_with("mingw");
        }
        if count > 3 {
            r.environment = parse_environment(&components[3]);
        }
        if count > 4 {
            r.object_format = parse_format(&components[4]);
        }
        r
    }

    /// Which of arch, vendor, OS and environment were recognised.
    fn found(&self) -> [bool; 4] {
        [
            self.arch != Arch::Unknown,
            self.vendor != Vendor::Unknown,
            self.os != Os::Unknown,
            self.environment != Environment::Unknown,
        ]
    }

    /// Parses `comp` as the component of position `pos` (the last one: environment or object
    /// format), keeping what it is; whether it is one.
    fn try_position(&mut self, pos: usize, comp: &str) -> bool {
        match pos {
            0 => {
                self.arch = parse_arch(comp);
                self.arch != Arch::Unknown
            }
            1 => {
                self.vendor = parse_vendor(comp);
                self.vendor != Vendor::Unknown
            }
            2 => {
                self.os = parse_os(comp);
                self.is_cygwin = comp.starts_with("cygwin") || comp.starts_with("msys");
                self.is_mingw32 = comp.starts_with("mingw");
                self.os != Os::Unknown || self.is_cygwin || self.is_mingw32
            }
            _ => {
                self.environment = parse_environment(comp);
                let mut valid = self.environment != Environment::Unknown;
                if !valid {
                    self.object_format = parse_format(comp);
                    valid = self.object_format != ObjectFormat::Unknown;
                }
                valid
            }
        }
    }

    /// The canonical spellings once every component is in place: `unknown` for empty
    /// components, and LLVM's rewrites of Android, SUSE, Windows and DXIL triples.
    fn finish(
        &self,
        components: &mut Vec<Cow<'_, str>>,
        found: &[bool; 4],
    ) -> Result<(), NormalizeError> {
        // "none" in the middle of a three-component triple is the OS, not the
        // vendor.
        if found[0]
            && !found[1]
            && !found[2]
            && found[3]
            && components[1] == "none"
            && components[2].is_empty()
        {
            components.swap(1, 2);
        }
        for c in components.iter_mut() {
            if c.is_empty() {
                *c = Cow::Borrowed("unknown");
            }
        }
        if self.environment == Environment::Android {
            if let Some(version) = components[3].strip_prefix("androideabi") {
                components[3] = if version.is_empty() {
                    Cow::Borrowed("android")
                } else {
                    Cow::Owned(format!("android{version}"))
                };
            }
        }
        // SUSE uses "gnueabi" to mean "gnueabihf".
        if self.vendor == Vendor::Suse && self.environment == Environment::GnuEabi {
            components[3] = Cow::Borrowed("gnueabihf");
        }
        self.windows(components);
        // A DXIL triple without a version takes it from the shader model.
        if components[0] == "dxil" {
            components.truncate(4);
            if self.os == Os::ShaderModel {
                components[0] = Cow::Borrowed(dxil_arch_from_shader_model(&components[2])?);
            }
        }
        Ok(())
    }

    /// The OS and environment of Windows triples (MSVC, MinGW, Cygwin), and their object
    /// format when it is not COFF.
    fn windows(&self, components: &mut Vec<Cow<'_, str>>) {
        // `SmallVector::resize` pads with empty strings here: the "unknown"
        // replacement has already happened.
        let (os, environment, format) = (self.os, self.environment, self.object_format);
        if os == Os::Win32 {
            components.resize(4, Cow::Borrowed(""));
            components[2] = Cow::Borrowed("windows");
            if environment == Environment::Unknown {
                components[3] = match format {
                    ObjectFormat::Unknown | ObjectFormat::Coff => Cow::Borrowed("msvc"),
                    other => Cow::Borrowed(other.name()),
                };
            }
        } else if self.is_mingw32 {
            components.resize(4, Cow::Borrowed(""));
            components[2] = Cow::Borrowed("windows");
            components[3] = Cow::Borrowed("gnu");
        } else if self.is_cygwin {
            components.resize(4, Cow::Borrowed(""));
            components[2] = Cow::Borrowed("windows");
            components[3] = Cow::Borrowed("cygnus");
        }
        let windows = self.is_mingw32
            || self.is_cygwin
            || (os == Os::Win32 && environment != Environment::Unknown);
        if windows && format != ObjectFormat::Unknown && format != ObjectFormat::Coff {
            components.resize(5, Cow::Borrowed(""));
            components[4] = Cow::Borrowed(format.name());
        }
    }
}

/// Finds the first component not fixed in place that parses as the component of position
/// `pos`, and moves it there.
fn place(
    components: &mut Vec<Cow<'_, str>>,
    found: &mut [bool; 4],
    r: &mut Recognized,
    pos: usize,
) {
    let mut idx = 0;
    while idx < components.len() {
        if fixed(found, idx) {
            idx += 1;
            continue;
        }
        let comp = components[idx].clone();
        if !r.try_position(pos, &comp) {
            idx += 1;
            continue;
        }
        // Move the component to its position, pushing non-fixed
        // components in the way to the right.
        if pos < idx {
            move_left(components, found, pos, idx);
        } else if pos > idx {
            push_right(components, found, pos, idx);
        }
        debug_assert!(pos < components.len() && components[pos] == comp);
        found[pos] = true;
        return;
    }
}

/// Insert left: a-b-i386 -> i386-a-b. The moved component's old slot becomes empty, which
/// ends the chain of pushes.
fn move_left(components: &mut [Cow<'_, str>], found: &[bool; 4], pos: usize, idx: usize) {
    let mut current = std::mem::replace(&mut components[idx], Cow::Borrowed(""));
    let mut i = pos;
    while !current.is_empty() {
        while fixed(found, i) {
            i += 1;
        }
        std::mem::swap(&mut current, &mut components[i]);
        i += 1;
    }
}

/// Push right by inserting empty components until the component at `idx` reaches `pos`:
/// pc-a -> -pc-a.
fn push_right(components: &mut Vec<Cow<'_, str>>, found: &[bool; 4], pos: usize, mut idx: usize) {
    loop {
        let mut current: Cow<'_, str> = Cow::Borrowed("");
        let mut i = idx;
        while i < components.len() {
            std::mem::swap(&mut current, &mut components[i]);
            if current.is_empty() {
                break;
            }
            i += 1;
            while fixed(found, i) {
                i += 1;
            }
        }
        if !current.is_empty() {
            components.push(current);
        }
        idx += 1;
        while fixed(found, idx) {
            idx += 1;
        }
        if idx >= pos {
            break;
        }
    }
}

/// LLVM's `getDXILArchNameFromShaderModel`: `shadermodel6.N` → `dxilv1.N`,
/// `shadermodel6.x` → the latest, anything else → `dxilv1.0`.
fn dxil_arch_from_shader_model(shader_model: &str) -> Result<&'static str, NormalizeError> {
    const DXIL_NAMES: [&str; 10] = [
        "dxilv1.0", "dxilv1.1", "dxilv1.2", "dxilv1.3", "dxilv1.4", "dxilv1.5", "dxilv1.6",
        "dxilv1.7", "dxilv1.8", "dxilv1.9",
    ];
    const LATEST: &str = DXIL_NAMES[DXIL_NAMES.len() - 1];
    let version = parse_version(shader_model.get("shadermodel".len()..).unwrap_or(""));
    if !version.is_empty() {
        if version.major == 6 {
            if let Some(minor) = version.minor {
                return usize::try_from(minor)
                    .ok()
                    .and_then(|m| DXIL_NAMES.get(m).copied())
                    .ok_or(NormalizeError::UnsupportedShaderModel);
            }
        }
    } else if shader_model == "shadermodel6.x" {
        return Ok(LATEST);
    }
    Ok(DXIL_NAMES[0])
}

/// The parts of `llvm::VersionTuple` that `normalize` looks at.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Version {
    major: u32,
    minor: Option<u32>,
    subminor: Option<u32>,
}

impl Version {
    /// `VersionTuple::empty`: every number zero (present or not).
    fn is_empty(self) -> bool {
        self.major == 0 && self.minor.unwrap_or(0) == 0 && self.subminor.unwrap_or(0) == 0
    }
}

/// LLVM's `parseVersionFromName`: `VersionTuple::tryParse` (up to four
/// dot-separated decimal numbers, nothing else; an empty tuple on any error),
/// then `withoutBuild`. Numbers wrap around like LLVM's `unsigned`.
fn parse_version(input: &str) -> Version {
    fn parse_int(input: &mut &[u8]) -> Option<u32> {
        let (&first, rest) = input.split_first()?;
        if !first.is_ascii_digit() {
            return None;
        }
        let mut value = u32::from(first - b'0');
        *input = rest;
        while let Some((&c, rest)) = input.split_first() {
            if !c.is_ascii_digit() {
                break;
            }
            value = value.wrapping_mul(10).wrapping_add(u32::from(c - b'0'));
            *input = rest;
        }
        Some(value)
    }

    fn try_parse(mut input: &[u8]) -> Option<Version> {
        let mut numbers = [0u32; 4];
        let mut count = 0;
        loop {
            numbers[count] = parse_int(&mut input)?;
            count += 1;
            if input.is_empty() {
                break;
            }
            if count == numbers.len() || input[0] != b'.' {
                return None;
            }
            input = &input[1..];
        }
        Some(Version {
            major: numbers[0],
            minor: (count > 1).then_some(numbers[1]),
            subminor: (count > 2).then_some(numbers[2]),
        })
    }

    try_parse(input.as_bytes()).unwrap_or_default()
}
