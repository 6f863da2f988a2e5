//! The one place where [`Build`](super::Build) hands a packed container to the host-object
//! emitter ([`crate::embed`]) and archives the object into the static library Cargo links.

use std::borrow::Cow;
use std::path::{Path, PathBuf};

use super::error::Error;
use super::{Container, Embed};
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
    /// Library name (`lib<name>.a`).
    pub name: &'a str,
    /// Where to write the object and the library.
    pub out_dir: &'a Path,
    /// Major version of the LLVM that compiled the device code (0 when unknown): decides the
    /// registration-entry layout of the new-driver object.
    pub llvm_major: u32,
}

/// What was written: the static library to link.
#[derive(Debug)]
pub(crate) struct Embedded {
    /// `lib<name>.a`.
    pub library: PathBuf,
}

/// Writes the host object for `req.mode` and archives it as `lib<name>.a` in `req.out_dir`.
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
            "target {}: MSVC static libraries are not written yet; use Embed::FatbinOnly",
            req.target
        )));
    }
    let object = match (req.mode, req.container) {
        (Embed::HipObject, Container::Bundle) => {
            let mut o = HipObject::new(req.target).map_err(|e| failed(e.into()))?;
            o.bundle(req.container_bytes);
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
        (Embed::FatbinOnly, _) => {
            return Err(fail("Embed::FatbinOnly writes no object".into()));
        }
    };
    let member = format!("{}.o", req.name);
    let archive = write_gnu_archive(&[NewMember {
        name: member.into_bytes(),
        data: Cow::Borrowed(&object),
    }])
    .map_err(|e| failed(e.into()))?;
    let library = req.out_dir.join(format!("lib{}.a", req.name));
    super::cache::write_if_changed(&library, &archive)?;
    Ok(Embedded { library })
}
