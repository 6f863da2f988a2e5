//! Host objects that carry device code: what the host linker links.
//!
//! - [`HipObject`]: a self-registering HIP object, as clang compiles a non-RDC HIP translation
//!   unit: the bundle in `.hip_fatbin`, the `HIPF` wrapper in `.hipFatBinSegment`, and a
//!   constructor that registers the fat binary, every kernel and every device variable with
//!   the HIP runtime. The constructor is machine code emitted here for x86-64, AArch64 and
//!   ppc64le ELF and for x86-64 COFF, so no C compiler is needed.
//! - [`NewDriverObject`]: an object for clang's new offload driver: offload binaries in
//!   `.llvm.offloading` and registration entries for clang-linker-wrapper.
//!
//! Kernel and variable names come from the device code's own symbol tables
//! ([`DeviceSymbols`]); no source parsing is involved.
//!
//! Objects are written with the `object` crate and are deterministic: the same inputs give
//! the same bytes.
//!
//! Inside: `hip` and `newdriver` (the two objects), `codegen` (the constructor's and
//! destructor's machine code and relocations, per ABI), `host` (what both objects are built
//! from: host symbols of kernels and variables, symbol definitions, name strings, the final
//! write), `device` (kernels and variables read from code objects), `target` (host triples)
//! and `error`.

mod ctor;
mod device;
mod error;
mod hip;
mod host;
mod newdriver;
mod target;

pub use device::{DeviceSymbols, DeviceVariable};
pub use error::{DeviceCodeError, DeviceCodeSource, EmbedError};
pub use hip::{
    HIP_FATBIN_MAGIC, HIP_FATBIN_SECTION, HIP_WRAPPER_SECTION, HOST_ENTRY_ID, HipObject,
};
pub(crate) use host::rdc_fatbin_object;
pub use newdriver::{EntryLayout, NewDriverObject, SHF_GNU_RETAIN};
pub use target::{HostArch, HostFormat, HostTarget};
