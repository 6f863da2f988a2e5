//! Fat objects: a host object file that carries one `__CLANG_OFFLOAD_BUNDLE__<ID>` section
//! per bundle entry (clang-offload-bundler `-type=o` with an object host input).
//!
//! LLVM's bundler does not write these itself: it runs
//!
//! ```text
//! llvm-objcopy --add-section=__CLANG_OFFLOAD_BUNDLE__<ID>=<file> \
//!              --set-section-flags=__CLANG_OFFLOAD_BUNDLE__<ID>=readonly,exclude … -- <host> <out>
//! ```
//!
//! with a temporary one-byte file holding `00` for the host entry. This module writes the
//! same sections directly, without llvm-objcopy:
//!
//! - **ELF** (32/64-bit, either byte order; x86-64, AArch64 and ppc64le are tested): the
//!   host object's bytes are kept as they are. The payloads are appended, then a new
//!   section-name string table (the old one plus the new names), then a new section header
//!   table: the old headers (the string table's header now pointing at its new copy) followed
//!   by one header per entry, in entry order: `SHT_PROGBITS`, flags `SHF_EXCLUDE`, alignment
//!   1, address 0 — what `llvm-readelf -S` shows for llvm-objcopy's output. The old string
//!   table and header table stay in the file, unreferenced. Extended section numbering
//!   (`e_shnum == 0`, `e_shstrndx == SHN_XINDEX`) is read and written.
//! - **COFF** (relocatable objects, not bigobj or images): the new section headers are
//!   inserted after the existing ones (every file pointer behind them moves by 40 bytes per
//!   section), the long names go to a copy of the symbol and string tables appended at the
//!   end, followed by the payloads. Characteristics are `IMAGE_SCN_LNK_REMOVE |
//!   IMAGE_SCN_MEM_READ` (0x40000800), `VirtualSize` is the payload size and
//!   `VirtualAddress` the running sum of the added sizes, as llvm-objcopy writes them.
//! - **Mach-O** and other formats: [`FatObjectError::Unsupported`] (llvm-objcopy 19 and 22
//!   fail there too: "option is not supported for MachO").
//!
//! Reading ([`FatObject::parse`]) lists the bundle sections in section-table order, as
//! LLVM's `ObjectFileHandler` does, for every format the `object` crate reads. A section
//! whose contents lie outside the file is an error naming it and its offset;
//! [`FatObject::parse_sections`] still lists it (with its error) beside the intact ones, as
//! LLVM lists every section by name and fails only when it reads the broken one.
//!
//! The host entry: a section whose contents are the single byte `00` stands for the host
//! object itself. LLVM 19 and 22 extract it by running `llvm-objcopy --regex
//! --remove-section=__CLANG_OFFLOAD_BUNDLE__.*`, which re-lays out the whole file.
//! [`remove_bundle_sections`] instead keeps every byte and takes the bundle sections out of
//! the section header table (ELF: `e_shnum` shrinks; COFF: `NumberOfSections` shrinks). It
//! requires the bundle sections to be the last sections of the table and unreferenced by
//! symbols and other sections — true of every fat object written by llvm-objcopy or by this
//! module; anything else is reported, never guessed at. The result links as the original
//! host object does, but is not byte-identical to llvm-objcopy's output.

mod coff;
mod elf;
mod error;
mod objcopy;
mod reader;
mod section;
mod writer;

pub use error::FatObjectError;
pub use objcopy::{objcopy_add_command, objcopy_remove_command};
pub use reader::{FatObject, FatObjectEntry, FatObjectSection};
pub use section::{HOST_PLACEHOLDER, ObjectFormat, detect, is_host_placeholder, section_name};
pub use writer::{remove_bundle_sections, write_fat_object};

#[cfg(test)]
mod tests;
