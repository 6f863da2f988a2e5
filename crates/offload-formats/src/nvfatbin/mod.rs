//! NVIDIA fat binaries: the container the CUDA driver loads (`cuModuleLoadData`,
//! `cuModuleLoadFatBinary`), which `nvcc`, `fatbinary` and nvFatbin write and `cuobjdump`
//! lists, and which a CUDA executable carries in its `.nv_fatbin` section.
//!
//! A fat binary holds cubins (ELF images for one `sm_XX`) and PTX (text for one
//! `compute_XX`, JIT-compiled by the driver for newer GPUs). [`Fatbin::parse`] reads one
//! over borrowed bytes, [`scan`] finds every fat binary in any file as `cuobjdump` does,
//! and [`FatbinWriter`] writes one from cubins and PTX, with no NVIDIA tool.
//!
//! # Layout
//!
//! All fields are little-endian. The facts come from the bytes that NVIDIA's own writers
//! produce (nvFatbin 12.9, `fatbinary` 13.5, `nvcc -fatbin` 13.5) and from what `cuobjdump`
//! accepts; the integration tests (`integration/nvfatbin.rs`) check them against those tools.
//!
//! The outer header, 16 bytes:
//!
//! | offset | size | field |
//! |---|---|---|
//! | 0 | 4 | magic `0xBA55ED50` (bytes `50 ED 55 BA`) |
//! | 4 | 2 | version, 1 |
//! | 6 | 2 | header size, 16 |
//! | 8 | 8 | size of the entries that follow the header |
//!
//! Each entry: a header of at least 64 bytes, then its payload, the next entry right after:
//!
//! | offset | size | field |
//! |---|---|---|
//! | 0 | 2 | kind: 1 PTX, 2 ELF (cubin) |
//! | 2 | 2 | entry version, `0x0101` |
//! | 4 | 4 | entry header size (the payload starts there) |
//! | 8 | 8 | payload size (padded to 8 bytes) |
//! | 16 | 4 | compressed size (0 when not compressed) |
//! | 20 | 4 | offset of the options block in the entry (0: none) |
//! | 24 | 2 | minor version (PTX: the ISA's `.version` minor; ELF: the cubin's ABI version) |
//! | 26 | 2 | major version (PTX: the ISA's major; ELF: 1) |
//! | 28 | 4 | architecture, `80` for `sm_80` |
//! | 32 | 4 | offset of the identifier in the entry (0: none) |
//! | 36 | 4 | length of the identifier, without its NUL |
//! | 40 | 8 | flags ([`Flags`]: 64-bit, debug, host OS, compression, `sm_90a`-style arch) |
//! | 48 | 8 | reserved, 0 |
//! | 56 | 8 | uncompressed size (0 when not compressed) |
//!
//! The identifier (NUL-terminated, padded with zeros to 8 bytes) follows the 64 bytes;
//! `cuobjdump` names extracted files `<identifier>.sm_XX.cubin` after it. A PTX entry
//! carries an options block after that: a 4-byte offset (in the entry) and a 4-byte length
//! of the ptxas options string, then the string, NUL-terminated and padded to 8 bytes
//! (nvFatbin and `fatbinary` write an empty string when there are none). A PTX payload is
//! the text with a NUL, padded with zeros to 8 bytes; `cuobjdump -xptx` extracts the text
//! up to the NUL. A cubin payload is the ELF file (ptxas writes cubins whose size is a
//! multiple of 8; this writer pads any other with zeros). An architecture-specific target
//! (`sm_90a`) is arch 90 with flag `0x100000`.
//!
//! # Compressed entries
//!
//! Flag `0x2000` marks an LZ4-compressed payload and `0x8000` a zstd-compressed one; the
//! compressed size and the uncompressed size are then set, and the payload's first
//! `compressed size` bytes are one LZ4 block (the block format of the LZ4 project's
//! `lz4_Block_format.md`, no frame) or one zstd frame (RFC 8878) that decompress to exactly
//! `uncompressed size` bytes: the cubin, or the PTX text with its NUL. NVIDIA documents
//! neither the flags nor the framing; these facts are read off nvFatbin's and `nvcc`'s output,
//! and [`Entry::decompress`] is checked against `cuobjdump -xelf`/`-xptx` of it
//! (`integration/nvfatbin.rs`). [`Entry::image`] is `None` for a compressed entry and
//! [`Entry::stored`] gives its compressed bytes; [`Entry::decompress`] decodes it within a size
//! limit (LZ4 with `lz4_flex`, zstd with the `compression` feature). The writer never compresses.
//!
//! # Differences from nvFatbin's bytes
//!
//! For the same cubins and PTX (nvFatbin with `-compress=false`), the writer's entry headers
//! are nvFatbin's byte for byte (kind, entry version, header size, compressed and
//! uncompressed sizes, versions, architecture, identifier, options block, flags) but for
//! the payload size of PTX entries, and the cubin payloads are the same bytes. The one
//! difference is the PTX payload: nvFatbin and `fatbinary` minify the text before storing it
//! (comment text removed, leaving `//`; indentation and runs of blanks removed), where this
//! writer stores the PTX exactly as given. It is harmless: the minified text and ours are the
//! same sequence of PTX tokens (the integration test compares them), which is all the
//! driver's PTX compiler reads; ours is larger (about 1.3 times for clang's PTX), and
//! `cuobjdump -xptx` gives back the input byte for byte.
//!
//! ```
//! use offload_formats::nvfatbin::{EntryKind, Fatbin, FatbinWriter};
//! let ptx = b".version 7.8\n.target sm_90\n.address_size 64\n";
//! let mut w = FatbinWriter::new();
//! w.add_ptx("sm_90", ptx, Some("saxpy"), None)?;
//! let bytes = w.to_bytes();
//! let fatbin = Fatbin::parse(&bytes)?;
//! let entry = &fatbin.entries()[0];
//! assert_eq!(entry.kind(), EntryKind::Ptx);
//! assert_eq!(entry.arch(), 90);
//! assert_eq!(entry.ptx_version(), Some((7, 8)));
//! assert_eq!(entry.image(), Some(&ptx[..]));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod compression;
mod entry;
mod error;
mod layout;
mod reader;
mod writer;

pub use crate::raw::{NVFATBIN_MAGIC as MAGIC, NVFATBIN_MAGIC_BYTES as MAGIC_BYTES};
pub use entry::Entry;
pub use error::{FatbinError, FatbinErrorKind};
pub use layout::{
    Compression, DEFAULT_MAX_UNCOMPRESSED, ENTRY_HEADER_SIZE, ENTRY_VERSION, EntryKind, Flags,
    HEADER_SIZE, SECTION, VERSION,
};
pub use reader::{Fatbin, Found, scan};
pub use writer::{FatbinWriteError, FatbinWriter, parse_arch, ptx_isa_version};

#[cfg(test)]
mod tests;
