//! The one place where [`Build`](super::Build) hands a packed container to the host-object
//! emitter (`crate::embed`, issue 6) and links the result.
//!
//! Until that emitter is merged, the object modes return
//! [`Error::EmbedUnavailable`]; [`Embed::FatbinOnly`] does not come here.

use std::path::{Path, PathBuf};

use super::error::Error;
use super::{Container, Embed};

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
    /// Library name (`lib<name>.a`).
    pub name: &'a str,
    /// Where to write the object and the library.
    pub out_dir: &'a Path,
}

/// What was written: the static library to link.
#[derive(Debug)]
pub(crate) struct Embedded {
    /// `lib<name>.a` (or `<name>.lib`).
    #[allow(dead_code)] // TODO(embed): reported in `Compiled` once objects are written.
    pub library: PathBuf,
}

/// Writes the host object for `req.mode` into a static library.
///
/// TODO(embed): wire to `crate::embed` when issue 6 lands: emit the `.hip_fatbin`
/// self-registering object (HipObject) or the `.llvm.offloading` object (NewDriverObject) for
/// `req.target`, archive it as `lib<name>.a` in `req.out_dir`, and return its path; the caller
/// then prints `cargo:rustc-link-search=native=<out_dir>` and
/// `cargo:rustc-link-lib=static=<name>` (already implemented in `Build::try_compile`).
pub(crate) fn embed_object(req: &EmbedRequest<'_>) -> Result<Embedded, Error> {
    let _ = (
        req.container_bytes,
        req.container,
        req.target,
        req.kernels,
        req.name,
        req.out_dir,
    );
    Err(Error::EmbedUnavailable { mode: req.mode })
}
