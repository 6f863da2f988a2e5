//! The one place where [`Build`](crate::builder::Build) hands a packed container to the host-object
//! emitter ([`crate::embed`]) and archives the object into the static library Cargo links.

use std::borrow::Cow;
use std::path::{Path, PathBuf};

use crate::builder::command::{Domain, KeyBuilder};
use crate::builder::error::Error;
use crate::builder::options::Container;
use crate::builder::options::Embed;
use crate::embed::{HipObject, NewDriverObject};
use offload_formats::bundle::archive::{NewMember, write_gnu_archive};
use offload_formats::package::LlvmVersion;

/// What the emitter needs to know.
#[derive(Debug)]
pub(crate) struct EmbedRequest<'a> {
    /// `HipObject` or `NewDriverObject`.
    pub mode: Embed,
    /// The packed container (bundle, compressed bundle or offload binaries).
    pub container_bytes: &'a [u8],
    /// Its format.
    pub container: Container,
    /// Cargo's `TARGET` (decides ELF/COFF and the machine).
    pub target: &'a str,
    /// Kernel symbol names, for the registration constructor and the handles.
    pub kernels: &'a [String],
    /// Build name (the object member is `<name>.o`).
    pub name: &'a str,
    /// Where to write the object and the library.
    pub out_dir: &'a Path,
    /// Major version of the LLVM that compiled the device code (0 when unknown): decides the
    /// registration-entry layout of the new-driver object.
    pub llvm_major: u32,
    /// The global symbols of the self-registering object (`HipObject` mode).
    pub symbols: &'a HostSymbols,
}

/// The names an object build gives the linker, unique per build so that any number of builds
/// link into one program.
///
/// The library is `lib<name>-<hash>.a`: two crates (or a crate and its dependency) each with a
/// build named `kernels` would otherwise both ask for `-l kernels`, and the linker would take
/// the first `libkernels.a` on its search path for both (Cargo passes the dependencies'
/// search paths too), or rustc, which unpacks whole-archive libraries of dependencies into one
/// directory by file name, would link one of them twice.
///
/// The global symbols of a self-registering object: two crates each with a kernel `saxpy` give two distinct
/// handles, each registered for its own fat binary (with handles named like the kernels, the
/// linker would keep one definition, drop the other crate's whole object, and both crates'
/// `SAXPY.handle()` would be the same address).
///
/// In a Cargo build script (`CARGO_PKG_NAME` set) every kernel handle and device-variable
/// shadow is `__offload_build_<hash>_k_<device name>`; outside Cargo (`offload-build compile`
/// for CMake) they keep the device names, as clang names them, so that C and C++ code can
/// declare them (`extern "C" char vector_add;`). The bundle's start,
/// `__offload_build_<hash>_fatbin`, is unique in both cases.
///
/// The hash (64 bits of a [`KeyBuilder`] key) covers the package name and version, the build
/// name and the target; under Cargo the output directory's last two components
/// (`<package>-<metadata hash>/out`, unique in a build graph and the same wherever the
/// checkout lives), otherwise the container's content (so that the same sources give the
/// same bytes in any checkout and output directory, and two different builds of one name
/// still get distinct symbols).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct HostSymbols {
    /// The library's link name, `<name>-<hash>` (the file is `lib<link_name>.a`).
    pub link_name: String,
    /// Prefix of the kernel handles and variable shadows (empty: the device names).
    pub handle_prefix: String,
    /// The symbol at the start of the bundle in `.hip_fatbin`.
    pub fatbin: String,
}

impl HostSymbols {
    /// The symbols of build `name` writing `container` into `out_dir`; `package` is Cargo's
    /// `CARGO_PKG_NAME` and `CARGO_PKG_VERSION` (`None` outside Cargo).
    pub(crate) fn new(
        package: Option<(&str, &str)>,
        name: &str,
        target: &str,
        out_dir: &Path,
        container: &[u8],
    ) -> HostSymbols {
        let mut key = KeyBuilder::new(Domain::HostSymbols);
        for part in [
            package.map_or("", |p| p.0),
            package.map_or("", |p| p.1),
            name,
            target,
        ] {
            key.str(part);
        }
        match package {
            Some(_) => {
                let components: Vec<_> = out_dir.components().collect();
                let dir: PathBuf = components[components.len().saturating_sub(2)..]
                    .iter()
                    .collect();
                key.str(&dir.to_string_lossy());
            }
            None => {
                key.u128(xxhash_rust::xxh3::xxh3_128(container));
            }
        }
        let hash = format!("{:016x}", key.finish64());
        let base = format!("__offload_build_{hash}");
        HostSymbols {
            link_name: format!("{name}-{hash}"),
            handle_prefix: if package.is_some() {
                format!("{base}_k_")
            } else {
                String::new()
            },
            fatbin: format!("{base}_fatbin"),
        }
    }

    /// The host symbol of the kernel (or device variable) `device_name`.
    pub(crate) fn handle(&self, device_name: &str) -> String {
        format!("{}{device_name}", self.handle_prefix)
    }
}

/// What was written: the static library to link.
#[derive(Debug)]
pub(crate) struct Embedded {
    /// `lib<name>-<hash>.a` ([`HostSymbols::link_name`]).
    pub library: PathBuf,
}

/// Writes the host object for `req.mode` and archives it as `lib<link name>.a` in
/// `req.out_dir`.
pub(crate) fn embed_object(req: &EmbedRequest<'_>) -> Result<Embedded, Error> {
    let fail = |message: String| Error::Embed {
        mode: req.mode,
        message,
    };
    let failed = |source| Error::EmbedFailed {
        mode: req.mode,
        source,
    };
    if req.target.contains("-msvc") {
        return Err(fail(format!(
            "target {}: MSVC static libraries are not written yet; use Embed::ContainerOnly",
            req.target
        )));
    }
    let object = match (req.mode, req.container) {
        (Embed::HipObject, Container::Bundle) => {
            let mut o = HipObject::new(req.target).map_err(|e| failed(e.into()))?;
            o.bundle(req.container_bytes)
                .symbol_prefix(&req.symbols.handle_prefix)
                .start_symbol(&req.symbols.fatbin);
            for k in req.kernels {
                o.kernel(k);
            }
            o.write().map_err(|e| failed(e.into()))?
        }
        (Embed::NewDriverObject, Container::OffloadBinary) => {
            let llvm = if req.llvm_major >= 15 {
                LlvmVersion::new(req.llvm_major)
            } else {
                LlvmVersion::NEWEST_RELEASE
            };
            let mut o = NewDriverObject::new(req.target, llvm).map_err(|e| failed(e.into()))?;
            o.offload_binary(req.container_bytes)
                .map_err(|e| failed(e.into()))?;
            for k in req.kernels {
                o.kernel(k);
            }
            o.write().map_err(|e| failed(e.into()))?
        }
        (Embed::HipObject, Container::OffloadBinary) => {
            return Err(fail(
                "a self-registering HIP object holds a bundle: use Container::Bundle".into(),
            ));
        }
        (Embed::NewDriverObject, Container::Bundle) => {
            return Err(fail(
                "a new-driver object holds offload binaries: use Container::OffloadBinary".into(),
            ));
        }
        (_, Container::CudaFatbin) => {
            return Err(fail(
                "an NVIDIA fat binary is loaded at run time: use Embed::ContainerOnly".into(),
            ));
        }
        (Embed::ContainerOnly, _) => {
            return Err(fail("Embed::ContainerOnly writes no object".into()));
        }
    };
    let member = format!("{}.o", req.name);
    let archive = write_gnu_archive(&[NewMember {
        name: member.into_bytes(),
        data: Cow::Borrowed(&object),
    }])
    .map_err(|e| failed(e.into()))?;
    let library = req.out_dir.join(format!("lib{}.a", req.symbols.link_name));
    crate::builder::fs::write_if_changed(&library, &archive)?;
    Ok(Embedded { library })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_symbols_are_unique_per_build_and_stable_across_checkouts() {
        let t = "x86_64-unknown-linux-gnu";
        let pkg = Some(("kernels-a", "0.1.0"));
        let a = HostSymbols::new(
            pkg,
            "kernels",
            t,
            Path::new("/x/target/debug/build/kernels-a-1f/out"),
            b"",
        );
        // The same package in another checkout: the same symbols.
        let moved = HostSymbols::new(
            pkg,
            "kernels",
            t,
            Path::new("/y/t/debug/build/kernels-a-1f/out"),
            b"",
        );
        assert_eq!(a, moved);
        assert!(a.link_name.starts_with("kernels-"));
        assert!(
            a.handle_prefix.starts_with("__offload_build_") && a.handle_prefix.ends_with("_k_")
        );
        assert_eq!(a.handle("saxpy"), format!("{}saxpy", a.handle_prefix));
        assert_eq!(
            a.fatbin,
            format!("{}fatbin", &a.handle_prefix[..a.handle_prefix.len() - 2])
        );
        // Another package, build name, target or output directory: other symbols.
        let others = [
            HostSymbols::new(
                Some(("kernels-b", "0.1.0")),
                "kernels",
                t,
                Path::new("/x/target/debug/build/kernels-a-1f/out"),
                b"",
            ),
            HostSymbols::new(
                Some(("kernels-a", "0.2.0")),
                "kernels",
                t,
                Path::new("/x/target/debug/build/kernels-a-1f/out"),
                b"",
            ),
            HostSymbols::new(
                pkg,
                "other",
                t,
                Path::new("/x/target/debug/build/kernels-a-1f/out"),
                b"",
            ),
            HostSymbols::new(
                pkg,
                "kernels",
                "aarch64-unknown-linux-gnu",
                Path::new("/x/target/debug/build/kernels-a-1f/out"),
                b"",
            ),
            HostSymbols::new(
                pkg,
                "kernels",
                t,
                Path::new("/x/target/debug/build/kernels-a-2e/out"),
                b"",
            ),
        ];
        for o in &others {
            assert_ne!(o.handle_prefix, a.handle_prefix);
            assert_ne!(o.fatbin, a.fatbin);
            assert_ne!(o.link_name, a.link_name);
        }
    }

    /// Outside Cargo: handles named like the kernels, the container's content hashed (not the
    /// directory): the same build in another checkout or output directory gives the same
    /// symbols, another container other ones.
    #[test]
    fn host_symbols_outside_cargo_follow_the_content_not_the_directory() {
        let t = "x86_64-unknown-linux-gnu";
        let cli =
            |dir: &str, content: &[u8]| HostSymbols::new(None, "k", t, Path::new(dir), content);
        let one = cli("/a/build/k.offload-build", b"bundle one");
        assert_eq!(
            (one.handle_prefix.as_str(), one.handle("saxpy").as_str()),
            ("", "saxpy")
        );
        assert_eq!(one, cli("/b/elsewhere/k.offload-build", b"bundle one"));
        let two = cli("/a/build/k.offload-build", b"bundle two");
        assert_ne!(one.fatbin, two.fatbin);
        assert_ne!(one.link_name, two.link_name);
    }
}
