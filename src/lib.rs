//! offload-build: GPU fat binaries that a host linker can link.
//!
//! A GPU program is compiled once per device architecture; LLVM packs the
//! per-device code objects into one container and embeds it in a host object.
//! This crate reads and writes those containers byte for byte as LLVM does,
//! and (in later releases) drives the per-architecture compiles from `build.rs`.
//!
//! # Quick start (`build.rs`)
//!
//! Pack code objects built elsewhere (by clang, by rustc for `amdgcn-amd-amdhsa`)
//! into a HIP fat binary, the file clang's HIP driver places in `.hip_fatbin`:
//!
//! ```no_run
//! // build.rs
//! use std::fs;
//! use offload_build::bundle::BinaryBundleWriter;
//! use offload_build::id::EntryId;
//!
//! fn main() -> Result<(), Box<dyn std::error::Error>> {
//!     let out_dir = std::env::var("OUT_DIR")?;
//!     let archs = ["gfx90a:xnack+", "gfx1100"];
//!     let objects: Vec<Vec<u8>> = archs
//!         .iter()
//!         .map(|a| fs::read(format!("kernels-{}.o", a.replace(':', "_"))))
//!         .collect::<Result<_, _>>()?;
//!
//!     // Entry IDs are standardized exactly as clang-offload-bundler does.
//!     let mut ids = vec![EntryId::parse("host-x86_64-unknown-linux-gnu")];
//!     ids.extend(archs.iter().map(|a| EntryId::parse(&format!("hipv4-amdgcn-amd-amdhsa--{a}"))));
//!
//!     let mut writer = BinaryBundleWriter::new();
//!     writer.align(4096)?;
//!     writer.add(ids[0].as_str(), 0)?; // the host entry is empty in a .hipfb
//!     for (id, object) in ids[1..].iter().zip(&objects) {
//!         writer.add(id.as_str(), object.len() as u64)?;
//!     }
//!     let layout = writer.layout()?;
//!     let mut file = fs::File::create(format!("{out_dir}/kernels.hipfb"))?;
//!     layout.write_to(&mut file, |i, w| {
//!         use std::io::Write;
//!         if i == 0 { Ok(()) } else { w.write_all(&objects[i - 1]) }
//!     })?;
//!     println!("cargo:rerun-if-changed=kernels-gfx1100.o");
//!     Ok(())
//! }
//! ```
//!
//! Reading it back, zero-copy:
//!
//! ```
//! use offload_build::bundle::{BinaryBundle, binary::write_bundle};
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
//! - [`fileio`]: mapped inputs and atomically written outputs.
//! - [`cli`]: the command-line tools (`offload-bundler`, `offload-packager`).
//!
//! # Trust
//!
//! Inputs are untrusted: every size and offset read from a file is checked before
//! use, nothing is allocated because a header claims it, and malformed input is an
//! error that names the entry and offset — never a panic.
#![deny(missing_docs)]

pub mod bundle;
pub mod cli;
pub mod fileio;
#[doc(hidden)]
pub mod fuzz_targets;
pub mod id;
pub mod package;
