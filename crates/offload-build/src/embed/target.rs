//! The host targets the emitters support, named by a target triple.

use object::{Architecture, BinaryFormat, Endianness};

use super::EmbedError;

/// The host CPU of an emitted object.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum HostArch {
    /// x86-64 (`x86_64`, `amd64`).
    X86_64,
    /// 64-bit Arm (`aarch64`, `arm64`), little-endian.
    Aarch64,
    /// 64-bit POWER, little-endian, ELFv2 ABI (`powerpc64le`, `ppc64le`).
    Ppc64le,
}

/// The object file format of an emitted object.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum HostFormat {
    /// ELF (Linux and other ELF systems).
    Elf,
    /// COFF (Windows, MSVC environment); x86-64 only.
    Coff,
}

/// A host target: architecture and object format, parsed from a triple.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct HostTarget {
    /// The CPU.
    pub arch: HostArch,
    /// The object format.
    pub format: HostFormat,
}

impl HostTarget {
    /// Parses a target triple such as `x86_64-unknown-linux-gnu`, `aarch64-linux-gnu`,
    /// `powerpc64le-unknown-linux-gnu` or `x86_64-pc-windows-msvc`.
    ///
    /// Windows triples give COFF (x86-64 only), Apple triples are refused (clang cannot embed
    /// HIP device code in Mach-O either), and so are the 32-bit-pointer ABIs of 64-bit CPUs
    /// (`gnux32`, `_ilp32`: ELF32 objects, which the emitters do not write) and UEFI (PE
    /// images with no constructors to register device code); everything else gives ELF.
    pub fn parse(triple: &str) -> Result<HostTarget, EmbedError> {
        let unsupported = |why: &str| EmbedError::UnsupportedTarget(format!("'{triple}': {why}"));
        let mut parts = triple.split('-');
        let arch = match parts.next().unwrap_or("") {
            "x86_64" | "amd64" => HostArch::X86_64,
            "aarch64" | "arm64" => HostArch::Aarch64,
            "powerpc64le" | "ppc64le" => HostArch::Ppc64le,
            other => {
                return Err(unsupported(&format!(
                    "architecture '{other}' (supported: x86_64, aarch64, powerpc64le)"
                )));
            }
        };
        let rest: Vec<&str> = parts.collect();
        let has = |names: &[&str]| rest.iter().any(|p| names.iter().any(|n| p.starts_with(n)));
        if rest
            .iter()
            .any(|p| p.ends_with("x32") || p.ends_with("_ilp32") || *p == "ilp32")
        {
            return Err(unsupported(
                "a 32-bit pointer ABI (x32, ILP32) takes ELF32 objects, which are not supported",
            ));
        }
        if has(&["uefi"]) {
            return Err(unsupported(
                "UEFI images are PE files with no constructors to register device code",
            ));
        }
        let format = if has(&["windows", "win32", "msvc", "mingw", "cygwin"]) {
            HostFormat::Coff
        } else if has(&["apple", "darwin", "macos", "ios"]) {
            return Err(unsupported("Mach-O hosts are not supported"));
        } else {
            HostFormat::Elf
        };
        if format == HostFormat::Coff && arch != HostArch::X86_64 {
            return Err(unsupported("COFF is supported for x86_64 only"));
        }
        Ok(HostTarget { arch, format })
    }

    pub(crate) fn object_format(self) -> (BinaryFormat, Architecture, Endianness) {
        let format = match self.format {
            HostFormat::Elf => BinaryFormat::Elf,
            HostFormat::Coff => BinaryFormat::Coff,
        };
        let arch = match self.arch {
            HostArch::X86_64 => Architecture::X86_64,
            HostArch::Aarch64 => Architecture::Aarch64,
            HostArch::Ppc64le => Architecture::PowerPc64,
        };
        (format, arch, Endianness::Little)
    }

    pub(crate) fn new_object<'a>(self) -> object::write::Object<'a> {
        let (format, arch, endian) = self.object_format();
        let mut obj = object::write::Object::new(format, arch, endian);
        if self.arch == HostArch::Ppc64le {
            // ELFv2 ABI, as clang marks every ppc64le object.
            obj.flags = object::FileFlags::Elf {
                os_abi: 0,
                abi_version: 0,
                e_flags: 2,
            };
        }
        obj
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn triples() {
        let t = HostTarget::parse("x86_64-unknown-linux-gnu").unwrap();
        assert_eq!((t.arch, t.format), (HostArch::X86_64, HostFormat::Elf));
        let t = HostTarget::parse("x86_64-pc-windows-msvc").unwrap();
        assert_eq!(t.format, HostFormat::Coff);
        assert_eq!(
            HostTarget::parse("powerpc64le-linux-gnu").unwrap().arch,
            HostArch::Ppc64le
        );
        assert!(HostTarget::parse("aarch64-pc-windows-msvc").is_err());
        assert!(HostTarget::parse("x86_64-apple-macos").is_err());
        assert!(HostTarget::parse("riscv64-linux-gnu").is_err());
        for t in [
            "x86_64-unknown-linux-gnux32",
            "aarch64-unknown-linux-gnu_ilp32",
            "aarch64_be-unknown-linux-gnu_ilp32",
            "x86_64-unknown-uefi",
            "aarch64-unknown-uefi",
        ] {
            let e = HostTarget::parse(t).unwrap_err().to_string();
            assert!(e.contains(t), "{e}");
        }
        assert!(HostTarget::parse("x86_64-unknown-linux-musl").is_ok());
    }
}
