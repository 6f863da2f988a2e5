//! offload-build: GPU fat binaries that a host linker can link, from `build.rs`.
//!
//! A GPU program is compiled once per device architecture; LLVM packs the
//! per-device code objects into one container and embeds it in a host object.
//! This crate drives the per-architecture compiles from `build.rs` ([`Build`]) and
//! embeds the result; the containers themselves are read and written, byte for byte as
//! LLVM does, by the `offload-formats` crate, re-exported here as [`id`], [`bundle`],
//! [`package`] and [`inspect`].
//!
//! # Quick start (`build.rs`)
//!
//! Compile HIP kernels for several GPU architectures — one parallel, cached device compile per
//! (source, architecture), under Cargo's jobserver — and pack them into the fat binary clang's
//! HIP driver would make:
//!
//! ```no_run
//! // build.rs, in `fn main`. Not on crates.io yet: [build-dependencies]
//! // offload-build = { path = "../offload-build/crates/offload-build" } (or a git URL).
//! offload_build::Build::new()
//!     .files(["kernels/vector_add.hip", "kernels/scale.hip"])
//!     .include("kernels")
//!     .define("BLOCK", "256")
//!     // The crate's default: <CRATE>_OFFLOAD_ARCH and OFFLOAD_ARCH override it. Or leave
//!     // it out: AMDGPU_TARGETS, …, the machine's GPUs, then a default set (with a warning;
//!     // never an error).
//!     // (what Debian 12's ROCm 5.2 serves; newer ROCm adds gfx942, gfx1100, gfx11-generic…)
//!     .archs("gfx90a;gfx1030;gfx906")
//!     .compile("kernels");
//! ```
//!
//! ```ignore
//! // src/main.rs (`ignore`: needs the OUT_DIR of a build script)
//! include!(concat!(env!("OUT_DIR"), "/kernels.rs"));
//! fn main() {
//!     println!("{} bytes for {:?}: {:?}", container().len(), ARCHS, KERNELS);
//!     // Load container() with the HIP runtime and launch kernels::VECTOR_ADD by its name:
//!     // examples/hip-vector-add/src/launch.rs does so through `hip-runtime-sys`.
//! }
//! ```
//!
//! [`Build::try_compile`](builder::Build::try_compile) returns typed [`builder::Error`]s (compiler
//! not found with every path searched, architecture unsupported with the supported list,
//! compile failed with the architecture, exact command and clang's output). See [`builder`] for
//! the architecture resolution order and the environment variables, and
//! `examples/hip-vector-add` for a complete program (`cargo run --release -p hip-vector-add`).
//!
//! # Packing by hand
//!
//! Code objects built elsewhere (by clang, by rustc for `amdgcn-amd-amdhsa`) can be packed with
//! [`Build::image`](builder::Build::image), or directly with the bundle writer:
//!
//! ```no_run
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
//! - [`builder`]: the `build.rs` API ([`Build`]): toolchain discovery, architecture
//!   resolution, parallel cached device compiles, packing, the generated `<name>.rs`.
//! - [`embed`]: host objects carrying device code (`.hip_fatbin` with a registering
//!   constructor, `.llvm.offloading` for the new offload driver).
//! - [`id`], [`bundle`], [`package`], [`inspect`]: the formats, from `offload-formats`.
//!
//! The command-line tools (`offload-bundler`, `offload-packager`, `offload-build`) are in the
//! `offload-cli` crate; this crate compiles none of their dependencies.
//!
//! # Features
//!
//! - `compression` (off by default): compressed bundles (`Build::compress`,
//!   `embed::HipObject::compress`), with the zstd and zlib libraries built from source. Off,
//!   no compression library is compiled, and asking for compression is an error naming the
//!   feature.
//! - `system-zstd`: `compression` with the system libzstd (pkg-config), whose output is
//!   byte-identical to LLVM's at every level.
//!
//! # Trust
//!
//! Inputs are untrusted: every size and offset read from a file is checked before
//! use, nothing is allocated because a header claims it, and malformed input is an
//! error that names the entry and offset — never a panic.
#![deny(missing_docs)]

pub mod builder;
pub mod embed;

pub use offload_formats::{bundle, id, inspect, nvfatbin, package};

pub use builder::{Build, CancelToken, Compiled, CompilerKind, Container, Embed, Error, Language};
