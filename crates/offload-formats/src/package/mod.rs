//! Offload binaries: the container of clang-offload-packager (LLVM 15–22) and
//! llvm-offload-binary (LLVM 22 on), which the new offload driver embeds in
//! `.llvm.offloading` sections.
//!
//! An offload binary (magic `10 FF 10 AD`) holds one image (version 1) or several
//! (versions 2 and 3), each with an image kind, an offload kind and a string map
//! (`triple`, `arch`, …). Binaries are concatenated, each 8-byte aligned.
//!
//! - [`ImageKind`], [`OffloadKind`] and the two offload-kind numberings ([`LlvmVersion`]).
//! - [`read`]: [`OffloadBinary::parse`] over borrowed bytes, [`decompress`] for
//!   compressed version-3 binaries.
//! - [`write`](mod@write): version 1 (default) and version 2 writers, byte-identical to LLVM.
//! - LLVM's string-table builder, and the `DenseMap` order in which the packager writes
//!   string entries ([`dense_map_order`]).
//! - [`scan`](mod@scan): finding binaries in ELF and COFF objects, archives and raw files.
//! - [`archive`]: the deterministic GNU archive `--archive` extraction writes.
//!
//! ```
//! use offload_formats::package::{Image, ImageKind, LlvmVersion, OffloadBinary, OffloadKind, write_v1};
//! let image = Image::new(ImageKind::Bitcode, OffloadKind::Hip, LlvmVersion::LLVM19, b"BC\xc0\xde")?
//!     .string("triple", "amdgcn-amd-amdhsa")
//!     .string("arch", "gfx90a");
//! let bytes = write_v1(&image)?;
//! let binary = OffloadBinary::parse(&bytes)?;
//! let entry = binary.entry(0).unwrap();
//! assert_eq!(entry.arch(), b"gfx90a");
//! // HIP is 3 in LLVM 19's numbering, 4 from LLVM 21: the reader reports both readings.
//! assert_eq!(entry.offload_kind().raw(), 3);
//! assert_eq!(entry.offload_kind().up_to_llvm20(), Some(OffloadKind::Hip));
//! assert_eq!(entry.offload_kind().from_llvm21(), None);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub mod archive;
pub mod read;
pub mod scan;
pub mod write;

mod error;
mod kinds;
mod order;
mod strtab;

pub use crate::raw::SHT_LLVM_OFFLOADING;
pub use error::{InflateError, PackageReadError, PackageReadErrorKind, PackageWriteError};
pub use kinds::{ImageKind, ImageKindValue, LlvmVersion, OffloadKind, OffloadKindValue};
pub use order::dense_map_order;
pub use read::{OffloadBinary, OffloadEntry, decompress, decompress_limited, is_compressed};
pub use scan::{Found, ScanError, ScanErrorKind, ScanKind, scan};
pub use write::{FormatVersion, Image, write, write_v1, write_v2};
