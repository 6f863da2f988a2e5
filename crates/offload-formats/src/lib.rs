//! offload-formats: LLVM's GPU offload containers, read and written byte for byte as LLVM does.
//!
//! A GPU program is compiled once per device architecture; LLVM packs the per-device code
//! objects into one container and embeds it in a host object. "Container" means one of three
//! formats here: a bundle (clang-offload-bundler's, compressed or not; the HIP driver's
//! `.hipfb` is one), an offload binary (clang-offload-packager's), or an NVIDIA fat binary
//! ("nvfatbin"; "fatbin" alone names nothing else in this crate). This crate is the format layer
//! of offload-build: readers and writers over bytes, with no file or process policy (the
//! `offload-build` crate drives compiles from `build.rs`; `offload-cli` holds the tools).
//!
//! # Example
//!
//! Writing a bundle and reading it back, zero-copy:
//!
//! ```
//! use offload_formats::bundle::{BinaryBundle, binary::write_bundle};
//! let bytes = write_bundle(&[(b"hipv4-amdgcn-amd-amdhsa--gfx1100", b"\x7fELF...")], 1)?;
//! let bundle = BinaryBundle::parse(&bytes)?.expect("a bundle");
//! for entry in bundle.entries() {
//!     println!("{}: {} bytes", entry.id_str(), entry.size());
//! }
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Modules
//!
//! - [`id`]: entry IDs (`hipv4-amdgcn-amd-amdhsa--gfx90a:xnack+`), target IDs,
//!   the AMDGPU processor table, triples, compatibility rules.
//! - [`bundle`]: the clang-offload-bundler formats (binary, text, compressed, fat objects,
//!   device archives) and LLVM's listing order.
//! - [`package`]: offload binaries (clang-offload-packager / llvm-offload-binary),
//!   and finding them in objects and archives.
//! - [`kind`]: what a file is, by its first bytes ([`kind::FileKind`]), for every reader.
//! - [`llvm`]: [`LlvmVersion`](llvm::LlvmVersion), the one notion of "which LLVM" (entry-ID
//!   rules, arch tables, offload-kind numbering).
//! - [`nvfatbin`]: NVIDIA fat binaries (`0xBA55ED50`, what `cuModuleLoadData` and
//!   `cuobjdump` take): reader, writer and scanner.
//! - [`compat`]: whether a GPU runtime would load a code object on a given GPU (HIP's
//!   processor, generic-processor and xnack/sramecc rules; NVIDIA's compute capabilities).
//! - [`inspect`]: finding every bundle, compressed bundle and offload binary in any file
//!   (objects, executables, shared libraries, archives), and extracting entries.
//!
//! # Features
//!
//! - `compression` (default): compressed bundles and offload binaries (zstd, zlib). Without
//!   it headers are still parsed; compressing and decompressing are `Unsupported` errors.
//! - `system-zstd`: link the system libzstd (pkg-config) so compressed bundles are LLVM's
//!   bytes at every level; by default the bundled zstd is built (a C compiler is all it needs).
//! - `serde`: `Serialize` for the [`inspect`] reports.
//!
//! # Trust
//!
//! Inputs are untrusted: every size and offset read from a file is checked before
//! use, nothing is allocated because a header claims it, and malformed input is an
//! error that names the entry and offset — never a panic.
#![deny(missing_docs)]

pub mod bundle;
pub mod compat;
pub mod id;
pub mod inspect;
pub mod kind;
pub mod llvm;
pub mod nvfatbin;
pub mod package;
mod raw;
